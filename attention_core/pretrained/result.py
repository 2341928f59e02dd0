"""What a pretrained model's run returns: one sentence's tokens and every head's weights
(`run.run_model` from text, `ids.run_ids` from token ids).

Shape legend: L layers, H heads per layer, n tokens (special tokens included), m tokens
written by a decoder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PretrainedAttention"]


@dataclass(frozen=True, eq=False)
class PretrainedAttention:
    """One sentence through a pretrained model: its tokens and every head's weights.

    `attentions[l, h, i, j]` is how much query token i attends to key token j in head h of
    layer l; each row sums to 1.
    """

    tokens: list[str]  # the model's tokens, e.g. ["[CLS]", "hello", "world", "[SEP]"]
    offsets: list[tuple[int, int]]  # character span of each token in the text; (0, 0) if none
    special: list[bool]  # [CLS], [SEP], ... added by the tokenizer
    unknown: list[bool]  # the tokenizer's unk token ([UNK]): the vocabulary lacks this text
    attentions: np.ndarray  # (L, H, n, n) float32
    truncated: bool  # the text was cut to fit max_tokens / the model's max length
    # decoder: which tokens the model wrote itself (after the text); n flags
    generated: list[bool] | None = None
    # encoder-decoder: the tokens the decoder wrote, its self- and cross-attention
    decoder_tokens: list[str] | None = None
    decoder_attentions: np.ndarray | None = None  # (L, H, m, m) float32, causal
    cross_attentions: np.ndarray | None = None  # (L, H, m, n) float32: decoder → text
    # which bound cut the text: None, "characters" (MAX_TEXT_CHARS), "model" (its context,
    # LoadedModel.max_length) or "max_tokens" (the caller's, MAX_TOKENS by default)
    cut_by: str | None = None
    limit: int = 0  # the token bound that applied: min(max_tokens, the model's context)

    @property
    def unknown_fraction(self) -> float:
        """Share of the non-special tokens that are unknown (0.0 when there are none)."""
        flags = [u for u, s in zip(self.unknown, self.special, strict=True) if not s]
        return sum(flags) / len(flags) if flags else 0.0
