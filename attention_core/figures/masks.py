"""Figures for masks: a boolean mask as a two-colour grid, and a padded sentence's weights
with the padded query rows greyed out.

Plain NumPy data in, `go.Figure` out (no torch, no streamlit), like figures/heads.py and
figures/matrix.py; all text is drawn literally (`figures.text.literal`, once per builder).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.heads import CELL_TEXT_MAX
from attention_core.figures.layout import NOMINAL_WIDTH_PX, cell_number_px, text_px, tick_plan
from attention_core.figures.matrix import matrix_figure, plot_matrix
from attention_core.figures.style import FONT
from attention_core.figures.text import literal, literals

__all__ = ["figure_height", "plot_bool_matrix", "plot_padded_weights"]

_TRUE_COLOUR = "#2b7bba"
_FALSE_COLOUR = "#eeeeee"
_GREY = "rgba(150, 150, 150, 0.75)"


def figure_height(rows: int) -> int:
    """A height in pixels that keeps cells near-square for an (rows, rows) matrix drawn in
    half of a wide page; two figures side by side get the same one."""
    return max(260, min(700, 110 + 30 * rows))


def plot_bool_matrix(
    mask: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    true_text: str = "True",
    false_text: str = "False",
    height: int | None = None,
    width_px: float = NOMINAL_WIDTH_PX,
) -> go.Figure:
    """A boolean (rows, cols) mask: blue = True (may attend), light grey = False; the words
    in the cells where a cell of a chart `width_px` wide holds them (`figures.layout`);
    text literal."""
    shown_title = literal(title)
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2 or m.size == 0:
        return go.Figure(layout={"height": 120, "title": {"text": shown_title}, "font": FONT})
    rows, cols = m.shape
    # escaped before they are spread over the cells: two strings, not rows × cols
    words = np.where(m, literal(true_text), literal(false_text))  # (rows, cols) hover, cells
    height = height or max(160, min(700, 110 + 34 * rows))
    cell_w = (width_px - tick_plan(row_labels, 28.0 * rows).margin_px - 20) / cols
    # the column labels' band above the grid (upright where flat ones would collide)
    top_px = (40 if title else 0) + max(70, tick_plan(col_labels, cell_w * cols).band_px + 10)
    cell_h = (height - top_px - 10) / rows
    widest = max((true_text, false_text), key=lambda word: text_px(word, 1.0))
    font_px = cell_number_px(cell_w, cell_h, widest=widest) if rows <= CELL_TEXT_MAX * 2 else 0
    return matrix_figure(
        m.astype(np.float32),
        literals(col_labels),
        literals(row_labels),
        title=shown_title,
        height=height,
        top_px=top_px,
        cell_text="%{text}" if font_px else None,
        cell_font_px=font_px,
        gaps=True,
        axes={"square": False, "top": True},
        text=words if font_px else None,
        zmin=0.0,
        zmax=1.0,
        colorscale=[
            [0.0, _FALSE_COLOUR],
            [0.5, _FALSE_COLOUR],
            [0.5, _TRUE_COLOUR],
            [1.0, _TRUE_COLOUR],
        ],
        showscale=False,
        customdata=words,
        hovertemplate="%{y}, %{x}: %{customdata}<extra></extra>",
        width_px=width_px,
    )


def plot_padded_weights(
    weights: np.ndarray,
    labels: Sequence[str],
    query_is_real: Sequence[bool],
    *,
    title: str = "",
    padded_text: str = "",
    height: int | None = None,
    width_px: float = NOMINAL_WIDTH_PX,
) -> go.Figure:
    """(n, n) weights of one padded sentence; rows of padded queries are covered in grey
    (they are computed, but nothing reads them). The data underneath is unchanged.
    `width_px` and `height`: the room the chart gets (numbers only in cells that hold them).

    Labels and title are escaped by `plot_matrix`; only `padded_text` is escaped here."""
    w = np.asarray(weights, dtype=np.float32)
    n = w.shape[0] if w.ndim == 2 else 0
    fig = plot_matrix(
        w,
        labels,
        labels,
        title=title,
        colorscale="Blues",
        zmid=None,
        zmin=0.0,
        zmax=1.0,
        height=height or figure_height(n),
        width_px=width_px,
    )
    if n == 0:
        return fig
    real = np.asarray(query_is_real, dtype=bool)
    for i in np.flatnonzero(~real):
        # category axes place row i at y = i, so a rectangle from i - 0.5 to i + 0.5 covers it
        fig.add_shape(
            type="rect",
            xref="x",
            yref="y",
            x0=-0.5,
            x1=n - 0.5,
            y0=i - 0.5,
            y1=i + 0.5,
            fillcolor=_GREY,
            line={"width": 0},
            layer="above",
        )
    if padded_text and not real.all():
        fig.add_annotation(
            text=literal(padded_text),
            xref="paper",
            yref="paper",
            x=0.0,
            y=-0.02,
            yanchor="top",
            xanchor="left",
            showarrow=False,
            font={"size": 11, "color": "#666666"},
        )
        fig.update_layout(margin={"b": 40})
    return fig
