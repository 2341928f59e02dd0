"""What attention moves, not only where it looks: value norms ‖f_h(x_j)‖ and the
norm-weighted attention ‖α_ij · f_h(x_j)‖ (Kobayashi et al. 2020, "Attention is Not
Only a Weight").

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attention_core.lens.model_parts import _layer_inputs, _layers, _project
from attention_core.limits import MAX_TOKENS

if TYPE_CHECKING:
    from attention_core.pretrained import LoadedModel


def value_norms(loaded: LoadedModel, text: str, *, max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """‖f_h(x_j)‖ → (L, H, n): token j's value vector in head h projected through that
    head's slice of the output projection (no bias), i.e. what head h would add to the
    residual stream if it attended to j alone (Kobayashi et al. 2020, eq. 5)."""
    import torch

    layers = _layers(loaded.model)
    out = []
    with torch.no_grad():
        for layer, x in zip(layers, _layer_inputs(loaded, text, max_tokens), strict=True):
            v = _project(x, layer.wv, layer.bv, layer.num_kv_heads)  # (KV, n, D)
            v = v.repeat_interleave(layer.num_heads // layer.num_kv_heads, dim=0)  # (H, n, D)
            wo = layer.wo.view(layer.wo.shape[0], layer.num_heads, layer.head_dim)  # (C, H, D)
            f = torch.einsum("hnd,chd->hnc", v, wo)  # (H, n, C)
            out.append(f.norm(dim=-1).to(torch.float32).numpy())  # (H, n)
    return np.stack(out)  # (L, H, n)


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
    norms = value_norms(loaded, text, max_tokens=max_tokens)  # (L, H, n)
    if norms.shape != attentions.shape[:3]:
        raise ValueError(
            f"attentions {attentions.shape} do not belong to this text: value norms {norms.shape}"
        )
    return (attentions * norms[:, :, None, :]).astype(np.float32)  # (L, H, n, n)
