"""jieba's words over the reader's units: which characters belong together.

The reader reads characters; a class reads words. `word_lengths` groups the units of a
text by the jieba word each starts in (a unit outside every word, e.g. after a space,
stays a group of one), so the same-word statistic (`attention_core.stats.same_word`) and
word-pooled views use one segmentation, the sidebar's jieba.
"""

from __future__ import annotations

from attention_core.reader.vocab import Unit, units
from attention_core.tokenize import tokenize

__all__ = ["word_lengths"]


def word_lengths(text: str, pieces: list[Unit] | None = None) -> list[int]:
    """Consecutive group sizes over `pieces` (default: `units(text)`), one per jieba word."""
    pieces = units(text) if pieces is None else pieces
    words = [tok for tok in tokenize(text, "jieba") if tok.text.strip()]
    lengths: list[int] = []
    w = 0
    i = 0
    while i < len(pieces):
        while w < len(words) and words[w].end <= pieces[i].start:
            w += 1
        if w < len(words) and words[w].start <= pieces[i].start < words[w].end:
            end = words[w].end
            size = 0
            while i < len(pieces) and pieces[i].start < end:
                size += 1
                i += 1
            lengths.append(size)
            w += 1
        else:
            lengths.append(1)
            i += 1
    return lengths
