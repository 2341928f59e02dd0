"""Per-head statistics of attention matrices, and how alike two heads are.

Everything takes plain NumPy arrays of row-stochastic weights, (H, n, n) with rows =
queries and columns = keys, so the same functions serve the project's own module, a
pretrained model's layer, and trained toy heads. Measures follow Clark et al. 2019,
"What Does BERT Look At?" (entropy, attention to the previous / first token, distance)
and use the Jensen–Shannon divergence between the rows of two heads for similarity.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "BROAD_ENTROPY",
    "PATTERNS",
    "PATTERN_MASS",
    "STAT_NAMES",
    "Flatness",
    "HeadStats",
    "SameWord",
    "flatness",
    "head_patterns",
    "head_similarity",
    "head_stats",
    "patterns_of",
    "same_word",
    "similarity_order",
]

PATTERNS = ("previous", "first", "self", "last", "broad")
PATTERN_MASS = 0.5  # a head "looks at X" when its rows put at least this much weight on X
BROAD_ENTROPY = 0.9  # a head is "broad" when its mean row entropy / log(n) is at least this
PERCENTILE_SAMPLE = 1 << 18  # `flatness` reads its percentiles off at most ~this many weights

STAT_NAMES = (
    "entropy",
    "max_weight",
    "diagonal",
    "previous",
    "first",
    "distance",
)


@dataclass(frozen=True)
class HeadStats:
    """Averages over the query rows of one head."""

    head: int
    entropy: float  # mean over rows of (row entropy / log(n)): 0 = one-hot, 1 = uniform
    max_weight: float  # mean over rows of each row's largest weight
    peak: float  # the largest single weight anywhere in the head
    diagonal: float  # mass on the token itself
    previous: float  # mass on the token just before (rows 1..n-1)
    first: float  # mass on the first token
    distance: float  # Σ_j w_ij |i - j|: how far, in tokens, a row looks on average
    top_key: int  # the key that receives the most attention in total (column sum argmax)

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def _as_heads(weights: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (H, n, n) or (n, n), got shape {w.shape}")
    return w  # (H, n, n)


def _row_entropy(w: np.ndarray) -> np.ndarray:
    """Entropy of every row, in nats: (..., n, n) → (..., n)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, -w * np.log(w), 0.0)
    return terms.sum(-1)


def head_stats(weights: np.ndarray) -> list[HeadStats]:
    """Statistics of every head in `weights` (H, n, n) (or one (n, n) matrix).

    float32 weights are read as float32 and summed in float64 (12 heads × 512² in ~25 ms
    instead of ~60 ms; the sums agree to 1e-6 with float64 throughout).
    """
    w = np.asarray(weights)
    if w.dtype != np.float32:
        w = w.astype(np.float64)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (H, n, n) or (n, n), got shape {w.shape}")
    H, n, _ = w.shape
    if n == 0:
        return [HeadStats(h, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0) for h in range(H)]
    f64 = np.float64
    norm = np.log(n) if n > 1 else 1.0
    idx = np.arange(n)
    dist = np.abs(idx[:, None] - idx[None, :]).astype(w.dtype)  # (n, n): |i - j|
    logs = np.log(np.where(w > 0, w, 1))  # (H, n, n); 0 where a weight is 0
    # ≥ 0, and +0.0 for one-hot rows (Σ 1·log 1 = 0, negated: -0.0, printed "-0.00")
    entropy = np.maximum(-(w * logs).sum(-1, dtype=f64).mean(-1) / norm, 0.0)  # (H,)
    row_max = w.max(-1)  # (H, n)
    max_weight = row_max.mean(-1, dtype=f64)  # (H,)
    peak = row_max.max(-1)  # (H,)
    diagonal = np.diagonal(w, axis1=1, axis2=2).mean(-1, dtype=f64)  # (H,)
    previous = w[:, idx[1:], idx[:-1]].mean(-1, dtype=f64) if n > 1 else np.zeros(H)  # (H,)
    first = w[:, :, 0].mean(-1, dtype=f64)  # (H,)
    distance = (w * dist).sum(-1, dtype=f64).mean(-1)  # (H,)
    top_key = w.sum(1, dtype=f64).argmax(-1)  # (H,)
    return [
        HeadStats(
            head=h,
            entropy=float(entropy[h]),
            max_weight=float(max_weight[h]),
            peak=float(peak[h]),
            diagonal=float(diagonal[h]),
            previous=float(previous[h]),
            first=float(first[h]),
            distance=float(distance[h]),
            top_key=int(top_key[h]),
        )
        for h in range(H)
    ]


