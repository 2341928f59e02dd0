"""Attention rollout (Abnar & Zuidema 2020) of a few rows through long maps: each row carried
backward through the layers' `AttentionMap`s (`AttentionMap.propagate`), never an n × n product.

Shape legend: H heads, n tokens, r rows asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from attention_core.limits import MAX_TOKENS
from attention_core.long.map import AttentionMap, as_map

__all__ = ["rollout_full", "rollout_rows"]


def rollout_rows(
    layers: Sequence[AttentionMap | np.ndarray | Tensor],
    rows: Sequence[int] | np.ndarray,
    *,
    add_residual: bool = True,
    head_reduce: str = "mean",
) -> np.ndarray:
    """Rows `rows` of attention rollout after the last layer: (r, n) float32, every row sums
    to 1. `layers` first to last, each an AttentionMap or weights (H, n, n). Ã_l is
    0.5·I + 0.5·A_l (A_l without `add_residual`), A_l the heads' mean ("mean") or max ("max"),
    rows renormalised; rollout R = Ã_L ⋯ Ã_1 (lens.combine.rollout's last layer)."""
    maps = [as_map(x) for x in layers]
    if not maps:
        raise ValueError("rollout needs at least one layer")
    n = maps[0].n
    if any(m.n != n for m in maps):
        raise ValueError(f"every layer must have the same n, got {[m.n for m in maps]}")
    if head_reduce not in ("mean", "max"):
        raise ValueError(f"head_reduce must be 'mean' or 'max', got {head_reduce!r}")
    idx = np.asarray(rows)
    idx = idx.astype(np.int64) if idx.size == 0 else idx  # [] reads as float64
    if idx.ndim != 1 or idx.dtype.kind not in "iu" or ((idx < 0) | (idx >= n)).any():
        raise ValueError(f"rows must be a list of token indices in 0..{n - 1}, got {rows!r}")
    v = torch.zeros(len(idx), n)  # (r, n): one-hot rows, carried back through the layers
    v[torch.arange(len(idx)), torch.from_numpy(idx.astype(np.int64))] = 1.0
    alpha = 0.5 if add_residual else 0.0
    for m in reversed(maps):
        v = m.propagate(v, alpha, head_reduce)
    return v.numpy()


def rollout_full(
    layers: Sequence[AttentionMap | np.ndarray | Tensor],
    *,
    add_residual: bool = True,
    head_reduce: str = "mean",
) -> np.ndarray:
    """Every row of `rollout_rows`: (n, n), for n ≤ MAX_TOKENS only (it costs H·n³ a layer)."""
    maps = [as_map(x) for x in layers]
    n = maps[0].n if maps else 0
    if n > MAX_TOKENS:
        raise ValueError(f"rollout_full takes n ≤ {MAX_TOKENS}, got {n}: use rollout_rows")
    rows = np.arange(n)
    return rollout_rows(maps, rows, add_residual=add_residual, head_reduce=head_reduce)
