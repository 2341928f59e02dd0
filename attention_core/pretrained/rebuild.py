"""One layer's scores rebuilt from its input: the queries and keys as the scores use them,
and the bias a layer adds to them, for every family `parts.attention_layers` finds.

What the families do between the projections and q·kᵀ, each rebuilt here as the model's
own forward pass does it:

    clip_qkv                q, k, v clamped to ±clip after the projections (OLMo)
    q_norm over H·D         an RMSNorm of all heads at once, before the split (OLMo2)
    q_norm over D           a norm of each head (Qwen3, Gemma 3)
    q_layernorm             a LayerNorm of each head (StableLM's qk_layernorm, Phi)
    rotary positions        the cos and sin the model passed the layer, on the first
                            cos.shape[-1] dimensions of each head (all of them for Llama;
                            a quarter for GPT-NeoX / Pythia and StableLM, half for Phi)
    ALiBi                   a bias per head and key position added to the scaled scores
                            (BLOOM's `alibi`)

A half-precision model's projections and rotary positions are rebuilt in float32; its
norms run in the model's own precision, as its forward pass runs them.

Shape legend: H heads, KV key/value heads, n tokens, D head size, C model width.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from attention_core.pretrained.parts import AttentionLayer

if TYPE_CHECKING:
    import torch

__all__ = ["queries_keys", "score_bias", "values"]


def _norm(module: Any, x: torch.Tensor) -> torch.Tensor:
    """`module` (a norm) applied in its own precision, the result back in float32."""
    dtype = next(module.parameters(), x).dtype
    return module(x.to(dtype)).float()


def _projected(part: AttentionLayer, x: torch.Tensor, w: Any, b: Any) -> torch.Tensor:
    """(n, C) → (n, out) through one projection in float32, clamped where the model clamps."""
    y = x.float() @ w.float().T
    if b is not None:
        y = y + b.float()
    return y if part.clip is None else y.clamp(-part.clip, part.clip)


def _split(y: torch.Tensor, heads: int) -> torch.Tensor:
    n = y.shape[0]
    return y.view(n, heads, -1).transpose(0, 1)  # (n, heads·D) → (heads, n, D)


def _full_width(norm: Any, width: int) -> bool:
    """True for a norm over every head at once (OLMo2: its weight is H·D wide)."""
    weight = getattr(norm, "weight", None)
    return weight is not None and weight.numel() == width


def queries_keys(
    part: AttentionLayer, x: torch.Tensor, call: dict[str, Any]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every head's q (H, n, D) and every key/value head's k (KV, n, D) of one layer in
    float32, as its scores use them, from the layer's input x (n, C) and the keyword
    arguments the model passed it (`call`): see the module docstring."""
    import torch

    module = part.module
    with torch.no_grad():
        q = _projected(part, x, part.wq, part.bq)  # (n, H·D)
        k = _projected(part, x, part.wk, part.bk)  # (n, KV·D)
        q_norm = getattr(module, "q_norm", None)
        k_norm = getattr(module, "k_norm", None)
        if q_norm is not None and _full_width(q_norm, q.shape[-1]):  # OLMo2
            q, k = _norm(q_norm, q), _norm(k_norm, k)
            q_norm = k_norm = None
        q, k = _split(q, part.num_heads), _split(k, part.num_kv_heads)  # (H, n, D), (KV, n, D)
        if q_norm is not None:  # per head, over D (Qwen3)
            q, k = _norm(q_norm, q), _norm(k_norm, k)
        q_ln, k_ln = getattr(module, "q_layernorm", None), getattr(module, "k_layernorm", None)
        if q_ln is not None:  # per head (StableLM's and Phi's qk_layernorm): (1, H, n, D)
            q, k = _norm(q_ln, q[None])[0], _norm(k_ln, k[None])[0]
        rotary = call.get("position_embeddings")
        if rotary is not None:  # the cos and sin the model passed this layer
            q, k = _rotate(module, q, k, *(t.float() for t in rotary))
    return q, k


def _rotate(
    module: Any, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotary positions on the first cos.shape[-1] dimensions of each head (all of them, or
    part: GPT-NeoX, StableLM, Phi), with the model's own apply_rotary_pos_emb."""
    import torch

    apply = getattr(sys.modules[type(module).__module__], "apply_rotary_pos_emb", None)
    if apply is None:
        raise ValueError(f"{type(module).__name__}: rotary positions not understood")
    rot = cos.shape[-1]
    q_rot, k_rot = apply(q[None, ..., :rot], k[None, ..., :rot], cos, sin)  # (1, ·, n, rot)
    q = torch.cat((q_rot[0], q[..., rot:]), dim=-1)  # (H, n, D)
    k = torch.cat((k_rot[0], k[..., rot:]), dim=-1)  # (KV, n, D)
    return q, k


def values(part: AttentionLayer, x: torch.Tensor) -> torch.Tensor:
    """Every key/value head's v (KV, n, D) of one layer in float32, clamped where the model
    clamps (OLMo)."""
    import torch

    with torch.no_grad():
        return _split(_projected(part, x, part.wv, part.bv), part.num_kv_heads)  # (KV, n, D)


def score_bias(part: AttentionLayer, call: dict[str, Any], n: int) -> torch.Tensor | None:
    """The bias the layer adds to its scaled scores for each head and key, (H, n) in
    float32, or None: BLOOM's ALiBi (`alibi`, (B·H, 1, n)), which depends on the key's
    position only (the same for every query)."""
    alibi = call.get("alibi")
    if alibi is None:
        return None
    return alibi.detach().float().reshape(-1, part.num_heads, alibi.shape[-1])[0, :, -n:]
