"""One labelled matrix as one heatmap: `plot_matrix` (Q, K, V, scores, differences) and the
frame every single-matrix figure shares (`matrix_figure`).

Rows top-down, tick labels by the one rule of `figures.layout`, the house font
(`figures.style`). Every text reaches Plotly through `figures.text.literal`, once, at the
entry of `plot_matrix`: tokens are what a student typed, and Plotly would otherwise read
"<b>" or "<br>" in them as markup. Grids of heads are `figures.heads.plot_heads`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.layout import (
    CELL_FONT_MIN_PX,
    MATRIX_TITLE_PX,
    MIN_SIZE_META,
    MIN_WIDTH_META,
    NOMINAL_WIDTH_PX,
    axis_ticks,
    cell_number_px,
    matrix_title,
    min_cell_px,
    tick_plan,
    unescape,
)
from attention_core.figures.style import FONT, matrix_axes
from attention_core.figures.text import literal, literals

__all__ = ["COLORBAR_PX", "MATRIX_MAX_PX", "matrix_figure", "plot_matrix"]

COLORBAR_PX = 90  # a colour bar and its tick labels, right of a single matrix
MATRIX_MAX_PX = 640  # a square matrix is drawn no taller than this


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
    width_px: float = NOMINAL_WIDTH_PX,
) -> go.Figure:
    """Any labelled matrix (Q, K, V, scores, differences) as one heatmap; rows top-down.

    Labelled by the rule of `figures.layout` for a chart `width_px` wide (and `height`
    tall, when given): tick labels that fit, numbers in the cells only where a cell holds
    them, in type that grows with the cell (`text=None`; hover keeps them), the title
    above the column labels, and a matrix of tokens against the same tokens (n × n) drawn
    with square cells. Labels and title are drawn literally (escaped once here).
    """
    shown_title = literal(title)
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2 or m.size == 0:
        return go.Figure(layout={"height": 120, "title": {"text": shown_title}})
    rows, cols = m.shape
    square = rows == cols and list(row_labels) == list(col_labels)
    top_px = MATRIX_TITLE_PX if title else 30
    y_margin = tick_plan(row_labels, 28.0 * rows).margin_px
    plot_w = max(60.0, width_px - y_margin - COLORBAR_PX)
    cell_w = plot_w / cols
    if square:
        cell_h = cell_w = min(cell_w, (MATRIX_MAX_PX - top_px) / rows)
    else:
        cell_h = (min(640, max(220, 40 + 28 * rows)) - top_px - 10) / rows
    x_plan = tick_plan(col_labels, cell_w * cols)
    band_px = x_plan.band_px if x_plan.shown else 0
    if height is None:
        height = int(top_px + x_plan.band_px + cell_h * rows + 10) if square else None
        height = height or max(220, min(640, 40 + 28 * rows))
    else:  # the caller's height: the cells get what is left of it
        cell_h = max(1.0, (height - top_px - band_px - 10) / rows)
        if square:
            cell_w = cell_h = min(cell_w, cell_h)
    font_px = cell_number_px(cell_w, cell_h, widest=_widest_number(m))
    if text is not None:  # the caller decides
        font_px = max(font_px, CELL_FONT_MIN_PX) if text else 0
    fig = matrix_figure(
        m,
        literals(col_labels),
        literals(row_labels),
        title=shown_title,
        height=height,
        top_px=top_px + band_px,
        cell_text="%{z:.2f}" if font_px else None,
        cell_font_px=font_px,
        axes={"square": square, "top": True},
        colorscale=colorscale,
        zmid=zmid if zmin is None and zmax is None else None,
        zmin=zmin,
        zmax=zmax,
        hovertemplate="%{y}, %{x}: %{z:.4f}<extra></extra>",
        width_px=width_px,
    )
    return fig


def _widest_number(m: np.ndarray) -> str:
    """The widest of the matrix's numbers as its cells write them ("%{z:.2f}")."""
    finite = m[np.isfinite(m)]
    if finite.size == 0:
        return "0.00"
    return max(f"{float(finite.min()):.2f}", f"{float(finite.max()):.2f}", key=len)


def matrix_figure(
    z: np.ndarray,
    x: Sequence[str],
    y: Sequence[str],
    *,
    title: str,
    height: int,
    top_px: int,
    cell_text: str | None = None,
    cell_font_px: int = CELL_FONT_MIN_PX,
    gaps: bool | None = None,
    axes: Mapping[str, Any] | None = None,
    width_px: float = NOMINAL_WIDTH_PX,
    **heatmap: Any,
) -> go.Figure:
    """One (rows, cols) matrix as one heatmap in the frame every single-matrix figure
    shares: category axes as `style.matrix_axes(**axes)` (row 0 on top), the house font,
    10 px margins but `top_px` above, `height` pixels in all, tick labels by the one rule
    of `figures.layout` for a chart `width_px` wide (callers with ticks of their own, like
    the model view, set them afterwards).

    `x`, `y` and `title` come escaped (`literal`); the title sits at the top, above
    column labels drawn on top (`layout.matrix_title`). `cell_text` is the texttemplate
    written into every cell (None: none) in `cell_font_px` type; cells are parted by 1 px
    gaps where they carry text, unless `gaps` says otherwise. `heatmap` holds the rest of
    the go.Heatmap: colour scale and limits, hover, colour bar, custom data.
    """
    gap = int(bool(cell_text) if gaps is None else gaps)
    trace = go.Heatmap(z=z, x=x, y=y, xgap=gap, ygap=gap, **heatmap)
    if cell_text:
        trace.update(texttemplate=cell_text, textfont={"size": cell_font_px})
    fig = go.Figure(trace)
    matrix_axes(fig, **(axes or {}))
    fig.update_layout(
        title=matrix_title(title),
        height=height,
        margin={"l": 10, "r": 10, "t": top_px, "b": 10},
        font=FONT,
    )
    # the raw text of the escaped labels (`literal` undone), to measure and cut them
    raw_x, raw_y = [unescape(v) for v in x], [unescape(v) for v in y]
    y_len = max(40.0, height - top_px - 20)
    x_len = max(40.0, width_px - tick_plan(raw_y, y_len).margin_px - COLORBAR_PX)
    if (axes or {}).get("square", True):
        x_len = y_len = min(x_len, y_len)
    x_plan, y_plan = tick_plan(raw_x, x_len), tick_plan(raw_y, y_len)
    fig.update_xaxes(**axis_ticks(x_plan, list(x), "x"))
    fig.update_yaxes(**axis_ticks(y_plan, list(y), "y"))
    # the least size at which these labels and numbers still fit (presenter mode keeps it)
    numbers = cell_font_px if cell_text else 0
    cell_w = min_cell_px(x_plan, numbers_px=numbers)
    cell_h = max(min_cell_px(y_plan), 1.5 * numbers)
    if (axes or {}).get("square", True):
        cell_w = cell_h = max(cell_w, cell_h)
    rows, cols = len(y), len(x)
    least = [
        math.ceil(y_plan.margin_px + COLORBAR_PX + cell_w * cols),
        math.ceil(top_px + 20 + cell_h * rows),
    ]
    meta: dict[str, Any] = {MIN_SIZE_META: least}
    if cell_text:  # its cells hold their text at this width: a phone scrolls, never squeezes
        meta[MIN_WIDTH_META] = round(width_px)
    fig.update_layout(meta=meta)
    return fig
