"""The article's worked example, by hand: an attention matrix mixes token vectors.

The article (../shared/seed) cuts 中和有一個永和路 into 中和 / 有 / 一個 / 永和路, assumes an
attention matrix, and writes each token's new representation as a weighted sum:

    中和 = 0.5×中和 + 0×有 + 0×一個 + 0.5×永和路

Here the matrix and small token vectors are plain NumPy arrays the user edits; nothing is
learned and no torch is needed. Row i of the matrix says how much token i draws from every
token, so a valid row is non-negative and sums to 1 (what softmax guarantees in a real model).

Shape legend: n tokens, d the size of a hand-made vector.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.tokenize import token_labels as axis_labels  # the app's one label rule

__all__ = [
    "ARTICLE_MATRIX",
    "ARTICLE_TOKENS",
    "ARTICLE_VECTORS",
    "MAX_HANDMADE_DIM",
    "MAX_HANDMADE_TOKENS",
    "ROW_TOLERANCE",
    "RowProblem",
    "axis_labels",
    "carry_vectors",
    "check_rows",
    "default_matrix",
    "default_vectors",
    "format_weight",
    "mix",
    "normalise_rows",
    "parse_tokens",
    "weighted_sum_lines",
]

ARTICLE_TOKENS: tuple[str, ...] = ("中和", "有", "一個", "永和路")
# The article's matrix: 中和 and 永和路 (both place names) attend to each other; the filler
# words 有 and 一個 only look at themselves.
ARTICLE_MATRIX = np.array(
    [
        [0.5, 0.0, 0.0, 0.5],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.5, 0.0, 0.0, 0.5],
    ]
)  # (4, 4)
# Small integer vectors (the article leaves them abstract), so the mixing can be checked by
# head: the new 中和 is (2+4)/2, (0+1)/2, (1+0)/2 = 3, 0.5, 0.5.
ARTICLE_VECTORS = np.array(
    [
        [2.0, 0.0, 1.0],
        [0.0, 3.0, 0.0],
        [0.0, 0.0, 2.0],
        [4.0, 1.0, 0.0],
    ]
)  # (4, 3)

MAX_HANDMADE_TOKENS = 12  # an editable n×n table beyond this stops being "by hand"
MAX_HANDMADE_DIM = 8
ROW_TOLERANCE = 1e-6  # |row sum - 1| allowed; typed decimals like 0.1 + 0.2 + 0.7 pass

_SPLIT_BAR = re.compile(r"\s*\|\s*")


def parse_tokens(text: str) -> list[str]:
    """Tokens typed by the user: split on "|" if there is one, else on whitespace.

    "中和 | 有 | 一個 | 永和路" and "中和 有 一個 永和路" both give the article's four tokens;
    empty parts are dropped. No cap here: the caller decides what to do with many tokens.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    parts = _SPLIT_BAR.split(text) if "|" in text else text.split()
    return [p.strip() for p in parts if p.strip()]


