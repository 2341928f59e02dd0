"""Attention beside attribution as rows of coloured tokens: plain data in, figure out.

    token_rows(labels, rows, names)   each row's values scaled to its own largest magnitude
    plot_token_rows(data, title=…)    one line of token cells per row, the token written in
                                      its cell, the value in the hover

Every string drawn is escaped (`figures.text.literal`); callers pass translated strings.
Shape legend: R rows (attention, attribution…), m tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.style import FONT
from attention_core.figures.text import literal, literals

__all__ = ["TokenRows", "plot_token_rows", "token_rows"]


@dataclass(frozen=True)
class TokenRows:
    """What the figure draws: shares (R, m) in 0 … 1, the values behind them, labels."""

    labels: list[str]  # (m,)
    names: list[str]  # (R,)
    shares: np.ndarray  # (R, m): |value| / the row's largest |value|
    values: np.ndarray  # (R, m)


def token_rows(
    labels: Sequence[str], rows: Sequence[np.ndarray], names: Sequence[str]
) -> TokenRows:
    """Rows of one value per token; each row's colour runs from 0 to its own largest
    magnitude (attention and attribution have no common unit: their orders are compared)."""
    values = np.asarray([np.asarray(r, dtype=np.float64) for r in rows])  # (R, m)
    if values.ndim != 2 or values.shape[1] != len(labels) or len(names) != len(values):
        raise ValueError("need one name per row and one value per label in every row")
    top = np.abs(values).max(axis=1, keepdims=True)  # (R, 1)
    shares = np.divide(np.abs(values), top, out=np.zeros_like(values), where=top > 0)
    return TokenRows(list(labels), list(names), shares, values)


def plot_token_rows(data: TokenRows, *, title: str = "") -> go.Figure:
    """One line of cells per row, the first row on top, each token written in its cell."""
    m = len(data.labels)
    text = [literals(data.labels)] * len(data.names)
    fig = go.Figure(
        go.Heatmap(
            z=data.shares[::-1],
            x=list(range(m)),
            y=literals(data.names[::-1]),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 15},
            customdata=data.values[::-1],
            hovertemplate="%{text}: %{customdata:.4g}<extra>%{y}</extra>",
            colorscale="Blues",
            zmin=0.0,
            zmax=1.0,
            showscale=False,
            xgap=2,
            ygap=4,
        )
    )
    fig.update_layout(
        height=90 + 56 * len(data.names),
        font=FONT,
        title={"text": literal(title), "font": {"size": 14}},
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        xaxis={"visible": False},
        yaxis={"automargin": True, "fixedrange": True},
    )
    return fig
