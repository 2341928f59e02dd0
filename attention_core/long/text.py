"""What a long text held as attention maps is, whoever read it: its tokens and one
`long.map.AttentionMap` per layer. A module of its own so that the app can name it without
loading torch (every other long module computes with it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention_core.long.map import AttentionMap

__all__ = ["MapsOfTokens"]


class MapsOfTokens:
    """What every holder of a long text's `tokens` and its `maps` (one per layer) can say:
    long.run's LongAnalysis, long.pretrained's PretrainedLong, the app's LongSubject."""

    tokens: Sequence[object]
    maps: tuple[AttentionMap, ...]

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def num_heads(self) -> int:
        return self.maps[0].num_heads

    @property
    def nbytes(self) -> int:
        """Bytes the maps hold (q̂ and k̂ of every head of every layer)."""
        return sum(m.nbytes for m in self.maps)
