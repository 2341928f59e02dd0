"""Tests for attention_core/tokenize.py: offsets in every mode, references, hostile input.

References: Python's `re` for the word pattern, the `regex` module's grapheme clusters
(\\X), transformers' own encoding and a greedy longest-match WordPiece written here from
vocab.txt. The article's example and jieba's Chinese words: test_tokenize_jieba.py.
"""

from __future__ import annotations

import os
import re
import string
import unicodedata

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attention_core.tokenize import (
    TOKENIZER_MODES,
    Token,
    contains_cjk,
    tokenize,
    wordpiece_tokenizer,
)
from tests.support.availability import needs_minilm, require_minilm, seed_files
from tests.support.tokenize import REPO
from tests.support.tokenize import check_invariants as _check_invariants
from tests.support.tokenize import fresh_python as _fresh_python
from tests.support.tokenize import spans as _spans
from tests.support.tokenize import texts as _texts

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NON_WORDPIECE = [m for m in TOKENIZER_MODES if m != "wordpiece"]
CUTTING_MODES = ["auto", "jieba", "char", "word"]  # modes that drop every blank character


def _blank(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cs")


# --- char and word modes against references -----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "👨\u200d👩\u200d👧 family",
        "e\u0301te\u0301",
        "🇹🇼🇯🇵",
        "👍🏽 ok",
        "1\ufe0f\u20e3",
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
        "שָׁלוֹם",
        "中和有一個永和路",
    ],
)
def test_char_mode_matches_grapheme_clusters(text: str) -> None:
    expected = [c for c in regex.findall(r"\X", text) if not c.isspace()]
    assert _texts(tokenize(text, "char")) == expected


def test_char_mode_one_token_per_character() -> None:
    text = "中和 有\t一個\n永和路!"
    assert _texts(tokenize(text, "char")) == [c for c in text if not c.isspace()]


_PLAIN = st.characters(
    exclude_categories=("Cc", "Cs", "Mn", "Mc", "Me"),
    exclude_characters="\u200c\u200d\uff9e\uff9f",
).filter(
    lambda c: (
        not contains_cjk(c)
        and not 0x1F1E6 <= ord(c) <= 0x1F1FF
        and not 0x1F3FB <= ord(c) <= 0x1F3FF
        and not 0xFE00 <= ord(c) <= 0xFE0F
        and not 0xE0000 <= ord(c) <= 0xE01EF
    )
)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_PLAIN, max_size=60))
def test_word_mode_matches_re_pattern(text: str) -> None:
    """Reference: `\\w+|[^\\w\\s]` from Python's re, for text without clusters or CJK."""
    expected = [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]
    assert _spans(tokenize(text, "word")) == expected


@given(st.text(alphabet=string.printable, max_size=80))
def test_word_mode_ascii(text: str) -> None:
    expected = re.findall(r"\w+|[^\w\s]", text)
    assert _texts(tokenize(text, "word")) == expected


def test_word_mode_splits_cjk_and_keeps_marks() -> None:
    assert _texts(tokenize("AI模型ok", "word")) == ["AI", "模", "型", "ok"]
    assert _texts(tokenize("cafe\u0301 au lait", "word")) == ["cafe\u0301", "au", "lait"]


@pytest.mark.parametrize("text", ["مرحبا بالعالم", "שָׁלוֹם עוֹלָם", "नमस्ते दुनिया", "Привет мир"])
def test_word_mode_rtl_and_marks_follow_spaces(text: str) -> None:
    assert _texts(tokenize(text, "word")) == text.split()


# --- manual mode ------------------------------------------------------------------------------


def test_manual_mode_keeps_markup_literally() -> None:
    text = "<script>alert(1)</script> | **bold**"
    tokens = tokenize(text, "manual")
    assert tokens == [Token("<script>alert(1)</script>", 0, 25), Token("**bold**", 28, 36)]


def test_manual_mode_strips_and_drops_empty_parts() -> None:
    text = " 中和 |有||  一個 | 永和路 | "
    tokens = tokenize(text, "manual")
    _check_invariants(text, tokens)
    assert _texts(tokens) == ["中和", "有", "一個", "永和路"]
    assert _spans(tokens) == [(1, 3), (5, 6), (10, 12), (15, 18)]


def test_manual_mode_without_bar_is_one_token() -> None:
    assert _texts(tokenize("  a b  ", "manual")) == ["a b"]


