"""The engineer's lens on a real model: attention combined across layers, weighted by what
is actually moved, knocked out head by head, and pooled to words.

Raw attention weights say where a head looks, not what it changes (Jain & Wallace 2019,
"Attention is not Explanation"). This module gives the answers the literature proposes:

    rollout(A)            attention rollout, every layer's product (Abnar & Zuidema 2020)
    flow(A)               attention flow, max-flow through the layered graph (same paper)
    norm_weighted(m, t)   ‖α_ij · f_h(x_j)‖, weights times what is moved (Kobayashi et al. 2020)
    head_effects(m, t)    every head knocked out, one at a time, ranked by its effect
    ablate(m, t, heads)   the output with a set of heads zeroed
    toy_head_effects(...) the same for the project's own trained toy model: accuracy
    sinks(m, t)           how much each head attends to [CLS] / [SEP] / first / punctuation,
                          with those tokens' value norms (why such heads are near no-ops;
                          Clark et al. 2019, Kobayashi et al. 2020 section 5)
    neuron_view(m, t, l, h)   q, k, q⊙k, their sum, ÷√d, softmax for one head (BertViz)
    pool_to_words(w, ...) piece-to-piece attention pooled to jieba words

`m` is a `pretrained.LoadedModel`; `t` is tokenized exactly as `pretrained.run_model` does
(special tokens included), so every (…, n, n) here lines up with `run_model(...).attentions`.

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

import string
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.limits import MAX_TOKENS

if TYPE_CHECKING:
    import torch

    from attention_core.pretrained import LoadedModel

__all__ = [
    "FLOW_MAX_TOKENS",
    "AblationResult",
    "HeadEffects",
    "NeuronView",
    "RowChange",
    "Sinks",
    "ToyEffects",
    "ablate",
    "flow",
    "head_effects",
    "is_causal",
    "neuron_view",
    "norm_weighted",
    "pool_to_words",
    "rollout",
    "row_change",
    "shared_tokens",
    "sinks",
    "toy_accuracy",
    "toy_head_effects",
    "value_norms",
]

# Attention flow solves n² max-flow problems on a graph of (L+1)·n nodes and L·n² edges.
# Measured on MiniLM (L = 6) on the 2-core machine (load ~4): 16 tokens 0.08 s, 32 tokens
# 0.5 s, 48 tokens 1.6 s (it grows ~n⁴, so 64 would be ~5 s); above 48 it is refused.
FLOW_MAX_TOKENS = 48
# scipy's max-flow takes int32 capacities: weights are scaled by a power of two and rounded.
# A token's out-edges sum to at most n (each weight ≤ 1) and scipy adds them up, so the
# scale is 2**30 / n rounded down to a power of two: at 48 tokens 2**24, each rounded edge
# off by at most 3e-8.


def _flow_scale(n: int) -> int:
    return 2 ** (30 - max(1, n).bit_length())


# head_effects runs copies of the sentence in batches: one pass of 73 copies of 32 tokens
# takes about as long as 3 passes of one copy on 2 cores. A batch's attention scores hold
# rows × H × n² floats per layer; this bounds them to ~200 MB (73 rows at 128 tokens for
# MiniLM, 16 at 512).
_ABLATION_FLOATS = 50_000_000


# --- combining layers ---------------------------------------------------------------------


def _residual_layers(attentions: np.ndarray, residual: float) -> np.ndarray:
    """Ã_l = residual·I + (1−residual)·mean_h A_l, rows renormalised; (L, H, n, n) → (L, n, n)."""
    a = np.asarray(attentions, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attentions must have shape (L, H, n, n), got {a.shape}")
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must be between 0 and 1, got {residual}")
    n = a.shape[-1]
    mixed = residual * np.eye(n) + (1.0 - residual) * a.mean(axis=1)  # (L, n, n)
    sums = mixed.sum(axis=-1, keepdims=True)  # (L, n, 1)
    return np.divide(mixed, sums, out=np.zeros_like(mixed), where=sums > 0)


def rollout(attentions: np.ndarray, *, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers").

    `attentions` (L, H, n, n) → (L, n, n): R_1 = Ã_1, R_l = Ã_l · R_{l−1}, where
    Ã_l = residual·I + (1−residual)·mean over heads of A_l, rows renormalised (the identity
    stands for the residual connection). R_l[i, j] is how much of input token j reaches
    position i after layer l; every row sums to 1.
    """
    mixed = _residual_layers(attentions, residual)
    out = np.empty_like(mixed)
    current = np.eye(mixed.shape[-1])
    for layer, a in enumerate(mixed):
        current = a @ current  # (n, n)
        out[layer] = current
    return out


