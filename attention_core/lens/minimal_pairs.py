"""Minimal pairs: how one token's row of attention changes between two sentences, on the
tokens both share.

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RowChange:
    """How one token's row of attention changes between two sentences (a minimal pair).

    `pairs` are the (position in A, position in B) of the tokens both share, matched in
    order (difflib); `query` is the followed token's (position in A, position in B);
    `change[l, h]` is the total variation ½ Σ |A − B| of its row over the shared keys;
    `rows_a` / `rows_b` (L, H, s) are the two rows on those keys."""

    pairs: list[tuple[int, int]]
    query: tuple[int, int]
    change: np.ndarray  # (L, H)
    rows_a: np.ndarray  # (L, H, s)
    rows_b: np.ndarray  # (L, H, s)

    def ranking(self) -> list[tuple[int, int]]:
        """(layer, head) pairs, largest change first."""
        order = np.argsort(-self.change, axis=None, kind="stable")
        return [tuple(int(v) for v in np.unravel_index(i, self.change.shape)) for i in order]


def shared_tokens(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(i, j) with a[i] == b[j] for the tokens both sequences share, matched in order."""
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    return [
        (block.a + k, block.b + k)
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    ]


def row_change(
    attentions_a: np.ndarray,
    tokens_a: Sequence[str],
    attentions_b: np.ndarray,
    tokens_b: Sequence[str],
    query: int,
) -> RowChange | None:
    """The change of token `query` (a position in A)'s row between A and B, per head; None
    when that token has no counterpart in B. `attentions_*` (L, H, n_*, n_*)."""
    a = np.asarray(attentions_a, dtype=np.float64)
    b = np.asarray(attentions_b, dtype=np.float64)
    if a.shape[:2] != b.shape[:2]:
        raise ValueError(f"both sentences must come from one model: {a.shape} vs {b.shape}")
    pairs = shared_tokens(tokens_a, tokens_b)
    partner = dict(pairs).get(query)
    if partner is None:
        return None
    cols_a = [i for i, _ in pairs]
    cols_b = [j for _, j in pairs]
    rows_a = a[:, :, query, cols_a]  # (L, H, s)
    rows_b = b[:, :, partner, cols_b]  # (L, H, s)
    change = 0.5 * np.abs(rows_a - rows_b).sum(axis=-1)  # (L, H)
    return RowChange(pairs, (query, partner), change, rows_a, rows_b)