def default_matrix(n: int, *, kind: str = "identity") -> np.ndarray:
    """(n, n) valid attention matrix: "identity" (each token keeps itself) or "uniform"."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    if kind == "identity":
        return np.eye(n)
    if kind == "uniform":
        return np.full((n, n), 1.0 / n) if n else np.zeros((0, 0))
    raise ValueError(f"kind must be 'identity' or 'uniform', got {kind!r}")


def _hashed_vector(token: str, dim: int) -> np.ndarray:
    # Small integers in [-2, 2], a pure function of the token text: like the app's embedding,
    # the same token always gets the same vector, but easy to add up by hand.
    digest = hashlib.blake2b(token.encode(), digest_size=max(dim, 1)).digest()
    return np.array([b % 5 - 2 for b in digest[:dim]], dtype=float)  # (d,)


def default_vectors(tokens: Sequence[str], *, dim: int = 3) -> np.ndarray:
    """(n, dim) starting vectors: the article's tokens get ARTICLE_VECTORS (when dim == 3),
    any other token small integers derived from its text."""
    if not isinstance(dim, int) or not 1 <= dim <= MAX_HANDMADE_DIM:
        raise ValueError(f"dim must be an integer from 1 to {MAX_HANDMADE_DIM}, got {dim!r}")
    known = dict(zip(ARTICLE_TOKENS, ARTICLE_VECTORS, strict=True))
    rows = [known[t].copy() if dim == 3 and t in known else _hashed_vector(t, dim) for t in tokens]
    return np.array(rows, dtype=float).reshape(len(rows), dim)  # (n, d)


def carry_vectors(
    old_tokens: Sequence[str],
    old_vectors: np.ndarray,
    new_tokens: Sequence[str],
    *,
    dim: int,
) -> np.ndarray:
    """(n, dim) vectors for `new_tokens` that keep the user's edits where they still apply.

    A token that was there before keeps its (first) old vector; when the count is unchanged
    (a token renamed), a new token takes the old vector at its position; anything else gets
    `default_vectors`. Columns beyond the old dim are filled from the defaults too.
    """
    fresh = default_vectors(new_tokens, dim=dim)  # (n, d)
    old = np.asarray(old_vectors, dtype=float)
    if old.ndim != 2 or old.shape[0] != len(old_tokens):
        return fresh
    c = min(old.shape[1], dim)
    first = {}
    for i, t in enumerate(old_tokens):
        first.setdefault(t, i)
    same_count = len(old_tokens) == len(new_tokens)
    for i, t in enumerate(new_tokens):
        source = first.get(t, i if same_count else None)
        if source is not None:
            fresh[i, :c] = old[source, :c]
    return fresh


@dataclass(frozen=True)
class RowProblem:
    """One reason row `row` is not a valid attention row.

    kind: "not_finite" (an empty or non-numeric cell), "negative" (weights below 0 in
    `columns`) or "sum" (the row sums to `row_sum`, not 1).
    """

    row: int
    kind: str
    row_sum: float
    columns: tuple[int, ...] = ()


def _as_square(matrix: np.ndarray) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix must be square (n, n), got shape {m.shape}")
    return m


def check_rows(matrix: np.ndarray, *, tol: float = ROW_TOLERANCE) -> list[RowProblem]:
    """Every problem of every row of an (n, n) matrix, in row order; [] when all rows are valid.

    A row with an empty cell gets only "not_finite" (its sum means nothing); otherwise a row
    can have both "negative" and "sum".
    """
    m = _as_square(matrix)
    problems: list[RowProblem] = []
    for i, row in enumerate(m):
        if not np.isfinite(row).all():
            bad = tuple(int(j) for j in np.flatnonzero(~np.isfinite(row)))
            problems.append(RowProblem(i, "not_finite", math.nan, bad))
            continue
        total = float(row.sum())
        negative = tuple(int(j) for j in np.flatnonzero(row < 0))
        if negative:
            problems.append(RowProblem(i, "negative", total, negative))
        if abs(total - 1.0) > tol:
            problems.append(RowProblem(i, "sum", total))
    return problems


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """(n, n) matrix made valid row by row: empty cells and negatives become 0, then each row
    is divided by its sum; a row with nothing left becomes uniform (1/n each).

    Softmax does the same job in a real model; here the user's proportions are kept.
    """
    m = _as_square(matrix)
    m = np.where(np.isfinite(m), m, 0.0).clip(min=0.0)  # (n, n)
    sums = m.sum(axis=1, keepdims=True)  # (n, 1)
    n = m.shape[0]
    uniform = np.full_like(m, 1.0 / n) if n else m
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums > 0, m / sums, uniform)


def mix(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """New representations: row i is Σ_j matrix[i, j] · vectors[j], i.e. matrix @ vectors.

    matrix (n, n), vectors (n, d) → (n, d). This is step (5) of the article, with the
    vectors standing in for V.
    """
    m = _as_square(matrix)
    v = np.asarray(vectors, dtype=float)
    if v.ndim != 2 or v.shape[0] != m.shape[0]:
        raise ValueError(
            f"vectors must have shape (n={m.shape[0]}, d), one row per token; got {v.shape}"
        )
    return m @ v  # (n, d)


def format_weight(value: float) -> str:
    """A weight written the article's way: 0.5, 1, 0, 0.25, 0.3333 (at most 4 significant
    digits, no trailing zeros, never "-0")."""
    x = float(value)
    if math.isnan(x):
        return "?"
    if x == 0:
        return "0"
    return f"{x:.4g}"


def weighted_sum_lines(tokens: Sequence[str], matrix: np.ndarray) -> list[str]:
    """One line per token, as the article writes them:
    "中和 = 0.5×中和 + 0×有 + 0×一個 + 0.5×永和路". A negative weight is written "- 0.5×有";
    an empty cell "?". Plain text: the caller must show it as text, never as markup."""
    m = _as_square(matrix)
    if m.shape[0] != len(tokens):
        raise ValueError(f"need one token per matrix row: {len(tokens)} tokens, {m.shape[0]} rows")
    lines = []
    for i, token in enumerate(tokens):
        terms = ""
        for j, other in enumerate(tokens):
            w = float(m[i, j])
            if j == 0:
                terms += f"{format_weight(w)}×{other}"
            elif w < 0:
                terms += f" - {format_weight(-w)}×{other}"
            else:
                terms += f" + {format_weight(w)}×{other}"
        lines.append(f"{token} = {terms}")
    return lines
