"""The long map's colours relative to an even share, defined for exact and pooled cells.

The short heatmaps (`attention_core.figures.scales`) colour a weight relative to its row's
even share e_i = 1 / k_i, k_i the keys row i may attend to: n, or i + 1 for row i under a
causal mask, whose later keys get no colour at all. A long map's cell is either one weight or
a pooled block of rows × keys (`attention_core.long.map.Tile`); its relative value is:

    exact   w_ij / e_i = w_ij · k_i, as on the short heatmaps.
    "mass", "mean"
            Σ_cell w / Σ_cell e: the attention the cell's rows give its keys, in multiples of
            what rows attending evenly would give them (e_ij = e_i where key j is visible to
            row i, else 0). "mass" and "mean" divide the same sum by the same cell size, so
            both read the same; without a mask it is n × the cell's mean weight.
    "max"   max_cell w_ij · k_i: the cell's strongest weight in multiples of its own row's
            even share, so a sharp peak stays as visible as under "max" itself.
    NaN     no row of the cell may see a key of the cell (above a causal diagonal): no
            colour, as masked cells on the short heatmaps.

A cell of an untrained head is near 1 (white) whatever its pooling, and a cell exactly 1 is
attended exactly evenly. The browser (ui/long/chart_colours.js) computes a cell's relative
value from the cell itself (`relative_cells`: its value and `even_mass`, the same closed
form), except a "max" cell of a causal map, whose rows' even shares differ: its weights are
needed, so the tile route sends those cells (`sends_relative`, `relative_values`).

Shape legend: n tokens, R × C pooled cells.
"""

from __future__ import annotations

import numpy as np

from attention_core.figures.scales import colour_scale, colour_stops
from attention_core.long.map import AttentionMap, Tile, row_blocks

__all__ = [
    "colour_key",
    "even_mass",
    "relative_cells",
    "relative_values",
    "row_keys",
    "sends_relative",
]


def row_keys(n: int, causal: bool) -> np.ndarray:
    """(n,) float64: the keys each query row may attend to, k_i (its even share is 1/k_i)."""
    return np.arange(1, n + 1, dtype=np.float64) if causal else np.full(n, float(n))


def even_mass(n: int, causal: bool, row_edges: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    """(R, C) float64: Σ e_ij over each cell [row_edges[a], row_edges[a + 1]) ×
    [col_edges[b], col_edges[b + 1]) of the even attention e_ij = 1/k_i (0 for masked keys),
    in closed form from harmonic sums, O(R·C) whatever the cell size."""
    a, b = (np.asarray(row_edges, np.int64)[s, None] for s in (slice(None, -1), slice(1, None)))
    c, d = (np.asarray(col_edges, np.int64)[None, s] for s in (slice(None, -1), slice(1, None)))
    if not causal:
        return ((b - a) * (d - c) / n).astype(np.float64)  # (R, C)
    # harm[x] = Σ_{i=1..x} 1/i, so Σ_{r=x}^{y-1} 1/(r + 1) = harm[y] − harm[x]
    harm = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])
    # rows c ≤ r < d − 1 see r + 1 − c of the cell's keys: Σ (r + 1 − c)/(r + 1)
    lo, hi = np.maximum(a, c), np.minimum(b, d - 1)
    lo, hi = np.broadcast_arrays(lo, np.maximum(hi, lo))
    part = (hi - lo) - c * (harm[hi] - harm[lo])
    # rows r ≥ d − 1 see all d − c keys of the cell: (d − c) · Σ 1/(r + 1)
    lo = np.minimum(np.maximum(a, d - 1), b)
    return part + (d - c) * (harm[np.broadcast_to(b, lo.shape)] - harm[lo])  # (R, C)


def relative_values(m: AttentionMap, tile: Tile) -> np.ndarray:
    """(R, C) float32: `tile`'s cells relative to the even share (see the module docstring),
    NaN where the cell has no visible key. `tile` must be a tile of `m`."""
    if tile.exact or tile.reduce != "max" or not m.causal:
        return relative_cells(tile, m.n, causal=m.causal)
    out = _causal_max(m, tile)  # (R, C)
    out[even_mass(m.n, m.causal, tile.row_edges, tile.col_edges) <= 0] = np.nan
    return out.astype(np.float32)


