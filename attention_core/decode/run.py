"""`decode`: watch a decoder write, one token at a time, from its key/value cache.

Each step feeds the model only the token written last (the prompt, once, at the start)
and reads, from that one pass: the new query's attention over every cached key in every
layer and head (the row that chooses the next token), the next-token probabilities, the
cache's size, and a logit lens (each layer's residual stream through the final norm and
the unembedding; nostalgebraist 2020, "interpreting GPT: the logit lens").

Shape legend: L layers, H query heads, t positions the step's query met, k alternatives,
V vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from attention_core.decode.hf_steps import hf_stepper
from attention_core.decode.passes import Pass, Stepper
from attention_core.decode.reader_steps import reader_stepper
from attention_core.decode.result import MAX_DECODE_STEPS, DecodeRefused, DecodeResult, Step
from attention_core.pretrained.bridge import NATIVE_REASON, is_native
from attention_core.reader.weights import Reader

__all__ = ["decode"]

TOP_K = 5  # alternatives and lens tokens kept per step


def decode(
    model: Any,
    prompt: str,
    steps: int,
    *,
    tokenizer: Any = None,
    force: Mapping[int, int | str] | None = None,
    temperature: float = 0.0,
    top_k: int | None = None,
    seed: int = 0,
) -> DecodeResult:
    """Write `steps` tokens after `prompt`, keeping what chose each one.

    `model`: "reader" (the shipped trained reader, or an `attention_core.reader.Reader`),
    a transformers causal LM with its `tokenizer`, or a `pretrained.LoadedModel`.

    Step i's `attention` (L, H, t) is the row that chose its token: the query at the last
    position before it, over the t positions before it, as the model computes it with its
    own key/value cache. A transformers model runs on its eager twin (`from_model`) with
    `past_key_values`, `use_cache=True` and `output_attentions=True`: each call feeds only
    the newest token, and the attention returned is that query against the cached keys
    (step 0's is the prompt's pass, its last row); nothing is recomputed. The reader runs
    its own modules with a cache of its keys and values (decode.reader_steps).

    Greedy by default; `temperature` > 0 samples from softmax(logits / temperature), over
    the `top_k` most likely tokens when given, from a generator seeded by `seed` (the same
    seed writes the same tokens). `force={step: token}` writes that token (an id or a
    string the vocabulary holds) at that step; the model carries on from it. A step's
    alternatives are the model's own top-5 probabilities (temperature 1) whichever token
    was written. The run stops early, saying why in `stopped`, at the model's end-of-text
    token or when its context is full; more than MAX_DECODE_STEPS steps are capped
    (`capped`).

    Raises DecodeRefused (a ValueError) for a model that does not write one token at a
    time (an encoder, an encoder-decoder, no LM head) or whose lens or rows could not be
    its own (no final norm found, logits the lens cannot rebuild), and ValueError for bad
    arguments (a forced token outside the vocabulary, a prompt longer than the context).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a whole number ≥ 0, got {steps!r}")
    if not isinstance(prompt, str):
        raise ValueError(f"prompt must be a string, got {type(prompt).__name__}")
    if not temperature >= 0:
        raise ValueError(f"temperature must be ≥ 0, got {temperature!r}")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a whole number ≥ 1 or None, got {top_k!r}")
    capped = None
    if steps > MAX_DECODE_STEPS:
        capped = f"{steps} steps asked; capped at {MAX_DECODE_STEPS}"
        steps = MAX_DECODE_STEPS
    stepper = _stepper(model, tokenizer)
    forced = _forced(stepper, force or {}, steps)
    ids = stepper.encode(prompt)
    if len(ids) > stepper.context:
        raise ValueError(
            f"the prompt is {len(ids)} tokens and {stepper.name} reads at most "
            f"{stepper.context}: shorten it"
        )
    generator = torch.Generator().manual_seed(int(seed))
    prompt_length, written, stopped = len(ids), [], None
    pending = ids
    for i in range(steps):
        if len(ids) >= stepper.context:
            stopped = (
                f"the context of {stepper.context} positions is full after {i} steps: "
                "the model cannot read a token past it"
            )
            break
        seen = stepper.feed(pending)
        token = forced[i] if i in forced else _choose(seen.logits, temperature, top_k, generator)
        written.append(_step(stepper, seen, i, token, forced=i in forced))
        ids = [*ids, token]
        pending = [token]
        if token in stepper.eos_ids and i < steps - 1:
            stopped = f"the model wrote its end-of-text token at step {i}"
            break
    return DecodeResult(
        model=stepper.name,
        ids=ids,
        tokens=[stepper.label(t) for t in ids],
        prompt_length=prompt_length,
        steps=written,
        stopped=stopped,
        capped=capped,
        context=stepper.context,
    )


def _stepper(model: Any, tokenizer: Any) -> Stepper:
    if isinstance(model, str):
        if model != "reader":
            raise DecodeRefused(
                f"model {model!r}: pass 'reader', a transformers model with its tokenizer, "
                "or pretrained.load_model(…) / from_model(…)"
            )
        return reader_stepper(model)
    if isinstance(model, Reader):
        return reader_stepper(model)
    if is_native(model):
        raise DecodeRefused(
            NATIVE_REASON.format(
                what="decoding",
                needs="its key/value cache, step by step, and its final norm for the lens",
            )
        )
    return hf_stepper(model, tokenizer)


def _forced(stepper: Stepper, force: Mapping[int, int | str], steps: int) -> dict[int, int]:
    """{step: token id}, each step in 0 … steps - 1 and each token in the vocabulary."""
    out = {}
    for step, token in force.items():
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < steps:
            raise ValueError(f"force: step {step!r} is not one of the steps 0 … {steps - 1}")
        out[step] = stepper.token_id(token)
    return out


def _choose(logits: torch.Tensor, temperature: float, top_k: int | None, gen: Any) -> int:
    """Greedy at temperature 0, else a draw from the tempered, top-k-cut distribution."""
    if temperature == 0:
        return int(logits.argmax())
    scaled = logits.double() / temperature  # (V,)
    if top_k is not None and top_k < scaled.numel():
        cut = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < cut, float("-inf"))
    return int(torch.multinomial(torch.softmax(scaled, -1), 1, generator=gen))


def _step(stepper: Stepper, seen: Pass, index: int, token: int, *, forced: bool) -> Step:
    k = min(TOP_K, stepper.vocab_size)
    top = torch.topk(torch.softmax(seen.logits, -1), k)  # (k,) each
    lens = torch.topk(torch.softmax(seen.lens, -1), k, dim=-1)  # (L, k) each
    lens_ids = lens.indices.numpy().astype(np.int64)  # (L, k)
    return Step(
        index=index,
        token_id=token,
        token=stepper.label(token),
        forced=forced,
        attention=seen.rows.astype(np.float32),  # (L, H, t)
        top_ids=top.indices.numpy().astype(np.int64),
        top_tokens=[stepper.label(int(t)) for t in top.indices],
        top_probs=top.values.numpy().astype(np.float32),
        cache=seen.cache,
        lens_ids=lens_ids,
        lens_tokens=[[stepper.label(int(t)) for t in row] for row in lens_ids],
        lens_probs=lens.values.numpy().astype(np.float32),
    )