def flow(
    attentions: np.ndarray, *, residual: float = 0.5, max_tokens: int = FLOW_MAX_TOKENS
) -> np.ndarray:
    """Attention flow (Abnar & Zuidema 2020): `attentions` (L, H, n, n) → (n, n).

    The layered graph has a node (l, j) for every layer boundary l = 0..L and token j, and
    an edge (l, j) → (l+1, i) of capacity Ã_{l+1}[i, j] (see `rollout`). Entry [i, j] is the
    maximum flow from input token j (layer 0) to position i after the last layer L.

    It solves n² max-flow problems, so texts longer than `max_tokens` tokens are refused
    with a ValueError (see FLOW_MAX_TOKENS for the measured cost).
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    mixed = _residual_layers(attentions, residual)  # (L, n, n)
    num_layers, n, _ = mixed.shape
    if n > max_tokens:
        raise ValueError(
            f"attention flow solves n² max-flow problems and is limited to {max_tokens} "
            f"tokens; this text has {n}. Use rollout, or a shorter text"
        )
    rows, cols, caps = [], [], []
    for layer, a in enumerate(mixed):
        target, source = np.nonzero(a)  # a[i, j]: from token j below to position i above
        rows.append(layer * n + source)
        cols.append((layer + 1) * n + target)
        caps.append(a[target, source])
    nodes = (num_layers + 1) * n
    scale = _flow_scale(n)
    capacity = np.rint(np.concatenate(caps) * scale).astype(np.int32)
    graph = csr_array(
        (capacity, (np.concatenate(rows), np.concatenate(cols))), shape=(nodes, nodes)
    )
    graph.sort_indices()
    out = np.zeros((n, n))
    top = num_layers * n
    for i in range(n):
        for j in range(n):
            out[i, j] = maximum_flow(graph, j, top + i).flow_value
    return out / scale


# --- the model's own attention modules ------------------------------------------------------


@dataclass(frozen=True)
class _Layer:
    """One self-attention layer's projections, as y = x @ weight.T + bias (weights (out, in))."""

    module: Any  # receives the layer's hidden states (its input is captured by a hook)
    out_module: Any  # the output projection; its input is the concatenated heads (…, H·D)
    wq: torch.Tensor  # (H·D, C)
    bq: torch.Tensor | None  # (H·D,)
    wk: torch.Tensor
    bk: torch.Tensor | None
    wv: torch.Tensor
    bv: torch.Tensor | None
    wo: torch.Tensor  # (C, H·D)
    num_heads: int
    head_dim: int
    scaling: float


def _linear(module: Any) -> tuple[Any, Any]:
    return module.weight, module.bias