def _causal_max(m: AttentionMap, tile: Tile) -> np.ndarray:
    """(R, C) float64: max over each cell of w_ij · k_i, streamed over row blocks as the
    map's own "max" pooling is: each row's maximum in each column cell, times the row's keys,
    then the maximum over the cell's rows (cells spanning blocks combined by a maximum)."""
    re, ce = tile.row_edges, tile.col_edges
    keys = row_keys(m.n, m.causal)  # (n,)
    out = np.zeros((len(re) - 1, len(ce) - 1))  # (R, C); weights ≥ 0
    c0 = int(ce[0])
    for a, hi, w in row_blocks(m, tile.head, (int(re[0]), int(re[-1])), (c0, int(ce[-1]))):
        b = a + w.shape[0]  # w (b − a, hi − c0)
        cells = int(np.searchsorted(ce[:-1], hi))  # column cells starting before hi
        rowmax = np.maximum.reduceat(w, ce[:cells] - c0, axis=1) * keys[a:b, None]  # (b−a, ·)
        first = int(np.searchsorted(re, a, side="right")) - 1  # the cell of row a
        last = int(np.searchsorted(re, b - 1, side="right")) - 1
        starts = np.concatenate([[a], re[first + 1 : last + 1]]) - a
        view = out[first : last + 1, :cells]
        np.maximum(view, np.maximum.reduceat(rowmax, starts, axis=0), out=view)
    return out


def relative_cells(tile: Tile, n: int, *, causal: bool) -> np.ndarray:
    """(R, C) float32: `tile`'s cells relative to the even share of a map of n tokens, from
    the tile alone (what ui/long/chart_colours.js computes): Σ_cell w / Σ_cell e, with Σ_cell w
    the cell's value times its size; a "max" cell of a map without a mask: n × its value (every
    row's even share is 1/n). A causal map's "max" cells need the weights: ValueError."""
    if tile.reduce == "max" and not tile.exact:
        if causal:
            raise ValueError("a causal 'max' cell's relative value needs the weights")
        return (tile.values * np.float32(n)).astype(np.float32)
    even = even_mass(n, causal, tile.row_edges, tile.col_edges)  # (R, C)
    rows = np.diff(tile.row_edges).astype(np.float64)[:, None]  # (R, 1)
    cols = np.diff(tile.col_edges).astype(np.float64)[None, :]  # (1, C)
    total = tile.values * rows * (cols if tile.reduce == "mean" and not tile.exact else 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(even > 0, total / even, np.nan)  # exact: w / e_i = w · k_i
    return out.astype(np.float32)


def sends_relative(reduce: str, scale: str, *, causal: bool) -> bool:
    """Whether a pooled tile's relative values travel with it (ui/long/tiles.py): a causal
    map's "max" cells under the relative scale; the browser computes the others
    (`relative_cells`)."""
    return scale == "relative" and reduce == "max" and causal


def colour_key(kind: str) -> dict[str, object]:
    """The long map's colours under scale `kind` (figures.scales.SCALES), as plain data for
    its colour bar and its heatmaps: the colour stops, the colour limits ("relative": 0 …
    RELATIVE_MAX times the even share; "absolute": 0 … 1; "contrast": 0 … the largest value
    in view, `top` None), and the bar's ticks as fractions of its length with their texts,
    the short heatmaps' own (one panel of one token: limits in the scale's own units)."""
    scale = colour_scale(kind, np.ones((1, 1, 1), dtype=np.float32))
    low, high = scale.limits[0]
    return {
        "kind": scale.kind,
        "colorscale": [list(stop) for stop in colour_stops(scale.colorscale)],
        "top": None if scale.kind == "contrast" else high,
        "ticks": [(v - low) / (high - low) for v in scale.tickvals],
        "texts": scale.ticktext,
    }
