"""Long attention maps (attention_core.long.map) kept for a server's sessions within a byte budget.

A browser asks for tiles of a map long after the map was built; by then it may have been
evicted (or the server restarted). Such a request gets None, never an exception, and the
caller rebuilds the map. Maps are evicted least recently used first once their `nbytes` add
up to more than LONG_STORE_BYTES. Thread-safe: a server answers its sessions from several
threads of one process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

from attention_core.limits import LONG_STORE_BYTES
from attention_core.long.map import AttentionMap, Tile

__all__ = ["MapStore"]


class MapStore:
    """Long maps shared by a server's sessions, within `max_bytes` (least recently used go
    first). Thread-safe. A tile asked of a map that is gone (evicted, never stored) is None."""

    def __init__(self, *, max_bytes: int = LONG_STORE_BYTES) -> None:
        self.max_bytes = int(max_bytes)
        self._maps: OrderedDict[Hashable, tuple[AttentionMap, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, key: Hashable, layers: Sequence[AttentionMap]) -> None:
        """Keep `layers` (one AttentionMap per layer) under `key`, evicting older maps."""
        entry = tuple(layers)
        size = sum(m.nbytes for m in entry)
        if size > self.max_bytes:
            raise ValueError(
                f"these maps take {size} bytes, more than max_bytes={self.max_bytes}: "
                "use fewer tokens or layers, or a larger store"
            )
        with self._lock:
            self._maps.pop(key, None)
            self._maps[key] = entry
            while sum(m.nbytes for e in self._maps.values() for m in e) > self.max_bytes:
                self._maps.popitem(last=False)

    def get(self, key: Hashable) -> tuple[AttentionMap, ...] | None:
        """The layers stored under `key` (now the most recently used), or None."""
        with self._lock:
            entry = self._maps.get(key)
            if entry is not None:
                self._maps.move_to_end(key)
            return entry

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._maps

    def __len__(self) -> int:
        with self._lock:
            return len(self._maps)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(m.nbytes for e in self._maps.values() for m in e)

    def _layer(self, key: Hashable, layer: int) -> AttentionMap | None:
        entry = self.get(key)
        return entry[layer] if entry is not None and _is_layer(layer, len(entry)) else None

    def region(
        self,
        key: Hashable,
        layer: int,
        head: int,
        rows: slice,
        cols: slice,
        *,
        size: int,
        reduce: str = "mean",
    ) -> Tile | None:
        """`AttentionMap.region` of layer `layer` under `key`; None when it is gone."""
        m = self._layer(key, layer)
        return None if m is None else m.region(head, rows, cols, size=size, reduce=reduce)

    def tile(
        self,
        key: Hashable,
        layer: int,
        head: int,
        level: int,
        row: int,
        col: int,
        *,
        size: int,
        reduce: str = "mean",
    ) -> Tile | None:
        """`AttentionMap.tile` of layer `layer` under `key`; None when it is gone."""
        m = self._layer(key, layer)
        return None if m is None else m.tile(head, level, row, col, size=size, reduce=reduce)


def _is_layer(x: object, n: int) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool) and 0 <= x < n
