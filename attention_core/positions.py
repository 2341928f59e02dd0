"""Word order: self-attention alone cannot see it; positional encoding puts it back.

Without positions each token's vector depends only on its text, so shuffling the words
only shuffles the rows and columns of the attention matrix: with P the permutation matrix
(P[i, perm[i]] = 1), the shuffled sentence's weights are exactly P·A·Pᵀ. Attention is
permutation-equivariant. Adding the sinusoidal positional encoding (Vaswani et al. 2017,
section 3.5) makes each vector depend on where the token stands, and the identity breaks.

The check always uses bidirectional attention: a causal mask is itself a statement about
order (token i sees j <= i), so with it the identity fails even without positions.

Shape legend: H heads, n tokens, C embed_dim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from attention_core.embedding import sinusoidal_positions
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.pipeline import build_module, forward
from attention_core.settings import ModelSettings
from attention_core.tokenize import tokenize

__all__ = [
    "OrderRun",
    "PermutationResult",
    "RepeatGroup",
    "permutation",
    "permutation_check",
    "positional_table",
    "repeated_tokens",
]


def permutation(n: int, seed: int) -> np.ndarray:
    """(n,) a permutation of 0..n-1, a pure function of (n, seed); never the identity when
    n >= 2, so every shuffle moves at least two words."""
    if not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    rng = np.random.default_rng(int(seed) % (2**63))
    identity = np.arange(n)
    perm = rng.permutation(n)
    while n >= 2 and np.array_equal(perm, identity):
        perm = rng.permutation(n)  # the same generator draws on: still a function of the seed
    return perm


def _check_perm(perm: Sequence[int] | np.ndarray, n: int) -> np.ndarray:
    p = np.asarray(perm)
    if p.shape != (n,) or not np.array_equal(np.sort(p), np.arange(n)):
        raise ValueError(f"perm must be a permutation of 0..{n - 1} (length {n}), got {p.tolist()}")
    return p.astype(np.int64)


@dataclass(frozen=True)
class OrderRun:
    """One embedding mode (with or without positions): original vs shuffled weights."""

    original: np.ndarray  # (H, n, n) weights of the sentence as written
    shuffled: np.ndarray  # (H, n, n) weights of the shuffled sentence (its own order)
    restored: np.ndarray  # (H, n, n) shuffled weights put back in the original order: Pᵀ·S·P
    max_difference: float  # max |restored - original|: 0 means "only permuted"


@dataclass(frozen=True)
class RepeatGroup:
    """A token that occurs more than once, and how different its rows are."""

    token: str
    positions: list[int]
    row_difference_plain: float  # max |row_i - row_j| over its occurrences, no positions
    row_difference_positional: float  # the same with positions added


@dataclass(frozen=True)
class PermutationResult:
    """`permutation_check`'s answer for one sentence and one permutation."""

    tokens: list[str]  # labels in the original order
    perm: np.ndarray  # (n,) shuffled position i holds original token perm[i]
    plain: OrderRun  # without positional encoding
    positional: OrderRun  # with sinusoidal positional encoding
    repeats: list[RepeatGroup]

    @property
    def shuffled_tokens(self) -> list[str]:
        return [self.tokens[i] for i in self.perm]


def repeated_tokens(tokens: Sequence[str]) -> dict[str, list[int]]:
    """token → its positions, for every token that occurs more than once."""
    where: dict[str, list[int]] = {}
    for i, t in enumerate(tokens):
        where.setdefault(t, []).append(i)
    return {t: pos for t, pos in where.items() if len(pos) > 1}


def _row_spread(weights: np.ndarray, rows: list[int]) -> float:
    picked = weights[:, rows, :]  # (H, r, n)
    return float(np.abs(picked - picked[:, :1, :]).max())


def permutation_check(
    settings: ModelSettings, perm: Sequence[int] | np.ndarray, *, max_tokens: int = MAX_TOKENS
) -> PermutationResult:
    """Run the sentence of `settings` as written and shuffled by `perm`, without and with
    positional encoding, through the same seeded module (bidirectional, see the docstring).

    `perm` must be a permutation of the token positions: position i of the shuffled
    sentence holds original token perm[i]. `settings.positional` and `settings.causal`
    are ignored; both embeddings are computed.
    """
    tokens = tokenize(settings.text[:MAX_TEXT_CHARS], settings.tokenizer)[:max_tokens]
    labels = [t.label for t in tokens]
    n = len(labels)
    p = _check_perm(perm, n)
    shuffled_labels = [labels[i] for i in p]
    module = build_module(settings)
    back = np.argsort(p)  # inverse permutation: original position j sits at back[j]

    runs: list[OrderRun] = []
    for positional in (False, True):
        run = replace(settings, causal=False, positional=positional)
        weights = forward([labels, shuffled_labels], run, module=module).weights  # (2, H, n, n)
        original, shuffled = weights.numpy().astype(np.float32)  # (H, n, n) each
        # Pᵀ·S·P as indexing: restored[a, b] = shuffled[back[a], back[b]]
        restored = shuffled[:, back][:, :, back]  # (H, n, n)
        diff = float(np.abs(restored - original).max(initial=0.0))
        runs.append(OrderRun(original, shuffled, restored, diff))

    repeats = [
        RepeatGroup(
            token,
            rows,
            _row_spread(runs[0].original, rows),
            _row_spread(runs[1].original, rows),
        )
        for token, rows in repeated_tokens(labels).items()
    ]
    return PermutationResult(labels, p, runs[0], runs[1], repeats)


def positional_table(n: int, embed_dim: int) -> np.ndarray:
    """(n, embed_dim) float32: the sinusoidal encoding added to each position's vector."""
    if n < 0 or embed_dim < 1:
        raise ValueError(f"need n >= 0 and embed_dim >= 1, got n={n}, embed_dim={embed_dim}")
    return sinusoidal_positions(n, embed_dim).numpy().astype(np.float32)  # (n, C)