def _layers(model: Any) -> list[_Layer]:
    """The self-attention layers of a BERT-like, GPT-2-like or BART/Llama-like model, in order.

    Found by the projections' names: query/key/value (+ the sibling output.dense) for BERT,
    RoBERTa, MiniLM, ELECTRA; q_lin/k_lin/v_lin/out_lin for DistilBERT; c_attn/c_proj (Conv1D,
    y = x @ W) for GPT-2; q_proj/k_proj/v_proj/out_proj (or o_proj) elsewhere.
    """
    config = model.config
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(
            "this lens works on encoder-only (BERT-like) and decoder-only (GPT-like) models"
        )
    heads = int(getattr(config, "num_attention_heads", 0) or getattr(config, "n_head", 0))
    modules = dict(model.named_modules())
    layers: list[_Layer] = []
    for name, mod in modules.items():
        parts: tuple[Any, ...] | None = None
        if all(hasattr(mod, a) for a in ("query", "key", "value")):
            parent = modules[name.rsplit(".", 1)[0]] if "." in name else None
            out = getattr(getattr(parent, "output", None), "dense", None)
            if out is not None:
                parts = (*_linear(mod.query), *_linear(mod.key), *_linear(mod.value), out)
        elif all(hasattr(mod, a) for a in ("q_lin", "k_lin", "v_lin", "out_lin")):
            parts = (*_linear(mod.q_lin), *_linear(mod.k_lin), *_linear(mod.v_lin), mod.out_lin)
        elif hasattr(mod, "c_attn") and hasattr(mod, "c_proj"):
            w = mod.c_attn.weight.T  # Conv1D stores (in, out); (3C, C) as a Linear would
            b = mod.c_attn.bias
            c = w.shape[1]
            parts = (w[:c], b[:c], w[c : 2 * c], b[c : 2 * c], w[2 * c :], b[2 * c :], mod.c_proj)
        elif all(hasattr(mod, a) for a in ("q_proj", "k_proj", "v_proj")):
            out = getattr(mod, "out_proj", None) or getattr(mod, "o_proj", None)
            if out is not None:
                parts = (*_linear(mod.q_proj), *_linear(mod.k_proj), *_linear(mod.v_proj), out)
        if parts is None:
            continue
        wq, bq, wk, bk, wv, bv, out_module = parts
        if wq.shape != wk.shape or wq.shape != wv.shape:
            raise ValueError(f"{name}: grouped or multi-query attention is not supported")
        h = int(getattr(mod, "num_heads", 0) or getattr(mod, "num_attention_heads", 0) or heads)
        d = wq.shape[0] // h
        wo = out_module.weight.T if type(out_module).__name__ == "Conv1D" else out_module.weight
        scaling = getattr(mod, "scaling", None)
        if scaling is None:  # GPT-2 divides by √D unless told not to
            scaling = d**-0.5 if getattr(mod, "scale_attn_weights", True) else 1.0
        layers.append(_Layer(mod, out_module, wq, bq, wk, bk, wv, bv, wo, h, d, float(scaling)))
    if not layers:
        raise ValueError(
            f"no self-attention layers this lens understands in a {type(model).__name__}"
        )
    return layers


@contextmanager
def _hooks(handles: list[Any]) -> Iterator[None]:
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _this_thread_only(hook: Callable[..., Any]) -> Callable[..., Any]:
    """The app shares one model between sessions (threads): a hook registered by one
    thread must leave the others' forward passes alone."""
    owner = threading.get_ident()

    def guarded(*args: Any, **kwargs: Any) -> Any:
        return hook(*args, **kwargs) if threading.get_ident() == owner else None

    return guarded


def _inputs(loaded: LoadedModel, text: str, max_tokens: int) -> dict[str, torch.Tensor]:
    """`text` encoded exactly as pretrained.run_model encodes it, as (1, n) tensors."""
    import torch

    from attention_core.limits import MAX_TEXT_CHARS
    from attention_core.pretrained import _encode

    limit = min(max_tokens, loaded.max_length)
    enc, _ = _encode(loaded.tokenizer, text[:MAX_TEXT_CHARS], limit=limit)
    if not enc["input_ids"]:
        raise ValueError("the text gives no tokens for this model")
    names = getattr(loaded.tokenizer, "model_input_names", ["input_ids", "attention_mask"])
    return {k: torch.tensor([enc[k]]) for k in names if k in enc}  # each (1, n)


def _layer_inputs(loaded: LoadedModel, text: str, max_tokens: int) -> list[torch.Tensor]:
    """Each self-attention layer's input hidden states, (n, C) each, from one forward pass."""
    import torch

    layers = _layers(loaded.model)
    seen: dict[int, torch.Tensor] = {}

    def keep(index: int) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            x = args[0] if args else kwargs["hidden_states"]
            seen[index] = x[0].detach()  # (n, C)

        return hook

    handles = [
        layer.module.register_forward_pre_hook(_this_thread_only(keep(i)), with_kwargs=True)
        for i, layer in enumerate(layers)
    ]
    with _hooks(handles), torch.no_grad():
        loaded.model(**_inputs(loaded, text, max_tokens))
    return [seen[i] for i in range(len(layers))]


def _project(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, h: int) -> torch.Tensor:
    """(n, C) → (H, n, D) through one projection."""
    y = x @ w.T  # (n, H·D)
    if b is not None:
        y = y + b
    n = y.shape[0]
    return y.view(n, h, -1).transpose(0, 1)  # (H, n, D)


