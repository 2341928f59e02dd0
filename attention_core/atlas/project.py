"""Queries and keys of one head in one picture (AttentionViz, Yeh et al. 2023, "AttentionViz:
A Global View of Transformer Attention", section 4.1).

A head's attention of query q on key k is softmax over keys of q·k/√D. Two changes leave
every attention row as it is, and make q·k readable as closeness in one joint space:

- **translate the keys** so their mean is the queries' mean: q·(k + c) = q·k + q·c adds
  the same number to a whole row, which softmax forgets;
- **scale** q by s and k by 1/s, s = √(mean‖k‖ / mean‖q‖): q·k is unchanged and both
  clouds get the same mean norm, so ‖q − k‖² = ‖q‖² + ‖k‖² − 2 q·k follows −q·k up to
  the keys' own norms (rank correlation per query row 0.3-0.7 on the project's heads,
  tests/core/atlas/test_project.py); queries and keys form one cloud instead of two apart.

Then queries and keys are projected together onto their first two principal components
(NumPy's SVD; no extra package), or laid out by t-SNE (scikit-learn's, seeded, started from
those components: `method="tsne"`), which keeps each point's nearest neighbours near and
so shows clusters PCA's two axes flatten, at the price of distances between clusters that
mean little; its `explained` is 0, 0. `collect` runs a model over sentences and gathers the
points with their tokens, the sentence each came from and, for the reader, each
character's position in its jieba word.

Shape legend: N tokens (over all sentences), D head size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.atlas.models import AtlasModel

__all__ = ["METHODS", "QKPoints", "collect", "joint_projection", "shared_space"]

METHODS = ("pca", "tsne")


def shared_space(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(q', k', s): keys moved to the queries' mean, then q·s and k/s with s making the mean
    norms equal. q (N, D), k (M, D) → (N, D), (M, D); every softmax row over keys unchanged."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or not len(q) or not len(k):
        raise ValueError(f"q and k must be (N, D) and (M, D), got {q.shape} and {k.shape}")
    k = k - k.mean(0) + q.mean(0)  # (M, D)
    qn, kn = np.linalg.norm(q, axis=1).mean(), np.linalg.norm(k, axis=1).mean()
    s = float(np.sqrt(kn / qn)) if qn > 0 and kn > 0 else 1.0
    return q * s, k / s, s


def joint_projection(
    q: np.ndarray, k: np.ndarray, method: str = "pca"
) -> tuple[np.ndarray, np.ndarray]:
    """q (N, D) and k (M, D) in the shared space, projected together on two principal
    components: ((N + M, 2) coordinates, queries first; (2,) share of variance each axis
    explains); or laid out by t-SNE (`method="tsne"`; explained 0, 0)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    q2, k2, _ = shared_space(q, k)
    x = np.concatenate([q2, k2])  # (N + M, D)
    x = x - x.mean(0)
    if method == "tsne" and len(x) >= 4:  # fewer points have no neighbourhoods to keep
        from sklearn.manifold import TSNE
        from threadpoolctl import threadpool_limits

        perplexity = min(30.0, (len(x) - 1) / 3)  # 30, or what so few points allow
        tsne = TSNE(2, perplexity=perplexity, init="pca", random_state=0)
        # one OpenMP thread: Barnes-Hut sums its gradient over threads in no fixed order, so
        # two threads gave another layout from the same seed (a page vs its test in CI)
        with threadpool_limits(limits=1):
            return tsne.fit_transform(x), np.zeros(2)  # (N + M, 2)
    _, singular, vt = np.linalg.svd(x, full_matrices=False)  # vt: (D, D)
    axes = vt[:2]  # (2, D)
    if axes.shape[0] < 2:  # D = 1: the second axis is zero
        axes = np.vstack([axes, np.zeros_like(axes)])
    variance = singular**2
    explained = variance[:2] / variance.sum() if variance.sum() > 0 else np.zeros(2)
    return x @ axes.T, np.pad(explained, (0, 2 - len(explained)))


@dataclass(frozen=True)
class QKPoints:
    """One head's queries and keys over sentences, projected (`xy`: queries, then keys)."""

    xy: np.ndarray  # (2N, 2)
    explained: np.ndarray  # (2,)
    tokens: list[str]  # (N,)
    sentence: np.ndarray  # (N,) int: index into `texts`
    position: np.ndarray  # (N,) int: the token's place in its sentence
    word_position: np.ndarray  # (N,) int: 0 = first character of its word; -1 unknown
    texts: list[str]
    mine: int  # index of the user's sentence in `texts`, -1 when none

    def context(self, i: int, width: int = 12) -> str:
        """Token i in its sentence: the tokens around it, itself in 【】."""
        same = np.flatnonzero(self.sentence == self.sentence[i])
        p = int(self.position[i])
        around = [self.tokens[j] for j in same]
        left = " ".join(around[max(0, p - width // 2) : p])
        right = " ".join(around[p + 1 : p + 1 + width // 2])
        return f"{left} 【{around[p]}】 {right}".strip()


def _word_positions(model: AtlasModel, text: str, n: int) -> list[int]:
    """Each token's place in its jieba word (the reader's units after [BOS]); -1 elsewhere."""
    if model.name != "reader":
        return [-1] * n
    from attention_core.reader.words import word_lengths

    places = [-1]  # [BOS]
    for size in word_lengths(text):
        places += list(range(size))
    return (places + [-1] * n)[:n]


def collect(
    model: AtlasModel,
    texts: Sequence[str],
    layer: int,
    head: int,
    *,
    mine: str | None = None,
    method: str = "pca",
) -> QKPoints:
    """q and k of head (layer, head) on every token of `texts` (and of `mine`, the user's
    sentence, last), projected together (`method`: see `joint_projection`)."""
    every = [*texts, *([mine] if mine else [])]
    qs, ks, tokens, sentence, position, words = [], [], [], [], [], []
    for s, text in enumerate(every):
        q, k, reading = model.qk(text, layer, head)  # (n, D) each
        n = len(reading.tokens)
        qs.append(q[:n])
        ks.append(k[:n])
        tokens += reading.tokens
        sentence += [s] * n
        position += list(range(n))
        words += _word_positions(model, text, n)
    if not tokens:
        raise ValueError("no tokens to project")
    xy, explained = joint_projection(np.concatenate(qs), np.concatenate(ks), method)  # (2N, 2)
    return QKPoints(
        xy=xy,
        explained=explained,
        tokens=tokens,
        sentence=np.array(sentence),
        position=np.array(position),
        word_position=np.array(words),
        texts=list(every),
        mine=len(every) - 1 if mine else -1,
    )