def head_patterns(
    weights: np.ndarray, stats: list[HeadStats] | None = None
) -> list[tuple[str, float] | None]:
    """The one clear pattern of each head of `weights` (H, n, n), or None.

    A pattern is clear when the rows, on average, put at least PATTERN_MASS of their weight
    on one place: the previous token ("previous", rows 1..n-1), the first token ("first":
    [CLS] in BERT-style models), the token itself ("self"), the last token ("last": [SEP]);
    or when they are nearly even ("broad": mean entropy / log(n) ≥ BROAD_ENTROPY). Several
    places above the threshold: the one with the most weight. Returns (pattern, value) with
    the mean weight (or the normalised entropy for "broad"). `stats`: `head_stats(weights)`
    when the caller has it already (its entropy, diagonal and previous are reused).
    """
    w = np.asarray(weights)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (H, n, n) or (n, n), got shape {w.shape}")
    if w.shape[-1] < 2:
        return [None] * w.shape[0]
    stats = stats if stats is not None else head_stats(w)
    first = w[:, 1:, 0].mean(-1, dtype=np.float64)  # (H,) rows 1..n-1: row 0's is itself
    last = w[:, :-1, -1].mean(-1, dtype=np.float64)  # (H,) rows 0..n-2
    return patterns_of(stats, first, last)


def patterns_of(
    stats: list[HeadStats], first: np.ndarray, last: np.ndarray
) -> list[tuple[str, float] | None]:
    """`head_patterns` from its numbers: `stats` of the H heads, and each head's mean weight
    on the first token over rows 1..n-1 (`first`, (H,)) and on the last over rows 0..n-2
    (`last`, (H,)). For callers that never hold the weights (attention_core.long.stats)."""
    masses = {
        "previous": np.array([s.previous for s in stats]),  # (H,)
        "first": np.asarray(first, dtype=np.float64),
        "self": np.array([s.diagonal for s in stats]),
        "last": np.asarray(last, dtype=np.float64),
    }
    entropy = np.array([s.entropy for s in stats])  # (H,)
    found: list[tuple[str, float] | None] = []
    for h in range(len(stats)):
        name, mass = max(((k, float(v[h])) for k, v in masses.items()), key=lambda kv: kv[1])
        if mass >= PATTERN_MASS:
            found.append((name, mass))
        elif entropy[h] >= BROAD_ENTROPY:
            found.append(("broad", float(entropy[h])))
        else:
            found.append(None)
    return found


@dataclass(frozen=True)
class Flatness:
    """Why untrained attention looks flat, in a sentence's own numbers."""

    n: int
    score_spread: float  # mean over rows of the std of the scaled scores q·k/√d_k
    low: float  # 5th percentile of the weights (allowed keys only)
    high: float  # 95th percentile
    uniform: float  # 1/n

    @property
    def factor(self) -> float:
        """e^spread: how many times a score one standard deviation up outweighs the mean."""
        return float(np.exp(self.score_spread))