# --- wordpiece --------------------------------------------------------------------------------


def _reference_wordpiece(word: str, vocab: set[str]) -> list[str]:
    """Greedy longest-match-first WordPiece (BERT's reference algorithm), for one word."""
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


@pytest.fixture(scope="module")
def vocab() -> list[str]:
    folder = require_minilm()
    return (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()


@needs_minilm
def test_wordpiece_hello_world(vocab: list[str]) -> None:
    tokens = tokenize("Hello world", "wordpiece")
    assert [t.label for t in tokens] == ["hello", "world"]
    assert tokens == [Token("Hello", 0, 5, piece="hello"), Token("world", 6, 11)]
    # real ids, not [UNK]: the ids transformers gives are the vocab.txt line numbers
    ids = wordpiece_tokenizer()("Hello world", add_special_tokens=False)["input_ids"]
    assert ids == [vocab.index("hello"), vocab.index("world")]


@needs_minilm
def test_wordpiece_unknown_emoji() -> None:
    text = "a 😀 b"
    tokens = tokenize(text, "wordpiece")
    _check_invariants(text, tokens)
    assert tokens[1] == Token("😀", 2, 3, piece="[UNK]")


@needs_minilm
def test_wordpiece_continuation_pieces(vocab: list[str]) -> None:
    text = "tokenization works"
    tokens = tokenize(text, "wordpiece")
    _check_invariants(text, tokens)
    expected = [p for w in text.split() for p in _reference_wordpiece(w, set(vocab))]
    assert [t.label for t in tokens] == expected
    assert any(t.label.startswith("##") and t.text == t.label[2:] for t in tokens)


@needs_minilm
def test_wordpiece_special_tokens() -> None:
    text = "Hello world"
    tokens = tokenize(text, "wordpiece", special_tokens=True)
    assert tokens[0] == Token("", 0, 0, piece="[CLS]", special=True)
    assert tokens[-1] == Token("", 11, 11, piece="[SEP]", special=True)
    assert [t.special for t in tokens] == [True, False, False, True]
    tok = wordpiece_tokenizer()
    assert [t.label for t in tokens] == tok.convert_ids_to_tokens(tok(text)["input_ids"])


@needs_minilm
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=40))
def test_wordpiece_offsets_and_pieces_match_transformers(text: str) -> None:
    tokens = tokenize(text, "wordpiece")
    _check_invariants(text, tokens)
    tok = wordpiece_tokenizer()
    expected = tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])
    assert [t.label for t in tokens] == expected


@needs_minilm
@settings(max_examples=40, deadline=None)
@given(words=st.lists(st.text(alphabet=string.ascii_letters, min_size=1, max_size=20), max_size=6))
def test_wordpiece_matches_reference_algorithm(words: list[str], vocab: list[str]) -> None:
    text = " ".join(words)
    expected = [p for w in words for p in _reference_wordpiece(w.lower(), set(vocab))]
    assert [t.label for t in tokenize(text, "wordpiece")] == expected


# --- every mode: invariants and hostile input -----------------------------------------------------

_MIXED = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(
            list("中和有一個永和路自然語言處理 |\t\n\u200d\u0301\U0001f1f9\U0001f1fc🏽😀")
        ),
    ),
    max_size=60,
)


@pytest.mark.parametrize("mode", NON_WORDPIECE)
@settings(max_examples=150, deadline=None)
@given(text=_MIXED)
def test_offsets_invariant(mode: str, text: str) -> None:
    tokens = tokenize(text, mode)
    _check_invariants(text, tokens)
    if mode in CUTTING_MODES:
        # nothing is lost but blanks, and no token holds a blank character
        assert "".join(_texts(tokens)) == "".join(c for c in text if not _blank(c))
        assert not any(_blank(c) for t in tokens for c in t.text)


HOSTILE = [
    "👨\u200d👩\u200d👧\u200d👦",
    "\u200d\u200d",
    "\u0301\u0301 e\u0301",
    " \u0301",
    "🇹🇼🇹",
    "مرحبا بالعالم، كيف حالك؟",
    "שָׁלוֹם עוֹלָם",
    "\u202eevil\u202c text",
    "a\x00b\x01c\x7f",
    "\x00",
    "中\x00文",
    "a\ud800b",
    "\u3000中和\u3000永和路\u3000",
    "\r\n\x0b\x0c\x1c\x85\xa0",
    "\ufeffBOM",
    "<b>bold</b> & &amp; | x",
]


