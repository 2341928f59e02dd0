"""attention_core.long.store: a byte-bounded, least-recently-used store of long maps whose
requests for a map that is gone are None, never an exception."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attention_core.limits import EXACT
from attention_core.long.map import AttentionMap
from attention_core.long.store import MapStore


def layer(n: int, seed: int) -> AttentionMap:
    """A one-head map of `n` tokens: q̂, k̂ of (1, n, 5) float32, 40·n bytes."""
    rng = np.random.default_rng(seed)
    q, k = (rng.normal(size=(1, n, 4)).astype(np.float32) for _ in range(2))
    return AttentionMap.from_qk(q, k, causal=True)


def test_tiles_come_from_the_stored_map_and_none_once_it_is_gone():
    store = MapStore(max_bytes=10_000)
    maps = (layer(50, 0), layer(50, 1))  # 2 × 2000 bytes
    store.put("text-a", maps)
    assert "text-a" in store and len(store) == 1 and store.nbytes == 4000
    t = store.region("text-a", 1, 0, slice(0, 10), slice(0, 10), size=16)
    assert t is not None and t.exact
    np.testing.assert_allclose(t.values, maps[1].exact(0, slice(0, 10), slice(0, 10)), atol=EXACT)
    assert store.tile("text-a", 0, 0, 0, 0, 0, size=16) is not None
    for request in [
        lambda: store.region("text-b", 0, 0, slice(0, 10), slice(0, 10), size=16),
        lambda: store.region("text-a", 2, 0, slice(0, 10), slice(0, 10), size=16),
        lambda: store.region("text-a", -1, 0, slice(0, 10), slice(0, 10), size=16),
        lambda: store.region("text-a", 0, 0, slice(60, 70), slice(0, 10), size=16),
        lambda: store.tile("text-b", 0, 0, 0, 0, 0, size=16),
        lambda: store.tile("text-a", 0, 0, 9, 0, 0, size=16),
    ]:
        assert request() is None


def test_least_recently_used_maps_go_first_within_the_budget():
    store = MapStore(max_bytes=5_000)  # room for two maps of 2000 bytes
    store.put("a", [layer(50, 0)])
    store.put("b", [layer(50, 1)])
    assert store.get("a") is not None  # "a" is now the most recently used
    store.put("c", [layer(50, 2)])
    assert "b" not in store and "a" in store and "c" in store
    assert store.nbytes <= store.max_bytes
    assert store.tile("b", 0, 0, 0, 0, 0, size=16) is None  # evicted: None, not an error
    store.put("a", [layer(50, 3)])  # replacing a key does not count it twice
    assert len(store) == 2 and store.nbytes == 4000


def test_a_map_larger_than_the_store_says_what_to_do():
    with pytest.raises(ValueError, match="more than max_bytes"):
        MapStore(max_bytes=1_000).put("big", [layer(50, 0)])


def test_threads_share_one_store():
    store = MapStore(max_bytes=20_000)
    maps = [layer(50, seed) for seed in range(8)]

    def work(i: int) -> None:
        for j in range(20):
            store.put(f"k{(i + j) % 12}", [maps[(i + j) % 8]])
            store.tile(f"k{(i * j) % 12}", 0, 0, 0, 0, 0, size=8)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.nbytes <= store.max_bytes and len(store) <= 10
