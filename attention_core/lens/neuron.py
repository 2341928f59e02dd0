"""One head's scores taken apart, BertViz's neuron view: q, k, q⊙k, their sum, ÷√D,
softmax; and whether a model's weights are causal (a decoder's).

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from attention_core.lens.model_parts import _layer_inputs, _layers, _project
from attention_core.limits import MAX_TOKENS

if TYPE_CHECKING:
    from attention_core.pretrained import LoadedModel


@dataclass(frozen=True)
class NeuronView:
    """One head's scores taken apart, BertViz's neuron view: q (n, D), k (n, D), and for
    query i the products q_i ⊙ k_j (n, D), their sums (the raw scores, n), the scores times
    the model's scaling (1/√D), and their softmax (the attention row)."""

    q: np.ndarray  # (n, D)
    k: np.ndarray  # (n, D)
    scaling: float

    def products(self, query: int) -> np.ndarray:
        return self.q[query][None, :] * self.k  # (n, D)

    def raw_scores(self, query: int) -> np.ndarray:
        return self.products(query).sum(axis=-1)  # (n,)

    def scaled_scores(self, query: int) -> np.ndarray:
        return self.raw_scores(query) * self.scaling  # (n,)

    def weights(self, query: int, *, causal: bool = False) -> np.ndarray:
        s = self.scaled_scores(query).astype(np.float64)
        if causal:
            s[query + 1 :] = -np.inf
        e = np.exp(s - s.max())
        return e / e.sum()  # (n,)


def is_causal(weights: np.ndarray) -> bool:
    """True when no query attends to a later key in any head: (…, n, n) weights of a
    decoder (GPT-like) model."""
    w = np.asarray(weights)
    n = w.shape[-1]
    return n > 1 and not np.triu(w, k=1).any()


def neuron_view(
    loaded: LoadedModel, text: str, layer: int, head: int, *, max_tokens: int = MAX_TOKENS
) -> NeuronView:
    """q and k of head `head` in layer `layer` for `text` (see NeuronView)."""
    import torch

    layers = _layers(loaded.model)
    if not 0 <= layer < len(layers) or not 0 <= head < layers[layer].num_heads:
        raise ValueError(
            f"layer must be in 0..{len(layers) - 1} and head in "
            f"0..{layers[0].num_heads - 1}, got layer {layer}, head {head}"
        )
    part = layers[layer]
    x = _layer_inputs(loaded, text, max_tokens)[layer]  # (n, C)
    with torch.no_grad():
        q = _project(x, part.wq, part.bq, part.num_heads)[head]  # (n, D)
        k = _project(x, part.wk, part.bk, part.num_heads)[head]  # (n, D)
    return NeuronView(q=q.double().numpy(), k=k.double().numpy(), scaling=part.scaling)
