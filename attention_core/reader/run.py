"""A sentence as the trained reader reads it, and one layer's attention: the app's view.

    text ─► [BOS] + one Token per unit (a CJK character, an English word, a sign)
         ─► ids (unknown units are [UNK], and their positions are kept: flagged, counted)
         ─► layers 0 … L-1 of the reader (the residual stream)           (B, n, C)
         ─► LN of layer L ─► layer L's own MultiHeadAttention.trace      (B, H, n, n)

So every step a page shows for the trained weights (Q, K, V, QKᵀ, ÷√d_k, softmax, ·V) is
the step the trained model itself computes at that layer: `layer_trace(...).weights` is
the model's own attention (tests/core/reader/test_reader.py checks it against `ReaderLM.forward`).

Shape legend: B sentences, n tokens ([BOS] included), C embed_dim, H heads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attention_core.attention import AttentionTrace, causal_mask
from attention_core.reader.vocab import BOS, UNK, Vocab, units
from attention_core.reader.weights import Reader
from attention_core.tokenize import Token

__all__ = ["ReaderTokens", "layer_trace", "reader_ids", "reader_tokens"]


@dataclass(frozen=True)
class ReaderTokens:
    """[BOS] and the text's units as Tokens; `unknown` indexes the tokens read as [UNK]."""

    tokens: list[Token]
    unknown: list[int]


def reader_tokens(text: str, vocab: Vocab) -> ReaderTokens:
    """`text` cut into the reader's units, after the [BOS] every sentence starts with."""
    tokens = [Token("", 0, 0, piece=BOS, special=True)]
    unknown = []
    for unit in units(text):
        if unit.key not in vocab.index:
            unknown.append(len(tokens))
        tokens.append(Token(unit.text, unit.start, unit.end))
    return ReaderTokens(tokens, unknown)


def reader_ids(tokens: Sequence[Token | str], vocab: Vocab) -> list[int]:
    """One id per token: [BOS] for a special [BOS], [UNK] for anything the vocabulary lacks
    (a [PAD], a jieba word, an unseen character)."""
    ids = []
    for token in tokens:
        label = token.label if isinstance(token, Token) else str(token)
        pieces = units(label)
        key = pieces[0].key if len(pieces) == 1 else label
        ids.append(vocab.index.get(key, vocab.index[UNK]))
    return ids


def layer_trace(
    reader: Reader,
    sentences: Sequence[Sequence[Token | str]],
    layer: int,
    *,
    mask: Tensor | None = None,
    divisor: float | None = None,
) -> AttentionTrace:
    """Layer `layer`'s attention over B sentences of equal length n, every step kept.

    The reader is causal: `mask` (bool, True = may attend) is combined with its causal
    mask. `divisor` replaces √d_k in this layer only (the layers below run as trained).
    """
    model = reader.model
    if not 0 <= layer < len(model.blocks):
        raise ValueError(f"the reader has layers 0 to {len(model.blocks) - 1}, not {layer}")
    ids = torch.tensor([reader_ids(s, reader.vocab) for s in sentences])  # (B, n)
    n = ids.shape[1]
    if n > model.config.context:
        raise ValueError(f"{n} tokens are more than the reader's context of {model.config.context}")
    causal = causal_mask(n)  # (n, n)
    with torch.inference_mode():
        x = model.token_embedding(ids) + model.position_embedding(torch.arange(n))  # (B, n, C)
        for block in model.blocks[:layer]:
            x, _ = block(x, causal)
        block = model.blocks[layer]
        allowed = causal if mask is None else mask & causal  # broadcast to (B, H, n, n)
        return block.attention.trace(block.ln1(x), allowed, divisor=divisor)
