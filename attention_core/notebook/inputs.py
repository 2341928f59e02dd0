"""What a notebook hands the views, as BertViz takes it, checked and made plain arrays.

`attention` is transformers' `outputs.attentions` (a tuple of L tensors (B, H, n, n), from
a model run with `output_attentions=True` and eager attention), an (L, H, n, n) or
(H, n, n) array or tensor, or a list of (H, n, n) layers. `tokens` are the n token strings
(`tokenizer.convert_ids_to_tokens(ids)`).

Nothing here guesses: a tensor whose shape does not match its tokens, NaN, negative
weights or rows that do not sum to 1 (an SDPA model's empty attention) raise a
`NotebookInputError` that says what to do.

Shape legend: L layers, H heads, n tokens, B batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attention_core.limits import ROW_SUM_TOLERANCE

__all__ = ["Attention", "NotebookInputError", "as_attention", "prettify"]

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

    weights: np.ndarray  # (L, H, n, n) float32, rows summing to 1
    tokens: list[str]  # n
    layers: list[int]  # the model's own index of each of the L layers kept


def _array(value: Any) -> np.ndarray:
    """A tensor (any device, any dtype, with or without grad) or array as float32 numpy."""
    if hasattr(value, "detach"):  # torch.Tensor: no torch import needed here
        value = value.detach().float().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


def _stack(attention: Any, batch: int) -> np.ndarray:
    """Any accepted form → (L, H, n, n)."""
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
    if stacked.ndim != 4 or stacked.shape[-1] != stacked.shape[-2]:
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
) -> Attention:
    """Check and normalise a view's inputs (see the module's docstring)."""
    weights = _stack(attention, batch)  # (L, H, n, n)
    L, _, n, _ = weights.shape
    if isinstance(tokens, str):
        raise NotebookInputError("tokens must be a list of token strings, not one string")
    labels = [str(t) for t in tokens]
    if len(labels) != n:
        raise NotebookInputError(
            f"{len(labels)} tokens for attention over {n} positions: pass the tokens of "
            "the same input (tokenizer.convert_ids_to_tokens(inputs['input_ids'][0]))",
            code="token_count",
            tokens=len(labels),
            n=n,
        )
    if n == 0:
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
    layers = _pick(L, include_layers, "layers")
    kept = np.ascontiguousarray(weights[layers])  # (L', H, n, n)
    return Attention(kept, prettify(labels) if prettify_tokens else labels, layers)
