"""What attention moves, not only where it looks: value norms ‖f_h(x_j)‖ and the
norm-weighted attention ‖α_ij · f_h(x_j)‖ (Kobayashi et al. 2020, "Attention is Not
Only a Weight").

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attention_core.limits import MAX_TOKENS
from attention_core.pretrained.parts import AttentionLayer, attention_layers, layer_inputs
from attention_core.pretrained.rebuild import values

if TYPE_CHECKING:
    import torch

    from attention_core.pretrained import LoadedModel


def head_value_norms(layer: AttentionLayer, x: torch.Tensor) -> np.ndarray:
    """‖f_h(x_j)‖ of one layer → (H, n), from its input hidden states x (n, C): v_h(x_j)
    through head h's columns of the output projection, no bias (Kobayashi et al. eq. 5)."""
    import torch

    with torch.no_grad():
        v = values(layer, x)  # (KV, n, D) in float32, clamped where the model clamps
        v = v.repeat_interleave(layer.num_heads // layer.num_kv_heads, dim=0)  # (H, n, D)
        wo = layer.wo.float().view(layer.wo.shape[0], layer.num_heads, layer.head_dim)  # (C, H, D)
        f = torch.einsum("hnd,chd->hnc", v, wo)  # (H, n, C)
        return f.norm(dim=-1).to(torch.float32).numpy()  # (H, n)


def value_norms(loaded: LoadedModel, text: str, *, max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """‖f_h(x_j)‖ → (L, H, n): token j's value vector in head h projected through that
    head's slice of the output projection (no bias), i.e. what head h would add to the
    residual stream if it attended to j alone (Kobayashi et al. 2020, eq. 5)."""
    inputs = layer_inputs(loaded, text, max_tokens)
    layers = attention_layers(loaded.model)
    return np.stack([head_value_norms(a, x) for a, x in zip(layers, inputs, strict=True)])


def norm_weighted(
    loaded: LoadedModel,
    text: str,
    *,
    attentions: np.ndarray | None = None,
    max_tokens: int = MAX_TOKENS,
) -> np.ndarray:
    """‖α_ij · f_h(x_j)‖ → (L, H, n, n) (Kobayashi et al. 2020, "Attention is Not Only a
    Weight"): the weight times the size of what it moves. α ≥ 0, so it is α_ij · ‖f_h(x_j)‖.

    `attentions` (L, H, n, n), when given, must be `run_model(loaded, text).attentions`;
    otherwise the model is run for them.
    """
    if attentions is None:
        from attention_core.pretrained import run_model

        attentions = run_model(loaded, text, max_tokens=max_tokens).attentions
    return times_norms(attentions, value_norms(loaded, text, max_tokens=max_tokens))


def times_norms(attentions: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """α_ij · ‖f_h(x_j)‖: attentions (L, H, n, n) times value norms (L, H, n) of the same text."""
    if norms.shape != attentions.shape[:3]:
        raise ValueError(
            f"attentions {attentions.shape} do not belong to this text: value norms {norms.shape}"
        )
    return (attentions * norms[:, :, None, :]).astype(np.float32)  # (L, H, n, n)
