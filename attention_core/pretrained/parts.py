"""A real model's self-attention layers, found by name, and the hooks that read them:
the machinery that value norms, the neuron view, ablation (attention_core.lens) and a long
text through a real model (long.pretrained) share (`pretrained.rebuild` rebuilds one layer's
scores from them).

Hooks are registered on the model the app shares between sessions, so each one acts
only in the thread that registered it (`this_thread_only`) and is removed on exit
(`temporary_hooks`).

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from attention_core.limits import MAX_TEXT_CHARS
from attention_core.pretrained.bridge import NATIVE_REASON, is_native
from attention_core.pretrained.forward import encode

if TYPE_CHECKING:
    import torch

    from attention_core.pretrained.load import LoadedModel

__all__ = [
    "AttentionLayer",
    "attention_layers",
    "calls_during",
    "layer_calls",
    "layer_inputs",
    "layers_and_heads",
    "model_inputs",
    "project_heads",
    "temporary_hooks",
    "this_thread_only",
]


@dataclass(frozen=True)
class AttentionLayer:
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
    num_kv_heads: int  # key/value heads: fewer than num_heads under grouped-query attention
    clip: float | None = None  # q, k and v clamped to ±clip after the projections (OLMo)
    # a query sees only its last `window` keys, itself included, by the layer's own mask
    # whatever mask the model passes it (GPT-Neo's local layers); None: the passed mask only
    window: int | None = None

    def kv_head(self, head: int) -> int:
        """The key/value head that query head `head` reads (repeat_kv's grouping)."""
        return head // (self.num_heads // self.num_kv_heads)


def _linear(module: Any) -> tuple[Any, Any]:
    return module.weight, module.bias


def _per_head_fused(module: Any, heads: int) -> tuple[Any, ...]:
    """A Linear whose output is laid out head by head, (H, 3, D): q, k, v of head 0, then
    of head 1, … (GPT-NeoX's and BLOOM's query_key_value), as (wq, bq, wk, bk, wv, bv) with
    each weight (H·D, C) and bias (H·D,)."""
    w, b = _linear(module)  # (3·H·D, C), (3·H·D,)
    w = w.view(heads, 3, -1, w.shape[-1])  # (H, 3, D, C)
    split = [w[:, i].reshape(-1, w.shape[-1]) for i in range(3)]  # 3 × (H·D, C)
    biases = [None] * 3 if b is None else [b.view(heads, 3, -1)[:, i].reshape(-1) for i in range(3)]
    return (split[0], biases[0], split[1], biases[1], split[2], biases[2])


def attention_layers(model: Any) -> list[AttentionLayer]:
    """The self-attention layers of a BERT-like, GPT-2-like or BART/Llama-like model, or of
    the project's own (the trained reader's `MultiHeadAttention`), in order.

    Found by the projections' names: query_linear/key_linear/value_linear/out for
    attention_core.attention's MultiHeadAttention; query/key/value (+ the sibling
    output.dense) for BERT, RoBERTa, MiniLM, ELECTRA; q_lin/k_lin/v_lin/out_lin for
    DistilBERT; c_attn/c_proj (Conv1D, y = x @ W) for GPT-2; qkv_proj/o_proj (fused) for
    Phi-3; query_key_value/dense (fused head by head: q, k, v of head 0, then of head 1…)
    for GPT-NeoX, Pythia and BLOOM; q_proj/k_proj/v_proj with out_proj, o_proj or dense
    elsewhere (BART, Llama, Mistral, Qwen, Gemma, OLMo, StableLM; Phi; GPT-Neo, whose
    scores are not scaled and whose local layers keep their window themselves). Grouped-query
    attention (fewer key/value heads, each shared by a group of query heads) is kept as it
    is.
    """
    config = model.config
    if is_native(model):
        raise ValueError(
            NATIVE_REASON.format(
                what="this lens", needs="attention projections, found by name and hooked"
            )
        )
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(
            "this lens works on encoder-only (BERT-like) and decoder-only (GPT-like) models"
        )
    heads = int(getattr(config, "num_attention_heads", 0) or getattr(config, "n_head", 0))
    modules = dict(model.named_modules())
    layers: list[AttentionLayer] = []
    for name, mod in modules.items():
        parts: tuple[Any, ...] | None = None
        own = all(hasattr(mod, a) for a in ("query_linear", "key_linear", "value_linear"))
        own = own and hasattr(getattr(mod, "out", None), "weight")  # not single-head's Identity
        if own:  # attention_core.attention's MultiHeadAttention (the trained reader's)
            parts = (*_linear(mod.query_linear), *_linear(mod.key_linear))
            parts = (*parts, *_linear(mod.value_linear), mod.out)
        elif all(hasattr(mod, a) for a in ("query", "key", "value")):
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
        elif hasattr(mod, "qkv_proj") and hasattr(mod, "o_proj"):  # Phi-3: one fused Linear
            w, b = _linear(mod.qkv_proj)  # (H·D + 2·KV·D, C)
            d = int(getattr(mod, "head_dim", 0) or config.hidden_size // heads)
            q_size = heads * d
            kv_size = (w.shape[0] - q_size) // 2
            q, k, v = w[:q_size], w[q_size : q_size + kv_size], w[q_size + kv_size :]
            if b is None:
                parts = (q, None, k, None, v, None, mod.o_proj)
            else:
                bq, bk, bv = b[:q_size], b[q_size : q_size + kv_size], b[q_size + kv_size :]
                parts = (q, bq, k, bk, v, bv, mod.o_proj)
        elif hasattr(mod, "query_key_value") and hasattr(mod, "dense"):  # GPT-NeoX, BLOOM
            h = int(getattr(mod, "num_heads", 0) or getattr(mod, "num_attention_heads", 0) or heads)
            parts = (*_per_head_fused(mod.query_key_value, h), mod.dense)
        elif all(hasattr(mod, a) for a in ("q_proj", "k_proj", "v_proj")):
            out = next(
                (getattr(mod, a) for a in ("out_proj", "o_proj", "dense") if hasattr(mod, a)), None
            )
            if out is not None:
                parts = (*_linear(mod.q_proj), *_linear(mod.k_proj), *_linear(mod.v_proj), out)
        if parts is None:
            continue
        wq, bq, wk, bk, wv, bv, out_module = parts
        h = int(getattr(mod, "num_heads", 0) or getattr(mod, "num_attention_heads", 0) or heads)
        d = int(getattr(mod, "head_dim", 0) or getattr(mod, "head_size", 0) or wq.shape[0] // h)
        kv = wk.shape[0] // d  # grouped-query attention: fewer key/value heads, each shared
        if wq.shape[0] != h * d or wk.shape != wv.shape or kv * d != wk.shape[0] or h % kv:
            raise ValueError(f"{name}: an attention layout this lens does not understand")
        wo = out_module.weight.T if type(out_module).__name__ == "Conv1D" else out_module.weight
        scaling = 1.0 / mod.scale if own else getattr(mod, "scaling", None)  # own: ÷√D
        scaling = getattr(mod, "inv_norm_factor", None) if scaling is None else scaling  # BLOOM
        neo = type(mod).__name__.startswith("GPTNeo")  # GPT-Neo never scales its scores
        if scaling is None:  # GPT-2 divides by √D unless told not to
            scaling = d**-0.5 if getattr(mod, "scale_attn_weights", True) and not neo else 1.0
        clip = getattr(getattr(mod, "config", None), "clip_qkv", None)  # OLMo
        layer = AttentionLayer(
            mod, out_module, wq, bq, wk, bk, wv, bv, wo, h, d, float(scaling), kv
        )
        if neo and getattr(mod, "attention_type", None) == "local":  # its own `bias` buffer
            layer = replace(layer, window=int(mod.config.window_size))
        layers.append(replace(layer, clip=float(clip)) if clip else layer)
    if not layers:
        raise ValueError(
            f"no self-attention layers this lens understands in a {type(model).__name__}"
        )
    return layers


@contextmanager
def temporary_hooks(handles: list[Any]) -> Iterator[None]:
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def this_thread_only(hook: Callable[..., Any]) -> Callable[..., Any]:
    """The app shares one model between sessions (threads): a hook registered by one
    thread must leave the others' forward passes alone."""
    owner = threading.get_ident()

    def guarded(*args: Any, **kwargs: Any) -> Any:
        return hook(*args, **kwargs) if threading.get_ident() == owner else None

    return guarded


def model_inputs(loaded: LoadedModel, text: str, max_tokens: int) -> dict[str, torch.Tensor]:
    """`text` encoded exactly as pretrained.run_model encodes it, as (1, n) tensors."""
    import torch

    limit = min(max_tokens, loaded.max_length)
    enc, _ = encode(loaded.tokenizer, text[:MAX_TEXT_CHARS], limit=limit)
    if not enc["input_ids"]:
        raise ValueError("the text gives no tokens for this model")
    names = getattr(loaded.tokenizer, "model_input_names", ["input_ids", "attention_mask"])
    return {k: torch.tensor([enc[k]]) for k in names if k in enc}  # each (1, n)


def calls_during(
    layers: list[AttentionLayer], run: Callable[[], Any]
) -> list[tuple[tuple, dict[str, Any]]]:
    """Each layer's call during `run()` (one forward pass of the model that holds them): the
    positional and keyword arguments its module received, as the pass passed them (to be
    read, never changed). Hooked in this thread only, removed afterwards."""
    import torch

    seen: dict[int, tuple[tuple, dict[str, Any]]] = {}

    def keep(index: int) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            seen[index] = (args, dict(kwargs))

        return hook

    handles = [
        layer.module.register_forward_pre_hook(this_thread_only(keep(i)), with_kwargs=True)
        for i, layer in enumerate(layers)
    ]
    with temporary_hooks(handles), torch.no_grad():
        run()
    return [seen[i] for i in range(len(layers))]


def layer_calls(
    loaded: LoadedModel, text: str, max_tokens: int
) -> list[tuple[torch.Tensor, dict[str, Any]]]:
    """Each self-attention layer's call in one forward pass: its input hidden states (n, C)
    and the keyword arguments the model passed it (a decoder's `position_embeddings`, the
    rotary cos and sin; its `attention_mask`, causal or a sliding window)."""
    inputs = model_inputs(loaded, text, max_tokens)
    calls = calls_during(attention_layers(loaded.model), lambda: loaded.model(**inputs))
    return [
        ((args[0] if args else kwargs["hidden_states"])[0].detach(), kwargs)  # (n, C)
        for args, kwargs in calls
    ]


def layer_inputs(loaded: LoadedModel, text: str, max_tokens: int) -> list[torch.Tensor]:
    """Each self-attention layer's input hidden states, (n, C) each, from one forward pass."""
    return [x for x, _ in layer_calls(loaded, text, max_tokens)]


def project_heads(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, h: int) -> torch.Tensor:
    """(n, C) → (H, n, D) through one projection."""
    y = x @ w.T  # (n, H·D)
    if b is not None:
        y = y + b
    n = y.shape[0]
    return y.view(n, h, -1).transpose(0, 1)  # (H, n, D)


def layers_and_heads(loaded: LoadedModel) -> tuple[int, int]:
    """(L, H): the self-attention layers, and the heads of the first."""
    layers = attention_layers(loaded.model)
    return len(layers), layers[0].num_heads
