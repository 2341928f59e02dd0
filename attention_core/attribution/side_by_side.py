"""Is attention an explanation? Each head's attention row beside the attributions of the
same target, as rank agreement (Jain & Wallace 2019, "Attention is not Explanation";
Wiegreffe & Pinter 2019, "Attention is not not Explanation").

For every attention view (raw weights, norm-weighted, rollout) and every attribution
method, per layer × head: Spearman's ρ and Kendall's τ-b between the view's row and the
attribution's magnitude |score| over the same keys, and a permutation p-value for ρ (the
attribution's order shuffled `permutations` times). A head "agrees" when ρ > 0 with
p < ALPHA; a head whose row pours at least SINK_SHARE of its weight onto one key that
carries less than an even share of the attribution attends where nothing is used: a sink
(Clark et al. 2019; Kobayashi et al. 2020 section 5). Knocking each head out says whether
the head matters to the target at all (`views.AttentionViews.ablation`).

Shape legend: L layers, H heads, m keys compared, K rows ranked at once, R permutations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata

from attention_core.attribution.result import METHODS, Attribution
from attention_core.attribution.run import attribute_subject
from attention_core.attribution.subjects import subject_for
from attention_core.attribution.views import AttentionViews, attention_views

__all__ = [
    "ALPHA",
    "SINK_SHARE",
    "VIEWS",
    "Agreement",
    "HeadRow",
    "agreement",
    "head_agreement",
    "head_table",
    "kendall_rows",
    "permutation_p",
    "spearman_rows",
]

VIEWS = ("raw", "norm", "rollout")
ALPHA = 0.05
SINK_SHARE = 0.5
PERMUTATIONS = 999


def spearman_rows(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row of `rows` (K, m) with `y` (m,) → (K,): Pearson's r of their
    average ranks; NaN where either is constant."""
    rx = rankdata(rows, axis=-1)  # (K, m)
    return _pearson(rx, rankdata(y)[None])[:, 0]


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """r of each row of a (K, m) with each row of b (R, m) → (K, R)."""
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)  # (K,), (R,)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (a @ b.T) / (na[:, None] * nb[None])
    return np.clip(r, -1.0, 1.0)


