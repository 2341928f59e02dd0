"""attention_core.long.stats against head_stats / head_patterns on the full weights (n ≤ 512,
within limits.EXACT) and against statistics written out in float64 from softmax weights
(scipy's entropy), and its memory bound at 4 096 tokens."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import entropy as scipy_entropy

from attention_core.limits import EXACT, MAX_TOKENS
from attention_core.long.map import AttentionMap
from attention_core.long.stats import long_head_stats, long_head_summary
from attention_core.stats import head_patterns, head_stats


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def qk(H: int, n: int, D: int, *, seed: int, spread: float = 1.5):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0, spread, size=(H, n, D)).astype(np.float32) for _ in range(2))


def softmax64(q: np.ndarray, k: np.ndarray, *, causal: bool) -> np.ndarray:
    """(H, n, n) softmax(q kᵀ/√D) in float64, written out."""
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
def test_equal_to_head_stats_on_the_full_weights(causal: bool) -> None:
    n = MAX_TOKENS
    q, k = qk(3, n, 8, seed=2)
    m = AttentionMap.from_qk(q, k, causal=causal, scratch=20_000)  # ~39 rows a block
    full = np.stack([m.exact(h, slice(None), slice(None)) for h in range(3)])  # (H, n, n)
    got, patterns = long_head_summary(m)
    for mine, theirs in zip(got, head_stats(full), strict=True):
        a, b = mine.as_dict(), theirs.as_dict()
        assert a["top_key"] == b["top_key"] and a["head"] == b["head"]
        for name in a:
            assert abs(a[name] - b[name]) <= EXACT, (name, a[name], b[name])
    assert patterns == head_patterns(full)


@pytest.mark.parametrize("causal", [False, True])
def test_equal_to_statistics_written_out_in_float64(causal: bool) -> None:
    n, H = 200, 2
    q, k = qk(H, n, 16, seed=5, spread=2.0)
    w = softmax64(q, k, causal=causal)  # (H, n, n)
    i, j = np.indices((n, n))
    got = long_head_stats(AttentionMap.from_qk(q, k, causal=causal, scratch=3000))
    for h, s in enumerate(got):
        rows = w[h]
        want = {
            "entropy": np.mean([scipy_entropy(r[r > 0]) for r in rows]) / math.log(n),
            "max_weight": rows.max(1).mean(),
            "peak": rows.max(),
            "diagonal": np.trace(rows) / n,
            "previous": np.mean([rows[r, r - 1] for r in range(1, n)]),
            "first": rows[:, 0].mean(),
            "distance": (rows * np.abs(i - j)).sum(1).mean(),
        }
        for name, value in want.items():
            assert getattr(s, name) == pytest.approx(value, rel=1e-5, abs=EXACT), name
        assert s.top_key == rows.sum(0).argmax()


def test_patterns_of_weights_made_to_have_them() -> None:
    n = 40
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1.0  # row 0 has no previous token: itself
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    even = np.full((n, n), 1 / n)
    stats, patterns = long_head_summary(
        AttentionMap.from_weights(np.stack([previous, first, even]))
    )
    assert [p[0] if p else None for p in patterns] == ["previous", "first", "broad"]
    assert stats[2].entropy == pytest.approx(1.0) and stats[1].top_key == 0


def test_a_4096_token_map_is_read_a_block_at_a_time(monkeypatch) -> None:
    q, k = qk(2, 4096, 8, seed=7, spread=1.0)
    m = AttentionMap.from_qk(q, k, causal=True)
    largest = [0]
    compute = AttentionMap._weights

    def spy(self, *args):
        w = compute(self, *args)
        largest[0] = max(largest[0], w.numel())
        return w

    monkeypatch.setattr(AttentionMap, "_weights", spy)
    stats = long_head_stats(m)
    assert len(stats) == 2 and all(0 < s.entropy <= 1 for s in stats)
    assert 0 < largest[0] <= m.scratch < 4096 * 4096


@pytest.mark.parametrize("causal", [False, True])
def test_head_similarity_streamed_equals_the_full_weights(causal: bool) -> None:
    """long_head_similarity against stats.head_similarity on the same map's full weights,
    in blocks of a few rows (a small scratch: many blocks, causal ones cut at their row)."""
    from attention_core.long.stats import long_head_similarity
    from attention_core.stats import head_similarity

    q, k = qk(5, 300, 8, seed=11)
    m = AttentionMap.from_qk(q, k, causal=causal, scratch=3000)
    full = np.stack([m.exact(h, slice(0, 300), slice(0, 300)) for h in range(5)])  # (H, n, n)
    got = long_head_similarity(m)
    np.testing.assert_allclose(got, head_similarity(full), atol=EXACT)
    assert np.allclose(got, got.T) and np.all(np.diag(got) == 1.0)


def test_head_similarity_refuses_past_its_work_bound() -> None:
    from attention_core.long.stats import SIMILARITY_WORK, long_head_similarity

    q, k = qk(16, 4096, 2, seed=1)
    m = AttentionMap.from_qk(q, k, causal=True)
    assert 16 * 15 // 2 * 4096**2 > SIMILARITY_WORK
    with pytest.raises(ValueError, match="SIMILARITY_WORK"):
        long_head_similarity(m)
