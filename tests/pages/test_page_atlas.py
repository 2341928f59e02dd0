"""AppTest of pages/atlas.py on a fixture index (24 sentences, the untrained module and the
trained reader), in English and in Chinese: the head map's points are the index's means,
the search preset finds the previous-token heads in Chinese, a chosen head's top sentence
is drawn with the model's own weights, queries and keys are projected with the user's
sentence marked, models side by side, no index → the command and a small build here, and
user text never drawn as markup."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from attention_core.atlas.models import open_model
from attention_core.atlas.query import Atlas
from attention_core.i18n import t
from tests.support import teaching
from tests.support.apptest import assert_drawn_literally, chart, charts, decode, md_unescape, texts
from tests.support.atlas import SENTENCES, build_fixture_index
from tests.support.availability import needs_minilm

HOSTILE = "<b>粗體</b> & <i>x</i> [link](http://x) 它"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("atlas-page") / "index"
    from attention_core.atlas.build import build

    build_fixture_index(out)
    build("untrained", None, out, texts=[HOSTILE])  # a user's file may hold anything
    return out


@pytest.fixture(autouse=True)
def no_shipped_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the user's own index: the package's small ones are hidden
    (tests/core/atlas/test_shipped.py covers those)."""
    monkeypatch.setattr("attention_core.atlas.shipped.SHIPPED_INDEX_DIR", tmp_path / "none")


@pytest.fixture
def atlas_env(index: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(index))
    return index


def open_atlas(lang: str = "en", text: str = SENTENCES[0], **state: object):
    at = teaching.open_page("atlas", {"lang": lang, "text": text}, state)
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_head_map_draws_every_head_at_its_corpus_means(atlas_env: Path, lang: str) -> None:
    at = open_atlas(lang, atlas_model="reader")
    assert at.title[0].value == t("atlas_title", lang)
    atlas = Atlas.open("reader", atlas_env)
    head_map = atlas.head_map("all")
    spec = chart(at, "atlas_map")
    points = spec["data"][0]
    assert decode(points["x"]) == pytest.approx(head_map.values["previous"])  # default axes
    assert decode(points["y"]) == pytest.approx(head_map.values["entropy"])
    assert len(decode(points["x"])) == atlas.layers * atlas.heads == 16
    assert t("atlas_head_name", lang, l=3, h=2) in points["text"]
    assert_drawn_literally(spec)


def test_the_map_is_coloured_by_each_heads_agreement_with_the_attribution(atlas_env: Path) -> None:
    at = open_atlas("en", atlas_model="reader", atlas_color="agreement", atlas_x="agreement")
    head_map = Atlas.open("reader", atlas_env).head_map("all")
    points = chart(at, "atlas_map")["data"][0]
    assert decode(points["x"]) == pytest.approx(head_map.values["agreement"], nan_ok=True)
    assert np.isfinite(head_map.spread["agreement"]).any()


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_preset_finds_previous_token_heads_in_chinese(atlas_env: Path, lang: str) -> None:
    at = open_atlas(lang, atlas_model="untrained")
    at.button(key="atlas_preset").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="atlas_lang").value == "zh"
    assert at.slider(key="atlas_search_min").value == pytest.approx(0.5)
    found = Atlas.open("untrained", atlas_env).search("previous", 0.5, "zh")
    shown = md_unescape(texts(at))
    count = t("atlas_found", lang, n=len(found), metric="", min=0.5, lang="", heads="")
    assert count.split("*")[2].strip() in shown


