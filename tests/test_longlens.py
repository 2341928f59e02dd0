"""The long lens (attention_core/long/lens.py) against the dense lens on the same weights:
received attention = column means of (H, n, n) weights, sink mass = lens.sinks' mass, the
rollout row = lens.rollout's last layer, at n ≤ 512 where both exist (the module's own maps
and a real model's), and its figures at 4 096 tokens."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.lens import rollout, sinks
from attention_core.limits import EXACT
from attention_core.long.lens import received, rollout_row, sink_mass, top_keys
from attention_core.long.map import AttentionMap


def _maps(L: int, H: int, n: int, *, causal: bool, seed: int = 0) -> list[AttentionMap]:
    g = torch.Generator().manual_seed(seed)
    return [
        AttentionMap.from_qk(
            torch.randn(H, n, 8, generator=g) * 2,
            torch.randn(H, n, 8, generator=g) * 2,
            causal=causal,
            scratch=4096,  # small blocks: many of them at n = 300
        )
        for _ in range(L)
    ]


def _dense(maps: list[AttentionMap]) -> np.ndarray:
    """(L, H, n, n): every weight, from each map's exact rectangle."""
    n = maps[0].n
    return np.stack(
        [np.stack([m.exact(h, slice(0, n), slice(0, n)) for h in range(m.num_heads)]) for m in maps]
    ).astype(np.float64)


@pytest.mark.parametrize("causal", [False, True])
def test_received_sinks_and_rollout_equal_the_dense_lens(causal: bool) -> None:
    maps = _maps(3, 4, 300, causal=causal)
    dense = _dense(maps)  # (3, 4, 300, 300)
    for h in range(4):
        np.testing.assert_allclose(received(maps[1], h), dense[1, h].mean(axis=0), atol=EXACT)
    tokens = ["[CLS]", *[("," if i % 7 == 0 else f"w{i}") for i in range(298)], "[SEP]"]
    special = [True, *[False] * 298, True]
    mass, present, got = sink_mass(maps, tokens, special)
    want = sinks(dense, np.ones(dense.shape[:3]), tokens, special)
    assert got.shape == (3, 4, 300) and present == want.present
    for kind, value in want.mass.items():
        np.testing.assert_allclose(mass[kind], value, atol=EXACT)
    np.testing.assert_allclose(rollout_row(maps, 123), rollout(dense)[-1, 123], atol=EXACT)


def test_a_real_models_sinks_at_4096_tokens() -> None:
    """Each head's received attention sums to 1 and a causal map's first key receives at
    least what its first row gives it (1: it sees only itself)."""
    maps = _maps(2, 2, 4096, causal=True, seed=1)
    for m in maps:
        for h in range(2):
            r = received(m, h)
            assert r.shape == (4096,) and abs(r.sum() - 1) < 1e-6
            assert r[0] >= 1 / 4096
    row = rollout_row(maps, 4095)
    assert abs(row.sum() - 1) < 1e-5


def test_top_keys_largest_first_ties_by_position() -> None:
    assert top_keys(np.array([0.1, 0.4, 0.1, 0.4]), 3) == [(1, 0.4), (3, 0.4), (0, 0.1)]
    assert top_keys(np.array([0.5]), 9) == [(0, 0.5)]
    assert top_keys(np.array([0.5]), 0) == []


def test_a_long_minimal_pair_equals_the_dense_row_change() -> None:
    """long_row_change against lens.row_change on the same maps' full weights: two texts of
    300 tokens that differ in two places (one token swapped, one inserted)."""
    from attention_core.lens import row_change
    from attention_core.long.lens import long_row_change

    tokens_a = [f"w{i % 37}" for i in range(300)]
    tokens_b = [*tokens_a[:100], "other", *tokens_a[101:200], "new", *tokens_a[200:299]]
    maps_a = _maps(2, 3, 300, causal=True, seed=3)
    maps_b = _maps(2, 3, 300, causal=True, seed=4)
    got = long_row_change(maps_a, tokens_a, maps_b, tokens_b, 250)
    want = row_change(_dense(maps_a), tokens_a, _dense(maps_b), tokens_b, 250)
    assert got is not None and want is not None
    assert got.pairs == want.pairs and got.query == want.query == (250, 251)
    np.testing.assert_allclose(got.change, want.change, atol=EXACT)
    np.testing.assert_allclose(got.rows_b, want.rows_b, atol=EXACT)
    assert long_row_change(maps_a, tokens_a, maps_b, tokens_b, 100) is None  # swapped away
