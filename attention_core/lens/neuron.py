"""One head's scores taken apart, BertViz's neuron view: q, k, q⊙k, their sum, ÷√D,
softmax; and whether a model's weights are causal (a decoder's).

q and k are the ones the model's scores are made of: after its per-head norms (Qwen3's
q_norm / k_norm) and its rotary positions (Llama, Mistral, Qwen, Gemma: the cos and sin
the model passed the layer), k of the key/value head a query head shares under
grouped-query attention; the scores are soft-capped where the model caps them (Gemma 2)
and masked by the model's own mask (causal, a sliding window) and by the layer's own local
window where it keeps one (GPT-Neo).

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.limits import EXACT, HALF_TOLERANCE, MAX_TOKENS
from attention_core.pretrained.parts import AttentionLayer, attention_layers, layer_calls
from attention_core.pretrained.rebuild import queries_keys, score_bias

if TYPE_CHECKING:
    import torch

    from attention_core.pretrained.load import LoadedModel


@dataclass(frozen=True)
class NeuronView:
    """One head's scores taken apart, BertViz's neuron view: q (n, D), k (n, D), and for
    query i the products q_i ⊙ k_j (n, D), their sums (the raw scores, n), the scores times
    the model's scaling (1/√D), and their softmax (the attention row)."""

    q: np.ndarray  # (n, D) as the scores use them (after norms and rotary positions)
    k: np.ndarray  # (n, D) of the key/value head this query head reads
    scaling: float
    mask: np.ndarray | None = None  # (n, n) added to the scores: 0 or -inf (the model's)
    softcap: float | None = None  # scores → softcap · tanh(scores / softcap) (Gemma 2)
    bias: np.ndarray | None = None  # (n,) added to the scaled scores, per key (ALiBi: BLOOM)
    kv_head: int | None = None  # the shared key/value head under grouped-query attention

    def products(self, query: int) -> np.ndarray:
        return self.q[query][None, :] * self.k  # (n, D)

    def raw_scores(self, query: int) -> np.ndarray:
        return self.products(query).sum(axis=-1)  # (n,)

    def scaled_scores(self, query: int) -> np.ndarray:
        scaled = self.raw_scores(query) * self.scaling  # (n,)
        return scaled if self.bias is None else scaled + self.bias

    def weights(self, query: int, *, causal: bool = False) -> np.ndarray:
        s = self.scaled_scores(query).astype(np.float64)
        if self.softcap:
            s = self.softcap * np.tanh(s / self.softcap)
        if self.mask is not None:
            s = s + self.mask[query]
        elif causal:
            s[query + 1 :] = -np.inf
        e = np.exp(s - s.max())
        return e / e.sum()  # (n,)

    def gap(self, query: int, own: np.ndarray, *, causal: bool = False) -> float:
        """The largest difference between the rebuilt row of `query` and the model's own
        (n,) row: above EXACT, the view must not show its numbers."""
        return float(np.abs(self.weights(query, causal=causal) - own).max())


def _mask(attention_mask: object, n: int) -> np.ndarray | None:
    """The model's mask for this layer as (n, n) of 0 / -inf, or None (no mask passed)."""
    import torch

    if not isinstance(attention_mask, torch.Tensor):
        return None
    m = attention_mask.detach()
    m = m.reshape(-1, *m.shape[-2:])[0][-n:, -n:]  # (B, 1, n | 1, n) → (n | 1, n)
    if m.dtype == torch.bool:  # True = may attend
        keep = np.where(m.numpy(), 0.0, -np.inf)
    else:
        masked = (m <= torch.finfo(m.dtype).min / 2).numpy()  # the mask dtype's lowest number
        keep = np.where(masked, -np.inf, m.double().numpy())
    return np.broadcast_to(keep, (n, n))


def is_causal(weights: np.ndarray) -> bool:
    """True when no query attends to a later key in any head: (…, n, n) weights of a
    decoder (GPT-like) model."""
    w = np.asarray(weights)
    n = w.shape[-1]
    return n > 1 and not np.triu(w, k=1).any()


