"""What a notebook hands the views, as BertViz takes it, checked and made plain arrays.

`attention` is transformers' `outputs.attentions` (a tuple of L tensors (B, H, n, n), from
a model run with `output_attentions=True` and eager attention), an (L, H, n, n) or
(H, n, n) array or tensor, or a list of (H, n, n) layers. `tokens` are the n token strings
(`tokenizer.convert_ids_to_tokens(ids)`). A TransformerLens `ActivationCache` (from
`model.run_with_cache(tokens)`, TransformerLens 2 to 4) is read as CircuitsVis users read it,
`cache["pattern", l]` (B, H, n, n) for every layer it holds, with `model.to_str_tokens(text)`
as the tokens.

With `prettify_tokens` (BertViz's default) the tokens read as text
(`pooling.readable_tokens`): "Ġ" and "▁" are spaces, and the byte pieces a byte-level BPE
tokenizer (GPT-2, Llama 3, Qwen) cuts a Chinese character into are one label, their
attention pooled to it (rows still sum to 1); `prettify_tokens=False` keeps the pieces
and the model's weights as they are.

Nothing here guesses: a tensor whose shape does not match its tokens, NaN, negative
weights or rows that do not sum to 1 (an SDPA model's empty attention) raise a
`NotebookInputError` that says what to do.

Shape legend: L layers, H heads, n tokens (queries), k keys (n but in cross-attention),
B batch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attention_core.limits import ROW_SUM_TOLERANCE
from attention_core.pooling import readable_tokens

__all__ = ["Attention", "NotebookInputError", "as_attention", "cache_patterns", "prettify"]

_EAGER = (
    "run the model with output_attentions=True and eager attention "
    "(from_pretrained(..., attn_implementation='eager'))"
)


class NotebookInputError(ValueError):
    """The attention or tokens handed to a view cannot be shown as they are.

    `code` names the reason and `params` its numbers, for an interface that says it in its
    own language (the app's file page: catalog key `file_error_{code}`)."""

    def __init__(self, message: str, *, code: str = "input", **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class Attention:
    """Checked attention: weights[l, h, i, j] = query i → key j in head h of layer l."""

    weights: np.ndarray  # (L, H, n, k) float32, rows summing to 1 (k = n but in cross)
    tokens: list[str]  # n: the queries' tokens
    layers: list[int]  # the model's own index of each of the L layers kept
    key_tokens: list[str] | None = None  # k: cross-attention's keys (the encoder's tokens)
    # the pieces each token label is made of, where byte pieces were joined (`prettify`)
    pieces: list[list[int]] | None = None

    @property
    def keys(self) -> list[str]:
        """The keys' tokens: `key_tokens` in cross-attention, else `tokens`."""
        return self.tokens if self.key_tokens is None else self.key_tokens


_PATTERN = re.compile(r"^blocks\.(\d+)\.attn\.hook_pattern$")  # TransformerLens's hook name


def _is_cache(value: Any) -> bool:
    """A TransformerLens ActivationCache (by its shape: no import of transformer_lens)."""
    return type(value).__name__ == "ActivationCache" and hasattr(value, "keys")


def cache_patterns(cache: Any) -> tuple[list[int], list[Any]]:
    """(the layers, their patterns): `cache["pattern", l]` (B, H, n, n) or (H, n, n) for
    every layer l whose attention pattern the cache holds, in order. Raises
    NotebookInputError when it holds none (its hooks were filtered out or not run)."""
    found = (_PATTERN.match(str(name)) for name in cache.keys())
    layers = sorted(int(match.group(1)) for match in found if match)
    if not layers:
        raise NotebookInputError(
            "this ActivationCache holds no attention patterns (blocks.<l>.attn.hook_pattern): "
            "run the model with `logits, cache = model.run_with_cache(tokens)` and no "
            "names_filter that leaves out hook_pattern",
            code="empty",
        )
    return layers, [cache["pattern", layer] for layer in layers]


def _array(value: Any) -> np.ndarray:
    """A tensor (any device, any dtype, with or without grad) or array as float32 numpy."""
    if hasattr(value, "detach"):  # torch.Tensor: no torch import needed here
        value = value.detach().float().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


def _stack(attention: Any, batch: int, *, square: bool = True) -> np.ndarray:
    """Any accepted form → (L, H, n, n), or (L, H, n, k) where not `square` (cross)."""
    if attention is None:
        raise NotebookInputError(
            f"the attention is None: the model returned no attention weights; {_EAGER}",
            code="empty",
        )
    if isinstance(attention, (tuple, list)):
        if not attention:
            raise NotebookInputError(f"the attention is empty: no layers; {_EAGER}", code="empty")
        if all(layer is None for layer in attention):
            raise NotebookInputError(
                f"the attention is a tuple of {len(attention)} None: the model's attention "
                f"implementation (SDPA, flash) returns no weights; {_EAGER}",
                code="empty",
            )
        layers = [_array(layer) for layer in attention]
        shapes = {layer.shape for layer in layers}
        if len(shapes) != 1:
            raise NotebookInputError(f"the layers have different shapes: {sorted(shapes)}")
        stacked = np.stack(layers)  # (L, B, H, n, n) or (L, H, n, n)
    else:
        stacked = _array(attention)
        if stacked.ndim == 3:
            stacked = stacked[None]  # (H, n, n) → (1, H, n, n): one layer
    if stacked.ndim == 5:
        if not 0 <= batch < stacked.shape[1]:
            raise NotebookInputError(
                f"batch={batch} is not in this batch of {stacked.shape[1]} sentences"
            )
        stacked = stacked[:, batch]  # (L, B, H, n, n) → (L, H, n, n)
    elif batch != 0:
        raise NotebookInputError(f"batch={batch}, but this attention holds one sentence")
    if stacked.ndim == 4 and square and stacked.shape[-1] != stacked.shape[-2]:
        m, n = stacked.shape[-2:]
        raise NotebookInputError(
            f"attention of shape {stacked.shape} has {m} queries but {n} keys: this looks "
            f"like cross-attention ({m} decoder tokens × {n} encoder tokens). Pass it as "
            "head_view(cross_attention=outputs.cross_attentions, encoder_tokens=…, "
            "decoder_tokens=…), with encoder_attention= and decoder_attention= for the "
            "other two",
            code="shape",
            shape=" × ".join(map(str, stacked.shape)),
        )
    if stacked.ndim != 4:
        raise NotebookInputError(
            "attention must be L tensors (B, H, n, n) as transformers returns them, or an "
            f"array (L, H, n, n) or (H, n, n); got shape {stacked.shape}",
            code="shape",
            shape=" × ".join(map(str, stacked.shape)),
        )
    return stacked


def prettify(tokens: Sequence[str]) -> list[str]:
    """BertViz's `prettify_tokens`: the byte-level and SentencePiece word marks (Ġ, ▁) as a
    space, the BPE end-of-word mark (</w>) dropped."""
    return [str(t).replace("Ġ", " ").replace("▁", " ").replace("</w>", "") for t in tokens]


def _pick(count: int, chosen: Sequence[int] | None, what: str) -> list[int]:
    if chosen is None:
        return list(range(count))
    picked = [int(i) for i in chosen]
    bad = [i for i in picked if not 0 <= i < count]
    if bad or not picked or len(set(picked)) != len(picked):
        raise NotebookInputError(
            f"include_{what} must name distinct {what} in 0..{count - 1}, got {list(chosen)}"
        )
    return picked


def as_attention(
    attention: Any,
    tokens: Sequence[str],
    *,
    include_layers: Sequence[int] | None = None,
    batch: int = 0,
    prettify_tokens: bool = True,
    key_tokens: Sequence[str] | None = None,
) -> Attention:
    """Check and normalise a view's inputs (see the module's docstring).

    `key_tokens`: cross-attention (L tensors (B, H, n, k)), whose n queries are `tokens`
    (the decoder's) and k keys `key_tokens` (the encoder's)."""
    model_layers = None  # the model's own index of each layer (a cache may hold a few)
    if _is_cache(attention):
        model_layers, attention = cache_patterns(attention)
        if include_layers is not None:
            include_layers = [_cache_layer(model_layers, layer) for layer in include_layers]
    weights = _stack(attention, batch, square=key_tokens is None)  # (L, H, n, k)
    L, _, n, k = weights.shape
    labels = _token_list(tokens, n, cache=model_layers is not None)
    keys = None if key_tokens is None else _token_list(key_tokens, k)
    if n == 0 or k == 0:
        raise NotebookInputError("there are no tokens to show", code="no_tokens")
    if not np.isfinite(weights).all():
        raise NotebookInputError("the attention holds NaN or infinite values", code="not_finite")
    if (weights < 0).any():
        raise NotebookInputError(
            "the attention holds negative weights: pass weights, not scores", code="negative"
        )
    sums = weights.sum(-1)  # (L, H, n)
    if not np.allclose(sums, 1.0, atol=ROW_SUM_TOLERANCE):
        raise NotebookInputError(
            f"attention rows sum to {float(sums.min()):.3g}…{float(sums.max()):.3g}, not 1: "
            f"{_EAGER}; a padded batch needs the unpadded sentence's rows and tokens",
            code="row_sums",
            low=float(sums.min()),
            high=float(sums.max()),
        )
    picked = _pick(L, include_layers, "layers")
    kept = np.ascontiguousarray(weights[picked])  # (L', H, n, k)
    layers = picked if model_layers is None else [model_layers[i] for i in picked]
    if not prettify_tokens:
        return Attention(kept, labels, layers, keys)
    # the text the pieces make: a character cut into byte pieces is one label, its pieces'
    # attention pooled to it (rows still sum to 1)
    queries = readable_tokens(labels)
    key_pieces = None if keys is None else readable_tokens(keys)
    if queries.merged or (key_pieces is not None and key_pieces.merged):
        kept = queries.pool(kept, key_pieces).astype(np.float32)  # (L', H, m, m_k)
    return Attention(
        kept,
        queries.labels,
        layers,
        None if key_pieces is None else key_pieces.labels,
        queries.groups if queries.merged else None,
    )


def _cache_layer(model_layers: list[int], layer: int) -> int:
    """A model's layer index as its position among the layers a cache holds."""
    if int(layer) not in model_layers:
        raise NotebookInputError(
            f"include_layers: the cache holds the patterns of layers {model_layers}, not {layer}"
        )
    return model_layers.index(int(layer))


def _token_list(tokens: Sequence[str], n: int, *, cache: bool = False) -> list[str]:
    """`tokens` as n strings, or a NotebookInputError that says which tokens to pass."""
    if isinstance(tokens, str):
        raise NotebookInputError("tokens must be a list of token strings, not one string")
    if tokens is None:
        raise NotebookInputError("tokens are missing: pass the tokens of the attention's input")
    ids = hasattr(tokens, "detach") or getattr(getattr(tokens, "dtype", None), "kind", "") in (
        "i",
        "u",
    )
    if ids:  # a tensor or an integer array: ids, not their text
        raise NotebookInputError(
            "tokens must be the token strings, not ids: pass model.to_str_tokens(text) "
            "(TransformerLens) or tokenizer.convert_ids_to_tokens(ids)"
        )
    labels = [str(t) for t in tokens]
    source = (
        "model.to_str_tokens(tokens) of the tokens the cache was run on, by the same model"
        if cache
        else "tokenizer.convert_ids_to_tokens(inputs['input_ids'][0])"
    )
    if len(labels) != n:
        raise NotebookInputError(
            f"{len(labels)} tokens for attention over {n} positions: pass the tokens of "
            f"the same input ({source})",
            code="token_count",
            tokens=len(labels),
            n=n,
        )
    return labels
