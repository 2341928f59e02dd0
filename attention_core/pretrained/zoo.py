"""One tiny, randomly initialised model of each transformers family the lens supports, in
memory, offline: what the suite, the family × view table of the docs and a notebook user
check the views on (`tiny_family`). Each is 2 layers × 4 heads of width 64 (head size 16)
with the packaged MiniLM's WordPiece vocabulary as its tokenizer; its attention shows the
mechanics, not anything learned.

The families differ where the lens must rebuild their scores: grouped-query attention
(Llama, Qwen2), per-head q/k norms (Qwen3, StableLM with qk_layernorm, Phi), q/k norms over
all heads (OLMo2), clipped projections (OLMo's clip_qkv), fused projections (Phi-3's
qkv_proj; GPT-NeoX's and BLOOM's query_key_value, laid out head by head), rotary
positions on part of each head (GPT-NeoX, Phi, StableLM), ALiBi biases (BLOOM), soft-capped
scores and sliding windows (Gemma 2), unscaled scores and a local window kept by the layer
itself on alternate layers (GPT-Neo), GPT-2's Conv1D, BERT and DistilBERT encoders.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

__all__ = ["FAMILY_CONFIGS", "tiny_family"]

_W = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}
_FF = {"intermediate_size": 128}

_CAUSAL, _BASE = "AutoModelForCausalLM", "AutoModel"
_KV2 = {"num_key_value_heads": 2}
_PARTIAL = {"partial_rotary_factor": 0.25, "num_key_value_heads": 4}

# family → (transformers config class, its settings, the model class that reads it)
FAMILY_CONFIGS: dict[str, tuple[str, dict[str, Any], str]] = {
    "bert": ("BertConfig", {**_W, **_FF}, _BASE),
    "distilbert": ("DistilBertConfig", {"dim": 64, "n_layers": 2, "n_heads": 4}, _BASE),
    "gpt2": ("GPT2Config", {"n_embd": 64, "n_layer": 2, "n_head": 4}, _CAUSAL),
    "llama": ("LlamaConfig", {**_W, **_FF, **_KV2}, _CAUSAL),
    "qwen2": ("Qwen2Config", {**_W, **_FF, **_KV2}, _CAUSAL),
    "qwen3": ("Qwen3Config", {**_W, **_FF, **_KV2, "head_dim": 16}, _CAUSAL),
    "gemma": ("GemmaConfig", {**_W, **_FF, "num_key_value_heads": 1, "head_dim": 16}, _CAUSAL),
    "gemma2": (
        "Gemma2Config",
        {**_W, **_FF, **_KV2, "head_dim": 16, "attn_logit_softcapping": 5.0},
        _CAUSAL,
    ),
    "phi3": ("Phi3Config", {**_W, **_FF, **_KV2}, _CAUSAL),
    "phi": ("PhiConfig", {**_W, **_FF, "partial_rotary_factor": 0.5}, _CAUSAL),
    "stablelm": ("StableLmConfig", {**_W, **_FF, **_PARTIAL}, _CAUSAL),
    "stablelm-qk-norm": (
        "StableLmConfig",
        {**_W, **_FF, **_PARTIAL, "qk_layernorm": True},
        _CAUSAL,
    ),
    "gpt-neox": ("GPTNeoXConfig", {**_W, **_FF, "rotary_pct": 0.25}, _CAUSAL),
    "olmo": ("OlmoConfig", {**_W, **_FF, "clip_qkv": 0.05}, _CAUSAL),
    "olmo2": ("Olmo2Config", {**_W, **_FF}, _CAUSAL),
    "bloom": ("BloomConfig", {"hidden_size": 64, "n_layer": 2, "n_head": 4}, _CAUSAL),
    "gpt-neo": (  # unscaled scores; layer 1 sees only its last 8 tokens (a local window)
        "GPTNeoConfig",
        {**_W, "num_layers": 2, "attention_types": [[["global", "local"], 1]], "window_size": 8},
        _CAUSAL,
    ),
}


@functools.cache
def _tokenizer() -> Any:
    """The packaged MiniLM's WordPiece tokenizer, read from disk once."""
    import transformers

    from attention_core.resources import minilm_dir

    return transformers.AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)


def tiny_family(
    family: str,
    *,
    dtype: str = "float32",
    attn_implementation: str = "eager",
    context: int = 4096,
    seed: int = 0,
) -> tuple[Any, Any]:
    """(model, tokenizer): a tiny random model of `family` (FAMILY_CONFIGS) in eval mode,
    its weights in `dtype` ("float32", "bfloat16", "float16"), with the attention
    implementation asked for, and the packaged MiniLM's tokenizer told it takes `context`
    tokens. Raises ValueError for a family or dtype it does not know."""
    import torch
    import transformers

    if family not in FAMILY_CONFIGS:
        raise ValueError(f"family must be one of {', '.join(FAMILY_CONFIGS)}, got {family!r}")
    if dtype not in ("float32", "bfloat16", "float16"):
        raise ValueError(f"dtype must be float32, bfloat16 or float16, got {dtype!r}")
    # its own copy, deep: a shallow one shares the special tokens, and a caller that sets
    # one (TransformerLens's bridge sets bos_token) would change every later tokenizer
    tokenizer = copy.deepcopy(_tokenizer())
    tokenizer.model_max_length = context
    name, settings, auto = FAMILY_CONFIGS[family]
    positions = "n_positions" if family == "gpt2" else "max_position_embeddings"
    extra = {} if family == "bloom" else {positions: context}
    ids = {"pad_token_id": tokenizer.pad_token_id, "bos_token_id": tokenizer.cls_token_id}
    ids["eos_token_id"] = tokenizer.sep_token_id
    config = getattr(transformers, name)(vocab_size=len(tokenizer), **settings, **extra, **ids)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, auto).from_config(
            config, attn_implementation=attn_implementation
        )
    return model.to(getattr(torch, dtype)).eval(), tokenizer
