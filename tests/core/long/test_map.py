"""attention_core.long.map against references computed whole: the weights of
torch.nn.MultiheadAttention and of the project's MultiHeadAttention, block reductions of the
full matrix written out cell by cell, and rollout as a product of full numpy matrices (and
attention_core.lens.combine.rollout)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from attention_core.attention import build_attention, causal_mask
from attention_core.lens.combine import rollout as lens_rollout
from attention_core.limits import EXACT, MAX_TILE_SIZE, MAX_TOKENS
from attention_core.long.map import REDUCES, AttentionMap, block_aggregate
from attention_core.long.rollout import rollout_full, rollout_rows


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Torch on one thread, as the app runs it (ui/cache.py): on a busy 2-core machine the
    many small matmuls of a streamed map wait milliseconds each for a second thread."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def torch_mha(n: int, embed_dim: int, num_heads: int, *, causal: bool, seed: int = 0):
    """q, k (H, n, D) built from nn.MultiheadAttention's in_proj, and its weights (H, n, n)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mha = torch.nn.MultiheadAttention(embed_dim, num_heads, batch_first=True).eval()
    x = 2.0 * torch.randn(1, n, embed_dim, generator=gen)  # larger inputs: peakier rows
    mask = ~causal_mask(n) if causal else None  # torch's convention: True = NOT allowed
    with torch.no_grad():
        _, w = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
        wq, wk, _ = mha.in_proj_weight.chunk(3)  # (C, C) each: W_q, W_k, W_v
        bq, bk, _ = mha.in_proj_bias.chunk(3)
        D = embed_dim // num_heads
        q = (x[0] @ wq.T + bq).view(n, num_heads, D).transpose(0, 1)  # (H, n, D)
        k = (x[0] @ wk.T + bk).view(n, num_heads, D).transpose(0, 1)  # (H, n, D)
    return q, k, w[0].numpy()  # (H, n, n)


def random_qk(H: int, n: int, D: int, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q, k = (rng.normal(0, 1.5, size=(H, n, D)).astype(np.float32) for _ in range(2))
    return q, k


def softmax_reference(q: np.ndarray, k: np.ndarray, *, causal: bool) -> np.ndarray:
    """softmax(q kᵀ / √D) in float64, written out: (H, n, n)."""
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def cells_reference(full: np.ndarray, row_edges, col_edges, reduce: str) -> np.ndarray:
    """Every pooled cell computed on its own from the full (n, n) matrix."""
    out = np.empty((len(row_edges) - 1, len(col_edges) - 1))
    for a, (r0, r1) in enumerate(itertools.pairwise(row_edges)):
        for b, (c0, c1) in enumerate(itertools.pairwise(col_edges)):
            cell = full[r0:r1, c0:c1]
            out[a, b] = {"mean": cell.mean(), "max": cell.max(), "mass": cell.sum(1).mean()}[reduce]
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    ("n", "embed_dim", "num_heads", "scratch"),
    [(1, 4, 1, 1 << 21), (37, 32, 4, 1 << 21), (300, 64, 8, 1 << 21), (300, 64, 8, 1000)],
)
def test_exact_matches_torch_multihead_attention(n, embed_dim, num_heads, scratch, causal):
    q, k, ref = torch_mha(n, embed_dim, num_heads, causal=causal, seed=n)
    m = AttentionMap.from_qk(q, k, causal=causal, scratch=scratch)  # scratch 1000: 1-row blocks
    assert (m.num_heads, m.n, m.causal) == (num_heads, n, causal)
    for h in range(num_heads):
        np.testing.assert_allclose(m.exact(h, slice(None), slice(None)), ref[h], atol=EXACT)
    # any rectangle, as numpy slices the full array (negative indices, clipping)
    for rows, cols in [(slice(-5, None), slice(3, -2)), (slice(2, 9), slice(0, 1000))]:
        got = m.exact(num_heads - 1, rows, cols)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref[num_heads - 1][rows, cols], atol=EXACT)


@pytest.mark.parametrize("causal", [False, True])
def test_exact_matches_the_projects_multihead_attention(causal):
    n = 45
    module = build_attention("multi", 24, 3, seed=5)
    x = torch.randn(1, n, 24, generator=torch.Generator().manual_seed(3))
    t = module.trace(x, causal_mask(n) if causal else None)
    # the trace's q, k are (1, H, n, D); its divisor is √D, the map's scale is a multiplier
    m = AttentionMap.from_qk(t.q, t.k, causal=causal, scale=1.0 / t.divisor)
    w = t.weights[0].numpy()  # (H, n, n)
    for h in range(3):
        got = m.exact(h, slice(0, n), slice(0, n))
        np.testing.assert_allclose(got, w[h], atol=EXACT)
        np.testing.assert_allclose(got.sum(-1), 1.0, atol=EXACT)
        if causal:
            assert not np.triu(got, 1).any()  # exactly 0 above the diagonal


