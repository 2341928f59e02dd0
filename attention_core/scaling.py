"""Why step (3) divides the scores by √d_k: a small, seeded Monte-Carlo experiment.

The article's argument (step 3, 縮放): every score is a dot product of d_k pairs of
numbers, so its spread grows with d_k; large scores push softmax towards one-hot, and a
near one-hot softmax has almost no gradient. Vaswani et al. 2017, section 3.2.1, footnote 4:
if q and k have independent N(0, 1) components, q·k has mean 0 and variance d_k, so
dividing by √d_k brings the spread back to 1 whatever d_k is.

`scaling_experiment` draws such q and k for each d_k and measures, with and without the
division, how peaked the softmax over `n_keys` keys becomes. Pure NumPy, seeded, fast.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DEFAULT_DIMS",
    "ScalingResult",
    "scaled_divisor",
    "scaling_experiment",
]

DEFAULT_DIMS: tuple[int, ...] = tuple(2**p for p in range(1, 11))  # 2, 4, …, 1024
MAX_DIM = 4096
MAX_KEYS = 1024
MAX_SAMPLES = 20_000
# The spread estimate is as precise as S·d_k is large (queries × dimensions; the keys of
# one query share its q), so small d_k, which are cheap, get up to this many query
# dimensions: every d_k's std then carries about the same ~1% sampling error.
QUERY_DIM_BUDGET = 8192


@dataclass(frozen=True)
class ScalingResult:
    """Per d_k (one entry per `dims`): how spread the scores are and how peaked softmax is.

    Entropies are normalised by log(n_keys): 1 = uniform over the keys, 0 = one-hot.
    "scaled" divides q·k by √d_k · temperature; "unscaled" uses q·k as it is (divisor 1),
    as the app's "scaling off" view does.
    """

    dims: np.ndarray  # (m,) int: the d_k values
    queries: np.ndarray  # (m,) int: queries drawn for each d_k (>= n_samples)
    dot_std: np.ndarray  # (m,) std of q·k (unscaled)
    scaled_std: np.ndarray  # (m,) std of q·k / √d_k
    entropy_unscaled: np.ndarray  # (m,) mean normalised row entropy
    entropy_scaled: np.ndarray  # (m,)
    max_weight_unscaled: np.ndarray  # (m,) mean largest weight of a row
    max_weight_scaled: np.ndarray  # (m,)
    n_keys: int
    n_samples: int  # the least number of queries per d_k
    temperature: float
    seed: int

    @property
    def sqrt_dims(self) -> np.ndarray:
        """√d_k: the spread q·k is expected to have (the reference line)."""
        return np.sqrt(self.dims.astype(np.float64))


def scaled_divisor(head_dim: int, *, temperature: float = 1.0) -> float:
    """What the scores are divided by: √d_k · temperature (T = 1 is the article's)."""
    if head_dim < 1:
        raise ValueError(f"head_dim must be >= 1, got {head_dim}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return math.sqrt(head_dim) * float(temperature)


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis (subtract the row maximum first)."""
    z = logits - logits.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def _peakedness(logits: np.ndarray) -> tuple[float, float]:
    """Mean normalised row entropy and mean max weight of softmax(logits), (S, n) rows."""
    p = _softmax_rows(logits)  # (S, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)  # 0·log 0 = 0
    entropy = terms.sum(-1) / math.log(p.shape[-1])  # (S,)
    # ≥ 0, and +0.0 for one-hot rows (-1·log 1 = -0.0, which prints as "-0.00")
    return float(np.maximum(entropy.mean(), 0.0)), float(p.max(-1).mean())


def _check(dims: Sequence[int], n_keys: int, n_samples: int, temperature: float) -> list[int]:
    values = list(dims)
    if not values:
        raise ValueError("dims must hold at least one d_k, e.g. (2, 4, 8, …, 1024)")
    for d in values:
        if isinstance(d, bool) or not isinstance(d, int | np.integer) or not 1 <= d <= MAX_DIM:
            raise ValueError(f"every d_k must be an integer from 1 to {MAX_DIM}, got {d!r}")
    if isinstance(n_keys, bool) or not isinstance(n_keys, int) or not 2 <= n_keys <= MAX_KEYS:
        raise ValueError(f"n_keys must be an integer from 2 to {MAX_KEYS}, got {n_keys!r}")
    if (
        isinstance(n_samples, bool)
        or not isinstance(n_samples, int)
        or not 2 <= n_samples <= MAX_SAMPLES
    ):
        raise ValueError(f"n_samples must be an integer from 2 to {MAX_SAMPLES}, got {n_samples!r}")
    if not (
        isinstance(temperature, int | float) and math.isfinite(temperature) and temperature > 0
    ):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    return [int(d) for d in values]


def scaling_experiment(
    dims: Sequence[int] = DEFAULT_DIMS,
    *,
    n_keys: int = 16,
    n_samples: int = 256,
    temperature: float = 1.0,
    seed: int = 0,
) -> ScalingResult:
    """For each d_k: at least `n_samples` queries against `n_keys` keys, q, k ~ N(0, 1)^d_k.

    Softmax is taken over each query's `n_keys` scores, once as they are and once divided
    by √d_k · temperature. Small d_k get more queries (see QUERY_DIM_BUDGET).
    Each d_k has its own generator seeded by (seed, d_k), so a d_k's numbers do not
    depend on which other d_k are asked for. Returns per-d_k statistics (see
    `ScalingResult`); the same arguments always give the same result.
    """
    values = _check(dims, n_keys, n_samples, temperature)
    T = float(temperature)
    stats: dict[str, list[float]] = {
        name: []
        for name in (
            "dot_std",
            "scaled_std",
            "entropy_unscaled",
            "entropy_scaled",
            "max_weight_unscaled",
            "max_weight_scaled",
        )
    }
    queries = [max(n_samples, QUERY_DIM_BUDGET // d) for d in values]
    for d, S in zip(values, queries, strict=True):
        rng = np.random.default_rng([int(seed), d])
        # float32 halves the cost of drawing the numbers, which is most of the run time
        q = rng.standard_normal((S, d, 1), dtype=np.float32)  # (S, d, 1)
        k = rng.standard_normal((S, n_keys, d), dtype=np.float32)  # (S, n, d)
        dots = (k @ q)[..., 0].astype(np.float64)  # (S, n): one score per query-key pair
        root = math.sqrt(d)
        entropy_u, max_u = _peakedness(dots)
        entropy_s, max_s = _peakedness(dots / (root * T))
        stats["dot_std"].append(float(dots.std()))
        stats["scaled_std"].append(float((dots / root).std()))
        stats["entropy_unscaled"].append(entropy_u)
        stats["entropy_scaled"].append(entropy_s)
        stats["max_weight_unscaled"].append(max_u)
        stats["max_weight_scaled"].append(max_s)
    return ScalingResult(
        dims=np.asarray(values, dtype=np.int64),
        queries=np.asarray(queries, dtype=np.int64),
        **{name: np.asarray(v, dtype=np.float64) for name, v in stats.items()},
        n_keys=n_keys,
        n_samples=n_samples,
        temperature=T,
        seed=int(seed),
    )
