"""Tiny random transformers models built offline from a config, as a notebook has them (the
tests of the long paths, the lens and the notebook share them). Their tokenizer is the
packaged MiniLM's WordPiece vocabulary: callers skip without it (`availability`)."""

from __future__ import annotations

from typing import Any

import torch

SMALL = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
SMALL |= {"num_attention_heads": 4}


def minilm_tokenizer(context: int = 8192) -> Any:
    """The packaged MiniLM's tokenizer, told that its model takes `context` tokens."""
    from transformers import AutoTokenizer

    from attention_core.resources import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    tokenizer.model_max_length = context
    return tokenizer


def tiny_decoder(config_class: str, vocab_size: int, *, context: int = 8192, **own: Any) -> Any:
    """A randomly initialised (seed 0) causal LM of 2 layers × 4 heads, width 32, from the
    transformers config class named (LlamaConfig, MistralConfig, Qwen3Config, …) with its own
    settings `own`, eager attention, in eval mode."""
    import transformers

    config = getattr(transformers, config_class)(
        vocab_size=vocab_size, **SMALL, max_position_embeddings=context, **own
    )
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    return model.eval()
