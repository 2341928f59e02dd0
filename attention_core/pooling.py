"""Attention between pieces (characters, WordPiece, the reader's units) pooled to jieba words.

A class reads words; models read pieces. `word_groups` says which pieces belong to one
jieba word, `pool_weights` turns piece-to-piece attention into word-to-word attention (keys
summed, so rows still sum to 1; queries averaged). The lens pools a pretrained model's
WordPiece or characters (`pool_to_words`), the landing page the trained reader's characters
(`attention_core.pipeline.analyze`), the same-word statistic groups the reader's units
(`attention_core.reader.words`): one segmentation, the sidebar's jieba.

Shape legend: n pieces, m words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.tokenize import tokenize

__all__ = ["WordGroups", "pool_to_words", "pool_weights", "word_groups"]


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


def pool_weights(weights: np.ndarray, group: np.ndarray) -> np.ndarray:
    """(..., n, n) piece attention → (..., m, m): a key word's pieces summed, a query word's
    rows averaged."""
    w = np.asarray(weights, dtype=np.float64)
    n, m = len(group), int(group.max()) + 1 if len(group) else 0
    member = np.zeros((n, m))
    member[np.arange(n), group] = 1.0  # (n, m): piece → word
    keys = w @ member  # (..., n, m)
    return np.einsum("nm,...nk->...mk", member, keys) / member.sum(axis=0)[:, None]


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
