"""A byte-level BPE tokenizer trained here, offline, with the `tokenizers` library on the
package's Traditional Chinese corpus (GPT-2's byte alphabet, as GPT-2, Llama 3 and Qwen use:
most characters stay cut into their UTF-8 bytes), and a tiny random GPT-2 on its vocabulary,
run by transformers itself (eager attention). Shared by the library's and the pages' tests."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np

from attention_core.resources import DATA_DIR

TEXT = "注意力讓每個詞元看見其他的詞元，模型因此讀懂整句話。"
HAN = re.compile(r"[\u4e00-\u9fff]")


@functools.cache
def byte_bpe() -> Any:
    """A byte-level BPE `tokenizers.Tokenizer` of 400 pieces trained on 400 corpus lines."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    corpus = (DATA_DIR / "corpus" / "heldout.txt").read_text(encoding="utf-8").splitlines()
    lines = [line for line in corpus if len(HAN.findall(line)) >= 5][:400]
    assert len(lines) == 400
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer)
    return tokenizer


@functools.cache
def byte_gpt2() -> tuple[Any, Any, list[int], np.ndarray]:
    """A tiny random GPT-2 on that vocabulary (eager attention) and its attention over TEXT:
    (tokenizer, model, ids, (L, H, n, n) float64)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = byte_bpe()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
    config = GPT2Config(
        vocab_size=bpe.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=128
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT2LMHeadModel(config)
    model.config._attn_implementation = "eager"  # the weights come back only from eager
    model.eval()
    ids = tokenizer(TEXT)["input_ids"] + [tokenizer.eos_token_id]
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    attentions = torch.cat(out.attentions).double().numpy()  # L × (1, H, n, n) → (L, H, n, n)
    return tokenizer, model, ids, attentions


def saved_byte_gpt2(folder: Path) -> str:
    """The tiny GPT-2 and its tokenizer saved to `folder`, as a user's model is."""
    tokenizer, model, _, _ = byte_gpt2()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def hand_pool(w: np.ndarray, rows: list[list[int]], cols: list[list[int]]) -> np.ndarray:
    """(..., n, k) → (..., m, m_k): a label's key pieces summed, its query pieces averaged,
    written out cell by cell."""
    out = np.zeros((*w.shape[:-2], len(rows), len(cols)))
    for a, query in enumerate(rows):
        for b, key in enumerate(cols):
            out[..., a, b] = w[..., query, :][..., key].sum(-1).mean(-1)
    return out
