"""How attention weights map to colours: the three colour scales and their colour bars.

Colours (`colour_scale`): absolute 0…1; relative to an even share (weight × n, diverging
around 1, the default: an untrained head's weights all lie near 1/n); per-head contrast.
The z values are the weights under every scale, so hover always reads the absolute weight;
a scale sets only the colour limits and the colour bar's ticks (`colour_bar`). Used by the
head grid (`figures.heads.plot_heads`) and the model view (`figures.compare`).

A row's even share is 1 / the number of keys it may attend to (`even_shares`): 1/n, or
1/(i+1) for row i under a causal mask, which the weights themselves show (softmax gives
exactly 0 only to masked keys). With `rows=True` the relative scale colours each weight in
multiples of its own row's even share (`ColourScale.values`), masked cells get no colour,
and hover still reads the absolute weight (the head grid keeps it beside the colours).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.colors

from attention_core.figures.text import literal

__all__ = [
    "COLORSCALE",
    "DEFAULT_SCALE",
    "RELATIVE_COLORSCALE",
    "RELATIVE_MAX",
    "SCALES",
    "ColourScale",
    "causal_rows",
    "colour_bar",
    "colour_scale",
    "colour_stops",
    "even_shares",
    "round_ticks",
]

COLORSCALE = "Blues"
RELATIVE_COLORSCALE = "RdBu_r"  # blue: less than an even share, white: even, red: more
RELATIVE_MAX = 2.0  # the relative scale runs 0 … 2 × the even share, 1 × in the middle
SCALES = ("relative", "absolute", "contrast")
# Relative by default: an untrained head's weights all lie near 1/n, a few percent of a
# 0…1 scale (a white picture), but spread over most of 0…2 × 1/n (tests/core/figures/test_heads.py)
DEFAULT_SCALE = "relative"


@dataclass(frozen=True)
class ColourScale:
    """How weights map to colours: the same z (the weights) under every scale, so hover
    always reads the absolute weight; only the colour limits and the colour bar change.

    `limits` holds (zmin, zmax) per panel: one pair shared by all panels, except under
    "contrast", where every panel runs from 0 to its own largest weight.
    """

    kind: str
    colorscale: str
    limits: list[tuple[float, float]]  # (P,) pairs
    tickvals: list[float]  # colour bar ticks, on the first panel's limits
    ticktext: list[str]
    # (n,) each row's even share when colours are multiples of it (causal rows), else None
    rows: np.ndarray | None = field(default=None, compare=False)

    @property
    def shared(self) -> bool:
        return len(set(self.limits)) <= 1

    def values(self, matrix: np.ndarray) -> np.ndarray:
        """What the colours of `matrix` (n, n) read: its weights, or, per row, the weights
        in multiples of that row's even share with the masked keys (above the diagonal)
        NaN, which Plotly leaves uncoloured."""
        if self.rows is None:
            return matrix
        m = np.asarray(matrix, dtype=np.float32)
        out = m / self.rows[:, None].astype(np.float32)  # (n, n)
        out[np.triu(np.ones(out.shape, dtype=bool), 1)] = np.nan
        return out


def causal_rows(matrices: np.ndarray) -> bool:
    """True when every panel of `matrices` (P, n, n) or (n, n) gives exactly 0 to every key
    after its query (a causal mask; softmax never gives an allowed key exactly 0)."""
    m = np.asarray(matrices)
    return m.ndim >= 2 and m.shape[-1] > 1 and not np.triu(m, 1).any()


def even_shares(matrices: np.ndarray) -> np.ndarray:
    """(n,) each query row's even share of `matrices` (P, n, n) or (n, n): 1 / the number of
    keys it may attend to, i + 1 for row i under a causal mask (`causal_rows`), else n."""
    n = np.asarray(matrices).shape[-1]
    if causal_rows(matrices):
        return 1.0 / np.arange(1, n + 1, dtype=np.float64)
    return np.full(n, 1.0 / max(n, 1))


def colour_scale(
    kind: str,
    matrices: np.ndarray,
    *,
    zmin: float = 0.0,
    zmax: float = 1.0,
    rows: bool = False,
) -> ColourScale:
    """The colour scale `kind` (one of SCALES) for panels `matrices` (P, n, n).

    - absolute: zmin … zmax (0 … 1), the weights as they are;
    - relative: weight × n from 0 to RELATIVE_MAX, diverging around 1 = "attends evenly"
      (weight 1/n); what lies above RELATIVE_MAX × 1/n gets the darkest colour. With
      `rows` and causal panels (`causal_rows`): weight ÷ its row's even share 1/(i+1),
      limits 0 … RELATIVE_MAX on `ColourScale.values`, which the caller must colour;
    - contrast: each panel from 0 to its own largest weight (colour bar in % of it).
    """
    m = np.asarray(matrices, dtype=np.float32)
    P = m.shape[0] if m.ndim == 3 else 1
    n = m.shape[-1] if m.ndim >= 2 else 0
    ticks = [0.0, 0.5, 1.0, 1.5, 2.0]  # relative: multiples of the even share
    texts = ["0", "½×", "1×", "1½×", f"≥ {RELATIVE_MAX:g}×"]
    if kind == "relative" and rows and causal_rows(m):
        shares = even_shares(m)
        return ColourScale(
            kind, RELATIVE_COLORSCALE, [(0.0, RELATIVE_MAX)] * P, ticks, texts, rows=shares
        )
    if kind == "relative" and n > 0:
        top = RELATIVE_MAX / n
        return ColourScale(
            kind, RELATIVE_COLORSCALE, [(0.0, top)] * P, [t / n for t in ticks], texts
        )
    if kind == "contrast" and m.size:
        peaks = np.nan_to_num(m.reshape(P, -1).max(-1), nan=1.0)  # (P,)
        limits = [(0.0, float(p) if p > 0 else 1.0) for p in peaks]
        top = limits[0][1]
        return ColourScale(kind, COLORSCALE, limits, [0.0, top / 2, top], ["0", "50 %", "100 %"])
    if kind not in SCALES:
        raise ValueError(f"unknown colour scale {kind!r}; choose one of {', '.join(SCALES)}")
    ticks = round_ticks(zmin, zmax)
    return ColourScale("absolute", COLORSCALE, [(zmin, zmax)] * P, ticks, [f"{t:g}" for t in ticks])


def round_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Colour bar ticks from `low` to `high` at a round step (1, 2, 2.5 or 5 × 10^k) giving
    about `count` intervals: 0 … 1 → 0, 0.25, …, 1; 0 … 17.75 (a lens norm) → 0, 5, 10, 15,
    never "4.43753"."""
    span = high - low
    if not (math.isfinite(span) and span > 0):
        return [low]
    power = 10.0 ** math.floor(math.log10(span / count))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= span / count * (1 - 1e-9))
    digits = max(0, 2 - math.floor(math.log10(step)))  # enough for 0.25, none lost for 5
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(i * step, digits) + 0.0 for i in range(first, last + 1)]


def colour_stops(colorscale: str | Sequence[Any]) -> Sequence[Any]:
    """A named colour scale as its stops ([position, colour] pairs), other scales as they
    are: a figure that skips Plotly's validation must do what the validation would."""
    return plotly.colors.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale


def colour_bar(colours: ColourScale, title: str, **place: Any) -> dict[str, Any]:
    """The colour bar of `colours`: its ticks and their labels, `title` drawn literally
    (escaped here), 14 px thick; `place` sizes and places it (Plotly's colorbar keys)."""
    return {
        "title": {"text": literal(title)},
        "thickness": 14,
        **place,
        "tickmode": "array",
        "tickvals": colours.tickvals,
        "ticktext": colours.ticktext,
    }