def flatness(weights: np.ndarray) -> Flatness:
    """How spread the scaled scores of `weights` (H, n, n) are, and the weights it gives.

    Softmax forgets a constant per row, so the scores' spread within a row is read off the
    weights: scaled_ij − mean_j scaled_ij = log w_ij − mean_j log w_ij. Keys with weight 0
    (masked) are left out of both. Checked against the trace's scaled scores in
    tests/core/test_stats.py.
    """
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (H, n, n) or (n, n), got shape {w.shape}")
    n = w.shape[-1]
    if n == 0:
        return Flatness(0, 0.0, 0.0, 0.0, 0.0)
    # float32, plain sums instead of nan-aware reductions, percentiles of a sample: 12 heads
    # × 512² weights in ~40 ms instead of ~350 ms (the landing page runs this per sentence)
    allowed = w > 0  # (H, n, n)
    logs = np.log(np.where(allowed, w, 1.0))  # (H, n, n); 0 where masked
    counts = allowed.sum(-1)  # (H, n)
    safe = np.maximum(counts, 1)
    mean = logs.sum(-1) / safe  # (H, n)
    square = (logs * logs).sum(-1) / safe  # (H, n)
    std = np.sqrt(np.maximum(square - mean * mean, 0.0))  # (H, n)
    rows = counts >= 2
    spread = float(std[rows].mean(dtype=np.float64)) if rows.any() else 0.0
    live = w[allowed] if not allowed.all() else w.reshape(-1)
    if live.size > PERCENTILE_SAMPLE:  # every k-th weight: the percentiles to 3 decimals
        live = live[:: live.size // PERCENTILE_SAMPLE]
    low, high = np.percentile(live, [5, 95])
    return Flatness(n=n, score_spread=spread, low=float(low), high=float(high), uniform=1.0 / n)


def head_similarity(weights: np.ndarray) -> np.ndarray:
    """(H, H) similarity of heads: 1 - mean over rows of JSD(row_a ‖ row_b) / ln 2.

    Symmetric, in [0, 1], ones on the diagonal; rows that are all zero (fully masked)
    are skipped.
    """
    w = _as_heads(weights)  # (H, n, n)
    H, n, _ = w.shape
    if n == 0:
        return np.ones((H, H))
    live = w.sum(-1).min(0) > 0  # (n,): rows that carry mass in every head
    w = w[:, live]  # (H, r, n)
    if w.shape[1] == 0:
        return np.ones((H, H))
    a = w[:, None]  # (H, 1, r, n)
    b = w[None, :]  # (1, H, r, n)
    m = (a + b) / 2  # (H, H, r, n)
    jsd = _row_entropy(m) - (_row_entropy(a) + _row_entropy(b)) / 2  # (H, H, r)
    sim = 1.0 - np.clip(jsd.mean(-1) / np.log(2), 0.0, 1.0)  # (H, H)
    sim = (sim + sim.T) / 2  # exact symmetry despite rounding
    np.fill_diagonal(sim, 1.0)
    return sim


def similarity_order(similarity: np.ndarray) -> list[int]:
    """An order of the heads in which similar heads sit next to each other.

    Greedy nearest-neighbour chain starting from the head most similar to all others;
    deterministic (ties go to the lower index).
    """
    s = np.asarray(similarity, dtype=np.float64)
    H = s.shape[0]
    if H == 0:
        return []
    start = int(np.argmax(s.sum(1)))
    order, left = [start], set(range(H)) - {start}
    while left:
        last = order[-1]
        nxt = max(sorted(left), key=lambda j: s[last, j])
        order.append(nxt)
        left.remove(nxt)
    return order


# --- same-word attention: does a head read the rest of its word? ------------------------------
SAME_WORD_SHUFFLES = 64  # shuffled segmentations the baseline averages (seeded: deterministic)


@dataclass(frozen=True)
class SameWord:
    """One head's attention to the other units of each unit's own word, and the same head
    measured with the word boundaries shuffled (the same word lengths in another order)."""

    head: int
    observed: float  # mean over rows with a word partner of the mass on those partners
    shuffled: float  # the same mean under shuffled boundaries (averaged over the shuffles)
    rows: int  # rows with a word partner in the real segmentation

    @property
    def ratio(self) -> float:
        """observed / shuffled: about 1 for a head blind to words (previous-unit, uniform)."""
        return self.observed / self.shuffled if self.shuffled > 0 else float("nan")


def _partner_mass(
    w: np.ndarray, word: np.ndarray, allowed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each segmentation `word` (S, n) of the keys: the mean over rows that have a
    partner (same word, another position, allowed) of the row's mass on its partners, per
    head (S, H) (NaN where no row has one); and how many such rows (S,). w: (H, n, n)."""
    same = (word[:, :, None] == word[:, None, :]) & (word[:, :, None] >= 0)  # (S, n, n)
    same &= ~np.eye(w.shape[-1], dtype=bool) & allowed
    has = same.any(axis=2)  # (S, n)
    rows = has.sum(axis=1)  # (S,)
    mass = np.einsum("hqk,sqk->shq", w, same.astype(w.dtype))  # (S, H, n)
    total = (mass * has[:, None, :]).sum(axis=2)  # (S, H)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / rows[:, None], rows


def same_word(
    weights: np.ndarray,
    word_lengths: list[int],
    *,
    offset: int = 0,
    causal: bool = False,
    shuffles: int = SAME_WORD_SHUFFLES,
    seed: int = 0,
) -> list[SameWord]:
    """Same-word attention of each head of `weights` (H, n, n) or (n, n).

    `word_lengths` segments the positions offset .. offset+Σ-1 into words, in order (jieba's
    words, in characters); positions outside (a [BOS] at 0: offset=1) belong to no word.
    A row's partners are the other positions of its word that it may attend to (with
    `causal`, only the earlier ones). The baseline permutes the words (lengths kept) with a
    seeded generator (every order, each once, when there are at most `shuffles` of them)
    and measures the same head against those boundaries.
    """
    w = _as_heads(np.asarray(weights, dtype=np.float64))
    n = w.shape[-1]
    lengths = [int(x) for x in word_lengths]
    if min(lengths, default=1) < 1 or offset < 0 or offset + sum(lengths) > n:
        raise ValueError(f"words of lengths {lengths} from position {offset} do not fit {n} keys")
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)

    def labels(order: list[int]) -> np.ndarray:
        word = np.full(n, -1)
        start = offset
        for index in order:
            word[start : start + lengths[index]] = index
            start += lengths[index]
        return word

    k = len(lengths)
    if math.factorial(k) <= shuffles:
        orders = [list(order) for order in itertools.permutations(range(k))]
    else:
        rng = np.random.default_rng(seed)
        orders = [list(rng.permutation(k)) for _ in range(shuffles)]
    real, real_rows = _partner_mass(w, labels(list(range(k)))[None], allowed)
    observed, rows = real[0], int(real_rows[0])
    chunk = max(1, 2**22 // (n * n))  # segmentations at a time: (S, n, n) stays ≤ 4 M cells
    parts = [
        _partner_mass(w, np.stack([labels(o) for o in orders[i : i + chunk]]), allowed)
        for i in range(0, len(orders), chunk)
    ]
    masses = np.concatenate([m for m, _ in parts])  # (S, H)
    counts = np.concatenate([c for _, c in parts])  # (S,)
    counted = counts > 0  # (S,) shuffles that leave some row a partner
    baseline = (
        masses[counted].mean(axis=0) if counted.any() else np.full(w.shape[0], np.nan)
    )  # (H,)
    return [
        SameWord(head=h, observed=float(observed[h]), shuffled=float(baseline[h]), rows=rows)
        for h in range(w.shape[0])
    ]