class RebuildRefused(ValueError):
    """A view's rebuilt weights are not the model's own: nothing rebuilt may be shown. The
    message says why, as far as the model lets it be known; `code` ("precision", "unread",
    "scores") and `params` say it for an interface in its own language."""

    def __init__(self, message: str, *, code: str = "scores", **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


# what a layer's call may carry that the rebuild reads or that changes no score
_UNDERSTOOD = {"hidden_states", "attention_mask", "position_embeddings", "alibi", "position_ids"}
_UNDERSTOOD |= {"cache_position", "past_key_values", "past_key_value", "layer_past", "use_cache"}
_UNDERSTOOD |= {"output_attentions", "head_mask", "residual", "kwargs"}


def rebuild_tolerance(model: Any) -> float:
    """How far a rebuilt weight may be from the model's own: EXACT for a float32 model;
    HALF_TOLERANCE for bfloat16 / float16 weights, whose own softmax keeps ~3 digits
    (the rebuild runs in float32)."""
    dtype = str(getattr(next(model.parameters(), None), "dtype", "torch.float32"))
    return EXACT if dtype == "torch.float32" else HALF_TOLERANCE


def refusal(
    part: AttentionLayer, call: dict[str, Any], gap: float, model: Any, n: int = 0
) -> RebuildRefused:
    """Why a layer's rebuilt weights (over `n` tokens) differ from its own by `gap`: the
    true reason where it shows (the precision, an argument over the keys that the rebuild
    does not read), else the layer named."""
    import torch

    dtype = next(model.parameters()).dtype
    layer = type(part.module).__name__
    if dtype != torch.float32 and gap <= 10 * HALF_TOLERANCE:
        name = str(dtype).removeprefix("torch.")
        return RebuildRefused(
            f"the model computes in {name}: its own weights differ from the float32 rebuild "
            f"by {gap:.2g}, more than the {HALF_TOLERANCE:g} its precision explains",
            code="precision",
            dtype=name,
            gap=gap,
            tolerance=HALF_TOLERANCE,
        )
    unread = sorted(
        k
        for k, v in call.items()
        if k not in _UNDERSTOOD and getattr(v, "ndim", 0) >= 3 and v.shape[-1] == n
    )  # a tensor over the keys that the rebuild does not add: a bias of the scores?
    if unread:
        return RebuildRefused(
            f"{layer} is called with {', '.join(unread)}, which this view does not rebuild: "
            f"its weights differ from the rebuild by {gap:.2g}",
            code="unread",
            layer=layer,
            names=", ".join(unread),
            gap=gap,
        )
    return RebuildRefused(
        f"{layer} makes its scores in a way this view does not rebuild (its weights differ "
        f"from softmax(q·kᵀ·scale) by {gap:.2g})",
        code="scores",
        layer=layer,
        gap=gap,
    )


def neuron_view(
    loaded: LoadedModel, text: str, layer: int, head: int, *, max_tokens: int = MAX_TOKENS
) -> NeuronView:
    """q and k of head `head` in layer `layer` for `text` (see NeuronView), checked: every
    row it rebuilds equals the model's own attention (`run_model`) within
    `rebuild_tolerance`, else RebuildRefused says why."""
    from attention_core.pretrained.run import run_model

    layers = attention_layers(loaded.model)
    if not 0 <= layer < len(layers) or not 0 <= head < layers[layer].num_heads:
        raise ValueError(
            f"layer must be in 0..{len(layers) - 1} and head in "
            f"0..{layers[0].num_heads - 1}, got layer {layer}, head {head}"
        )
    x, call = layer_calls(loaded, text, max_tokens)[layer]  # (n, C), the layer's kwargs
    view = rebuild_view(layers[layer], x, call, head)
    own = run_model(loaded, text, max_tokens=max_tokens).attentions  # (L, H, n, n)
    causal = is_causal(own)
    gap = max(view.gap(i, own[layer, head, i], causal=causal) for i in range(own.shape[-1]))
    if not gap <= rebuild_tolerance(loaded.model):
        raise refusal(layers[layer], call, gap, loaded.model, own.shape[-1])
    return view


def rebuild_view(
    part: AttentionLayer, x: torch.Tensor, call: dict[str, Any], head: int
) -> NeuronView:
    """One head's q and k rebuilt from its layer's input x (n, C) and the keyword arguments
    the model passed the layer (`call`: its rotary cos and sin, its attention_mask)."""
    q, k = queries_keys(part, x, call)  # (H, n, D), (KV, n, D)
    kv = part.kv_head(head)
    softcap = getattr(part.module, "attn_logit_softcapping", None)
    bias = score_bias(part, call, x.shape[0])  # (H, n) or None
    n = x.shape[0]
    mask = _mask(call.get("attention_mask"), n)
    if part.window is not None:  # the layer's own local window (GPT-Neo), over any mask
        i, j = np.indices((n, n))
        seen = (j <= i) & (j > i - part.window)  # the last `window` keys, the query's own too
        mask = np.where(seen, 0.0 if mask is None else mask, -np.inf)
    return NeuronView(
        q=q[head].double().numpy(),
        k=k[kv].double().numpy(),
        scaling=part.scaling,
        mask=mask,
        softcap=float(softcap) if softcap else None,
        bias=None if bias is None else bias[head].double().numpy(),
        kv_head=kv if part.num_kv_heads != part.num_heads else None,
    )