def test_a_chosen_heads_top_sentence_is_drawn_with_the_models_weights(atlas_env: Path) -> None:
    at = open_atlas("en", atlas_model="reader", atlas_head="2-1")
    assert not [c for c in charts(at) if c == "atlas_top_matrix"]  # on demand: no model run
    at = open_atlas("en", atlas_model="reader", atlas_head="2-1", atlas_top_pick=0)
    atlas = Atlas.open("reader", atlas_env)
    top = atlas.top_sentences(2, 1, "previous", k=5)
    shown = md_unescape(texts(at))
    assert top[0]["text"] in shown and f"{top[0]['value']:.3f}" in shown
    (reading,) = open_model("reader").read([top[0]["text"]])
    drawn = decode(chart(at, "atlas_top_matrix")["data"][0]["z"])
    assert drawn == pytest.approx(reading.attentions[2, 1], abs=1e-6)
    ring = chart(at, "atlas_map")["data"][-1]
    assert ring["text"] == ["L2 H1"]


def test_my_sentence_is_placed_among_the_heads(atlas_env: Path) -> None:
    from attention_core.atlas.rows import sentence_rows

    text = "小貓把杯子推倒了"
    at = open_atlas("zh-TW", text=text, atlas_model="reader", atlas_mine=True, atlas_head="2-1")
    reader = open_model("reader")
    (reading,) = reader.read([text])
    rows = {
        (r["layer"], r["head"]): r
        for r in sentence_rows(reading, causal=reader.causal, same_word=True)[1]
    }
    mine = chart(at, "atlas_map")["data"][1]
    assert mine["name"] == t("atlas_mine_name", "zh-TW")
    assert decode(mine["x"]) == pytest.approx([rows[k]["previous"] for k in sorted(rows)])
    value = rows[2, 1]["previous"]  # where it falls among the corpus sentences, head L2 H1
    share = Atlas.open("reader", atlas_env).share_below(2, 1, "previous", value)
    metric = t("atlas_metric_previous", "zh-TW")
    rank = t("atlas_mine_rank", "zh-TW", metric=metric, value=value, share=share)
    assert rank in md_unescape(texts(at))


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_queries_and_keys_with_my_sentence_marked(atlas_env: Path, lang: str) -> None:
    at = open_atlas(lang, text="中和有一個永和路", atlas_model="reader", atlas_view="qk")
    spec = chart(at, "atlas_qk")
    mine = [tr for tr in spec["data"] if tr.get("legendgroup") == "mine"]
    assert [*mine[0]["text"]] == ["[BOS]", *"中和有一個永和路"]
    names = {tr.get("name") for tr in spec["data"]}
    assert any(t("atlas_word_place", lang, p=2) in (n or "") for n in names)
    assert_drawn_literally(spec)


def test_queries_and_keys_laid_out_by_tsne_as_the_library_lays_them(atlas_env: Path) -> None:
    from attention_core.atlas.project import collect
    from ui.atlas_views import QK_SENTENCES

    at = open_atlas("en", atlas_model="reader", atlas_view="qk", atlas_qk_method="tsne")
    spec = chart(at, "atlas_qk")
    drawn = np.concatenate([decode(tr["x"]) for tr in spec["data"] if len(tr.get("x", []))])
    texts_ = tuple(Atlas.open("reader", atlas_env).sample(QK_SENTENCES))
    points = collect(open_model("reader"), texts_, 0, 0, mine=SENTENCES[0], method="tsne")
    # every point t-SNE laid out is drawn, and nothing else (your sentence's drawn twice)
    library = points.xy[:, 0]  # (2N,): queries, then keys
    assert np.abs(drawn[:, None] - library[None]).min(1).max() < 1e-3  # t-SNE's points
    assert "component" not in json.dumps(spec["layout"])  # t-SNE's axes mean nothing


def test_models_side_by_side_and_the_missing_one_named(atlas_env: Path) -> None:
    at = open_atlas("en", atlas_view="compare", atlas_compare_metric="first")
    spec = chart(at, "atlas_compare")
    maps = [tr for tr in spec["data"] if tr["type"] == "heatmap"]
    assert [np.shape(decode(m["z"])) for m in maps] == [(1, 4), (4, 4)]
    expected = Atlas.open("reader", atlas_env).head_map().values["first"].reshape(4, 4)
    assert decode(maps[1]["z"]) == pytest.approx(expected)
    assert "python -m attention_core.atlas build --model minilm" in md_unescape(texts(at))


