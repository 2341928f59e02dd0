"""attention_core.long.scores through the maps that use it: each row's log-sum-exp from the
fused kernel or the block loop, and soft-capped scores (Gemma 2's cap·tanh(s / cap)) against
the whole capped softmax written out in float64 — exact cells, pooled cells, sentence
blocks, rollout — block by block and in one block. Gemma 2 itself, against transformers'
output_attentions, is in tests/core/pretrained/test_families.py and test_pretrained.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.long.map import AttentionMap, block_aggregate
from attention_core.long.rollout import rollout_full


def capped_reference(q: np.ndarray, k: np.ndarray, cap: float, *, causal: bool) -> np.ndarray:
    """softmax(cap·tanh(q kᵀ / √D / cap)) in float64, written out: (H, n, n)."""
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    s = cap * np.tanh(s / cap)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def peaky_qk(H: int, n: int, D: int, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Queries and keys whose scores reach far past a cap of 5 (|s| up to ~40)."""
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0, 2.5, size=(H, n, D)).astype(np.float32) for _ in range(2))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scratch", [1 << 21, 500])  # one block; many blocks of ~2 rows
def test_soft_capped_maps_are_the_capped_softmax(causal: bool, scratch: int) -> None:
    q, k = peaky_qk(3, 150, 16, seed=3)
    ref = capped_reference(q, k, 5.0, causal=causal)  # (H, n, n)
    m = AttentionMap.from_qk(q, k, causal=causal, softcap=5.0, scratch=scratch)
    for h in range(3):
        got = m.exact(h, slice(None), slice(None))
        np.testing.assert_allclose(got, ref[h], atol=EXACT, rtol=0)
        np.testing.assert_allclose(got.sum(-1), 1.0, atol=EXACT)
    # the cap matters here: the plain softmax of the same q and k is far from it
    plain = AttentionMap.from_qk(q, k, causal=causal).exact(0, slice(None), slice(None))
    assert np.abs(plain - ref[0]).max() > 0.1
    # pooled cells, sentence blocks and rollout read the capped weights, not q̂·k̂ᵀ
    tile = m.overview(1, size=16, reduce="mass")
    assert tile is not None and not tile.exact
    dense = AttentionMap.from_weights(ref.astype(np.float32))
    want = dense.overview(1, size=16, reduce="mass")
    np.testing.assert_allclose(tile.values, want.values, atol=EXACT)
    edges = [0, 17, 60, 101]
    np.testing.assert_allclose(
        block_aggregate(m, 2, edges), block_aggregate(ref, 2, edges), atol=EXACT
    )
    np.testing.assert_allclose(rollout_full([m, m]), rollout_full([ref, ref]), atol=EXACT)


def test_a_soft_capped_map_keeps_q_k_and_the_offset_apart() -> None:
    q, k = peaky_qk(2, 40, 8, seed=4)
    m = AttentionMap.from_qk(q, k, causal=True, softcap=5.0)
    assert m.softcap == 5.0
    assert m.nbytes == 4 * 2 * 40 * (8 + 8 + 1)  # q·scale, k and −lse, float32
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="softcap must be a finite number > 0"):
            AttentionMap.from_qk(q, k, causal=True, softcap=bad)


@pytest.mark.parametrize("causal", [False, True])
def test_the_fused_log_sum_exp_equals_the_block_loop(causal: bool, monkeypatch) -> None:
    """from_qk takes each row's log-sum-exp from torch's flash-attention kernel; without it
    (another torch build) the block loop computes it: the same weights either way."""
    import attention_core.long.scores as scores

    g = torch.Generator().manual_seed(7)
    q, k = torch.randn(3, 700, 16, generator=g) * 3, torch.randn(3, 700, 16, generator=g) * 3
    fused = AttentionMap.from_qk(q, k, causal=causal)
    assert scores.fused_lse(q, k, causal=causal, scale=0.25) is not None  # torch 2.13 has it
    monkeypatch.setattr(scores, "fused_lse", lambda *args, **kwargs: None)
    looped = AttentionMap.from_qk(q, k, causal=causal, scratch=50_000)
    for h in range(3):
        a = fused.exact(h, slice(0, 700), slice(0, 700))
        b = looped.exact(h, slice(0, 700), slice(0, 700))
        np.testing.assert_allclose(a, b, atol=EXACT, rtol=0)
