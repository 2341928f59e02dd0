"""The "Watch it write" page's models and runs, cached on plain values.

A run is `attention_core.decode.decode(model, prompt, steps, force=…)`, keyed on the
model's key, the prompt, the steps and the forced tokens as a tuple of pairs, never on a
model object. The page asks for a horizon a chunk ahead of the step on screen
(`horizon`), so ▶ usually finds its step already computed: a greedy run's first steps
are the same whatever the horizon, and the page only shows more of it.

Models, each a key:
    "reader"               the shipped trained reader (Chinese and English)
    "tiny:<family>"        a tiny random decoder of the project's zoo (GPT-2, Llama), with
                           the packaged MiniLM's tokenizer: the mechanics, nothing learned
    "pretrained:<name>"    the model the Pretrained page loaded last (refused with a
                           reason when it is an encoder)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from attention_core.resources import minilm_dir
from ui.cache import loaded_model, on_worker

if TYPE_CHECKING:
    from attention_core.decode import DecodeResult

__all__ = [
    "CHUNK",
    "PAGE_MAX_STEPS",
    "TINY_DECODERS",
    "horizon",
    "model_keys",
    "write_run",
]

CHUNK = 32  # steps computed at once: the reader writes 32 in ~0.1 s on one core
PAGE_MAX_STEPS = 256  # steps the page shows at most; a larger request is capped and said
TINY_DECODERS = ("gpt2", "llama")  # GPT-2's learned positions, Llama's rotary and GQA
TINY_CONTEXT = PAGE_MAX_STEPS + 64


def horizon(steps: int) -> int:
    """Steps to compute for `steps` on screen: the chunk that holds one step beyond it
    (what "What comes next?" asks and ▶ shows next), at most PAGE_MAX_STEPS."""
    wanted = max(1, int(steps) + 1)
    return min(PAGE_MAX_STEPS, -(-wanted // CHUNK) * CHUNK)


def model_keys(pretrained_name: str) -> list[str]:
    """The models offered: the reader, the tiny decoders when the packaged tokenizer is
    installed, and the Pretrained page's last model when one was typed there."""
    keys = ["reader"]
    if minilm_dir() is not None:
        keys += [f"tiny:{family}" for family in TINY_DECODERS]
    if pretrained_name.strip():
        keys.append(f"pretrained:{pretrained_name.strip()}")
    return keys


@st.cache_resource(max_entries=4, show_spinner=False)
def _model(key: str) -> Any:
    """What `decode` takes for `key`: "reader", or a LoadedModel (its eager twin once)."""
    if key == "reader":
        return "reader"
    if key.startswith("tiny:"):
        from attention_core.pretrained import from_model, tiny_family

        model, tokenizer = tiny_family(key.split(":", 1)[1], context=TINY_CONTEXT)
        model.generation_config.eos_token_id = None  # a random model's end token is noise
        return from_model(model, tokenizer, name=key)
    return loaded_model(key.split(":", 1)[1])


@st.cache_data(max_entries=32, show_spinner=False)
def write_run(
    key: str, prompt: str, steps: int, force: tuple[tuple[int, int], ...] = ()
) -> DecodeResult:
    """`decode` of `prompt` by the model `key`, `steps` steps, `force` as (step, token id)
    pairs; DecodeRefused and ValueError pass through to the page."""
    from attention_core.decode import decode

    return on_worker(decode, _model(key), prompt, steps, force=dict(force))
