"""Attention between pieces (characters, WordPiece, byte-level BPE, the reader's units)
pooled to the characters they make and to jieba words.

A class reads words; models read pieces. `word_groups` says which pieces belong to one
jieba word, `pool_weights` turns piece-to-piece attention into word-to-word attention (keys
summed, so rows still sum to 1; queries averaged). The lens pools a pretrained model's
WordPiece or characters (`pool_to_words`), the landing page the trained reader's characters
(`attention_core.pipeline.analyze`), the same-word statistic groups the reader's units
(`attention_core.reader.words`): one segmentation, the sidebar's jieba.

A byte-level BPE tokenizer (GPT-2, Llama 3, Qwen) cuts a Chinese character into byte
pieces, which print as mojibake ("ä¸Ń") and English words with "Ġ" for their space.
`readable_pieces` (from a tokenizer and ids) and `readable_tokens` (from the token strings
alone) give the text each run of pieces makes, a character split into bytes as one label,
and `ReadablePieces.pool` pools their attention to it (`pool_weights`); `.words()` groups
the same pieces by jieba word (GPT-2's byte alphabet: Radford et al. 2019, its
`bytes_to_unicode`).

Shape legend: n pieces, m words (or readable labels), k keys where they are not the n
queries (cross-attention).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from attention_core.tokenize import tokenize

__all__ = [
    "ReadablePieces",
    "WordGroups",
    "pool_to_words",
    "pool_weights",
    "readable_pieces",
    "readable_tokens",
    "word_groups",
]


@dataclass(frozen=True)
class WordGroups:
    """`group[i]`: the word piece i belongs to; `spans[w]`: word w's (start, end) in the text
    (a special token's own offsets); `joined[w]`: the word came from jieba (not a lone piece)."""

    group: np.ndarray  # (n,) int
    spans: list[tuple[int, int]]
    joined: list[bool]

    @property
    def lengths(self) -> list[int]:
        """Consecutive run lengths of `group` (pieces of one word are adjacent in a text)."""
        edges = np.flatnonzero(np.diff(self.group)) + 1
        return np.diff(np.concatenate([[0], edges, [len(self.group)]])).astype(int).tolist()


def word_groups(
    offsets: Sequence[tuple[int, int]], special: Sequence[bool], text: str
) -> WordGroups:
    """Each non-special piece belongs to the jieba word whose span holds the piece's first
    character; each special token (and a piece without an offset) is a word of its own."""
    if len(offsets) != len(special):
        raise ValueError(f"need one flag per offset, got {len(offsets)} and {len(special)}")
    words = [(t.start, t.end) for t in tokenize(text, "jieba")]
    starts = np.array([a for a, _ in words], dtype=int)
    group = np.zeros(len(offsets), dtype=int)
    spans: list[tuple[int, int]] = []
    joined: list[bool] = []
    index: dict[int, int] = {}  # jieba word → its group
    for piece, ((start, end), is_special) in enumerate(zip(offsets, special, strict=True)):
        word = None
        if not is_special and end > start and words:
            k = int(np.searchsorted(starts, start, side="right")) - 1
            if k >= 0 and words[k][0] <= start < words[k][1]:
                word = k
        if word is None:
            spans.append((start, end))
            joined.append(False)
            group[piece] = len(spans) - 1
        elif word in index:
            group[piece] = index[word]
        else:
            index[word] = len(spans)
            spans.append(words[word])
            joined.append(True)
            group[piece] = index[word]
    return WordGroups(group, spans, joined)


def pool_weights(
    weights: np.ndarray, group: np.ndarray, key_group: np.ndarray | None = None
) -> np.ndarray:
    """(..., n, n) piece attention → (..., m, m): a key word's pieces summed, a query word's
    rows averaged. `key_group`: the keys' own grouping where they are other pieces than the
    queries (cross-attention (..., n, k) → (..., m, m_k))."""
    w = np.asarray(weights, dtype=np.float64)
    keys = _sum_groups(w, group if key_group is None else key_group, axis=-1)  # (..., n, m_k)
    sizes = np.bincount(np.asarray(group, dtype=int))  # (m,) pieces per query word
    return _sum_groups(keys, group, axis=-2) / sizes[:, None]  # (..., m, m_k)


def _sum_groups(w: np.ndarray, group: np.ndarray, *, axis: int) -> np.ndarray:
    """`w` summed over the pieces of each group along `axis` ((..., n, ...) → (..., m, ...)).
    Groups that are runs in order (a text's pieces) are summed run by run, in O(size);
    any other grouping through a one-hot product."""
    group = np.asarray(group, dtype=int)
    steps = np.diff(group)
    if len(group) and group[0] == 0 and ((steps == 0) | (steps == 1)).all():
        starts = np.flatnonzero(np.concatenate([[1], steps]))  # (m,) first piece of each
        return np.add.reduceat(w, starts, axis=axis)
    member = _membership(group)  # (n, m)
    return np.moveaxis(np.moveaxis(w, axis, -1) @ member, -1, axis)


def _membership(group: np.ndarray) -> np.ndarray:
    """(n,) group index of each piece → (n, m) one-hot."""
    group = np.asarray(group, dtype=int)
    n, m = len(group), int(group.max()) + 1 if len(group) else 0
    member = np.zeros((n, m))
    member[np.arange(n), group] = 1.0
    return member


def pool_to_words(
    weights: np.ndarray,
    tokens: Sequence[str],
    offsets: Sequence[tuple[int, int]],
    special: Sequence[bool],
    text: str,
) -> tuple[list[str], np.ndarray]:
    """`weights` (..., n, n) between `tokens` → (word labels, (..., m, m)); a lone piece keeps
    its own label, a jieba word is labelled by its text."""
    n = np.shape(weights)[-1]
    if not (len(tokens) == len(offsets) == len(special) == n):
        raise ValueError(f"need one token, offset and flag per row ({n}), got {len(tokens)}")
    groups = word_groups(offsets, special, text)
    labels = []
    for w, ((start, end), joined) in enumerate(zip(groups.spans, groups.joined, strict=True)):
        labels.append(text[start:end] if joined else tokens[int(np.argmax(groups.group == w))])
    return labels, pool_weights(weights, groups.group)


@dataclass(frozen=True)
class ReadablePieces:
    """Runs of pieces shown as the text they make: `labels[w]` is made of the pieces
    `groups[w]` (consecutive, in order); `special[w]`: a special token, kept as it is."""

    labels: list[str]  # m
    groups: list[list[int]]  # m runs of piece indices, covering 0 … n−1 in order
    special: list[bool]  # m

    @property
    def group(self) -> np.ndarray:
        """(n,) the label each piece belongs to (`pool_weights`' `group`)."""
        return np.repeat(np.arange(len(self.groups)), [len(g) for g in self.groups])

    @property
    def merged(self) -> bool:
        """Whether any label is made of several pieces (else the pieces are the labels)."""
        return any(len(g) > 1 for g in self.groups)

    @property
    def piece_labels(self) -> list[str]:
        """(n,) the label of the run each piece belongs to: a character's byte pieces all read
        as the character (for views that keep one row per piece)."""
        return [self.labels[w] for w, run in enumerate(self.groups) for _ in run]

    @property
    def parts(self) -> list[tuple[int, int]]:
        """(n,) each piece's place in its run, (part, parts) from 1: (2, 3) is the second of
        a character's three byte pieces; (1, 1) a piece that is a label of its own."""
        return [(j + 1, len(run)) for run in self.groups for j in range(len(run))]

    def spans(self, offsets: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """(m,) each label's characters in the text, from its pieces' `offsets` (n): from the
        first piece's start to the last one's end; (0, 0) where no piece has one."""
        out = []
        for run in self.groups:
            own = [offsets[i] for i in run if offsets[i][1] > offsets[i][0]]
            out.append((min(a for a, _ in own), max(b for _, b in own)) if own else (0, 0))
        return out

    def pool(self, weights: np.ndarray, keys: ReadablePieces | None = None) -> np.ndarray:
        """The pieces' attention (..., n, n) pooled to the labels (..., m, m) by
        `pool_weights`: rows still sum to 1, each label's total kept. `keys`: the keys'
        pieces in cross-attention (..., n, k) → (..., m, m_k)."""
        return pool_weights(weights, self.group, None if keys is None else keys.group)

    def words(self, *, text: str | None = None) -> ReadablePieces:
        """The same pieces grouped by jieba word (`word_groups`) over the labels' text, or
        over `text` where the labels are its pieces in order; a special token stays alone."""
        joined = "".join(self.labels) if text is None else text
        offsets, at = [], 0
        for label in self.labels:  # each label's span, leading spaces left out
            start = joined.find(label.lstrip(), at) if label.strip() else -1
            if start < 0:
                offsets.append((at, at))
                continue
            offsets.append((start, start + len(label.lstrip())))
            at = start + len(label.lstrip())
        words = word_groups(offsets, self.special, joined)
        labels, groups, special = [], [], []
        for w, ((start, end), is_word) in enumerate(zip(words.spans, words.joined, strict=True)):
            members = [i for i, g in enumerate(words.group) if g == w]
            labels.append(joined[start:end] if is_word else self.labels[members[0]])
            groups.append([p for i in members for p in self.groups[i]])
            special.append(not is_word and all(self.special[i] for i in members))
        return ReadablePieces(labels, groups, special)


@cache
def _byte_alphabet() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the printable character that stands for each byte."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = {b: chr(b) for b in printable}
    for extra, b in enumerate(b for b in range(256) if b not in chars):
        chars[b] = chr(256 + extra)  # space → "Ġ", newline → "Ċ", …
    return {c: b for b, c in chars.items()}


_FALLBACK_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # SentencePiece's byte fallback


def _piece_bytes(token: str, byte_level: bool) -> bytes:
    """The bytes one piece stands for: byte-level characters decoded, a byte-fallback
    piece as its byte, "Ġ" and "▁" as a space and BPE's "</w>" dropped."""
    if byte_level:
        alphabet = _byte_alphabet()  # an added token outside it is text as it is
        return b"".join(bytes([alphabet[c]]) if c in alphabet else c.encode() for c in token)
    fallback = _FALLBACK_BYTE.fullmatch(token)
    if fallback:
        return bytes([int(fallback.group(1), 16)])
    return token.replace("Ġ", " ").replace("▁", " ").replace("</w>", "").encode("utf-8")


def _runs(tokens: Sequence[str], special: Sequence[bool], byte_level: bool) -> ReadablePieces:
    """Pieces joined into runs whose bytes are whole UTF-8 characters."""
    labels: list[str] = []
    groups: list[list[int]] = []
    flags: list[bool] = []
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    run: list[int] = []
    text = ""

    def close(final: bool) -> None:
        nonlocal run, text
        if run:
            text += decoder.decode(b"", final=final) if final else ""
            labels.append(text)
            groups.append(run)
            flags.append(False)
        decoder.reset()
        run, text = [], ""

    for i, (token, is_special) in enumerate(zip(tokens, special, strict=True)):
        if is_special:  # "<|endoftext|>", "[CLS]": shown as the tokenizer writes them
            close(final=True)
            labels.append(token)
            groups.append([i])
            flags.append(True)
            continue
        run.append(i)
        text += decoder.decode(_piece_bytes(token, byte_level))
        if not decoder.getstate()[0]:  # no character left half made
            close(final=False)
    close(final=True)  # a text cut inside a character: its bytes as "�"
    return ReadablePieces(labels, groups, flags)


def _byte_level_tokenizer(tokenizer: Any) -> bool:
    """Whether a transformers or `tokenizers` tokenizer spells bytes with GPT-2's alphabet."""
    if hasattr(tokenizer, "byte_decoder"):  # transformers' slow GPT-2 tokenizer
        return True
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    for part in ("decoder", "pre_tokenizer"):
        component = getattr(backend, part, None)  # a slow tokenizer's `decoder` is a dict
        if type(component).__module__.startswith("tokenizers"):
            if b'"ByteLevel"' in component.__getstate__():  # its JSON, nested ones too
                return True
    return False


def readable_pieces(tokenizer: Any, ids: Sequence[int]) -> ReadablePieces:
    """The text that the pieces `ids` make, as `tokenizer` (transformers' or a `tokenizers`
    Tokenizer) spells them: byte pieces of one character joined into one label, "Ġ" and
    "▁" as spaces, special tokens as they are. `.pool(weights)` pools the pieces' attention
    (n, n) to the labels; `.words()` to jieba words."""
    ids = [int(i) for i in ids]
    if hasattr(tokenizer, "convert_ids_to_tokens"):
        tokens = list(tokenizer.convert_ids_to_tokens(ids))
        specials = set(getattr(tokenizer, "all_special_ids", []))
    else:  # a tokenizers.Tokenizer
        tokens = [tokenizer.id_to_token(i) for i in ids]
        added = (
            tokenizer.get_added_tokens_decoder()
            if hasattr(tokenizer, "get_added_tokens_decoder")
            else {}
        )
        specials = {i for i, token in added.items() if token.special}
    return _runs(tokens, [i in specials for i in ids], _byte_level_tokenizer(tokenizer))


def readable_tokens(tokens: Sequence[str], special: Sequence[bool] | None = None) -> ReadablePieces:
    """`readable_pieces` from the token strings alone (what a notebook hands BertViz's
    views): they are byte-level when every character is in GPT-2's byte alphabet and one
    at least is a remapped byte ("Ġ", "Ċ", "ä¸Ń"'s "Ń"); otherwise "Ġ", "▁" and "</w>"
    are prettified as BertViz does, byte-fallback pieces ("<0xE4>") joined. `special`
    flags special tokens (default: none), which stay as they are."""
    tokens = [str(t) for t in tokens]
    flags = [False] * len(tokens) if special is None else [bool(s) for s in special]
    alphabet = _byte_alphabet()
    plain = [t for t, s in zip(tokens, flags, strict=True) if not s]
    byte_level = all(c in alphabet for t in plain for c in t) and any(
        ord(c) >= 256 for t in plain for c in t
    )
    return _runs(tokens, flags, byte_level)