def value_norms(loaded: LoadedModel, text: str, *, max_tokens: int = MAX_TOKENS) -> np.ndarray:
    """‖f_h(x_j)‖ → (L, H, n): token j's value vector in head h projected through that
    head's slice of the output projection (no bias), i.e. what head h would add to the
    residual stream if it attended to j alone (Kobayashi et al. 2020, eq. 5)."""
    import torch

    layers = _layers(loaded.model)
    out = []
    with torch.no_grad():
        for layer, x in zip(layers, _layer_inputs(loaded, text, max_tokens), strict=True):
            v = _project(x, layer.wv, layer.bv, layer.num_heads)  # (H, n, D)
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


# --- neuron view ---------------------------------------------------------------------------


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


# --- head ablation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AblationResult:
    """The model's output with some heads zeroed, beside the untouched output."""

    hidden: np.ndarray  # (n, C) final hidden states with the heads knocked out
    original: np.ndarray  # (n, C) without
    token_distance: float  # mean over tokens of 1 − cos(hidden_i, original_i)
    pooled_distance: float  # 1 − cos of the mean-pooled sentence embeddings


@dataclass(frozen=True)
class HeadEffects:
    """Every head knocked out alone: (L, H) cosine distances from the untouched output."""

    token_distance: np.ndarray  # (L, H) mean over tokens of 1 − cos
    pooled_distance: np.ndarray  # (L, H) 1 − cos of the mean-pooled sentence embedding

    def ranking(self, *, by: str = "pooled") -> list[tuple[int, int]]:
        """(layer, head) pairs, largest effect first."""
        values = self.pooled_distance if by == "pooled" else self.token_distance
        order = np.argsort(-values, axis=None, kind="stable")
        return [tuple(int(v) for v in np.unravel_index(i, values.shape)) for i in order]


def _cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """1 − cos along the last axis, never below 0."""
    import torch

    cos = torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1)
    return (1.0 - cos).clamp_min(0.0)  # rounding can put cos of equal vectors a hair above 1


