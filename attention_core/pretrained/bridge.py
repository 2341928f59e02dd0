"""A TransformerLens model as the transformers model it wraps, for `from_model`.

TransformerLens 4's `TransformerBridge.boot_transformers(..., hf_model=model)` keeps the
transformers model but replaces its modules in place with bridge components (each holding
the original as `_original_component`): the model no longer returns attentions and cannot
be deep-copied, so `eager_twin` cannot read it. `transformers_model` builds the same
architecture again from its config (eager attention) and gives it the bridge's own weight
tensors (shared, not copied): the lens, decoding and attribution then run on the model's
weights. A TransformerLens-native model (`boot_native`) has no transformers model inside:
`NativeModel` runs it as a causal LM that returns `logits` and `attentions` (its cache's
`hook_pattern`s, the numbers TransformerLens computes), which is all `run_model` and the
views need; the lens's hooks, decoding and attribution read a transformers model's modules
(projections by name, a key/value cache, input embeddings) and refuse it with
NATIVE_REASON. A 2/3 `HookedTransformer` is read through its cache
(`head_view(cache, tokens)`).
https://transformerlensorg.github.io/TransformerLens/ (migrating to v4).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "NATIVE_REASON",
    "is_lens_model",
    "is_native",
    "native_model",
    "transformers_model",
    "wraps_transformers",
]

_WRAPPED = "._original_component"
NATIVE_HINT = (
    "its views read its cache instead: `logits, cache = model.run_with_cache(tokens)` then "
    "head_view(cache, model.to_str_tokens(tokens)); the lens, decoding and attribution need "
    "a transformers model: TransformerBridge.boot_transformers(name, hf_model=...)"
)


NATIVE_REASON = (
    "a TransformerLens-native model has no transformers modules: {what} reads a "
    "transformers model's own ({needs}); its attention and logits are read (run_model, the "
    "views), or wrap a transformers model: TransformerBridge.boot_transformers(name, "
    "hf_model=...)"
)
_PATTERN = "hook_pattern"


def is_native(model: Any) -> bool:
    """A TransformerLens-native model: a `boot_native` TransformerBridge, its `NativeModel`,
    or a LoadedModel (`from_model`) holding one."""
    inner = getattr(model, "model", None)
    if getattr(inner, "is_transformer_lens_native", False) is True:
        return True
    if getattr(model, "is_transformer_lens_native", False) is True:
        return True
    return type(model).__name__ == "TransformerBridge" and not wraps_transformers(model)


def native_model(bridge: Any) -> Any:
    """A `boot_native` TransformerBridge as a `NativeModel` (see the module's docstring)."""
    import torch

    class NativeModel(torch.nn.Module):
        """`bridge` as transformers' causal LM calls go: `model(input_ids,
        output_attentions=True)` → `.logits` (B, n, V) and `.attentions`, one (B, H, n, n)
        per layer, each its cache's `blocks.{l}.attn.hook_pattern`."""

        is_transformer_lens_native = True

        def __init__(self, lens: Any) -> None:
            super().__init__()
            object.__setattr__(self, "lens", lens)  # not a submodule: never copied
            cfg = lens.cfg
            self.config = _NativeConfig(
                name=getattr(cfg, "model_name", None) or "TransformerLensNative",
                layers=int(cfg.n_layers),
                heads=int(cfg.n_heads),
                context=int(cfg.n_ctx),
                vocab=int(cfg.d_vocab),
            )

        def get_input_embeddings(self) -> Any:
            return _Rows(self.config.vocab_size)

        def forward(
            self,
            input_ids: Any,
            attention_mask: Any = None,
            output_attentions: bool = False,
            **_unused: Any,
        ) -> Any:
            if attention_mask is not None and not bool(attention_mask.all()):
                raise ValueError(
                    "a TransformerLens-native model reads no attention mask: pass one "
                    "sentence without padding"
                )
            logits, cache = self.lens.run_with_cache(
                input_ids, names_filter=lambda name: name.endswith(_PATTERN)
            )  # (B, n, V)
            layers = range(self.config.num_hidden_layers)
            attentions = tuple(cache["pattern", layer] for layer in layers)  # L × (B, H, n, n)
            return _NativeOutput(logits, attentions if output_attentions else None)

    return NativeModel(bridge)


class _Rows:
    """What `get_input_embeddings()` is asked for: its number of rows (the vocabulary)."""

    def __init__(self, rows: int) -> None:
        self.num_embeddings = rows


class _NativeOutput:
    def __init__(self, logits: Any, attentions: Any) -> None:
        self.logits = logits
        self.attentions = attentions


class _NativeConfig:
    """The few config fields `from_model` and `run_model` read."""

    is_encoder_decoder = False
    is_decoder = True
    model_type = "transformer_lens_native"
    eos_token_id = None
    pad_token_id = None
    architectures = ("TransformerLensNativeForCausalLM",)

    def __init__(self, *, name: str, layers: int, heads: int, context: int, vocab: int) -> None:
        self._name_or_path = name
        self.num_hidden_layers = layers
        self.num_attention_heads = heads
        self.max_position_embeddings = context
        self.vocab_size = vocab


def wraps_transformers(model: Any) -> bool:
    """A TransformerBridge around a transformers model (`boot_transformers`)."""
    config = getattr(getattr(model, "original_model", None), "config", None)
    return config is not None and hasattr(config, "model_type")


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
