"""The shipped reader (`attention_core.reader`) writing with a key/value cache of its own.

ReaderLM's forward has no cache, so this runs its blocks' own modules step by step, in the
order `Block.forward` and `MultiHeadAttention` compute them: the new position's query
against the cached keys (`(q / √D) @ Kᵀ`, softmax, `@ V`), nothing recomputed for earlier
positions. tests/test_decode.py checks every row against ReaderLM.forward on the whole
sequence.

Shape legend: q new positions, t cached positions (after the new ones), C width, H heads,
D head size, L layers, V vocabulary.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from attention_core.decode.passes import Pass
from attention_core.decode.result import CacheSize, DecodeRefused
from attention_core.reader.run import reader_ids, reader_tokens
from attention_core.reader.vocab import units
from attention_core.reader.weights import Reader, load_shipped

__all__ = ["ReaderStepper", "reader_stepper"]


class ReaderStepper:
    """`Reader` with its cache: `feed(ids)` reads ids after those already read."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.name = "reader"
        self.context = reader.config.context
        self.vocab_size = len(reader.vocab)
        self.eos_ids: frozenset[int] = frozenset()  # trained on windows of text: no end token
        self.keys: list[Tensor] = []  # L × (1, H, t, D)
        self.values: list[Tensor] = []  # L × (1, H, t, D)

    def encode(self, prompt: str) -> list[int]:
        """[BOS] and the prompt's units, as the app reads a sentence."""
        return reader_ids(reader_tokens(prompt, self.reader.vocab).tokens, self.reader.vocab)

    def token_id(self, token: int | str) -> int:
        vocab = self.reader.vocab
        if isinstance(token, str):
            pieces = units(token)
            key = pieces[0].key if len(pieces) == 1 else token
            if key not in vocab.index:
                raise ValueError(
                    f"{token!r} is not one unit of the reader's vocabulary (a character, "
                    "a word or a sign it has seen): force one it knows"
                )
            return vocab.index[key]
        if not 0 <= int(token) < len(vocab):
            raise ValueError(f"token id {token} is outside the reader's 0..{len(vocab) - 1}")
        return int(token)

    def label(self, token_id: int) -> str:
        return self.reader.vocab.tokens[token_id]

    @torch.inference_mode()
    def feed(self, ids: list[int]) -> Pass:
        model = self.reader.model
        start = self.keys[0].shape[2] if self.keys else 0
        q_len = len(ids)
        t = start + q_len
        positions = torch.arange(start, t)
        x = model.token_embedding(torch.tensor([ids])) + model.position_embedding(positions)
        # (1, q, C); a new query at position start + i may read keys 0 … start + i
        allowed = torch.ones(q_len, t, dtype=torch.bool).tril(diagonal=start)  # (q, t)
        rows, outputs = [], []
        for layer, block in enumerate(model.blocks):
            attention = block.attention
            H, D = attention.num_heads, attention.head_dim
            h = block.ln1(x)  # (1, q, C)
            query, key = attention.queries_keys(h)  # (1, H, q, D) each
            value = attention.value_linear(h).view(1, q_len, H, D).transpose(1, 2)  # (1, H, q, D)
            if layer < len(self.keys):
                self.keys[layer] = torch.cat([self.keys[layer], key], dim=2)  # (1, H, t, D)
                self.values[layer] = torch.cat([self.values[layer], value], dim=2)
            else:
                self.keys.append(key)
                self.values.append(value)
            scaled = (query / attention.scale) @ self.keys[layer].transpose(-2, -1)  # (1, H, q, t)
            weights = F.softmax(scaled.masked_fill(~allowed, float("-inf")), dim=-1)  # (1, H, q, t)
            mixed = (weights @ self.values[layer]).transpose(1, 2).reshape(1, q_len, H * D)
            # (1, q, C), the heads side by side again
            x = x + attention.out(mixed)
            x = x + block.mlp(block.ln2(x))
            rows.append(weights[0, :, -1])  # (H, t)
            outputs.append(x[0, -1])  # (C,)
        unembed = model.token_embedding.weight  # (V, C), tied
        lens = model.ln_f(torch.stack(outputs)) @ unembed.T  # (L, V)
        return Pass(
            logits=lens[-1].float(),
            rows=torch.stack(rows).float().numpy(),  # (L, H, t)
            lens=lens.float(),
            cache=_cache_size(self.keys, self.values),
        )


def _cache_size(keys: list[Tensor], values: list[Tensor]) -> CacheSize:
    return CacheSize(
        positions=int(keys[0].shape[2]),
        layer_positions=np.array([k.shape[2] for k in keys], dtype=np.int64),
        heads=int(keys[0].shape[1]),
        kv_heads=int(keys[0].shape[1]),  # the reader's heads each keep their own keys
        keys_bytes=np.array([k.numel() * k.element_size() for k in keys], dtype=np.int64),
        values_bytes=np.array([v.numel() * v.element_size() for v in values], dtype=np.int64),
    )


def reader_stepper(model: object) -> ReaderStepper:
    """ "reader" (the shipped one) or a `Reader` as a stepper."""
    if isinstance(model, Reader):
        return ReaderStepper(model)
    try:
        return ReaderStepper(load_shipped())
    except Exception as error:  # a missing or altered checkpoint
        raise DecodeRefused(f"the shipped reader could not be loaded ({error})") from error
