"""The main view: one heatmap per head, heads side by side, one shared colour scale.

Rows are queries, columns are keys, both labelled `index:token` (Plotly merges equal
category labels, so the index keeps repeated tokens apart). Matrices go to Plotly as
float32 NumPy arrays, which Plotly serialises as base64 typed arrays: the payload stays
close to the raw n²·H·4 bytes instead of growing as JSON floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = ["HeadGrid", "head_grid", "plot_heads", "plot_matrix"]

CELL_TEXT_MAX = 12  # write the weight into each cell up to this many tokens
TICKS_MAX = 48  # label every axis tick up to this many tokens; beyond, hover tells
COLORSCALE = "Blues"


@dataclass(frozen=True)
class HeadGrid:
    """Plain data for `plot_heads`: matrices (P, n, n), titles and axis labels."""

    matrices: np.ndarray  # (P, n, n) float32: the panels, heads (and maybe their mean)
    titles: list[str]
    labels: list[str]  # `index:token`, rows and columns alike


def head_grid(
    weights: np.ndarray,
    labels: Sequence[str],
    *,
    head_title: str = "head {i}",
    mean_title: str | None = None,
    heads: Sequence[int] | None = None,
) -> HeadGrid:
    """(H, n, n) weights → panels; `heads` picks some, `mean_title` adds their mean."""
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim == 2:
        w = w[None]  # (n, n) → (1, n, n)
    chosen = list(range(w.shape[0])) if heads is None else list(heads)
    panels = w[chosen]  # (P, n, n)
    titles = [head_title.format(i=i) for i in chosen]
    if mean_title is not None and len(chosen) > 1:
        panels = np.concatenate([panels, panels.mean(0, keepdims=True)])  # (P + 1, n, n)
        titles.append(mean_title)
    return HeadGrid(np.ascontiguousarray(panels), titles, list(labels))


def _columns(panels: int, n: int) -> int:
    if panels <= 1:
        return 1
    per_row = 4 if n <= 48 else 3 if n <= 160 else 2
    return min(panels, per_row)


def _heatmap(
    z: np.ndarray, labels: list[str], name: str, *, coloraxis: str, text: bool
) -> go.Heatmap:
    trace = go.Heatmap(
        z=z,
        x=labels,
        y=labels,
        name=name,
        coloraxis=coloraxis,
        hovertemplate="%{y} → %{x}: %{z:.3f}<extra>" + name + "</extra>",
        xgap=1 if text else 0,
        ygap=1 if text else 0,
    )
    if text:
        trace.update(texttemplate="%{z:.2f}", textfont={"size": 11})
    return trace


def plot_heads(
    grid: HeadGrid,
    *,
    zmin: float = 0.0,
    zmax: float = 1.0,
    colorscale: str = COLORSCALE,
    colorbar_title: str = "",
    cols: int | None = None,
    panel_px: int | None = None,
) -> go.Figure:
    """One heatmap per panel in a grid, square cells, one shared colour bar (zmin…zmax)."""
    P, n = grid.matrices.shape[0], len(grid.labels)
    if P == 0 or n == 0:
        return go.Figure(layout={"height": 120})
    cols = cols or _columns(P, n)
    rows = math.ceil(P / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=grid.titles,
        horizontal_spacing=0.06 if n <= TICKS_MAX else 0.03,
        vertical_spacing=min(0.12, 0.5 / rows) if rows > 1 else 0.1,
    )
    text = n <= CELL_TEXT_MAX
    for p in range(P):
        r, c = divmod(p, cols)
        fig.add_trace(
            _heatmap(
                grid.matrices[p], grid.labels, grid.titles[p], coloraxis="coloraxis", text=text
            ),
            row=r + 1,
            col=c + 1,
        )
    show_ticks = n <= TICKS_MAX
    fig.update_xaxes(showticklabels=show_ticks, tickangle=-45 if n > 6 else 0, type="category")
    fig.update_yaxes(showticklabels=show_ticks, autorange="reversed", type="category")
    # square cells: every y axis is scaled to its own x axis
    for p in range(P):
        suffix = "" if p == 0 else str(p + 1)
        fig.layout[f"yaxis{suffix}"].update(scaleanchor=f"x{suffix}", constrain="domain")
        fig.layout[f"xaxis{suffix}"].update(constrain="domain")
    panel = panel_px or (300 if cols >= 3 else 380)
    fig.update_layout(
        coloraxis={
            "colorscale": colorscale,
            "cmin": zmin,
            "cmax": zmax,
            "colorbar": {"title": {"text": colorbar_title}, "thickness": 14},
        },
        height=rows * panel + 60 + (40 if show_ticks else 0),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        font={"family": "Noto Sans CJK TC, Noto Sans CJK SC, Noto Sans, sans-serif"},
    )
    return fig


def plot_matrix(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    colorscale: str = "RdBu",
    zmid: float | None = 0.0,
    zmin: float | None = None,
    zmax: float | None = None,
    text: bool | None = None,
    height: int | None = None,
) -> go.Figure:
    """Any labelled matrix (Q, K, V, scores, differences) as one heatmap; rows top-down."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2 or m.size == 0:
        return go.Figure(layout={"height": 120, "title": {"text": title}})
    rows, cols = m.shape
    show_text = (rows <= CELL_TEXT_MAX and cols <= 16) if text is None else text
    trace = go.Heatmap(
        z=m,
        x=list(col_labels),
        y=list(row_labels),
        colorscale=colorscale,
        zmid=zmid if zmin is None and zmax is None else None,
        zmin=zmin,
        zmax=zmax,
        hovertemplate="%{y}, %{x}: %{z:.4f}<extra></extra>",
        xgap=1 if show_text else 0,
        ygap=1 if show_text else 0,
    )
    if show_text:
        trace.update(texttemplate="%{z:.2f}", textfont={"size": 10})
    fig = go.Figure(trace)
    fig.update_xaxes(type="category", side="top")
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_layout(
        title={"text": title},
        height=height or max(220, min(640, 40 + 28 * rows)),
        margin={"l": 10, "r": 10, "t": 60 if title else 30, "b": 10},
        font={"family": "Noto Sans CJK TC, Noto Sans CJK SC, Noto Sans, sans-serif"},
    )
    return fig
