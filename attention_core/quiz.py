"""Quiz rounds: "which key does this query attend to most?", drawn from real weights.

A round is a pure function of the weights, a seed and the round number, so a class that
opens the same link gets the same questions, and the page can rebuild the round on every
rerun instead of trusting stored state. Ties count: with repeated tokens and no positional
encoding two keys carry exactly the same weight, and naming either one is right.

A round worth playing is decisive: the right key's weight is at least DECISIVE_MARGIN above
the runner-up's (`decisive_rows`), so nobody is asked to tell 0.30 from 0.29. `draw_round`
draws such rounds from a list of sources (`QuizSource`: any (H, n, n) attention with its
token labels): heads of a trained toy model, a pretrained model's heads with clear patterns,
the sentence's untrained heads where one of their rows happens to be decisive. Adding a
source is one more entry in that list. After a guess the clue is the row's scores
(`row_scores`): q·k/√d_k up to the one constant per row that softmax ignores, read back
exactly from the weights, so every source can show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.stats import head_patterns

__all__ = [
    "DECISIVE_MARGIN",
    "TIE_TOLERANCE",
    "QuizRound",
    "QuizSource",
    "TopTokenRound",
    "decisive_rows",
    "draw_round",
    "new_round",
    "pattern_heads",
    "row_scores",
    "top_token_round",
]

TIE_TOLERANCE = 1e-6  # weights this close to the row's maximum also count as the answer
# The right key must carry at least this much more weight than the runner-up (0.15 = 15
# percentage points): a guess is then about the pattern, not about rounding.
DECISIVE_MARGIN = 0.15


@dataclass(frozen=True)
class QuizRound:
    """One question: head `head`, query row `query`; `answers` are the keys with the top weight."""

    head: int
    query: int
    answer: int  # the first key with the largest weight
    answers: tuple[int, ...]  # every key within TIE_TOLERANCE of the largest weight
    weight: float  # the largest weight itself
    choices: int  # keys the query may attend to (nonzero weight): 1 / choices = chance
    runner_up: float = 0.0  # the second-largest weight of the row (another key's)
    source: int = 0  # which of `draw_round`'s sources the round comes from

    @property
    def margin(self) -> float:
        """How far the answer's weight lies above the runner-up's."""
        return self.weight - self.runner_up

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


@dataclass(frozen=True)
class QuizSource:
    """Attention to ask about: weights (H, n, n) of some heads on one token sequence.

    `kind` says where they come from ("trained", "pretrained", "untrained", ...; the page
    names it), `heads` names each panel as (layer, head) of its model, `labels` are the n
    `index:token` labels. `unknown`: queries never asked about, the tokens the model read
    as [UNK] (a row of an unknown token says nothing about the text).
    """

    kind: str
    weights: np.ndarray  # (H, n, n) row-stochastic
    labels: list[str]
    heads: list[tuple[int, int]]  # (layer, head) of each of the H panels
    unknown: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        w = np.asarray(self.weights)
        if w.ndim != 3 or w.shape[1] != w.shape[2]:
            raise ValueError(f"weights must have shape (H, n, n), got {w.shape}")
        if len(self.labels) != w.shape[1] or len(self.heads) != w.shape[0]:
            raise ValueError(
                f"need {w.shape[1]} labels and {w.shape[0]} head names, "
                f"got {len(self.labels)} and {len(self.heads)}"
            )


def decisive_rows(weights: np.ndarray, *, margin: float = DECISIVE_MARGIN) -> np.ndarray:
    """(k, 2) (head, query) pairs of `weights` (H, n, n) whose largest weight lies at least
    `margin` above the second largest, among rows that may look at 2 keys or more."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    if w.shape[-1] < 2:
        return np.zeros((0, 2), dtype=np.int64)
    top2 = -np.sort(-w, axis=-1)[..., :2]  # (H, n, 2): largest, second largest
    allowed = (w > 0).sum(-1)  # (H, n)
    ok = (top2[..., 0] - top2[..., 1] >= margin) & (allowed >= 2)  # (H, n)
    return np.argwhere(ok)  # (k, 2)