def _masked_forward(loaded: LoadedModel, inputs: dict[str, Any], masks: torch.Tensor) -> Any:
    """The model on B copies of `inputs` (1, n) where copy b keeps head h of layer l only if
    masks[b, l, h] is 1 → last hidden states (B, n, C). A head is knocked out by zeroing its
    slice of the input of the output projection, i.e. its whole contribution."""
    import torch

    layers = _layers(loaded.model)
    batch = masks.shape[0]

    def knock_out(index: int) -> Callable[..., Any]:
        layer = layers[index]

        def hook(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
            x = args[0]  # (B, n, H·D)
            shape = x.shape
            gate = masks[:, index].to(x.dtype)[:, None, :, None]  # (B, 1, H, 1)
            x = (x.view(*shape[:-1], layer.num_heads, layer.head_dim) * gate).view(shape)
            return (x, *args[1:])

        return hook

    handles = [
        layer.out_module.register_forward_pre_hook(_this_thread_only(knock_out(i)))
        for i, layer in enumerate(layers)
    ]
    batched = {k: v.expand(batch, -1) for k, v in inputs.items()}  # each (B, n)
    with _hooks(handles), torch.no_grad():
        out = _base(loaded.model)(**batched)
    return out.last_hidden_state  # (B, n, C)


def _base(model: Any) -> Any:
    """The transformer under any head (a GPT-2 LM head model's `transformer`): its output
    is the final hidden states, which ablation compares."""
    return getattr(model, "base_model", model)


def _shape(loaded: LoadedModel) -> tuple[int, int]:
    layers = _layers(loaded.model)
    return len(layers), layers[0].num_heads


def ablate(
    loaded: LoadedModel,
    text: str,
    heads: Sequence[tuple[int, int]],
    *,
    max_tokens: int = MAX_TOKENS,
) -> AblationResult:
    """Run `text` with the (layer, head) pairs in `heads` knocked out (their output zeroed)."""
    import torch

    num_layers, num_heads = _shape(loaded)
    masks = torch.ones(1, num_layers, num_heads)  # (1, L, H)
    for layer, head in heads:
        if not (0 <= layer < num_layers and 0 <= head < num_heads):
            raise ValueError(
                f"head ({layer}, {head}) does not exist: the model has {num_layers} layers "
                f"× {num_heads} heads"
            )
        masks[0, layer, head] = 0.0
    inputs = _inputs(loaded, text, max_tokens)
    with torch.no_grad():
        original = _base(loaded.model)(**inputs).last_hidden_state[0]  # (n, C)
    hidden = _masked_forward(loaded, inputs, masks)[0]  # (n, C)
    return AblationResult(
        hidden=hidden.double().numpy(),
        original=original.double().numpy(),
        token_distance=float(_cosine_distance(hidden, original).mean()),
        pooled_distance=float(_cosine_distance(hidden.mean(0), original.mean(0))),
    )


def head_effects(
    loaded: LoadedModel,
    text: str,
    *,
    max_tokens: int = MAX_TOKENS,
    batch_size: int | None = None,
) -> HeadEffects:
    """Knock out every head alone, in batches of copies of the sentence, and measure how far
    the output moves (see HeadEffects). Each batch carries its own untouched copy as the
    reference, so the distances compare like with like."""
    import torch

    num_layers, num_heads = _shape(loaded)
    inputs = _inputs(loaded, text, max_tokens)
    pairs = [(layer, head) for layer in range(num_layers) for head in range(num_heads)]
    token = np.zeros((num_layers, num_heads))
    pooled = np.zeros((num_layers, num_heads))
    n = inputs["input_ids"].shape[1]
    if batch_size is None:
        batch_size = max(2, _ABLATION_FLOATS // (num_heads * n * n))
    step = max(1, batch_size - 1)
    for start in range(0, len(pairs), step):
        chunk = pairs[start : start + step]
        masks = torch.ones(len(chunk) + 1, num_layers, num_heads)  # row 0: nothing removed
        for row, (layer, head) in enumerate(chunk, start=1):
            masks[row, layer, head] = 0.0
        hidden = _masked_forward(loaded, inputs, masks)  # (B, n, C)
        base = hidden[:1]  # (1, n, C)
        t = _cosine_distance(hidden[1:], base).mean(dim=-1)  # (B-1,)
        p = _cosine_distance(hidden[1:].mean(dim=1), base.mean(dim=1))  # (B-1,)
        for row, (layer, head) in enumerate(chunk):
            token[layer, head] = float(t[row])
            pooled[layer, head] = float(p[row])
    return HeadEffects(token_distance=token, pooled_distance=pooled)


@dataclass(frozen=True)
class ToyEffects:
    """The project's trained toy model (attention_core.train) with each head knocked out
    alone: held-out accuracy before (`accuracy`) and after (`knocked`, (L, H); NaN where a
    layer has fewer heads), and the drop (`drop` = accuracy − knocked)."""

    accuracy: float
    knocked: np.ndarray  # (L, H)

    @property
    def drop(self) -> np.ndarray:
        return self.accuracy - self.knocked  # (L, H)


def _toy_layers(model: Any) -> list[Any]:
    """The toy model's attention modules in order (attention_core.attention's modules:
    query_linear … and `out`, whose input is the concatenated heads)."""
    layers = [m for m in model.modules() if hasattr(m, "query_linear") and hasattr(m, "out")]
    if not layers:
        raise ValueError("no attention layer of attention_core.attention in this model")
    return layers


def toy_accuracy(
    model: Any,
    config: Any,
    heads: Sequence[tuple[int, int]] = (),
    *,
    num_sequences: int = 512,
    seed: int = 12345,
) -> float:
    """Held-out accuracy (attention_core.train.loop.evaluate) of a toy model with the
    (layer, head) pairs in `heads` knocked out: their slice of the concatenated heads is
    zeroed before the output projection. No heads: exactly `evaluate`'s accuracy."""
    import torch

    from attention_core.train.loop import evaluate

    layers = _toy_layers(model)
    masks = []
    for index, layer in enumerate(layers):
        keep = torch.ones(layer.num_heads)
        for at, head in heads:
            if at == index:
                if not 0 <= head < layer.num_heads:
                    raise ValueError(f"layer {index} has heads 0..{layer.num_heads - 1}")
                keep[head] = 0.0
        masks.append(keep)
    for at, _ in heads:
        if not 0 <= at < len(layers):
            raise ValueError(f"the model has layers 0..{len(layers) - 1}, got {at}")

    def knock_out(index: int) -> Callable[..., Any]:
        layer = layers[index]

        def hook(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
            x = args[0]  # (B, n, H·D)
            gate = masks[index].to(x.dtype)[:, None]  # (H, 1)
            x = (x.view(*x.shape[:-1], layer.num_heads, layer.head_dim) * gate).view(x.shape)
            return (x, *args[1:])

        return hook

    handles = [
        layer.out.register_forward_pre_hook(_this_thread_only(knock_out(i)))
        for i, layer in enumerate(layers)
        if (masks[i] == 0).any()
    ]
    with _hooks(handles):
        return evaluate(model, config, num_sequences=num_sequences, seed=seed).accuracy


def toy_head_effects(
    model: Any, config: Any, *, num_sequences: int = 512, seed: int = 12345
) -> ToyEffects:
    """Every head of a toy model knocked out alone, its held-out accuracy (ToyEffects)."""
    layers = _toy_layers(model)
    widest = max(layer.num_heads for layer in layers)
    knocked = np.full((len(layers), widest), np.nan)
    for index, layer in enumerate(layers):
        for head in range(layer.num_heads):
            knocked[index, head] = toy_accuracy(
                model, config, [(index, head)], num_sequences=num_sequences, seed=seed
            )
    base = toy_accuracy(model, config, num_sequences=num_sequences, seed=seed)
    return ToyEffects(accuracy=base, knocked=knocked)


# --- sinks -----------------------------------------------------------------------------------

SINK_KINDS = ("cls", "sep", "first", "punct")


@dataclass(frozen=True)
class Sinks:
    """Per head, the mean share of each query's attention that lands on a kind of token
    (`mass[kind]`, (L, H)), and the mean value norm ‖f_h(x_j)‖ of those tokens
    (`norm[kind]`, (L, H); NaN when the text has no such token) beside the mean over the
    other tokens (`other_norm`, (L, H)). A head with most of its mass on tokens with small
    value norms changes little: it is close to a no-op (Kobayashi et al. 2020, section 5)."""

    mass: dict[str, np.ndarray]
    norm: dict[str, np.ndarray]
    other_norm: np.ndarray
    present: dict[str, bool]


def _is_punct(token: str) -> bool:
    text = token.removeprefix("##").removeprefix("Ġ").removeprefix("▁")
    return bool(text) and all(
        ch in string.punctuation or unicodedata.category(ch).startswith("P") for ch in text
    )


def sink_positions(tokens: Sequence[str], special: Sequence[bool]) -> dict[str, np.ndarray]:
    """Boolean masks (n,) of [CLS]-like, [SEP]-like, first and punctuation tokens. [CLS]
    means a special token at the start, [SEP] a special token anywhere after it."""
    n = len(tokens)
    flags = np.asarray(special, dtype=bool)
    cls = np.zeros(n, dtype=bool)
    if n and flags[0]:
        cls[0] = True
    sep = flags & ~cls
    first = np.zeros(n, dtype=bool)
    if n:
        first[0] = True
    punct = np.array([_is_punct(t) and not s for t, s in zip(tokens, special, strict=True)])
    return {"cls": cls, "sep": sep, "first": first, "punct": punct.astype(bool)}


def sinks(
    attentions: np.ndarray,
    norms: np.ndarray,
    tokens: Sequence[str],
    special: Sequence[bool],
) -> Sinks:
    """Sink statistics from `attentions` (L, H, n, n) and value norms `norms` (L, H, n)."""
    a = np.asarray(attentions, dtype=np.float64)
    v = np.asarray(norms, dtype=np.float64)
    if a.ndim != 4 or v.shape != a.shape[:3]:
        raise ValueError(f"need attentions (L, H, n, n) and norms (L, H, n): {a.shape}, {v.shape}")
    where = sink_positions(tokens, special)
    mass, norm = {}, {}
    for kind in SINK_KINDS:
        cols = where[kind]
        mass[kind] = a[..., cols].sum(axis=-1).mean(axis=-1)  # (L, H)
        norm[kind] = v[..., cols].mean(axis=-1) if cols.any() else np.full(a.shape[:2], np.nan)
    ordinary = ~(where["cls"] | where["sep"] | where["punct"])
    other = v[..., ordinary].mean(axis=-1) if ordinary.any() else np.full(a.shape[:2], np.nan)
    present = {kind: bool(where[kind].any()) for kind in SINK_KINDS}
    return Sinks(mass=mass, norm=norm, other_norm=other, present=present)


# --- words from pieces -----------------------------------------------------------------------


def pool_to_words(
    weights: np.ndarray,
    tokens: Sequence[str],
    offsets: Sequence[tuple[int, int]],
    special: Sequence[bool],
    text: str,
) -> tuple[list[str], np.ndarray]:
    """Attention between pieces (characters, WordPiece) pooled to jieba words.

    Each non-special piece belongs to the jieba word whose span holds the piece's first
    character; each special token (and a piece without an offset) stays a word of its own.
    On the key side the pieces' weights are summed (rows still sum to 1); on the query side
    they are averaged. `weights` (..., n, n) → (word labels, (..., m, m)).
    """
    from attention_core.tokenize import tokenize

    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[-1]
    if not (len(tokens) == len(offsets) == len(special) == n):
        raise ValueError(f"need one token, offset and flag per row ({n}), got {len(tokens)}")
    spans = [(t.start, t.end) for t in tokenize(text, "jieba")]
    starts = np.array([a for a, _ in spans], dtype=int)
    labels: list[str] = []
    group = np.zeros(n, dtype=int)
    index: dict[int, int] = {}  # jieba word → its group
    for piece, (token, (start, end), is_special) in enumerate(
        zip(tokens, offsets, special, strict=True)
    ):
        word = None
        if not is_special and end > start and spans:
            k = int(np.searchsorted(starts, start, side="right")) - 1
            if k >= 0 and spans[k][0] <= start < spans[k][1]:
                word = k
        if word is None:
            labels.append(token)
            group[piece] = len(labels) - 1
        elif word in index:
            group[piece] = index[word]
        else:
            index[word] = len(labels)
            labels.append(text[spans[word][0] : spans[word][1]])
            group[piece] = index[word]
    member = np.zeros((n, len(labels)))
    member[np.arange(n), group] = 1.0  # (n, m): piece → word
    keys = w @ member  # (..., n, m): a key word's pieces summed
    pooled = np.einsum("nm,...nk->...mk", member, keys) / member.sum(axis=0)[:, None]  # (..., m, m)
    return labels, pooled


# --- minimal pairs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RowChange:
    """How one token's row of attention changes between two sentences (a minimal pair).

    `pairs` are the (position in A, position in B) of the tokens both share, matched in
    order (difflib); `query` is the followed token's (position in A, position in B);
    `change[l, h]` is the total variation ½ Σ |A − B| of its row over the shared keys;
    `rows_a` / `rows_b` (L, H, s) are the two rows on those keys."""

    pairs: list[tuple[int, int]]
    query: tuple[int, int]
    change: np.ndarray  # (L, H)
    rows_a: np.ndarray  # (L, H, s)
    rows_b: np.ndarray  # (L, H, s)

    def ranking(self) -> list[tuple[int, int]]:
        """(layer, head) pairs, largest change first."""
        order = np.argsort(-self.change, axis=None, kind="stable")
        return [tuple(int(v) for v in np.unravel_index(i, self.change.shape)) for i in order]


def shared_tokens(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(i, j) with a[i] == b[j] for the tokens both sequences share, matched in order."""
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    return [
        (block.a + k, block.b + k)
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    ]


def row_change(
    attentions_a: np.ndarray,
    tokens_a: Sequence[str],
    attentions_b: np.ndarray,
    tokens_b: Sequence[str],
    query: int,
) -> RowChange | None:
    """The change of token `query` (a position in A)'s row between A and B, per head; None
    when that token has no counterpart in B. `attentions_*` (L, H, n_*, n_*)."""
    a = np.asarray(attentions_a, dtype=np.float64)
    b = np.asarray(attentions_b, dtype=np.float64)
    if a.shape[:2] != b.shape[:2]:
        raise ValueError(f"both sentences must come from one model: {a.shape} vs {b.shape}")
    pairs = shared_tokens(tokens_a, tokens_b)
    partner = dict(pairs).get(query)
    if partner is None:
        return None
    cols_a = [i for i, _ in pairs]
    cols_b = [j for _, j in pairs]
    rows_a = a[:, :, query, cols_a]  # (L, H, s)
    rows_b = b[:, :, partner, cols_b]  # (L, H, s)
    change = 0.5 * np.abs(rows_a - rows_b).sum(axis=-1)  # (L, H)
    return RowChange(pairs, (query, partner), change, rows_a, rows_b)
