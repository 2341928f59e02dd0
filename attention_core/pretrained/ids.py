"""Token ids through a `LoadedModel`, one sentence or a padded batch with its attention
mask, as a notebook already has them (`tokenizer(texts, padding=True, return_tensors="pt")`).

`run_model(loaded, ids)` comes here for anything that is not text. Each sentence of a
batch comes back on its own, its padding dropped: the rows and columns of the positions
the mask marks 1, which still sum to 1 (the model gave the padded keys no weight).
Nothing is cut: ids longer than the model (or `max_tokens`) are refused, not truncated.

Shape legend: B sentences, n positions (padding included), m kept positions, L layers,
H heads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attention_core.limits import MAX_TOKENS
from attention_core.pretrained.forward import stack_layers
from attention_core.pretrained.load import LoadedModel
from attention_core.pretrained.result import PretrainedAttention

__all__ = ["run_ids"]


def _matrix(value: Any, what: str) -> tuple[np.ndarray, bool]:
    """ids or a mask as (B, n) int64, and whether it was a batch (2-D) at all."""
    if hasattr(value, "detach"):  # torch.Tensor
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value)
    except ValueError:  # ragged lists
        raise ValueError(f"{what}: rows of different lengths need padding and a mask") from None
    if array.dtype == object or array.ndim not in (1, 2):
        raise ValueError(f"{what} must be a list of ints or a (batch, n) array, got {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if array.dtype == bool or not np.array_equal(array, np.round(array)):
            raise ValueError(f"{what} must be integers, got {array.dtype}")
    return np.atleast_2d(array.astype(np.int64)), array.ndim == 2


def run_ids(
    loaded: LoadedModel,
    input_ids: Any,
    attention_mask: Any = None,
    *,
    max_tokens: int = MAX_TOKENS,
) -> Any:
    """Run token ids: a list of ints (→ one PretrainedAttention) or a (B, n) batch, with
    an optional (B, n) mask of 1 (a token) and 0 (padding) (→ a list of B of them)."""
    import torch

    if loaded.family == "encoder-decoder":
        raise ValueError("token ids are taken for encoders and decoders; give this model text")
    ids, batch = _matrix(input_ids, "input_ids")
    B, n = ids.shape
    if n == 0:
        raise ValueError("input_ids holds no tokens")
    mask = (
        np.ones_like(ids)
        if attention_mask is None
        else _matrix(attention_mask, "attention_mask")[0]
    )
    if mask.shape != ids.shape:
        raise ValueError(f"attention_mask has shape {mask.shape}, input_ids {ids.shape}")
    if not np.isin(mask, (0, 1)).all() or not mask.any(axis=1).all():
        raise ValueError("attention_mask must be 0 or 1 with at least one 1 in every row")
    vocab = len(loaded.tokenizer)
    if ids.min() < 0 or ids.max() >= vocab:
        raise ValueError(f"input_ids must be in 0..{vocab - 1} (this tokenizer's vocabulary)")
    limit = min(max_tokens, loaded.max_length)
    if n > limit:
        raise ValueError(f"{n} positions: this model reads at most {limit} (nothing is cut)")

    with torch.no_grad():
        outputs = loaded.model(
            input_ids=torch.from_numpy(ids),
            attention_mask=torch.from_numpy(mask),
            output_attentions=True,
        )
    attentions = [
        stack_layers(tuple(layer[b : b + 1] for layer in outputs.attentions)) for b in range(B)
    ]
    tokenizer = loaded.tokenizer
    unk = tokenizer.unk_token_id
    results = []
    for b in range(B):
        keep = mask[b].astype(bool)  # (n,)
        kept = ids[b][keep].tolist()  # m ids
        weights = attentions[b][:, :, keep][:, :, :, keep]  # (L, H, m, m)
        special = tokenizer.get_special_tokens_mask(kept, already_has_special_tokens=True)
        results.append(
            PretrainedAttention(
                tokens=list(tokenizer.convert_ids_to_tokens(kept)),
                offsets=[(0, 0)] * len(kept),
                special=[bool(s) for s in special],
                unknown=[unk is not None and i == unk for i in kept],
                attentions=np.ascontiguousarray(weights),
                truncated=False,
                generated=[False] * len(kept) if loaded.family == "decoder" else None,
            )
        )
    return results if batch else results[0]
