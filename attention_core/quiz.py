"""Quiz rounds: "which key does this query attend to most?", drawn from real weights.

A round is a pure function of the weights, a seed and the round number, so a class that
opens the same link gets the same questions, and the page can rebuild the round on every
rerun instead of trusting stored state. Ties count: with repeated tokens and no positional
encoding two keys carry exactly the same weight, and naming either one is right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TIE_TOLERANCE", "QuizRound", "new_round"]

TIE_TOLERANCE = 1e-6  # weights this close to the row's maximum also count as the answer


@dataclass(frozen=True)
class QuizRound:
    """One question: head `head`, query row `query`; `answers` are the keys with the top weight."""

    head: int
    query: int
    answer: int  # the first key with the largest weight
    answers: tuple[int, ...]  # every key within TIE_TOLERANCE of the largest weight
    weight: float  # the largest weight itself
    choices: int  # keys the query may attend to (nonzero weight): 1 / choices = chance

    @property
    def chance(self) -> float:
        """The probability that a blind guess among the allowed keys is right."""
        return len(self.answers) / max(self.choices, 1)

    def is_correct(self, guess: int | None) -> bool:
        """True when `guess` is one of the keys with the largest weight."""
        return guess is not None and int(guess) in self.answers


def new_round(weights: np.ndarray, *, seed: int = 0, round_index: int = 0) -> QuizRound:
    """A seeded random (head, query) of `weights` (H, n, n), n >= 2, and its answer.

    Queries whose row has a single nonzero weight (the first token under a causal mask)
    are skipped when another query exists: their answer would be given away.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    if w.ndim != 3 or w.shape[1] != w.shape[2] or w.shape[0] < 1:
        raise ValueError(f"weights must have shape (H, n, n) or (n, n), got {np.shape(weights)}")
    H, n, _ = w.shape
    if n < 2:
        raise ValueError(f"a quiz needs at least 2 tokens, got {n}")
    if round_index < 0:
        raise ValueError(f"round_index must be >= 0, got {round_index}")
    rng = np.random.default_rng([int(seed) % 2**63, int(round_index)])
    head = int(rng.integers(H))
    allowed = (w[head] > 0).sum(-1)  # (n,): keys each query can see
    candidates = np.flatnonzero(allowed >= 2)
    if candidates.size == 0:
        candidates = np.arange(n)
    query = int(rng.choice(candidates))
    row = w[head, query]  # (n,)
    top = float(row.max())
    answers = tuple(int(j) for j in np.flatnonzero(row >= top - TIE_TOLERANCE))
    return QuizRound(
        head=head,
        query=query,
        answer=answers[0],
        answers=answers,
        weight=top,
        choices=int(allowed[query]),
    )
