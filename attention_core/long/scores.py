"""How a long map makes its scores a block at a time, and each row's log-sum-exp: what
`attention_core.long.map.AttentionMap` computes its weights from.

Two kinds of scores, each as the model's own forward pass makes them:

    plain        s_ij = q_i·k_j·scale (every family but Gemma 2). Linear in q, so the row's
                 offset folds into one matmul: q̂ = [q·scale, −lse], k̂ = [k, 1],
                 w_ij = exp(q̂_i·k̂_j); the log-sum-exp comes from torch's fused
                 flash-attention kernel where it is offered.
    soft-capped  s_ij = cap·tanh(q_i·k_j·scale / cap) (Gemma 2's attn_logit_softcapping).
                 Not linear: no offset folds into the matmul and no fused kernel computes
                 it, so each block of q·kᵀ is computed, capped, then offset by its rows'
                 log-sum-exp, itself taken over explicitly capped blocks.

Causal rows see keys j ≤ i only (−inf above the diagonal, before the softmax, as the
model's mask). Every computation holds at most `scratch` floats of scores at once.

Shape legend: H heads, n tokens, D head size, b rows of a block, c keys of a block.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["capped", "fused_lse", "hide_future_", "row_lse", "rows_per_block"]


def capped(s: Tensor, softcap: float | None) -> Tensor:
    """Scores `s` soft-capped as Gemma 2 caps them, cap·tanh(s / cap), in place; `s` itself
    when there is no cap."""
    if softcap is None:
        return s
    return s.div_(softcap).tanh_().mul_(softcap)


def row_lse(qs: Tensor, kt: Tensor, *, causal: bool, softcap: float | None, scratch: int) -> Tensor:
    """Each row's log-sum-exp of the scores of `qs` (H, n, D, already times the scale) and
    `kt` (H, n, D), capped where `softcap` says: (H, n) float32. The fused kernel's when it
    is offered and the scores are plain, else one pass over blocks of `scratch` floats."""
    H, n, _ = qs.shape
    lse = None if softcap is not None else fused_lse(qs, kt, causal=causal, scale=1.0)
    if lse is not None:
        return lse
    lse = torch.empty(H, n)
    step = rows_per_block(scratch, H, n)
    for a in range(0, n, step):
        b = min(n, a + step)
        hi = b if causal else n  # a causal row b − 1 sees keys < b only
        s = capped(qs[:, a:b] @ kt[:, :hi].transpose(1, 2), softcap)  # (H, b − a, hi)
        if causal:
            hide_future_(s, torch.arange(a, b), 0)
        lse[:, a:b] = torch.logsumexp(s, dim=-1)  # (H, b − a)
    return lse


def fused_lse(q: Tensor, k: Tensor, *, causal: bool, scale: float) -> Tensor | None:
    """Each row's log-sum-exp of q·kᵀ·scale, (H, n), from torch's fused CPU flash-attention
    kernel (it keeps its softmax statistics): at 4 096 tokens × 8 heads × D = 64 0.16 s against
    the block loop's 0.30 s (causal, one core), equal within 1e-6. None without the kernel."""
    if q.shape[1] < 2:  # one position: the block loop's single score is as quick
        return None
    try:
        kernel = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
        _, lse = kernel(q[None], k[None], k[None], 0.0, causal, scale=scale)[:2]  # (1, H, n)
    except (AttributeError, RuntimeError, TypeError):
        return None
    return lse[0].to(torch.float32).contiguous() if torch.isfinite(lse).all() else None


def hide_future_(s: Tensor, rows: Tensor, c0: int) -> None:
    """Set the scores `s` (h, b, c) of keys c0 + j after query rows[i] to −inf, in place.
    `rows` ascend, so only keys after rows[0] need looking at (a causal block's corner)."""
    lo = max(c0, int(rows[0]) + 1)
    c1 = c0 + s.shape[-1]
    if lo < c1:
        future = torch.arange(lo, c1)[None, :] > rows[:, None]  # (b, c1 − lo)
        s[..., lo - c0 :].masked_fill_(future, -math.inf)


def rows_per_block(scratch: int, heads: int, cols: int) -> int:
    """Rows of `heads` × `cols` scores that fit in `scratch` floats (at least one)."""
    return max(1, int(scratch) // max(1, heads * cols))
