"""jieba's words over the reader's units: which characters belong together.

The reader reads characters; a class reads words. `word_lengths` groups the units of a
text by the jieba word each starts in (a unit outside every word, e.g. after a space,
stays a group of one), so the same-word statistic (`attention_core.stats.same_word`) uses
the segmentation every word-pooled view uses (`attention_core.pooling.word_groups`).
"""

from __future__ import annotations

import numpy as np

from attention_core.pooling import word_groups
from attention_core.reader.vocab import Unit, units
from attention_core.stats import SameWord, same_word

__all__ = ["sentence_same_word", "word_lengths"]


def word_lengths(text: str, pieces: list[Unit] | None = None) -> list[int]:
    """Consecutive group sizes over `pieces` (default: `units(text)`), one per jieba word."""
    pieces = units(text) if pieces is None else pieces
    if not pieces:
        return []
    groups = word_groups([(u.start, u.end) for u in pieces], [False] * len(pieces), text)
    return groups.lengths


def sentence_same_word(weights: np.ndarray, text: str) -> list[SameWord] | None:
    """Same-word attention of each head on one sentence as the reader read it: `weights`
    (H, n, n) over [BOS] and the first n-1 units of `text` (causal partners, words shuffled
    with their lengths kept). None when no jieba word there has two or more units."""
    kept = np.shape(weights)[-1] - 1  # units after [BOS]
    lengths: list[int] = []
    for size in word_lengths(text):
        if sum(lengths) + size > kept:
            size = kept - sum(lengths)  # the text was cut at the reader's context
        if size > 0:
            lengths.append(size)
    if max(lengths, default=1) < 2:
        return None
    return same_word(weights, lengths, offset=1, causal=True)
