"""What `decode` returns: one record per written token, and the run around them.

Shape legend: L layers, H query heads, t positions the step's query met (the prompt and
every token written before it), k alternatives kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_DECODE_STEPS", "CacheSize", "DecodeRefused", "DecodeResult", "Step"]

# a classroom watches tens of steps; beyond this a run is capped and says so
MAX_DECODE_STEPS = 10_000


class DecodeRefused(ValueError):
    """The model cannot be watched writing: the message says why and what to use instead."""


@dataclass(frozen=True)
class CacheSize:
    """The key/value cache as the step's query met it: t positions read, kept in every
    layer (a sliding-window layer keeps its window only).

    With grouped-query attention `kv_heads` < `heads`: several query heads read the same
    cached keys and values, and the bytes are those of the `kv_heads` actually stored."""

    positions: int  # t
    layer_positions: np.ndarray  # (L,) int64, positions each layer keeps: t, or its window
    heads: int  # H, query heads
    kv_heads: int  # key/value heads stored per layer
    keys_bytes: np.ndarray  # (L,) int64
    values_bytes: np.ndarray  # (L,) int64

    @property
    def total_bytes(self) -> int:
        return int(self.keys_bytes.sum() + self.values_bytes.sum())


@dataclass(frozen=True)
class Step:
    """Step i: the query at position t - 1 met the t cached keys and chose token i."""

    index: int  # i
    token_id: int  # the token written
    token: str
    forced: bool  # written by `force`, not chosen by the model
    attention: np.ndarray  # (L, H, t) float32: the row that chose this token, every head
    top_ids: np.ndarray  # (k,) int64, the model's most likely next tokens
    top_tokens: list[str]
    top_probs: np.ndarray  # (k,) float32, softmax of the logits (temperature 1)
    cache: CacheSize
    lens_ids: np.ndarray  # (L, k) int64: each layer's residual stream, final norm, unembedding
    lens_tokens: list[list[str]]  # L lists of k
    lens_probs: np.ndarray  # (L, k) float32; the last layer's row is the model's own

    @property
    def positions(self) -> int:
        """t, the positions this step's row covers."""
        return int(self.attention.shape[-1])


@dataclass(frozen=True)
class DecodeResult:
    """A prompt and what the model wrote after it, one `Step` per written token."""

    model: str  # "reader" or the model's name
    ids: list[int]  # the prompt's ids, then the written ones
    tokens: list[str]  # one readable label per id
    prompt_length: int
    steps: list[Step]
    stopped: str | None  # why fewer steps were written than asked (context full, end token)
    capped: str | None  # said when more than MAX_DECODE_STEPS were asked
    context: int  # most positions the model reads

    @property
    def written(self) -> list[int]:
        return self.ids[self.prompt_length :]

    def attention(self, step: int) -> np.ndarray:
        """(L, H, t) of step `step` (the row that chose its token)."""
        return self.steps[step].attention
