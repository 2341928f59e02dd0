"""Run a text through a `LoadedModel`: its tokens, their offsets and flags, every head's
attention weights (`run_model`), and the same weights without the special tokens
(`hide_special`).

Shape legend: L layers, H heads per layer, n tokens (special tokens included), m tokens
written by a decoder.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from attention_core.limits import MAX_DENSE_FLOATS, MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.pretrained.forward import forward_pass
from attention_core.pretrained.ids import run_ids
from attention_core.pretrained.load import LoadedModel
from attention_core.pretrained.result import PretrainedAttention

MAX_GENERATE = 32  # tokens a decoder may write for one view
DEFAULT_DECODER_TOKENS = 8  # what an encoder-decoder writes when not told


def run_model(
    loaded: LoadedModel,
    text: Any,
    *,
    max_tokens: int = MAX_TOKENS,
    generate: int | None = None,
    attention_mask: Any = None,
) -> Any:
    """Run `text` through the model and return its tokens and attentions (L, H, n, n).

    Text longer than MAX_TEXT_CHARS characters or `max_tokens` tokens (or the model's own
    context, `loaded.max_length`) is cut; `truncated` says so and `cut_by` which bound cut
    it. Every weight is returned, L·H·n² floats: a max_tokens above MAX_TOKENS whose weights
    could pass MAX_DENSE_FLOATS is refused (ValueError) — `run_model_long` keeps maps instead.
    Empty text is valid: for BERT-like models it gives just `[CLS] [SEP]`.
    Safe to call from several threads with one shared LoadedModel.

    `generate` (0…MAX_GENERATE): a decoder writes that many tokens greedily after the text
    (default 0; they are in `tokens` and `attentions`, flagged in `generated`); an
    encoder-decoder's decoder writes up to that many (default DEFAULT_DECODER_TOKENS, see
    `decoder_tokens`). Encoders ignore it.

    Instead of text: token ids, one sentence (a list of ints → one PretrainedAttention) or
    a padded batch ((B, n) → a list, each sentence without its padding) with its
    `attention_mask` (`pretrained.ids.run_ids`).
    """
    if text is not None and not isinstance(text, str):
        if generate:
            raise ValueError("generate is taken with text, not with token ids")
        return run_ids(loaded, text, attention_mask, max_tokens=max_tokens)
    if attention_mask is not None:
        raise ValueError("attention_mask goes with token ids, not with text")
    if generate is None:
        generate = DEFAULT_DECODER_TOKENS if loaded.family == "encoder-decoder" else 0
    if not isinstance(generate, int) or isinstance(generate, bool):
        raise ValueError(f"generate must be an integer, got {generate!r}")
    if not 0 <= generate <= MAX_GENERATE:
        raise ValueError(f"generate must be between 0 and {MAX_GENERATE}, got {generate}")
    if not isinstance(text, str):
        raise ValueError(f"text must be a str or token ids, got {type(text).__name__}")
    tokenizer = loaded.tokenizer
    minimum = tokenizer.num_special_tokens_to_add(pair=False) + 1
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < minimum:
        raise ValueError(
            f"max_tokens must be an integer >= {minimum} (special tokens plus one), "
            f"got {max_tokens!r}"
        )
    cut = len(text) > MAX_TEXT_CHARS
    text = text[:MAX_TEXT_CHARS]  # a prefix, so offsets still index the caller's text
    limit = min(max_tokens, loaded.max_length)
    if limit > MAX_TOKENS and loaded.num_layers * loaded.num_heads * limit**2 > MAX_DENSE_FLOATS:
        most = math.isqrt(MAX_DENSE_FLOATS // (loaded.num_layers * loaded.num_heads))
        raise ValueError(
            f"max_tokens={max_tokens}: {loaded.num_layers} layers × {loaded.num_heads} heads × "
            f"n² weights could take {4 * loaded.num_layers * loaded.num_heads * limit**2 / 1e9:.1f}"
            f" GB; this model takes at most {most} tokens here. "
            "attention_core.long.pretrained.run_model_long keeps each layer as a map instead"
        )
    run = forward_pass(loaded.model, tokenizer, text, limit=limit, generate=generate)
    enc, truncated, attentions = run.enc, run.truncated, run.attentions

    ids: list[int] = list(enc["input_ids"])
    n = len(ids)
    if attentions.size == 0:  # no tokens: keep the (L, H, 0, 0) shape the views expect
        attentions = np.zeros((loaded.num_layers, loaded.num_heads, n, n), dtype=np.float32)
    offsets = [(int(a), int(b)) for a, b in enc.get("offset_mapping", [(0, 0)] * n)]
    special = [bool(s) for s in enc.get("special_tokens_mask", [0] * n)]
    unk_id = tokenizer.unk_token_id
    return PretrainedAttention(
        tokens=list(tokenizer.convert_ids_to_tokens(ids)),
        offsets=offsets,
        special=special,
        unknown=[unk_id is not None and i == unk_id for i in ids],
        attentions=attentions,
        truncated=truncated or cut,
        cut_by=cut_reason(
            chars_cut=cut,
            tokens_cut=truncated,
            max_tokens=max_tokens,
            model_max=loaded.max_length,
            tokenizer=loaded.cut_by_tokenizer,
        ),
        limit=limit,
        generated=[False] * (n - run.written) + [True] * run.written
        if loaded.family == "decoder"
        else None,
        decoder_tokens=None
        if run.decoder_ids is None
        else list(tokenizer.convert_ids_to_tokens(run.decoder_ids)),
        decoder_attentions=run.decoder_attentions if run.decoder_ids is not None else None,
        cross_attentions=run.cross_attentions if run.decoder_ids is not None else None,
    )


def cut_reason(
    *, chars_cut: bool, tokens_cut: bool, max_tokens: int, model_max: int, tokenizer: bool = False
) -> str | None:
    """Which bound cut a text: the tokens' bound first (it is the one that bit last), named
    "model" when the model's own context is the smaller of the two, "tokenizer" when that
    smaller bound is the tokenizer's model_max_length (below the model's own context), else
    "max_tokens" (the view's bound); "characters" when only MAX_TEXT_CHARS cut it."""
    if tokens_cut:
        if model_max > max_tokens:
            return "max_tokens"
        return "tokenizer" if tokenizer else "model"
    return "characters" if chars_cut else None


def hide_special(weights: np.ndarray, special: Sequence[bool]) -> np.ndarray:
    """Drop special tokens' rows and columns and renormalise each remaining row to sum 1.

    [CLS] and [SEP] often soak up most of a BERT head's attention ("no-op" heads, Clark et
    al. 2019, "What Does BERT Look At?"), which washes out the rest of a heatmap.
    `weights` (..., n, n), `special` n flags → (..., m, m) with m non-special tokens. A row
    whose remaining mass is 0 stays all 0 (no NaN).
    """
    weights = np.asarray(weights)
    flags = np.asarray(special, dtype=bool)
    if weights.ndim < 2 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"weights must have shape (..., n, n), got {weights.shape}")
    if flags.shape != (weights.shape[-1],):
        raise ValueError(
            f"special must have one flag per token: {weights.shape[-1]} flags, "
            f"got {flags.shape[0] if flags.ndim == 1 else flags.shape}"
        )
    keep = ~flags
    kept = weights[..., keep, :][..., :, keep]  # (..., m, m)
    if not np.issubdtype(kept.dtype, np.floating):
        kept = kept.astype(np.float64)
    mass = kept.sum(axis=-1, keepdims=True)  # (..., m, 1)
    out = np.zeros_like(kept)
    np.divide(kept, mass, out=out, where=mass > 0)
    return out
