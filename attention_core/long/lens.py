"""The engineer's lens on long texts: what attention_core.lens computes from (L, H, n, n)
weights, computed from `AttentionMap`s (attention_core.long.map) without ever holding n² floats
of a head.

- `received`: the attention each key receives, averaged over the query rows, (n,) per head:
  the column means of the map. Where a long text's attention pools (the first token, a
  separator, punctuation: "attention sinks", Xiao et al. 2023, "Efficient Streaming
  Language Models with Attention Sinks") reads at a glance at 4 096 tokens.
- `sink_mass`: lens.sinks' mass per kind of token ([CLS], [SEP], first, punctuation), (L, H),
  from the received attention: the same numbers as `lens.sinks(...).mass`.
- `rollout_row`: one query's attention rollout (Abnar & Zuidema 2020) through every layer,
  (n,), and `top_keys`, the keys it ends on.
- `long_row_change`: a minimal pair of long texts — how one token's row changes between
  them on the tokens both share, every layer × head (lens.row_change's RowChange).

Each map is read in row blocks of at most `amap.scratch` floats: one head of 4 096 tokens
costs n² exp's (~60 ms on one core here) and holds 8 MB at most. The views that have no
long form say why: attention flow is n² max-flow problems (lens.FLOW_MAX_TOKENS), ablation
one forward pass of n tokens per head, norm-weighted maps the model's value vectors (a map
does not keep them), and the neuron view draws n × D cells of q⊙k.

Shape legend: L layers, H heads, n tokens, r rows of a block.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attention_core.lens.minimal_pairs import RowChange, shared_tokens
from attention_core.lens.sink_tokens import SINK_KINDS, sink_positions
from attention_core.long.map import AttentionMap
from attention_core.long.rollout import rollout_rows

__all__ = ["long_row_change", "received", "rollout_row", "sink_mass", "top_keys"]


def received(amap: AttentionMap, head: int) -> np.ndarray:
    """The mean over query rows of head `head`'s weights on each key: (n,) float64, summing
    to 1 (every row does)."""
    n = amap.n
    step = max(1, amap.scratch // max(1, n))  # rows a block: ≤ scratch floats of weights
    total = np.zeros(n, dtype=np.float64)
    for a in range(0, n, step):
        b = min(n, a + step)
        hi = b if amap.causal else n  # a causal block's rows see keys < b only
        total[:hi] += amap.exact(head, slice(a, b), slice(0, hi)).sum(axis=0, dtype=np.float64)
    return total / n


def sink_mass(
    maps: Sequence[AttentionMap], tokens: Sequence[str], special: Sequence[bool]
) -> tuple[dict[str, np.ndarray], dict[str, bool], np.ndarray]:
    """Per kind of sink token (lens.SINK_KINDS), the mean share of each query's attention on
    those tokens, (L, H) — `lens.sinks(...).mass` — and whether the text has such a token;
    also every head's received attention (L, H, n), which the mass is summed from."""
    where = sink_positions(tokens, special)
    got = np.stack([np.stack([received(m, h) for h in range(m.num_heads)]) for m in maps])
    mass = {kind: got[..., where[kind]].sum(axis=-1) for kind in SINK_KINDS}  # (L, H) each
    present = {kind: bool(where[kind].any()) for kind in SINK_KINDS}
    return mass, present, got


def rollout_row(maps: Sequence[AttentionMap], row: int) -> np.ndarray:
    """Query `row`'s attention rollout through every layer: (n,), summing to 1 — the row of
    lens.rollout(...)[-1], carried backward through the maps (long.rollout.rollout_rows)."""
    return rollout_rows(maps, [row])[0].astype(np.float64)


def top_keys(weights: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The `k` largest entries of `weights` (n,) as (index, value), largest first (ties: the
    earlier index first)."""
    w = np.asarray(weights, dtype=np.float64)
    k = max(0, min(int(k), w.size))
    order = np.lexsort((np.arange(w.size), -w))[:k]
    return [(int(i), float(w[i])) for i in order]


def long_row_change(
    maps_a: Sequence[AttentionMap],
    tokens_a: Sequence[str],
    maps_b: Sequence[AttentionMap],
    tokens_b: Sequence[str],
    query: int,
) -> RowChange | None:
    """`lens.row_change` of two long texts' maps: token `query` (a position in A)'s row in
    every layer × head, against its counterpart's in B on the keys both share (matched in
    order, difflib); None when it has no counterpart. Reads one row per head: (L, H, n)."""
    if len(maps_a) != len(maps_b) or maps_a[0].num_heads != maps_b[0].num_heads:
        raise ValueError("both texts must come from one model")
    pairs = shared_tokens(tokens_a, tokens_b)
    partner = dict(pairs).get(query)
    if partner is None:
        return None
    cols_a = np.array([i for i, _ in pairs])  # (s,)
    cols_b = np.array([j for _, j in pairs])

    def rows(maps: Sequence[AttentionMap], row: int, cols: np.ndarray) -> np.ndarray:
        return np.stack(
            [
                np.stack(
                    [
                        m.exact(h, slice(row, row + 1), slice(0, m.n))[0, cols]
                        for h in range(m.num_heads)
                    ]
                )
                for m in maps
            ]
        ).astype(np.float64)  # (L, H, s)

    rows_a, rows_b = rows(maps_a, query, cols_a), rows(maps_b, partner, cols_b)
    change = 0.5 * np.abs(rows_a - rows_b).sum(axis=-1)  # (L, H)
    return RowChange(pairs, (query, partner), change, rows_a, rows_b)
