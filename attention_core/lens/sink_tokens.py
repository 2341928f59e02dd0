"""Attention sinks: how much each head attends to [CLS] / [SEP] / the first token /
punctuation, beside those tokens' value norms (why such heads are near no-ops; Clark et
al. 2019, "What Does BERT Look At?", Kobayashi et al. 2020 section 5).

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SINK_KINDS = ("cls", "sep", "first", "punct")


@dataclass(frozen=True)
class Sinks:
    """Per head, the mean share of each query's attention that lands on a kind of token
    (`mass[kind]`, (L, H)), and the mean value norm ‖f_h(x_j)‖ of those tokens
    (`norm[kind]`, (L, H); NaN when the text has no such token) beside the mean over the
    other tokens (`other_norm`, (L, H)). A head with most of its mass on tokens with small
    value norms changes little: it is close to a no-op (Kobayashi et al. 2020, section 5)."""

    mass: dict[str, np.ndarray]
    norm: dict[str, np.ndarray]
    other_norm: np.ndarray
    present: dict[str, bool]


def _is_punct(token: str) -> bool:
    text = token.removeprefix("##").removeprefix("Ġ").removeprefix("▁")
    return bool(text) and all(
        ch in string.punctuation or unicodedata.category(ch).startswith("P") for ch in text
    )


def sink_positions(tokens: Sequence[str], special: Sequence[bool]) -> dict[str, np.ndarray]:
    """Boolean masks (n,) of [CLS]-like, [SEP]-like, first and punctuation tokens. [CLS]
    means a special token at the start, [SEP] a special token anywhere after it."""
    n = len(tokens)
    flags = np.asarray(special, dtype=bool)
    cls = np.zeros(n, dtype=bool)
    if n and flags[0]:
        cls[0] = True
    sep = flags & ~cls
    first = np.zeros(n, dtype=bool)
    if n:
        first[0] = True
    punct = np.array([_is_punct(t) and not s for t, s in zip(tokens, special, strict=True)])
    return {"cls": cls, "sep": sep, "first": first, "punct": punct.astype(bool)}


def sinks(
    attentions: np.ndarray,
    norms: np.ndarray,
    tokens: Sequence[str],
    special: Sequence[bool],
) -> Sinks:
    """Sink statistics from `attentions` (L, H, n, n) and value norms `norms` (L, H, n)."""
    a = np.asarray(attentions, dtype=np.float64)
    v = np.asarray(norms, dtype=np.float64)
    if a.ndim != 4 or v.shape != a.shape[:3]:
        raise ValueError(f"need attentions (L, H, n, n) and norms (L, H, n): {a.shape}, {v.shape}")
    where = sink_positions(tokens, special)
    mass, norm = {}, {}
    for kind in SINK_KINDS:
        cols = where[kind]
        mass[kind] = a[..., cols].sum(axis=-1).mean(axis=-1)  # (L, H)
        norm[kind] = v[..., cols].mean(axis=-1) if cols.any() else np.full(a.shape[:2], np.nan)
    ordinary = ~(where["cls"] | where["sep"] | where["punct"])
    other = v[..., ordinary].mean(axis=-1) if ordinary.any() else np.full(a.shape[:2], np.nan)
    present = {kind: bool(where[kind].any()) for kind in SINK_KINDS}
    return Sinks(mass=mass, norm=norm, other_norm=other, present=present)
