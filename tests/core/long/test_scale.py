"""attention_core.long.scale against the full weights written out in numpy: every cell's even
share summed cell by cell, and the relative value of exact and pooled cells from the (n, n)
weights and the (n, n) even attention."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from attention_core.figures.scales import RELATIVE_MAX
from attention_core.limits import EXACT
from attention_core.long.map import REDUCES, AttentionMap
from attention_core.long.scale import (
    colour_key,
    even_mass,
    relative_cells,
    relative_values,
    row_keys,
)


def weights(H: int, n: int, D: int, *, causal: bool, seed: int) -> tuple[AttentionMap, np.ndarray]:
    """A map from random queries and keys and its weights softmax(q kᵀ/√D) in float64."""
    rng = np.random.default_rng(seed)
    q, k = (rng.normal(0, 1.5, size=(H, n, D)).astype(np.float32) for _ in range(2))
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    m = AttentionMap.from_qk(q, k, causal=causal, scratch=4096)  # many small blocks
    return m, e / e.sum(-1, keepdims=True)  # (H, n, n)


def even_reference(n: int, causal: bool) -> np.ndarray:
    """(n, n): each row spreading its attention evenly over the keys it may see."""
    seen = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
    return seen / seen.sum(1, keepdims=True)


def relative_reference(w: np.ndarray, even: np.ndarray, row_edges, col_edges, reduce: str):
    """The module docstring's definition, cell by cell, on the full matrices."""
    out = np.empty((len(row_edges) - 1, len(col_edges) - 1))
    for a, (r0, r1) in enumerate(itertools.pairwise(row_edges)):
        for b, (c0, c1) in enumerate(itertools.pairwise(col_edges)):
            cw, ce = w[r0:r1, c0:c1], even[r0:r1, c0:c1]
            if not (ce > 0).any():
                out[a, b] = np.nan
            elif reduce == "max":
                out[a, b] = (cw[ce > 0] / ce[ce > 0]).max()
            else:
                out[a, b] = cw.sum() / ce.sum()
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_even_mass_sums_the_even_attention_cell_by_cell(causal: bool) -> None:
    n = 97
    even = even_reference(n, causal)
    rng = np.random.default_rng(3)
    for _ in range(20):
        rows = np.unique(np.r_[0, rng.integers(1, n, size=rng.integers(0, 9)), n])
        cols = np.unique(np.r_[rng.integers(0, n, size=rng.integers(1, 9)), n])
        got = even_mass(n, causal, rows, cols)
        want = np.array(
            [[even[r0:r1, c0:c1].sum() for c0, c1 in itertools.pairwise(cols)]
             for r0, r1 in itertools.pairwise(rows)]
        )  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("causal", "reduce"), itertools.product([False, True], REDUCES))
def test_relative_values_of_pooled_and_exact_cells(causal: bool, reduce: str) -> None:
    n, H = 203, 2
    m, w = weights(H, n, 8, causal=causal, seed=1)
    even = even_reference(n, causal)
    tiles = [
        m.overview(1, size=16, reduce=reduce),  # 13 tokens a cell, the last 8
        m.region(0, slice(40, 131), slice(17, 200), size=32, reduce=reduce),
        m.region(0, slice(50, 80), slice(60, 90), size=64, reduce=reduce),  # exact
    ]
    for tile in tiles:
        assert tile is not None
        got = relative_values(m, tile)
        want = relative_reference(
            w[tile.head], even, tile.row_edges, tile.col_edges, "max" if tile.exact else reduce
        )
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=EXACT, equal_nan=True)
    if causal:  # the exact corner straddles the diagonal: the keys after each row are NaN
        assert np.isnan(got[0, -1]) and not np.isnan(got[-1, 0])


def test_even_attention_is_one_everywhere_it_is_allowed() -> None:
    for causal in (False, True):
        n = 64
        zeros = np.zeros((1, n, 4), dtype=np.float32)  # every score 0: softmax spreads evenly
        m = AttentionMap.from_qk(zeros, zeros, causal=causal)
        np.testing.assert_allclose(
            m.exact(0, slice(None), slice(None)), even_reference(n, causal), rtol=1e-6
        )
        for reduce in REDUCES:
            tile = m.overview(0, size=8, reduce=reduce)
            rel = relative_values(m, tile)
            np.testing.assert_allclose(rel[~np.isnan(rel)], 1.0, rtol=1e-6)
        assert np.array_equal(row_keys(4, causal), [1, 2, 3, 4] if causal else [4] * 4)
        peaks = m.overview(0, size=8, reduce="max")
        if causal:  # rows' even shares differ within a cell: the weights are needed
            with pytest.raises(ValueError, match="needs the weights"):
                relative_cells(peaks, n, causal=causal)
        else:
            np.testing.assert_array_equal(relative_cells(peaks, n, causal=False), peaks.values * n)


def test_colour_key_is_the_short_heatmaps_scale() -> None:
    relative = colour_key("relative")
    assert relative["top"] == RELATIVE_MAX and relative["texts"][2] == "1×"
    assert relative["ticks"] == [0.0, 0.25, 0.5, 0.75, 1.0]  # 1× in the middle
    assert relative["colorscale"][0][0] == 0 and relative["colorscale"][-1][0] == 1
    absolute = colour_key("absolute")
    assert absolute["top"] == 1.0 and absolute["texts"] == ["0", "0.25", "0.5", "0.75", "1"]
    contrast = colour_key("contrast")
    assert contrast["top"] is None and contrast["texts"][-1] == "100 %"
