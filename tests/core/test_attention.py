"""attention_core.attention against references: torch.nn.MultiheadAttention with copied
weights, F.scaled_dot_product_attention, and softmax(QKᵀ/√d)V written out by hand."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.attention import (
    MultiHeadAttention,
    SingleHeadAttention,
    build_attention,
    causal_mask,
    valid_num_heads,
)
from attention_core.limits import EXACT


@pytest.mark.parametrize(
    ("n", "embed_dim", "num_heads"),
    [(1, 4, 1), (4, 8, 2), (7, 12, 3), (16, 32, 8), (5, 6, 6), (33, 64, 64), (64, 48, 4)],
)
@pytest.mark.parametrize("causal", [False, True])
def test_parity_with_torch_multihead_attention(n, embed_dim, num_heads, causal):
    m = build_attention("multi", embed_dim, num_heads, seed=n + embed_dim)
    ref = m.to_torch()  # torch's module, holding exactly our weights
    x = torch.randn(2, n, embed_dim, generator=torch.Generator().manual_seed(1))
    ours_mask = causal_mask(n) if causal else None
    # torch's attn_mask is the opposite convention: True = NOT allowed
    torch_mask = ~causal_mask(n) if causal else None
    with torch.no_grad():
        out, w = m(x, ours_mask)
        ref_out, ref_w = ref(
            x, x, x, attn_mask=torch_mask, need_weights=True, average_attn_weights=False
        )
    assert w.shape == (2, num_heads, n, n)
    assert out.shape == (2, n, embed_dim)
    torch.testing.assert_close(w, ref_w, atol=1e-5, rtol=0)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)


def test_single_head_is_softmax_qk_v_by_hand_and_matches_sdpa():
    torch.manual_seed(0)
    m = SingleHeadAttention(6)
    x = torch.randn(1, 4, 6)
    with torch.no_grad():
        out, w = m(x)
        Q, K, V = m.query_linear(x), m.key_linear(x), m.value_linear(x)
        by_hand = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(6), dim=-1)
        sdpa = F.scaled_dot_product_attention(Q, K, V)
        sdpa_causal = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
        out_causal, _ = m(x, causal_mask(4))
    assert w.shape == (1, 4, 4)
    torch.testing.assert_close(w, by_hand, atol=EXACT, rtol=0)
    torch.testing.assert_close(out, by_hand @ V, atol=EXACT, rtol=0)
    torch.testing.assert_close(out, sdpa, atol=1e-5, rtol=0)
    torch.testing.assert_close(out_causal, sdpa_causal, atol=1e-5, rtol=0)


def test_multi_head_output_matches_sdpa_per_head():
    m = build_attention("multi", 8, 2, seed=3)
    x = torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(2))
    mask = torch.tensor([True, True, True, False, True])  # key 3 is padding
    with torch.no_grad():
        out, _ = m(x, mask)
        q = m.query_linear(x).view(1, 5, 2, 4).transpose(1, 2)  # (B, H, n, D)
        k = m.key_linear(x).view(1, 5, 2, 4).transpose(1, 2)
        v = m.value_linear(x).view(1, 5, 2, 4).transpose(1, 2)
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.expand(5, 5))  # (B, H, n, D)
        expected = m.out(heads.transpose(1, 2).reshape(1, 5, 8))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)


def test_scale_is_sqrt_head_dim_and_modules_keep_article_names():
    single, multi = SingleHeadAttention(16), MultiHeadAttention(16, 4)
    assert single.scale == 4.0 and multi.scale == 2.0 and multi.head_dim == 4
    for name in ("query_linear", "key_linear", "value_linear"):
        assert isinstance(getattr(single, name), torch.nn.Linear)
    assert isinstance(multi.out, torch.nn.Linear)
    assert not MultiHeadAttention(4, 2, bias=False).query_linear.bias


def test_trace_is_forward_step_by_step():
    m = build_attention("multi", 12, 3, seed=5)
    x = torch.randn(1, 6, 12, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out, w = m(x, causal_mask(6))
    t = m.trace(x, causal_mask(6))
    torch.testing.assert_close(t.weights, w, atol=0, rtol=0)
    torch.testing.assert_close(t.output, out, atol=0, rtol=0)
    torch.testing.assert_close(
        t.scaled[..., 0], (t.scores / math.sqrt(4))[..., 0], atol=EXACT, rtol=0
    )
    torch.testing.assert_close(t.weights @ t.v, t.head_outputs, atol=EXACT, rtol=0)
    torch.testing.assert_close(
        t.concat, t.head_outputs.transpose(1, 2).reshape(1, 6, 12), atol=0, rtol=0
    )
    torch.testing.assert_close(m.out(t.concat), t.output, atol=EXACT, rtol=0)
    assert t.shapes()["q"] == (1, 3, 6, 4)
    assert t.numpy()["weights"].shape == (3, 6, 6)
    # the un-split projection: head h holds columns h·D … (h+1)·D of Q
    Q = m.query_linear(x).detach()
    torch.testing.assert_close(t.q[0, 1], Q[0, :, 4:8], atol=0, rtol=0)


def test_divisor_override_changes_sharpness():
    m = build_attention("single", 64, seed=0)
    x = torch.randn(1, 8, 64, generator=torch.Generator().manual_seed(0))
    sharp = m.trace(x, divisor=1.0).weights
    smooth = m.trace(x, divisor=8.0 * 4).weights
    assert sharp.max(-1).values.mean() > smooth.max(-1).values.mean()
    with pytest.raises(ValueError, match="divisor"):
        m.trace(x, divisor=0)


def test_fully_masked_row_gives_zero_weights_not_nan():
    m = build_attention("multi", 8, 2, seed=0)
    x = torch.randn(1, 3, 8)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    out, w = m(x, mask)
    assert not torch.isnan(w).any() and not torch.isnan(out).any()
    assert torch.equal(w[0, :, 1], torch.zeros(2, 3))
    assert torch.equal(w[0, :, 0, 2], torch.zeros(2))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((6, 4), "valid num_heads: 1, 2, 3, 6"),
        ((0, 1), "embed_dim must be an integer >= 1"),
        ((-3, 1), "embed_dim must be an integer >= 1"),
        ((8, 0), "num_heads must be an integer >= 1"),
        ((8.0, 2), "embed_dim must be an integer"),
    ],
)
def test_bad_arguments_say_what_is_valid(args, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(*args)


def test_bad_inputs_and_masks():
    m = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="embed_dim=8"):
        m(torch.randn(1, 3, 5))
    with pytest.raises(ValueError, match="shape"):
        m(torch.randn(3, 8))
    with pytest.raises(ValueError, match="boolean"):
        m(torch.randn(1, 3, 8), torch.ones(3, 3))
    with pytest.raises(ValueError, match="broadcast"):
        m(torch.randn(1, 3, 8), torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="single"):
        build_attention("triple", 8, 2)
    assert valid_num_heads(12) == [1, 2, 3, 4, 6, 12]


def test_weights_are_a_pure_function_of_sizes_and_seed():
    a = build_attention("multi", 16, 4, seed=7).state_dict()
    torch.manual_seed(123)  # the global RNG must not matter
    b = build_attention("multi", 16, 4, seed=7).state_dict()
    c = build_attention("multi", 16, 4, seed=8).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["query_linear.weight"], c["query_linear.weight"])


def test_building_a_module_leaves_the_global_random_state_alone():
    # a notebook's own torch.manual_seed(...) sequence must not depend on the app's calls
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    build_attention("multi", 16, 4, seed=7)
    build_attention("single", 8, seed=1)
    assert torch.equal(torch.rand(3), expected)


def test_same_seed_bit_identical_across_processes():
    code = (
        "from attention_core.attention import build_attention;"
        "import hashlib;m=build_attention('multi',16,4,seed=7);"
        "print(hashlib.sha256(b''.join(p.detach().numpy().tobytes() "
        "for p in m.parameters())).hexdigest())"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    }
    m = build_attention("multi", 16, 4, seed=7)
    import hashlib

    here = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in m.parameters()))
    assert runs == {here.hexdigest()}


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    heads=st.sampled_from([1, 2, 4]),
    scale=st.sampled_from([1e-3, 1.0, 1e2, 1e4]),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_weights_are_row_stochastic(n, heads, scale, causal, seed):
    m = build_attention("multi", 8, heads, seed=seed)
    x = torch.randn(1, n, 8, generator=torch.Generator().manual_seed(seed)) * scale
    with torch.no_grad():
        out, w = m(x, causal_mask(n) if causal else None)
    w = w.numpy()
    assert np.isfinite(w).all() and np.isfinite(out.numpy()).all()
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    if causal:
        assert np.all(np.triu(w[0], k=1) == 0)
