"""One encode-and-run of a model of any family, as plain NumPy: the step `load_model`'s
probe and `run_model` share.

A model's family (`FAMILIES`, read from its config by `model_family`) decides how it runs:
an encoder once over the text; a decoder first writes tokens greedily after the text, then
runs once over both; an encoder-decoder's decoder writes tokens greedily, then one run gives
the encoder's, the decoder's and the cross-attentions. The weights are those transformers
returns with `output_attentions=True`.

Shape legend: L layers, H heads per layer, n tokens (special tokens included), m tokens
written by a decoder.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

FAMILIES = ("encoder", "decoder", "encoder-decoder")

# A fast tokenizer's __call__ rewrites the shared Rust tokenizer's truncation settings before
# encoding, so two Streamlit sessions tokenizing at once could use each other's settings.
# Tokenizing takes milliseconds; the model forward (read-only under no_grad) stays unlocked.
_TOKENIZER_LOCK = threading.Lock()


def model_family(config: Any, model: Any = None) -> str:
    """ "encoder-decoder" (T5, BART), "decoder" (a causal language model: GPT-2, Llama…) or
    "encoder" (BERT-like), from a transformers config and, when given, the model's class
    (a decoder built in memory has no `architectures` in its config)."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    names = [*(getattr(config, "architectures", None) or [])]
    names += [type(model).__name__] if model is not None else []
    if getattr(config, "is_decoder", False) or any(
        a.endswith(("ForCausalLM", "LMHeadModel")) for a in names
    ):
        return "decoder"
    return "encoder"


def encode(tokenizer: Any, text: str, *, limit: int) -> tuple[dict[str, Any], bool]:
    """Tokenize `text` to at most `limit` tokens; also say whether anything was cut."""
    enc, total = encode_counted(tokenizer, text, limit=limit)
    return enc, total > len(enc["input_ids"])


def encode_counted(tokenizer: Any, text: str, *, limit: int) -> tuple[dict[str, Any], int]:
    """Tokenize `text` to at most `limit` tokens; also the tokens of the whole text (special
    tokens included)."""
    options: dict[str, Any] = {"return_special_tokens_mask": True, "verbose": False}
    with _TOKENIZER_LOCK:
        try:
            enc = tokenizer(
                text, truncation=True, max_length=limit, return_offsets_mapping=True, **options
            )
        except NotImplementedError:  # Python-only tokenizers cannot report offsets
            enc = tokenizer(text, truncation=True, max_length=limit, **options)
        total = _count(tokenizer, text)
    return dict(enc), total


def count_tokens(tokenizer: Any, text: str) -> int:
    """The tokens (special tokens included) `tokenizer` makes of the whole of `text`."""
    with _TOKENIZER_LOCK:
        return _count(tokenizer, text)


def _count(tokenizer: Any, text: str) -> int:
    return len(tokenizer(text, truncation=False, verbose=False)["input_ids"])


@dataclass
class _Run:
    """What one encode-and-run gives: the encoding (with any written tokens appended, for
    a decoder), whether the text was cut, the self-attentions (L, H, n, n), and for an
    encoder-decoder the decoder's tokens and attentions."""

    enc: dict[str, Any]
    truncated: bool
    attentions: np.ndarray
    written: int = 0  # tokens a decoder appended to the text's
    decoder_ids: list[int] | None = None
    decoder_attentions: np.ndarray | None = None  # (L, H, m, m)
    cross_attentions: np.ndarray | None = None  # (L, H, m, n)


_NONE = np.zeros((0, 0, 0, 0), dtype=np.float32)


def stack_layers(layers: Any) -> np.ndarray:
    """L tensors of (1, H, q, k) → (L, H, q, k) float32; an empty array when absent."""
    import torch

    if not isinstance(layers, tuple) or not layers or any(a is None for a in layers):
        return _NONE
    return torch.cat(layers, dim=0).to(torch.float32).numpy()


def _next_token(model: Any, **inputs: Any) -> int:
    """The greedy next token: the most likely one after the last position."""
    return int(model(**inputs).logits[0, -1].argmax())


def forward_pass(model: Any, tokenizer: Any, text: str, *, limit: int, generate: int = 0) -> _Run:
    """Encode and run the model (see _Run); a decoder first writes up to `generate` tokens
    (within `limit`), an encoder-decoder's decoder writes up to `generate` tokens."""
    import torch

    enc, truncated = encode(tokenizer, text, limit=limit)
    ids = enc["input_ids"]
    if not ids:  # e.g. GPT-2 on "": no tokens and no special tokens, nothing to run
        return _Run(enc, truncated, _NONE)
    names = getattr(tokenizer, "model_input_names", ["input_ids", "attention_mask"])
    inputs = {k: torch.tensor([enc[k]]) for k in names if k in enc}  # each (1, n)
    family = model_family(model.config)
    config = model.config
    eos = getattr(config, "eos_token_id", None)
    # no_grad and the output_attentions argument (not config) leave the shared model as is.
    with torch.no_grad():
        if family == "encoder-decoder":
            start = getattr(config, "decoder_start_token_id", None)
            written = [int(start if start is not None else (config.pad_token_id or 0))]
            for _ in range(generate):
                written.append(
                    _next_token(model, **inputs, decoder_input_ids=torch.tensor([written]))
                )
                if written[-1] == eos:
                    break
            outputs = model(
                **inputs, decoder_input_ids=torch.tensor([written]), output_attentions=True
            )
            return _Run(
                enc,
                truncated,
                stack_layers(outputs.encoder_attentions),
                decoder_ids=written,
                decoder_attentions=stack_layers(outputs.decoder_attentions),
                cross_attentions=stack_layers(outputs.cross_attentions),
            )
        added = 0
        if family == "decoder":
            for _ in range(max(0, min(generate, limit - len(ids)))):
                token = _next_token(model, **inputs)
                added += 1
                # the written token extends every per-token list of the encoding
                extra = {"input_ids": token, "attention_mask": 1, "token_type_ids": 0}
                extra |= {"special_tokens_mask": 0, "offset_mapping": (0, 0)}
                enc = {k: [*v, extra[k]] if k in extra else v for k, v in enc.items()}
                inputs = {k: torch.tensor([enc[k]]) for k in names if k in enc}  # (1, n+1)
                if token == eos:
                    break
        outputs = model(**inputs, output_attentions=True)
    return _Run(enc, truncated, stack_layers(outputs.attentions), written=added)
