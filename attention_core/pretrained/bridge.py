"""A TransformerLens model as the transformers model it wraps, for `from_model`.

TransformerLens 4's `TransformerBridge.boot_transformers(..., hf_model=model)` keeps the
transformers model but replaces its modules in place with bridge components (each holding
the original as `_original_component`): the model no longer returns attentions and cannot
be deep-copied, so `eager_twin` cannot read it. `transformers_model` builds the same
architecture again from its config (eager attention) and gives it the bridge's own weight
tensors (shared, not copied): the lens, decoding and attribution then run on the model's
weights. A TransformerLens-native model (`boot_native`, or a 2/3 `HookedTransformer`) has
no transformers model inside: its views read its cache (`head_view(cache, tokens)`).
https://transformerlensorg.github.io/TransformerLens/ (migrating to v4).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["is_lens_model", "transformers_model"]

_WRAPPED = "._original_component"
NATIVE_HINT = (
    "its views read its cache instead: `logits, cache = model.run_with_cache(tokens)` then "
    "head_view(cache, model.to_str_tokens(tokens)); the lens, decoding and attribution need "
    "a transformers model: TransformerBridge.boot_transformers(name, hf_model=...)"
)


def is_lens_model(model: Any) -> bool:
    """A TransformerLens model: a 4.x TransformerBridge or a 2/3 HookedTransformer."""
    return type(model).__name__ in ("TransformerBridge", "HookedTransformer")


def _same_tokenizer(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return len(a) == len(b) and a.get_vocab() == b.get_vocab()
    except (AttributeError, TypeError):
        return False


def transformers_model(model: Any, tokenizer: Any) -> tuple[Any, Any]:
    """(a transformers model with the bridge's weights and eager attention, its tokenizer).

    `tokenizer` None → the bridge's own; one that differs from the bridge's (another
    vocabulary) is refused. Raises ValueError with what to do instead."""
    own = getattr(model, "tokenizer", None)
    if tokenizer is None:
        tokenizer = own
    elif own is not None and not _same_tokenizer(tokenizer, own):
        raise ValueError(
            f"the tokenizer given ({type(tokenizer).__name__}, {len(tokenizer)} tokens) is "
            f"not this model's own ({type(own).__name__}, {len(own)} tokens): token ids "
            "would mean other words; pass tokenizer=model.tokenizer or none"
        )
    if tokenizer is None:
        raise ValueError("this TransformerLens model has no tokenizer: pass tokenizer=")
    inner = getattr(model, "original_model", None)
    config = getattr(inner, "config", None)
    if (
        type(model).__name__ != "TransformerBridge"
        or config is None
        or not hasattr(config, "model_type")
    ):
        raise ValueError(
            f"a TransformerLens-native {type(model).__name__} has no transformers model inside; "
            + NATIVE_HINT
        )
    weights = {
        name.replace(_WRAPPED, ""): tensor
        for name, tensor in inner.state_dict(keep_vars=True).items()
    }
    # the architecture again (its buffers: masks, rotary tables); the weights are the bridge's
    fresh = type(inner)._from_config(copy.deepcopy(config), attn_implementation="eager")
    wanted = fresh.state_dict()
    missing = [name for name in wanted if name not in weights]
    if missing:
        raise ValueError(
            f"could not find the weights {missing[:3]}… in the bridge's model; " + NATIVE_HINT
        )
    fresh.load_state_dict(
        {name: weights[name].detach() for name in wanted}, strict=True, assign=True
    )
    fresh.tie_weights()
    return fresh.eval(), tokenizer