def test_user_text_from_the_corpus_stays_text(atlas_env: Path) -> None:
    at = open_atlas(
        "en", atlas_model="untrained", atlas_x="first", atlas_from_token="它", atlas_top_pick=0
    )
    for spec in (chart(at, "atlas_map"), chart(at, "atlas_top_matrix")):
        assert_drawn_literally(spec)
    for element in at.markdown:
        assert "<b>" not in element.value and "](http" not in element.value


def _corpus(folder: Path) -> Path:
    """A corpus folder as `train.corpus.verify` accepts it: held-out text and its manifest."""
    folder.mkdir()
    data = ("\n".join(SENTENCES) + "\n").encode()
    (folder / "heldout.txt").write_bytes(data)
    manifest = {"outputs": {"heldout.txt": {"sha256": hashlib.sha256(data).hexdigest()}}}
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    return folder


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_without_an_index_the_page_gives_the_command_and_builds_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(tmp_path / "atlas"))
    monkeypatch.setenv("ATTENTION_STUDIO_CORPUS", str(_corpus(tmp_path / "corpus")))
    at = open_atlas(lang, atlas_model="untrained")
    assert "python -m attention_core.atlas build --model untrained" in at.code[0].value
    assert t("atlas_no_index", lang, folder="").split("，")[0][:8] in md_unescape(texts(at))
    at.button(key="atlas_build").click().run()
    assert not at.exception, at.exception
    assert Atlas.open("untrained", tmp_path / "atlas").sentence_count == len(SENTENCES)
    assert chart(at, "atlas_map")


def test_a_heads_ablation_effect_where_the_model_allows(atlas_env: Path) -> None:
    from attention_core.lens import reader_head_effects
    from attention_core.reader import load_shipped

    at = open_atlas(
        "zh-TW", atlas_model="reader", atlas_head="1-3", atlas_top_pick=0, atlas_ablation=True
    )
    top = Atlas.open("reader", atlas_env).top_sentences(1, 3, "previous", k=1)[0]
    kl = reader_head_effects(load_shipped(), top["text"]).kl  # (L, H)
    rank = int((kl > kl[1, 3]).sum()) + 1
    shown = md_unescape(texts(at))
    assert f"KL {kl[1, 3]:.4f}" in shown and f"排第 {rank}" in shown
    untrained = open_atlas("en", atlas_model="untrained")
    assert not [w for w in untrained.toggle if w.key == "atlas_ablation"]


def test_pairs_from_a_token_and_to_a_noun(atlas_env: Path) -> None:
    atlas = Atlas.open("reader", atlas_env)
    at = open_atlas("zh-TW", atlas_model="reader", atlas_head="3-1", atlas_to_pos="n")
    nouns = atlas.top_pairs(3, 1, key_pos="n", k=8)
    shown = md_unescape(texts(at))
    assert nouns and all(p["key_pos"].startswith("n") for p in nouns)
    for pair in nouns:
        assert f"{pair['query_token']} → {pair['key_token']}（{pair['weight']:.2f}）" in shown
    # from a token: the index keeps each head's two strongest pairs per sentence, so the
    # token asked for is one that leads some of them (它 did, before the reader was retrained)
    token = next(p["query_token"] for p in atlas.top_pairs(3, 1, k=8) if len(p["query_token"]) == 1)
    pairs = atlas.top_pairs(3, 1, query_token=token, k=8)
    at = open_atlas("en", atlas_model="reader", atlas_head="3-1", atlas_from_token=token)
    shown = md_unescape(texts(at))
    assert pairs
    for pair in pairs:
        assert pair["query_token"] == token
        assert f"{token} → {pair['key_token']} ({pair['weight']:.2f})" in shown


