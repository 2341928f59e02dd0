"""Tests for attention_core/tokenize.py's Chinese words: the article's example, jieba's cut.

References: the article's hand cut (中和 / 有 / 一個 / 永和路) and OpenCC's phrase-level t2s
converter (traditional and simplified text cut alike). Also jieba's dictionary: the user
dictionary, its cache in the temp dir (loaded once, from many threads), `warm_up`.
"""

from __future__ import annotations

from pathlib import Path

import opencc
import pytest

from attention_core.tokenize import USER_DICT_PATH, Token, contains_cjk, tokenize, warm_up
from tests.support.availability import SEED_DIR
from tests.support.tokenize import REPO
from tests.support.tokenize import check_invariants as _check_invariants
from tests.support.tokenize import fresh_python as _fresh_python
from tests.support.tokenize import spans as _spans
from tests.support.tokenize import texts as _texts

# --- the article and Chinese words --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["jieba", "auto"])
def test_article_example_exact_tokens_and_offsets(mode: str) -> None:
    tokens = tokenize("中和有一個永和路", mode)
    assert tokens == [
        Token("中和", 0, 2),
        Token("有", 2, 3),
        Token("一個", 3, 5),
        Token("永和路", 5, 8),
    ]
    assert [t.label for t in tokens] == ["中和", "有", "一個", "永和路"]


def test_article_example_simplified() -> None:
    assert _texts(tokenize("中和有一个永和路", "jieba")) == ["中和", "有", "一个", "永和路"]


def test_article_example_inside_punctuation() -> None:
    text = "例如：中和有一個永和路。"
    tokens = tokenize(text, "jieba")
    _check_invariants(text, tokens)
    assert ["中和", "有", "一個", "永和路"] == _texts(tokens)[2:6]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("我愛自然語言處理", ("自然", "語言", "處理")),
        ("我爱自然语言处理", ("自然", "语言", "处理")),
    ],
)
def test_natural_language_processing_gives_words(text: str, words: tuple[str, ...]) -> None:
    got = _texts(tokenize(text, "jieba"))
    assert "".join(got) == text
    nature, language, processing = words
    assert processing in got
    assert nature + language in got or (nature in got and language in got)
    assert max(len(t) for t in got) >= 2


def test_user_dict_exists_and_lists_the_article_words() -> None:
    words = {line.split()[0] for line in USER_DICT_PATH.read_text(encoding="utf-8").splitlines()}
    assert {"中和", "永和路"} <= words


def test_traditional_and_simplified_cut_alike() -> None:
    """Reference: OpenCC's own phrase-level t2s converter; same length -> same cut."""
    converter = opencc.OpenCC("t2s")
    lines = ["中和有一個永和路", "我愛自然語言處理", "這個模型學會了注意力機制"]
    for path in sorted(SEED_DIR.glob("*.txt")):  # more lines if the article is here
        lines += [ln for ln in path.read_text(encoding="utf-8").splitlines() if contains_cjk(ln)]
    compared = 0
    for trad in lines:
        simp = converter.convert(trad)
        if len(simp) != len(trad) or simp == trad:
            continue
        compared += 1
        assert _spans(tokenize(trad, "jieba")) == _spans(tokenize(simp, "jieba")), trad
    assert compared >= 3


def test_mixed_english_and_chinese() -> None:
    text = "The cat 坐在墊子上"
    tokens = tokenize(text)
    _check_invariants(text, tokens)
    assert _texts(tokens) == ["The", "cat", "坐在", "墊子", "上"]
    assert tokens[2].start == 8


def test_jieba_mode_keeps_latin_words_whole() -> None:
    # jieba alone cuts non-ASCII letters one by one (caf / é); runs without CJK go to `word`
    text = "café 很好喝, naïve!"
    got = _texts(tokenize(text, "jieba"))
    assert got[0] == "café"
    assert got[-2:] == ["naïve", "!"]


def test_auto_picks_word_without_cjk_and_jieba_with_it() -> None:
    english = "Don't stop -- it's 3.14!"
    assert tokenize(english) == tokenize(english, "word")
    chinese = "自注意力機制 self-attention"
    assert tokenize(chinese) == tokenize(chinese, "jieba")


def test_contains_cjk() -> None:
    for yes in ["中", "abc中", "ひらがな", "カタカナ", "ㄅㄆㄇ", "\U00020000", "㐀"]:
        assert contains_cjk(yes), yes
    for no in ["", "hello", "한국어", "مرحبا", "，", "😀"]:
        assert not contains_cjk(no), no


# --- jieba's dictionary: cache and warm-up -----------------------------------------------------


_CACHE_SCRIPT = """
import threading
from attention_core.tokenize import shared_jieba, tokenize
got = []
threads = [threading.Thread(target=lambda: got.append(id(shared_jieba()))) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert len(got) == 8 and len(set(got)) == 1, got
print([t.text for t in tokenize("中和有一個永和路", "jieba")])
"""


def test_jieba_cache_goes_to_tempdir_and_loads_once(tmp_path: Path) -> None:
    """In a fresh process with an empty temp dir: the cache lands there, not in the repo."""
    before = set(REPO.rglob("*jieba*"))
    proc = _fresh_python(_CACHE_SCRIPT, TMPDIR=str(tmp_path), PYTHONPATH=str(REPO))
    assert proc.returncode == 0, proc.stderr
    assert "['中和', '有', '一個', '永和路']" in proc.stdout
    assert "Building prefix dict" not in proc.stderr  # jieba's logging is silenced
    assert list(tmp_path.glob("jieba*.cache"))  # the cache went to the temp dir
    assert set(REPO.rglob("*jieba*")) == before
    assert not list(REPO.rglob("*.cache"))


def test_warm_up_is_idempotent() -> None:
    warm_up()
    warm_up()
    assert _texts(tokenize("中和有一個永和路")) == ["中和", "有", "一個", "永和路"]
