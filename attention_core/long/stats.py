"""Per-head statistics of a long map (attention_core.long.map), streamed: what
`attention_core.stats.head_stats` and `head_patterns` give for weights in hand, computed from
an `AttentionMap` a block of rows at a time (`attention_core.long.map.row_blocks`, at most
`scratch` floats of weights plus one scratch block), never a head's n × n weights at once.

Every statistic is a sum over rows, or a maximum, so the blocks add up: row entropies
(−Σ w log w, read as float32 and summed in float64, as head_stats does), each row's largest
weight, the weights on the token itself, the previous, the first and the last token,
Σ_j w_ij |i − j|, and the column sums (for the key with the most weight in total). For n ≤
MAX_TOKENS the results equal head_stats on the full weights within limits.EXACT
(tests/core/long/test_stats.py). A causal block only reads the keys up to its last row: the later
ones are 0 and add nothing to any sum.

Measured on the shared 2-core machine, one torch thread, 4 096 tokens × 8 heads × D = 8
(embed_dim 64): 0.6 s causal, 0.9 s not, of which computing the weights is ~20 % and log w
~25 %; so the page computes it once per text (cached), after the map is drawn.

Shape legend: H heads, n tokens, b rows of a block, k keys a block reads.
"""

from __future__ import annotations

import numpy as np

from attention_core.long.map import AttentionMap, row_blocks
from attention_core.stats import HeadStats, patterns_of

__all__ = ["SIMILARITY_WORK", "long_head_similarity", "long_head_stats", "long_head_summary"]


def long_head_stats(m: AttentionMap) -> list[HeadStats]:
    """`stats.head_stats` of every head of `m`, streamed (see the module docstring)."""
    return long_head_summary(m)[0]


def long_head_summary(m: AttentionMap) -> tuple[list[HeadStats], list[tuple[str, float] | None]]:
    """`stats.head_stats` and `stats.head_patterns` of every head of `m` in one pass."""
    stats, first, last = [], [], []
    for h in range(m.num_heads):
        s, f, la = _head(m, h)
        stats.append(s)
        first.append(f)
        last.append(la)
    if m.n < 2:
        return stats, [None] * m.num_heads
    return stats, patterns_of(stats, np.array(first), np.array(last))


def _head(m: AttentionMap, head: int) -> tuple[HeadStats, float, float]:
    """One head's statistics, and its mean weight on the first token over rows 1..n − 1 and
    on the last over rows 0..n − 2 (`patterns_of`)."""
    n = m.n
    entropy = max_sum = diagonal = previous = first = first_after = last = distance = 0.0
    peak = 0.0
    columns = np.zeros(n)  # (n,) Σ over rows of each key's weight
    keys = np.arange(n, dtype=np.float32)  # (n,)
    # one scratch block reused for log w and |i − j|: allocating them per block took 60 %
    # of the time (page faults), measured at 4 096 tokens
    scratch = np.empty(max(m.scratch, n), dtype=np.float32)
    for a, hi, w in row_blocks(m, head, (0, n), (0, n)):  # w (b, k): rows a.., keys 0..hi
        b = w.shape[0]
        rows = np.arange(a, a + b)  # (b,)
        tmp = scratch[: w.size].reshape(w.shape)  # (b, k)
        # log w, with w = 0 read as the smallest normal float (0 · log: 0, as head_stats'
        # log 1; a subnormal weight's term moves by < 1e-36)
        np.log(np.maximum(w, _TINY, out=tmp), out=tmp)
        entropy -= float(np.multiply(w, tmp, out=tmp).sum(dtype=np.float64))
        row_max = w.max(-1)  # (b,)
        max_sum += float(row_max.sum(dtype=np.float64))
        peak = max(peak, float(row_max.max()))
        diagonal += float(w[np.arange(b), rows].sum(dtype=np.float64))  # causal: hi > every row
        later = rows >= 1
        previous += float(w[np.arange(b)[later], rows[later] - 1].sum(dtype=np.float64))
        first += float(w[:, 0].sum(dtype=np.float64))
        first_after += float(w[later, 0].sum(dtype=np.float64))
        if hi == n:  # the last key (a causal block reaches it only at the last row)
            last += float(w[rows < n - 1, n - 1].sum(dtype=np.float64))
        np.subtract(rows.astype(np.float32)[:, None], keys[None, :hi], out=tmp)  # i − j
        np.multiply(w, np.abs(tmp, out=tmp), out=tmp)  # w_ij |i − j|
        distance += float(tmp.sum(dtype=np.float64))
        columns[:hi] += w.sum(0, dtype=np.float64)
    norm = np.log(n) if n > 1 else 1.0
    stats = HeadStats(
        head=head,
        entropy=max(float(entropy / n / norm), 0.0),  # ≥ 0, +0.0 for one-hot rows (head_stats)
        max_weight=max_sum / n,
        peak=peak,
        diagonal=diagonal / n,
        previous=previous / (n - 1) if n > 1 else 0.0,
        first=first / n,
        distance=distance / n,
        top_key=int(columns.argmax()),
    )
    return stats, first_after / max(n - 1, 1), last / max(n - 1, 1)


_TINY = np.float32(np.finfo(np.float32).tiny)


# pairs × n² entropy terms `long_head_similarity` computes at most: 8 heads × 4 096 tokens
# (28 pairs, 4.7e8) take 2.1–2.3 s on one core here; 12 heads × 4 096 (66 pairs) ~5 s
SIMILARITY_WORK = 1 << 29


def long_head_similarity(m: AttentionMap) -> np.ndarray:
    """`stats.head_similarity` of every pair of heads of `m`, (H, H): 1 − the mean over rows
    of JSD(row_a ‖ row_b) / ln 2, streamed a block of rows at a time (every head's block in
    hand, never a head's n × n weights). Raises ValueError above SIMILARITY_WORK."""
    H, n = m.num_heads, m.n
    work = H * (H - 1) // 2 * n * n
    if work > SIMILARITY_WORK:
        raise ValueError(
            f"{H} heads × {n} tokens: {work:.2g} pairs × cells, more than SIMILARITY_WORK="
            f"{SIMILARITY_WORK:.2g} (seconds of CPU per text)"
        )
    jsd = np.zeros((H, H))  # Σ over rows of each pair's JSD, in nats
    blocks = [row_blocks(m, h, (0, n), (0, n)) for h in range(H)]  # the same rows, head by head
    for parts in zip(*blocks, strict=True):
        w = np.stack([part[2] for part in parts])  # (H, b, k): every head's block of rows
        own = _entropy(w)  # (H, b)
        for a in range(H):
            for b in range(a + 1, H):
                mixed = _entropy((w[a] + w[b]) * 0.5)  # (b,)
                jsd[a, b] += float((mixed - (own[a] + own[b]) / 2).sum(dtype=np.float64))
    sim = 1.0 - np.clip(jsd / max(n, 1) / np.log(2), 0.0, 1.0)
    sim = np.triu(sim, 1) + np.triu(sim, 1).T
    np.fill_diagonal(sim, 1.0)
    return sim


def _entropy(w: np.ndarray) -> np.ndarray:
    """Entropy of every row of `w` (..., k), in nats, 0 · log 0 = 0, float64 sums."""
    terms = w * np.log(np.maximum(w, _TINY))  # w = 0 gives 0 · log(tiny) = 0
    return -terms.sum(-1, dtype=np.float64)