@pytest.mark.parametrize("mode", TOKENIZER_MODES)
@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_input(mode: str, text: str) -> None:
    if mode == "wordpiece":
        require_minilm()
    tokens = tokenize(text, mode)
    _check_invariants(text, tokens)
    assert not any(t.text.isspace() for t in tokens)


@pytest.mark.parametrize("mode", ["char", "word", "jieba"])
def test_controls_and_surrogates_separate(mode: str) -> None:
    assert _texts(tokenize("a\x00b\ud800c", mode)) == ["a", "b", "c"]


@pytest.mark.parametrize("mode", TOKENIZER_MODES)
@pytest.mark.parametrize("text", ["", " ", "   \t\n  ", "\u3000", "|", " | | "])
def test_empty_and_blank_give_no_tokens(mode: str, text: str) -> None:
    if mode == "wordpiece":
        require_minilm()
    tokens = tokenize(text, mode)
    if "|" in text and mode != "manual":  # "|" is punctuation outside manual mode
        assert _texts(tokens) == ["|"] * text.count("|")
    else:
        assert tokens == []
    wrapped = tokenize(text, mode, special_tokens=True)
    assert [t.piece for t in wrapped] == ["[CLS]", *[t.piece for t in tokens], "[SEP]"]
    assert wrapped[-1].start == wrapped[-1].end == len(text)


@pytest.mark.parametrize("mode", NON_WORDPIECE)
def test_special_tokens_every_mode(mode: str) -> None:
    text = "中和有一個永和路"
    plain = tokenize(text, mode)
    wrapped = tokenize(text, mode, special_tokens=True)
    assert wrapped[1:-1] == plain
    assert [(t.special, t.text, t.start, t.end) for t in (wrapped[0], wrapped[-1])] == [
        (True, "", 0, 0),
        (True, "", 8, 8),
    ]
    assert [wrapped[0].label, wrapped[-1].label] == ["[CLS]", "[SEP]"]


@pytest.mark.parametrize("mode", TOKENIZER_MODES)
def test_ten_thousand_characters(mode: str) -> None:
    if mode == "wordpiece":
        require_minilm()
    text = ("中和有一個永和路，The cat sat. 我愛自然語言處理 | 😀 " * 400)[:10_000]
    tokens = tokenize(text, mode)
    _check_invariants(text, tokens)
    assert len(tokens) > (1 if mode == "manual" else 2_000)


@pytest.mark.slow
def test_hundred_thousand_chinese_characters() -> None:
    text = ("中和有一個永和路我愛自然語言處理" * 6_250)[:100_000]
    tokens = tokenize(text, "jieba")
    _check_invariants(text, tokens)
    assert "".join(_texts(tokens)) == text
    assert _texts(tokens[:4]) == ["中和", "有", "一個", "永和路"]


@pytest.mark.parametrize("mode", NON_WORDPIECE)
def test_seed_article(mode: str) -> None:
    for path in seed_files():  # none: skip locally, fail under CI
        text = path.read_text(encoding="utf-8")
        _check_invariants(text, tokenize(text, mode))


# --- errors and state ---------------------------------------------------------------------------


def test_unknown_mode_lists_valid_modes() -> None:
    with pytest.raises(ValueError, match="valid modes: auto, jieba, char, wordpiece, word, manual"):
        tokenize("abc", "bpe")


@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["a"]])
def test_non_string_text(bad: object) -> None:
    with pytest.raises(ValueError, match="text must be a str"):
        tokenize(bad, "word")  # type: ignore[arg-type]


def test_token_label() -> None:
    assert Token("Hello", 0, 5, piece="hello").label == "hello"
    assert Token("中和", 0, 2).label == "中和"
    assert Token("", 0, 0, piece="[CLS]", special=True).label == "[CLS]"


_WORDPIECE_THREADS_SCRIPT = """
import threading
from attention_core.tokenize import tokenize
errors, labels = [], []
def work():
    try:
        labels.append(tuple(t.label for t in tokenize("Hello world", "wordpiece")))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
assert set(labels) == {("hello", "world")}, labels
"""


@needs_minilm
def test_wordpiece_first_use_from_many_threads() -> None:
    """Streamlit sessions are threads: concurrent first calls must all get the tokenizer."""
    proc = _fresh_python(_WORDPIECE_THREADS_SCRIPT, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")
    assert proc.returncode == 0, proc.stderr
