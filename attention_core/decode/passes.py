"""One pass of a model over the tokens it has not read yet, with its key/value cache: what
each kind of model (`reader_steps`, `hf_steps`) gives `decode` per step.

Shape legend: L layers, H query heads, t positions in the cache after the pass, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from attention_core.decode.result import CacheSize

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["Pass", "Stepper"]


@dataclass(frozen=True)
class Pass:
    """The last fed position's view of the model after one cached pass."""

    logits: Tensor  # (V,) float32, the model's next-token logits
    rows: np.ndarray  # (L, H, t) float32, the last query's attention over the cache
    lens: Tensor  # (L, V) float32, each layer's output through final norm and unembedding
    cache: CacheSize


class Stepper(Protocol):
    """A model ready to write: it reads new ids into its cache and says what comes next."""

    name: str
    context: int  # most positions it reads
    vocab_size: int
    eos_ids: frozenset[int]  # the tokens that end a text (none for some models)

    def encode(self, prompt: str) -> list[int]: ...

    def token_id(self, token: int | str) -> int: ...

    def label(self, token_id: int) -> str: ...

    def feed(self, ids: list[int]) -> Pass: ...
