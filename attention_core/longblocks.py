"""A long map's exact weights, a block of rows at a time: what streams over a whole head
(attention_core.longstats, longscale) reads, never n² floats at once.

`row_blocks` cuts rows × keys into blocks of at most the map's `scratch` floats
(LONG_SCRATCH_FLOATS, 8 MB) and asks `AttentionMap.exact` for each, as the map's own pooling
does. A causal block stops at the key after its last row: the later keys are 0 for all its
rows and add nothing to any sum or maximum.

Shape legend: b rows of a block, k keys it reads.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from attention_core.longmap import AttentionMap

__all__ = ["row_blocks"]


def row_blocks(
    m: AttentionMap, head: int, rows: tuple[int, int], cols: tuple[int, int]
) -> Iterator[tuple[int, int, np.ndarray]]:
    """`head`'s exact weights over rows × cols ((start, stop) each) of `m`, block by block:
    yields (a, hi, w), w (b, k) float32 the weights of rows [a, a + b) on keys [c0, hi),
    k = hi − c0. Blocks with no key (above a causal diagonal) are skipped."""
    (r0, r1), (c0, c1) = rows, cols
    step = max(1, m.scratch // max(1, c1 - c0))  # rows a block holds within scratch floats
    for a in range(r0, r1, step):
        b = min(r1, a + step)
        hi = min(c1, b) if m.causal else c1  # causal: keys ≥ b are 0 for these rows
        if hi > c0:
            yield a, hi, m.exact(head, slice(a, b), slice(c0, hi))  # (b − a, hi − c0)
