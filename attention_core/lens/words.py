"""Attention between pieces (characters, WordPiece) pooled to jieba words.

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pool_to_words(
    weights: np.ndarray,
    tokens: Sequence[str],
    offsets: Sequence[tuple[int, int]],
    special: Sequence[bool],
    text: str,
) -> tuple[list[str], np.ndarray]:
    """Attention between pieces (characters, WordPiece) pooled to jieba words.

    Each non-special piece belongs to the jieba word whose span holds the piece's first
    character; each special token (and a piece without an offset) stays a word of its own.
    On the key side the pieces' weights are summed (rows still sum to 1); on the query side
    they are averaged. `weights` (..., n, n) → (word labels, (..., m, m)).
    """
    from attention_core.tokenize import tokenize

    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[-1]
    if not (len(tokens) == len(offsets) == len(special) == n):
        raise ValueError(f"need one token, offset and flag per row ({n}), got {len(tokens)}")
    spans = [(t.start, t.end) for t in tokenize(text, "jieba")]
    starts = np.array([a for a, _ in spans], dtype=int)
    labels: list[str] = []
    group = np.zeros(n, dtype=int)
    index: dict[int, int] = {}  # jieba word → its group
    for piece, (token, (start, end), is_special) in enumerate(
        zip(tokens, offsets, special, strict=True)
    ):
        word = None
        if not is_special and end > start and spans:
            k = int(np.searchsorted(starts, start, side="right")) - 1
            if k >= 0 and spans[k][0] <= start < spans[k][1]:
                word = k
        if word is None:
            labels.append(token)
            group[piece] = len(labels) - 1
        elif word in index:
            group[piece] = index[word]
        else:
            index[word] = len(labels)
            labels.append(text[spans[word][0] : spans[word][1]])
            group[piece] = index[word]
    member = np.zeros((n, len(labels)))
    member[np.arange(n), group] = 1.0  # (n, m): piece → word
    keys = w @ member  # (..., n, m): a key word's pieces summed
    pooled = np.einsum("nm,...nk->...mk", member, keys) / member.sum(axis=0)[:, None]  # (..., m, m)
    return labels, pooled
