"""attention_core.atlas: the index holds the numbers the app computes on the fly, a killed
build resumes to the same index, a grown corpus adds only its new sentences, and bad input
is refused with a message that says what to do."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from attention_core.atlas.build import build, chunk_dirs
from attention_core.atlas.query import Atlas
from attention_core.atlas.sentences import MAX_LINE_CHARS, AtlasError, read_corpus, sentence_id
from attention_core.settings import ModelSettings
from attention_core.stats import head_stats
from tests.support.atlas import SENTENCES, write_corpus
from tests.support.availability import needs_minilm

REPO = Path(__file__).resolve().parents[3]
STATS = ("entropy", "max_weight", "previous", "first", "diagonal", "distance")


def _rows(atlas: Atlas, text: str) -> dict[tuple[int, int], dict]:
    cols = ["layer", "head", *STATS, "same_word", "induction", "pattern"]
    rows = atlas._rows(
        f"SELECT {', '.join(cols)} FROM heads WHERE sentence = ?", [sentence_id(text)]
    )
    return {(r[0], r[1]): dict(zip(cols, r, strict=True)) for r in rows}


def _assert_same(row: dict, stat, **extra: float | None) -> None:
    for name in STATS:
        assert row[name] == pytest.approx(getattr(stat, name), abs=1e-5), name
    for name, value in extra.items():
        if value is None or np.isnan(value):  # NULL in the index: undefined here
            assert row[name] is None, name
        else:
            assert row[name] == pytest.approx(value, abs=1e-5), name


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("atlas") / "index"
    corpus = write_corpus(out.parent / "corpus")
    for model in ("untrained", "reader"):
        build(model, corpus, out, chunk_size=8)
    return out


SAMPLES = (SENTENCES[0], SENTENCES[4], SENTENCES[11], SENTENCES[18])


def test_untrained_rows_equal_the_landing_pages_statistics(index: Path) -> None:
    from attention_core.pipeline import analyze

    atlas = Atlas.open("untrained", index)
    assert (atlas.layers, atlas.heads, atlas.sentence_count) == (1, 4, len(SENTENCES))
    for text in SAMPLES:
        weights = analyze(ModelSettings(text=text)).weights  # what the app computes
        rows = _rows(atlas, text)
        for stat in head_stats(weights):
            _assert_same(rows[(0, stat.head)], stat, induction=np.nan)


def test_reader_rows_equal_the_trained_view_and_its_same_word(index: Path) -> None:
    from attention_core.pipeline import analyze
    from attention_core.reader.words import sentence_same_word

    atlas = Atlas.open("reader", index)
    for text in SAMPLES:
        for layer in range(atlas.layers):
            # the app's trained view of this layer, characters not pooled to words
            settings = ModelSettings(text=text, weights="trained", layer=layer, tokenizer="char")
            weights = analyze(settings).weights  # (H, n, n)
            words = sentence_same_word(weights, text)
            rows = _rows(atlas, text)
            for stat in head_stats(weights):
                observed = words[stat.head].observed if words else np.nan
                _assert_same(rows[(layer, stat.head)], stat, same_word=observed)
    # a repeated sequence gives a causal model something to induce; "A B C D A B C D"
    repeated = _rows(atlas, SENTENCES[18])
    assert all(r["induction"] is not None for r in repeated.values())


def test_from_a_token_to_a_noun_checks_every_row_of_the_token(index: Path) -> None:
    """attention_core.atlas.search against the app's trained view: every row of 它 in the
    sentences holding it, its strongest key, kept when that key's word is tagged a noun;
    the index alone keeps only two pairs a sentence."""
    from attention_core.atlas.models import open_model
    from attention_core.atlas.rows import char_tags
    from attention_core.atlas.search import attends_from
    from attention_core.pipeline import analyze

    atlas = Atlas.open("reader", index)
    layer, head = 2, 1
    every, read = attends_from(atlas, open_model("reader"), layer, head, "它")
    nouns, _ = attends_from(atlas, open_model("reader"), layer, head, "它", key_pos="n")
    holding = [t for t in SENTENCES if "它" in t]
    assert read == len(holding) and len(every) == sum(t.count("它") for t in holding)
    for hit in every:
        settings = ModelSettings(text=hit.text, weights="trained", layer=layer, tokenizer="char")
        row = analyze(settings).weights[head, hit.query]  # ([BOS] + characters)
        assert hit.key == int(np.argmax(row)) and hit.weight == pytest.approx(row.max(), abs=1e-6)
        assert hit.query_token == "它" and hit.text[hit.query - 1] == "它"  # [BOS] first
        # the tag the index's pairs carry (rows.char_tags, tested with them) of the key's word
        assert hit.key_pos == (char_tags(hit.text)[hit.key - 1] if hit.key > 0 else "")
    assert nouns == [h for h in every if h.key_pos.startswith("n")]
    assert attends_from(atlas, open_model("reader"), layer, head, " ")[0] == []


@needs_minilm
def test_minilm_rows_equal_run_model_one_sentence_at_a_time(tmp_path: Path) -> None:
    from attention_core.atlas.models import open_model
    from attention_core.pretrained import run_model

    texts = [*SAMPLES, SENTENCES[1]]  # batched with padding in the index
    build("minilm", None, tmp_path, texts=texts)
    atlas = Atlas.open("minilm", tmp_path)
    loaded = open_model("minilm").loaded
    for text in texts:
        attentions = run_model(loaded, text).attentions  # (L, H, n, n): the Pretrained page's
        rows = _rows(atlas, text)
        for layer in range(attentions.shape[0]):
            for stat in head_stats(attentions[layer]):
                _assert_same(rows[(layer, stat.head)], stat)


@needs_minilm  # the tiny model's tokenizer is the packaged MiniLM's vocabulary
def test_your_own_models_folder_is_indexed_as_the_pretrained_page_reads_it(tmp_path: Path) -> None:
    """A notebook's model after save_pretrained (here a tiny GPT-2, a decoder): indexed into
    its own folder (never into the model's), statistics equal to `run_model`'s weights,
    read as causal; a folder that is not there is refused with what to give instead."""
    from attention_core.atlas.models import index_name, open_model
    from attention_core.pretrained import load_model, run_model
    from attention_core.pretrained.tiny import build_tiny_model

    folder = build_tiny_model("decoder", tmp_path / "my model")
    texts = [SENTENCES[10], SENTENCES[17], SENTENCES[18]]
    build(str(folder), None, tmp_path / "index", texts=texts)
    name = index_name(str(folder))
    assert name.startswith("own-my-model-") and (tmp_path / "index" / name).is_dir()
    assert sorted(p.name for p in folder.iterdir()) == sorted(  # nothing written beside it
        p.name for p in build_tiny_model("decoder", tmp_path / "again").iterdir()
    )
    model = open_model(str(folder))
    assert model.causal and model.layers == 2 and model.heads == 4
    atlas = Atlas.open(str(folder), tmp_path / "index")
    loaded = load_model(str(folder))
    for text in texts:
        attentions = run_model(loaded, text).attentions  # (L, H, n, n)
        rows = _rows(atlas, text)
        for layer in range(attentions.shape[0]):
            for stat in head_stats(attentions[layer]):
                _assert_same(rows[(layer, stat.head)], stat)
    with pytest.raises(ValueError, match="transformers folder"):
        open_model(str(tmp_path / "nothing here"))


def test_head_map_is_the_mean_over_sentences_and_search_filters_it(index: Path) -> None:
    from attention_core.pipeline import analyze

    atlas = Atlas.open("untrained", index)
    zh = [s for s in SENTENCES if any("\u4e00" <= c <= "\u9fff" for c in s)]
    expected = np.mean(
        [[s.previous for s in head_stats(analyze(ModelSettings(text=t)).weights)] for t in zh], 0
    )
    head_map = atlas.head_map("zh")
    assert head_map.sentences == len(zh)
    assert head_map.values["previous"] == pytest.approx(expected, abs=1e-6)
    threshold = float(np.sort(expected)[-2])  # the two strongest previous-token heads
    found = atlas.search("previous", threshold, "zh")
    assert [(layer, head) for layer, head, _ in found] == [
        (0, int(h)) for h in np.argsort(-expected)[:2]
    ]
    assert atlas.search("previous", 1.01, "zh") == []
    top = atlas.top_sentences(0, 0, "previous", lang="zh", k=3)
    assert [t["value"] for t in top] == sorted((t["value"] for t in top), reverse=True)
    assert all(t["text"] in zh for t in top)


def _build_command(corpus: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "attention_core.atlas",
        "build",
        "--model",
        "untrained",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--chunk-size",
        "3",
    ]


def test_a_killed_build_resumes_to_the_same_index(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", SENTENCES * 1)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(
        _build_command(corpus, whole),
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    total = len(chunk_dirs(whole / "untrained"))
    for _ in range(5):  # a loaded machine may let the build finish before the kill lands
        shutil.rmtree(killed, ignore_errors=True)
        process = subprocess.Popen(
            _build_command(corpus, killed),
            cwd=REPO,
            env=env,
            stderr=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 90
        while len(chunk_dirs(killed / "untrained")) < 2 and process.poll() is None:
            assert time.monotonic() < deadline, "the build wrote no chunk in 90 s"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        written = len(chunk_dirs(killed / "untrained"))
        if process.returncode == -signal.SIGKILL and written < total:
            break
    assert process.returncode == -signal.SIGKILL, "the build finished before it was killed"
    assert 2 <= written < total
    (killed / "untrained" / ".partial-chunk-000099-1").mkdir()  # as a kill mid-chunk leaves
    report = build("untrained", corpus, killed, chunk_size=3)
    assert report.kept == 3 * written and report.added == len(SENTENCES) - 3 * written
    assert any("interrupted" in note for note in report.notes)
    a, b = Atlas.open("untrained", whole), Atlas.open("untrained", killed)
    for table in ("sentences", "heads", "pairs"):
        assert a.table(table) == b.table(table), table
    names = [p.name for p in chunk_dirs(whole / "untrained")]
    assert [p.name for p in chunk_dirs(killed / "untrained")] == names
    for name in names:  # byte for byte: the same chunks
        for file in ("sentences", "heads", "pairs"):
            path = f"untrained/{name}/{file}.parquet"
            assert (whole / path).read_bytes() == (killed / path).read_bytes(), path


def test_a_grown_corpus_adds_only_its_new_sentences(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES[:10]) + "\n", "utf-8")
    first = build("untrained", corpus, tmp_path / "index")
    assert (first.added, first.kept) == (10, 0)
    corpus.write_text("\n".join(SENTENCES[:15]) + "\n", "utf-8")
    second = build("untrained", corpus, tmp_path / "index")
    assert (second.added, second.kept) == (5, 10)
    assert Atlas.open("untrained", tmp_path / "index").sentence_count == 15
    assert build("untrained", corpus, tmp_path / "index").added == 0


def test_bad_input_gets_a_message_that_says_what_to_do(tmp_path: Path) -> None:
    binary = tmp_path / "weights.bin"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(AtlasError, match="not a text file"):
        read_corpus(binary)
    big5 = tmp_path / "big5.txt"
    big5.write_bytes("中文".encode("big5"))
    with pytest.raises(AtlasError, match=r"not UTF-8 text .*iconv"):
        read_corpus(big5)
    lines = tmp_path / "lines.txt"
    lines.write_text("\n\n第一句。\n" + "字" * (1 << 20) + "\n  \n第一句。\nsecond one\n", "utf-8")
    read = read_corpus(lines)
    assert read.sentences == ["第一句。", "second one"]
    assert (read.empty, read.too_long, read.repeated) == (3, 1, 1)
    assert f"longer than {MAX_LINE_CHARS}" in read.notes[0]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", "utf-8")
    with pytest.raises(AtlasError, match="no sentence to index"):
        read_corpus(empty)
    with pytest.raises(AtlasError, match="does not exist"):
        read_corpus(tmp_path / "missing.txt")
    with pytest.raises(AtlasError, match=r"build one with `python -m attention_core\.atlas build"):
        Atlas.open("untrained", tmp_path / "nothing")


def test_a_damaged_chunk_or_another_models_index_is_named(tmp_path: Path) -> None:
    build("untrained", None, tmp_path, texts=SENTENCES[:6], chunk_size=3)
    folder = tmp_path / "untrained"
    (folder / "chunk-000001" / "heads.parquet").write_bytes(b"not parquet")
    with pytest.raises(AtlasError, match=r"chunk-000001 is damaged.*delete that folder"):
        build("untrained", None, tmp_path, texts=SENTENCES[:6], chunk_size=3)
    manifest = folder / "manifest.json"
    manifest.write_text(manifest.read_text().replace("seed=0", "seed=7"), "utf-8")
    with pytest.raises(AtlasError, match="choose another --out or delete it"):
        build("untrained", None, tmp_path, texts=SENTENCES[:6])


def test_the_command_line_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    binary = tmp_path / "x.txt"
    binary.write_bytes(b"\xff\xfe\x00\x00")
    done = subprocess.run(
        _build_command(binary, tmp_path / "out"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "error:" in done.stderr and "not a text file" in done.stderr
    assert "Traceback" not in done.stderr


def test_head_map_with_an_unknown_language_is_refused(index: Path) -> None:
    atlas = Atlas.open("untrained", index)
    with pytest.raises(ValueError, match="lang must be one of"):
        atlas.head_map("fr")
    with pytest.raises(ValueError, match="metric must be one of"):
        atlas.search("bogus", 0.5)


def test_head_map_over_all_languages_weights_each_by_its_defined_rows(tmp_path: Path) -> None:
    # induction is NULL where no token repeats: one English sentence of two here
    texts = [
        "一二三四一二三四",
        "中和有一個永和路",
        "A B C D A B C D",
        "This is a file.",
    ]
    build("reader", None, tmp_path, texts=texts)
    atlas = Atlas.open("reader", tmp_path)
    rows = atlas._rows("SELECT layer, head, induction FROM heads WHERE induction IS NOT NULL")
    values = np.array(rows, dtype=float)  # (r, 3)
    assert len(values) == 3 * 16  # three sentences of the four have it
    head_map = atlas.head_map("all")
    for i, (layer, head) in enumerate(zip(head_map.layer, head_map.head, strict=True)):
        mine = values[(values[:, 0] == layer) & (values[:, 1] == head), 2]
        assert head_map.values["induction"][i] == pytest.approx(mine.mean(), abs=1e-9)


def test_pairs_carry_the_part_of_speech_of_the_keys_word(tmp_path: Path) -> None:
    from attention_core.atlas.models import open_model
    from attention_core.atlas.rows import char_tags

    text = "小貓跳到桌子上，它把杯子推倒了。"
    tags = char_tags(text)  # jieba: 小貓/n 跳/v 到/v 桌子/n 上/f ，/x 它/r 把/p 杯子/n 推倒/v …
    assert tags[:2] == ["n", "n"] and tags[8] == "r" and tags[10:12] == ["n", "n"]
    build("reader", None, tmp_path, texts=[text, SENTENCES[1]])
    atlas = Atlas.open("reader", tmp_path)
    (reading,) = open_model("reader").read([text])
    pairs = atlas._rows("SELECT key, key_pos FROM pairs WHERE sentence = ?", [sentence_id(text)])
    assert pairs and all(pos == tags[reading.offsets[key][0]] for key, pos in pairs)
    nouns = atlas.top_pairs(3, 1, key_pos="n", k=50)
    assert nouns and all(p["key_pos"].startswith("n") for p in nouns)
    from_it = atlas.top_pairs(3, 1, query_token="它", k=50)
    assert all(p["query_token"] == "它" for p in from_it)