def test_from_a_token_the_page_reads_every_row_again(atlas_env: Path) -> None:
    from attention_core.atlas.search import attends_from

    atlas = Atlas.open("reader", atlas_env)
    hits, read = attends_from(atlas, open_model("reader"), 2, 1, "它", key_pos="n")
    at = open_atlas(
        "en", atlas_model="reader", atlas_head="2-1", atlas_from_token="它", atlas_to_pos="n"
    )
    shown = md_unescape(texts(at))
    assert f"Every row of “它” in the {read} indexed sentences" in shown
    assert f"{len(hits)} of its rows look most at a word of that kind" in shown
    for hit in hits[:8]:
        assert f"它 → {hit.key_token} ({hit.weight:.2f})" in shown


def test_an_index_of_another_format_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attention_core.atlas.build import FORMAT, build

    build("untrained", None, tmp_path, texts=SENTENCES[:3])
    manifest = tmp_path / "untrained" / "manifest.json"
    text = manifest.read_text()
    manifest.write_text(text.replace(f'"format": {FORMAT}', '"format": 1'), "utf-8")
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(tmp_path))
    at = teaching.open_page("atlas", {"lang": "en"}, {"atlas_model": "untrained"})
    assert not at.exception, at.exception
    assert "built in format 1" in md_unescape(at.error[0].value)
    assert "--model untrained" in at.code[0].value


@needs_minilm  # the tiny model's tokenizer is the packaged MiniLM's vocabulary
def test_your_own_models_index_is_offered_and_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index built with --model FOLDER (a notebook's model after save_pretrained) is
    offered by its folder's name, and its map holds every head at the index's means."""
    from attention_core.atlas.build import build
    from attention_core.pretrained.tiny import build_tiny_model

    folder = str(build_tiny_model("decoder", tmp_path / "my model"))
    out = tmp_path / "index"
    build(folder, None, out, texts=SENTENCES[10:18])
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(out))
    at = open_atlas()
    control = at.segmented_control(key="atlas_model")
    assert "your model: my model" in control.options
    control.set_value(folder).run()
    assert not at.exception
    head_map = Atlas.open(folder, out).head_map("all")
    points = chart(at, "atlas_map")["data"][0]
    assert len(decode(points["x"])) == 2 * 4  # the tiny model: 2 layers × 4 heads
    assert decode(points["x"]) == pytest.approx(head_map.values["previous"])


def test_a_byte_level_models_sentence_is_drawn_as_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Your own GPT-2-style model whose tokenizer cuts Chinese characters into byte pieces
    (tests/support/byte_models.py): the top sentence's head is drawn over the characters,
    with the model's own weights pooled to them by hand (keys summed, queries averaged)."""
    from attention_core.atlas.build import build
    from attention_core.pooling import readable_pieces
    from tests.support.byte_models import HAN, byte_gpt2, hand_pool, saved_byte_gpt2

    folder = saved_byte_gpt2(tmp_path / "gpt2")
    out = tmp_path / "index"
    build(folder, None, out, texts=[s for s in SENTENCES if HAN.search(s)][2:8])
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(out))
    at = open_atlas("en", atlas_model=folder, atlas_head="1-2", atlas_top_pick=0)
    top = Atlas.open(folder, out).top_sentences(1, 2, "previous", k=5)
    text = top[0]["text"]
    tokenizer, _, _, _ = byte_gpt2()
    (reading,) = open_model(folder).read([text])
    pieces = readable_pieces(tokenizer, reading.ids)
    trace = chart(at, "atlas_top_matrix")["data"][0]
    assert trace["x"] == [f"{i}:{c}" for i, c in enumerate(pieces.labels)]
    assert "".join(pieces.labels) == text  # every character, none as byte mojibake
    hand = hand_pool(reading.attentions[1, 2].astype(np.float64), pieces.groups, pieces.groups)
    assert decode(trace["z"]) == pytest.approx(hand, abs=1e-6)
