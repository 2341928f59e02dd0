"""What every figure of the app shares: its font, and the axes of a matrix drawn as a grid
of cells (rows = queries from the top down, columns = keys; square cells where it helps).

One place, so a heatmap on one page looks like a heatmap on every other page.
"""

from __future__ import annotations

import plotly.graph_objects as go

__all__ = [
    "FONT",
    "FONT_FAMILY",
    "HALF_WIDTH_PX",
    "TEMPLATE",
    "THIRD_WIDTH_PX",
    "Y_TITLE_PX",
    "matrix_axes",
    "tick_angle",
    "y_title_above",
]

# Noto Sans CJK first: Traditional and Simplified glyphs of the same font as the Latin text
FONT_FAMILY = "Noto Sans CJK TC, Noto Sans CJK SC, Noto Sans, sans-serif"
FONT = {"family": FONT_FAMILY}
_TEXT = "#31333F"  # Streamlit's light theme: text, grid and axis colours
_GRID = "#E6EAF1"
_AXIS = {
    "gridcolor": _GRID,
    "linecolor": _GRID,
    "zerolinecolor": _GRID,
    "tickcolor": _GRID,
    "title": {"standoff": 12},
    "automargin": True,
}
# The look every chart shares, close to the one Streamlit gives st.plotly_chart (the app
# draws its charts itself, see ui/charts.py): transparent paper, the theme's text and grid
# colours, a white hover box. Small, unlike Plotly's default template (~6 kB per figure).
TEMPLATE = go.layout.Template(
    layout={
        "font": {"color": _TEXT, "size": 14},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "colorway": ["#0068C9", "#83C9FF", "#FF2B2B", "#FFABAB", "#29B09D", "#7DEFA1"],
        "hoverlabel": {"bgcolor": "#FFFFFF", "bordercolor": _GRID, "font": {"color": _TEXT}},
        "xaxis": _AXIS,
        "yaxis": _AXIS,
        "legend": {"bgcolor": "rgba(0,0,0,0)"},
    }
)


Y_TITLE_PX = 24  # room a y axis title written above the plot takes


def y_title_above(text: str) -> dict[str, object]:
    """A y axis title as an annotation written across, above the plot's top left corner
    (`text` escaped): Plotly turns a y axis title on its side, and a Chinese title (熵)
    then reads as characters lying down. The figure keeps Y_TITLE_PX at the top for it."""
    return {
        "text": text,
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 1,
        "xanchor": "left",
        "yanchor": "bottom",
        "yshift": 4,
        "showarrow": False,
        "font": {"size": 13},
    }


def tick_angle(count: int) -> int:
    """Column labels lie flat for a few columns and slant beyond six."""
    return -45 if count > 6 else 0


def matrix_axes(
    fig: go.Figure, *, square: bool = True, top: bool = False, tickangle: int | None = None
) -> go.Figure:
    """Category axes for a matrix: row 0 at the top; with `square`, one cell is as wide as
    it is tall and the grid shrinks to fit (`constrain="domain"`); with `top`, the column
    labels sit above the grid."""
    x: dict[str, object] = {"type": "category"}
    y: dict[str, object] = {"type": "category", "autorange": "reversed"}
    if square:
        x["constrain"] = y["constrain"] = "domain"
        y["scaleanchor"] = "x"
    if top:
        x["side"] = "top"
    if tickangle is not None:
        x["tickangle"] = tickangle
    fig.update_xaxes(**x)
    fig.update_yaxes(**y)
    return fig


HALF_WIDTH_PX = 460  # a chart in one of two columns at a 1400 px window (measured in Chromium)
THIRD_WIDTH_PX = 300  # a chart in one of three columns