def row_scores(row: np.ndarray) -> np.ndarray:
    """The scaled scores q·k/√d_k of one softmax row, less their mean: log w − mean log w.

    Softmax ignores a constant added to a row, so this is exactly what the scores looked
    like to it (tests/pages/test_page_quiz.py checks it against a trace's scaled scores). Keys
    with weight 0 (masked) are NaN and left out of the mean.
    """
    w = np.asarray(row, dtype=np.float64)
    out = np.full(w.shape, np.nan)
    live = w > 0
    if live.any():
        logs = np.log(w[live])
        out[live] = logs - logs.mean()
    return out


def draw_round(
    sources: Sequence[QuizSource],
    *,
    seed: int = 0,
    round_index: int = 0,
    margin: float = DECISIVE_MARGIN,
) -> QuizRound | None:
    """A seeded decisive round from `sources`, or None when no source has a decisive row.

    The source is drawn first (each source with decisive rows equally likely, so a few
    decisive untrained rows do not crowd out a trained model), then one of its decisive
    (head, query) rows.
    """
    if round_index < 0:
        raise ValueError(f"round_index must be >= 0, got {round_index}")
    found = [(i, decisive_rows(s.weights, margin=margin)) for i, s in enumerate(sources)]
    found = [
        (i, rows[~np.isin(rows[:, 1], list(sources[i].unknown))]) for i, rows in found
    ]  # never a row of an [UNK] query
    found = [(i, rows) for i, rows in found if len(rows)]
    if not found:
        return None
    rng = np.random.default_rng([int(seed) % 2**63, int(round_index), 13])
    index, rows = found[int(rng.integers(len(found)))]
    head, query = (int(v) for v in rows[int(rng.integers(len(rows)))])
    row = np.asarray(sources[index].weights[head, query], dtype=np.float64)  # (n,)
    order = np.argsort(-row, kind="stable")
    top = float(row[order[0]])
    return QuizRound(
        head=head,
        query=query,
        answer=int(order[0]),
        answers=(int(order[0]),),  # decisive: no other key is within the margin
        weight=top,
        choices=int((row > 0).sum()),
        runner_up=float(row[order[1]]),
        source=index,
    )


def pattern_heads(attentions: np.ndarray) -> list[tuple[int, int]]:
    """(layer, head) of every head of `attentions` (L, H, n, n) with a clear pattern other
    than "broad" (`stats.head_patterns`: previous token, first, itself, last), in order."""
    w = np.asarray(attentions)
    if w.ndim != 4:
        raise ValueError(f"attentions must have shape (L, H, n, n), got {w.shape}")
    return [
        (layer, head)
        for layer in range(w.shape[0])
        for head, found in enumerate(head_patterns(w[layer]))
        if found is not None and found[0] != "broad"
    ]


@dataclass(frozen=True)
class TopTokenRound:
    """ "Attention's strongest key is `lure`; which token moved the prediction most?" (the
    Is attention an explanation? page): `answers` are the tokens with the largest
    attribution magnitude, ties within TIE_TOLERANCE of it included."""

    answer: int  # the first token with the largest |attribution|
    answers: tuple[int, ...]
    lure: int  # the key the attention row weighs most
    choices: int  # tokens to choose from: 1 / choices = chance

    def is_correct(self, guess: int | None) -> bool:
        return guess is not None and guess in self.answers

    @property
    def attention_was_right(self) -> bool:
        """Whether guessing by attention alone would have been right."""
        return self.lure in self.answers


def top_token_round(scores: np.ndarray, attention: np.ndarray) -> TopTokenRound:
    """The question from one target's attribution `scores` (m,) and an attention row (m,)
    over the same tokens."""
    magnitude = np.abs(np.asarray(scores, dtype=np.float64))
    row = np.asarray(attention, dtype=np.float64)
    if magnitude.ndim != 1 or magnitude.shape != row.shape or not magnitude.size:
        raise ValueError("scores and attention need one value per token, the same tokens")
    top = float(magnitude.max())
    answers = tuple(int(i) for i in np.flatnonzero(magnitude >= top - TIE_TOLERANCE * max(1, top)))
    return TopTokenRound(answers[0], answers, int(np.argmax(row)), int(magnitude.size))