def test_from_weights_slices_its_own_copy():
    w = softmax_reference(*random_qk(2, 30, 4, seed=1), causal=False).astype(np.float32)
    m = AttentionMap.from_weights(w)
    np.testing.assert_array_equal(m.exact(1, slice(3, 9), slice(-4, None)), w[1, 3:9, -4:])
    m.exact(0, slice(0, 2), slice(0, 2))[:] = 7.0  # the caller's result, not the map
    w[0] = 0.0  # nor does the caller's array reach the map
    assert m.exact(0, slice(0, 2), slice(0, 2)).max() < 1.0
    assert m.nbytes == 2 * 30 * 30 * 4
    single = AttentionMap.from_weights(w[1])  # (n, n): one head
    assert single.num_heads == 1


def test_memory_is_queries_and_keys_not_weights():
    q, k = random_qk(8, 200, 16, seed=2)
    m = AttentionMap.from_qk(q, k, causal=True)
    assert m.nbytes == 2 * 8 * 200 * (16 + 1) * 4  # q̂ and k̂, float32


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n", "size", "scratch"), [(257, 20, 1 << 21), (64, 7, 200), (5, 1, 3)])
def test_overview_is_a_block_reduction_of_the_full_map(n, size, scratch, causal, reduce):
    q, k = random_qk(3, n, 8, seed=n)
    full = softmax_reference(q, k, causal=causal)[2]  # (n, n)
    m = AttentionMap.from_qk(q, k, causal=causal, scratch=scratch)  # small: cells span blocks
    t = m.overview(2, size=size, reduce=reduce)
    block = -(-n // size)  # 257 / 20 → 13 (last 10); 64 / 7 → 10 (last 4); 5 / 1 → 5
    edges = [*range(0, n, block), n]
    assert (t.block, t.reduce, t.exact, t.head) == (block, reduce, False, 2)
    assert t.row_edges.tolist() == edges and t.col_edges.tolist() == edges  # all rows, once
    assert t.values.dtype == np.float32 and t.values.shape == (len(edges) - 1,) * 2
    assert max(t.values.shape) <= size
    np.testing.assert_allclose(t.values, cells_reference(full, edges, edges, reduce), atol=EXACT)


@pytest.mark.parametrize("causal", [False, True])
def test_pooled_rows_sum_as_documented(causal):
    n = 100
    m = AttentionMap.from_qk(*random_qk(1, n, 8, seed=4), causal=causal)
    mass = m.overview(0, size=8, reduce="mass")  # blocks of 13, the last of 9
    np.testing.assert_allclose(mass.values.sum(1), 1.0, atol=EXACT)
    mean = m.overview(0, size=8, reduce="mean")
    widths = np.diff(mean.col_edges)  # mean × cell width = mass, whatever the width
    np.testing.assert_allclose((mean.values * widths).sum(1), 1.0, atol=EXACT)


def test_region_at_a_small_window_is_the_weights_themselves():
    n = 300
    q, k = random_qk(2, n, 8, seed=5)
    full = softmax_reference(q, k, causal=True)[1]
    m = AttentionMap.from_qk(q, k, causal=True)
    for reduce in REDUCES:
        t = m.region(1, slice(40, 70), slice(100, 132), size=32, reduce=reduce)
        assert t is not None and t.exact and t.block == 1
        assert t.row_edges.tolist() == list(range(40, 71))
        np.testing.assert_allclose(t.values, full[40:70, 100:132], atol=EXACT)
    # overhanging the map's end: clipped to it
    t = m.region(1, slice(290, 400), slice(0, 5), size=32)
    assert t is not None and t.exact and t.row_edges[-1] == n
    np.testing.assert_allclose(t.values, full[290:, :5], atol=EXACT)


@pytest.mark.parametrize("reduce", REDUCES)
def test_region_pools_a_sub_rectangle(reduce):
    n = 260
    q, k = random_qk(1, n, 8, seed=6)
    full = softmax_reference(q, k, causal=False)[0]
    t = AttentionMap.from_qk(q, k, causal=False).region(
        0, slice(10, 250), slice(30, 100), size=16, reduce=reduce
    )
    assert t is not None and not t.exact and t.block == 15  # ⌈240 / 16⌉, square cells
    rows, cols = [*range(10, 250, 15), 250], [*range(30, 100, 15), 100]
    assert t.row_edges.tolist() == rows and t.col_edges.tolist() == cols
    np.testing.assert_allclose(t.values, cells_reference(full, rows, cols, reduce), atol=EXACT)


BAD_SPANS = [slice(300, 310), slice(-5, 10), slice(10, 10), slice(10, 5), slice(0, 10, 2)]
BAD_SPANS += [slice(None, 0), slice(0.5, 3), "0:10", (0, 10), None]


@pytest.mark.parametrize("bad", BAD_SPANS, ids=repr)
def test_a_request_outside_the_map_is_none(bad):
    m = AttentionMap.from_qk(*random_qk(2, 300, 4, seed=7), causal=True)
    assert m.region(0, bad, slice(0, 10), size=16) is None
    assert m.region(0, slice(0, 10), bad, size=16) is None


@pytest.mark.parametrize("head", [-1, 2, 1.0, True, "0", None])
def test_a_head_outside_the_map_is_none(head):
    m = AttentionMap.from_qk(*random_qk(2, 50, 4, seed=8), causal=False)
    assert m.region(head, slice(0, 10), slice(0, 10), size=16) is None
    assert m.overview(head, size=16) is None
    assert m.tile(head, 0, 0, 0, size=16) is None


@pytest.mark.parametrize(("size", "reduce"), [(0, "mean"), (MAX_TILE_SIZE + 1, "mean"), (8, "sum")])
def test_bad_tile_options_say_what_to_do(size, reduce):
    m = AttentionMap.from_qk(*random_qk(1, 20, 4, seed=9), causal=False)
    with pytest.raises(ValueError, match=r"size must be|reduce must be"):
        m.overview(0, size=size, reduce=reduce)


def test_tile_pyramid_covers_the_map_at_every_level():
    n, size = 300, 16
    q, k = random_qk(1, n, 8, seed=10)
    full = softmax_reference(q, k, causal=True)[0]
    m = AttentionMap.from_qk(q, k, causal=True)
    # ⌈300 / 16⌉ = 19 → level 0 has blocks of 32; then 16, 8, 4, 2, 1 (exact)
    assert m.levels(size=size) == 6
    for level, block in enumerate([32, 16, 8, 4, 2, 1]):
        span = size * block
        seen = np.zeros((n, n), dtype=int)
        for i in range(-(-n // span)):
            for j in range(-(-n // span)):
                t = m.tile(0, level, i, j, size=size, reduce="max")
                assert t is not None and t.block == block and t.exact == (block == 1)
                assert t.row_edges[0] == i * span and t.col_edges[0] == j * span
                seen[t.row_edges[0] : t.row_edges[-1], t.col_edges[0] : t.col_edges[-1]] += 1
                ref = cells_reference(full, t.row_edges, t.col_edges, "max")
                np.testing.assert_allclose(t.values, ref, atol=EXACT)
        assert (seen == 1).all()  # every cell of the map in exactly one tile
        if level >= 3:
            break  # the deeper levels have many tiles; the exact level is checked below
    last = m.tile(0, 5, 2, 1, size=size)
    assert last is not None and last.exact
    np.testing.assert_allclose(last.values, full[32:48, 16:32], atol=EXACT)
    for bad in [(6, 0, 0), (0, 1, 0), (5, 19, 0), (-1, 0, 0), (0, 0, -1)]:
        assert m.tile(0, *bad, size=size) is None


SPANS = [[0, 5, 17, 40, 41, 100, 120], [5, 17, 40], [], [60]]


@pytest.mark.parametrize("boundaries", SPANS)
@pytest.mark.parametrize("causal", [False, True])
def test_block_aggregate_rows_sum_to_one(boundaries, causal):
    n = 120
    q, k = random_qk(2, n, 8, seed=11)
    full = softmax_reference(q, k, causal=causal)  # (H, n, n)
    edges = sorted({0, n, *boundaries})
    ref = cells_reference(full[1], edges, edges, "mass")  # Σ over keys, mean over queries
    streamed = block_aggregate(
        AttentionMap.from_qk(q, k, causal=causal, scratch=500), 1, boundaries
    )
    whole = block_aggregate(full.astype(np.float32), 1, boundaries)
    one_head = block_aggregate(full[1].astype(np.float32), 0, boundaries)
    for got in (streamed, whole, one_head):
        assert got.shape == (len(edges) - 1,) * 2 and got.dtype == np.float32
        np.testing.assert_allclose(got, ref, atol=EXACT)
        np.testing.assert_allclose(got.sum(1), 1.0, atol=EXACT)
    if causal:
        assert not np.triu(streamed, 1).any()  # a sentence does not see later ones


@pytest.mark.parametrize("boundaries", [[5, 5], [10, 3], [0, 121], [-1, 4]])
def test_block_aggregate_rejects_bad_boundaries(boundaries):
    m = AttentionMap.from_qk(*random_qk(1, 120, 4, seed=12), causal=False)
    with pytest.raises(ValueError, match="boundaries must increase"):
        block_aggregate(m, 0, boundaries)
    with pytest.raises(ValueError, match="head must be"):
        block_aggregate(m, 1, [10])


def rollout_reference(layers: list[np.ndarray], *, residual: bool, reduce: str) -> np.ndarray:
    """Ã_l = 0.5·A_l + 0.5·I (rows renormalised), R = Ã_L ⋯ Ã_1, as full matrices."""
    n = layers[0].shape[-1]
    out = np.eye(n)
    for w in layers:
        a = w.mean(0) if reduce == "mean" else w.max(0)  # (n, n)
        a = 0.5 * a + 0.5 * np.eye(n) if residual else a
        out = (a / a.sum(1, keepdims=True)) @ out
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("residual", "reduce"), [(True, "mean"), (False, "mean"), (True, "max")])
def test_rollout_rows_equal_the_full_product(causal, residual, reduce):
    L, H, n = 3, 4, 40
    qks = [random_qk(H, n, 8, seed=20 + layer) for layer in range(L)]
    full = [softmax_reference(q, k, causal=causal) for q, k in qks]  # L × (H, n, n)
    ref = rollout_reference(full, residual=residual, reduce=reduce)
    rows = [39, 0, 7, 20]
    options = {"add_residual": residual, "head_reduce": reduce}
    maps = [AttentionMap.from_qk(q, k, causal=causal, scratch=300) for q, k in qks]
    arrays = [w.astype(np.float32) for w in full]
    for layers in (maps, arrays):
        got = rollout_rows(layers, rows, **options)
        assert got.shape == (len(rows), n) and got.dtype == np.float32
        np.testing.assert_allclose(got, ref[rows], atol=EXACT)
        np.testing.assert_allclose(got.sum(1), 1.0, atol=EXACT)
    np.testing.assert_allclose(rollout_full(maps, **options), ref, atol=EXACT)
    if residual and reduce == "mean":  # the project's own full rollout agrees
        np.testing.assert_allclose(ref, lens_rollout(np.stack(full))[-1], atol=1e-12)


def test_rollout_rejects_what_it_cannot_do():
    m = AttentionMap.from_qk(*random_qk(1, 10, 4, seed=30), causal=False)
    other = AttentionMap.from_qk(*random_qk(1, 11, 4, seed=31), causal=False)
    for layers, rows, match in [
        ([], [0], "at least one layer"),
        ([m, other], [0], "same n"),
        ([m], [10], "token indices"),
        ([m], [[0]], "token indices"),
    ]:
        with pytest.raises(ValueError, match=match):
            rollout_rows(layers, rows)
    with pytest.raises(ValueError, match="head_reduce"):
        rollout_rows([m], [0], head_reduce="min")
    too_long = np.full((1, MAX_TOKENS + 1, MAX_TOKENS + 1), 1.0 / (MAX_TOKENS + 1), np.float32)
    with pytest.raises(ValueError, match="use rollout_rows"):
        rollout_full([too_long])


def test_from_qk_rejects_what_it_cannot_map():
    q, k = random_qk(2, 10, 4, seed=32)
    for args, kwargs, match in [
        ((q, k[:, :9]), {}, "same shape"),
        ((q[0, 0], k[0, 0]), {}, r"shape \(H, n, D\)"),
        ((q, k), {"max_tokens": 9}, "max_tokens=9"),
        ((q, k), {"scale": 0.0}, "scale must be"),
        ((q * np.nan, k), {}, "NaN"),
    ]:
        with pytest.raises(ValueError, match=match):
            AttentionMap.from_qk(*args, causal=False, **kwargs)
    with pytest.raises(ValueError, match=">= 0"):
        AttentionMap.from_weights(-np.eye(3))


def test_a_4096_token_map_never_holds_a_heads_weights(monkeypatch):
    """The memory bound at full length: every block of weights a call computes holds at most
    `scratch` floats (exact() of the whole head is the one call that returns n² floats)."""
    H, n, D = 2, 4096, 16
    q, k = random_qk(H, n, D, seed=40)
    m = AttentionMap.from_qk(q, k, causal=True)
    assert m.nbytes == 2 * H * n * (D + 1) * 4  # 1.1 MB, against 134 MB of weights
    largest = [0]
    compute = AttentionMap._weights

    def spy(self, *args):
        w = compute(self, *args)
        largest[0] = max(largest[0], w.numel())
        return w

    monkeypatch.setattr(AttentionMap, "_weights", spy)
    t = m.overview(1, size=64, reduce="mass")
    assert t is not None and t.values.shape == (64, 64) and t.block == 64
    np.testing.assert_allclose(t.values.sum(1), 1.0, atol=EXACT)
    t = m.region(0, slice(4000, 4064), slice(3000, 3064), size=64)
    assert t is not None and t.exact and t.values.shape == (64, 64)
    assert block_aggregate(m, 0, list(range(0, n, 41))).shape == (100, 100)
    assert rollout_rows([m, m], [4095, 17]).shape == (2, n)
    assert 0 < largest[0] <= m.scratch < H * n * n