def kendall_rows(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row of `rows` (K, m) with `y` (m,) → (K,): concordant minus
    discordant pairs over the square root of each side's untied pairs; NaN where either is
    constant."""
    upper = np.triu(np.ones((len(y), len(y)), dtype=bool), k=1)  # (m, m) pairs i < j
    sy = np.sign(y[None, :] - y[:, None])[upper]  # (P,)
    sx = np.sign(rows[:, None, :] - rows[:, :, None])[:, upper]  # (K, P)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx @ sy) / np.sqrt((sx**2).sum(-1) * (sy**2).sum())


def permutation_p(rows: np.ndarray, y: np.ndarray, *, permutations: int, seed: int) -> np.ndarray:
    """Two-sided permutation p-value of each row's Spearman ρ with `y` (K,): the share of
    `permutations` shuffles of y whose |ρ| reaches the observed one, counting the observed
    order itself ((1 + hits) / (1 + permutations)); NaN where ρ is."""
    rng = np.random.default_rng(seed)
    ry = rankdata(y)
    shuffled = np.stack([rng.permutation(ry) for _ in range(permutations)])  # (R, m)
    rx = rankdata(rows, axis=-1)  # (K, m)
    observed = _pearson(rx, ry[None])[:, 0]  # (K,)
    null = _pearson(rx, shuffled)  # (K, R)
    hits = (np.abs(null) >= np.abs(observed)[:, None] - 1e-12).sum(-1)
    return np.where(np.isnan(observed), np.nan, (1 + hits) / (1 + permutations))


@dataclass(frozen=True)
class HeadRow:
    """One head's line of the agreement table (against the first attribution)."""

    layer: int
    head: int
    rho: float  # raw attention vs |attribution|
    tau: float
    p: float
    norm_rho: float  # norm-weighted attention vs |attribution|
    ablation: float  # target with the head knocked out − as it is
    verdict: str  # "agrees", "disagrees" or "sink"
    sink: str | None  # the key a sink pours its weight onto


@dataclass(frozen=True)
class Agreement:
    """Attention views and attributions of one target, and how far they agree."""

    attributions: dict[str, Attribution]  # method → its attribution
    views: AttentionViews
    rho: np.ndarray  # (A, V, L, H): attribution × view (VIEWS) × layer × head
    tau: np.ndarray  # (A, V, L, H)
    p: np.ndarray  # (A, V, L, H) permutation p-value of ρ
    table: list[HeadRow]  # every head, by layer then head

    @property
    def methods(self) -> list[str]:
        return list(self.attributions)

    def agreeing(self) -> list[HeadRow]:
        return [row for row in self.table if row.verdict == "agrees"]

    def sinks(self) -> list[HeadRow]:
        return [row for row in self.table if row.verdict == "sink"]


def agreement(
    model: Any,
    text: str,
    *,
    tokenizer: Any = None,
    target: int | str | None = None,
    position: int = -1,
    methods: Sequence[str] = METHODS,
    steps: int = 32,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Agreement:
    """Attribute one target with each of `methods` (`attribute`'s arguments), read the
    attention views of the same target, and rank-compare them head by head (see the
    module's doc). `progress(done, total)` is called after each method and each batch of
    heads knocked out (a page's bar; raising there cancels)."""
    if not methods or any(m not in METHODS for m in methods):
        raise ValueError(f"methods must be some of {', '.join(METHODS)}, got {methods!r}")
    second = target if isinstance(target, str) else None
    subject = subject_for(model, text, tokenizer, second)
    done = 0
    total = len(methods) + 1

    def report() -> None:
        if progress is not None:
            progress(done, total)

    attributions = {}
    for method in methods:
        attributions[method] = attribute_subject(
            subject, target=target, position=position, method=method, steps=steps
        )
        done += 1
        report()
    first = attributions[methods[0]]
    views = attention_views(subject, first)
    done += 1
    report()
    return compare(attributions, views, permutations=permutations, seed=seed)


MIN_KEYS = 4  # fewer keys than this rank too coarsely to say anything: NaN


def head_agreement(attribution: Attribution, attentions: np.ndarray) -> np.ndarray:
    """(L, H) Spearman ρ of each head's raw attention row at `attribution`'s target with
    the attribution's magnitude, over the keys the row reads (a causal row: up to its
    position; an encoder: the mean of every row); NaN under MIN_KEYS keys. What the head
    atlas keeps per sentence (attention_core.atlas.rows); the same ρ as `agreement`'s."""
    L, H, n, _ = attentions.shape
    if attribution.kind == "encoder":
        keys, rows = np.arange(n), attentions.mean(axis=2)  # (L, H, n)
    else:
        p = attribution.position
        keys, rows = np.arange(p + 1), attentions[:, :, p, : p + 1]  # (L, H, m)
    if len(keys) < MIN_KEYS:
        return np.full((L, H), np.nan)
    y = np.abs(attribution.scores[keys])
    return spearman_rows(rows.reshape(L * H, -1).astype(np.float64), y).reshape(L, H)


def compare(
    attributions: dict[str, Attribution],
    views: AttentionViews,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> Agreement:
    """The rank statistics of every view against every attribution, and the table."""
    L, H, _ = views.raw.shape
    keys = views.keys
    rho = np.full((len(attributions), len(VIEWS), L, H), np.nan)
    tau, p = rho.copy(), rho.copy()
    for a, attribution in enumerate(attributions.values()):
        y = np.abs(attribution.scores[keys])  # (m,)
        for v, name in enumerate(VIEWS):
            rows = _view_rows(views, name)  # (L·H, m)
            rho[a, v] = spearman_rows(rows, y).reshape(L, H)
            tau[a, v] = kendall_rows(rows, y).reshape(L, H)
            p[a, v] = permutation_p(rows, y, permutations=permutations, seed=seed).reshape(L, H)
    first = next(iter(attributions.values()))
    table = _table(first, views, rho[0], tau[0], p[0])
    return Agreement(dict(attributions), views, rho, tau, p, table)


def head_table(result: Agreement, method: str) -> list[HeadRow]:
    """The table of every head against `method`'s attribution (`result.table` is the
    first method's)."""
    if method not in result.attributions:
        raise ValueError(f"method must be one of {list(result.attributions)}, got {method!r}")
    a = list(result.attributions).index(method)
    attribution = result.attributions[method]
    return _table(attribution, result.views, result.rho[a], result.tau[a], result.p[a])


def _view_rows(views: AttentionViews, name: str) -> np.ndarray:
    """A view's rows, one per head (L·H, m); rollout's layer row repeated for its heads."""
    L, H, m = views.raw.shape
    if name == "rollout":
        return np.repeat(views.rollout[:, None], H, axis=1).reshape(L * H, m)
    return getattr(views, name).reshape(L * H, m)


def _table(
    attribution: Attribution,
    views: AttentionViews,
    rho: np.ndarray,
    tau: np.ndarray,
    p: np.ndarray,
) -> list[HeadRow]:
    """One HeadRow per head; rho, tau, p (V, L, H) of the first attribution."""
    keys = views.keys
    magnitude = np.abs(attribution.scores[keys])  # (m,)
    share = magnitude / max(float(magnitude.sum()), 1e-12)  # (m,)
    even = 1.0 / len(keys)
    rows = []
    L, H, _ = views.raw.shape
    for layer in range(L):
        for head in range(H):
            row = views.raw[layer, head]  # (m,)
            top = int(np.argmax(row))
            agrees = rho[0, layer, head] > 0 and p[0, layer, head] < ALPHA
            sink = row[top] >= SINK_SHARE and share[top] < even
            verdict = "agrees" if agrees else "sink" if sink else "disagrees"
            rows.append(
                HeadRow(
                    layer=layer,
                    head=head,
                    rho=float(rho[0, layer, head]),
                    tau=float(tau[0, layer, head]),
                    p=float(p[0, layer, head]),
                    norm_rho=float(rho[1, layer, head]),
                    ablation=float(views.ablation[layer, head]),
                    verdict=verdict,
                    sink=attribution.tokens[int(keys[top])] if verdict == "sink" else None,
                )
            )
    return rows
