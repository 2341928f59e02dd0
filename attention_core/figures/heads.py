"""The main view: one heatmap per head, heads side by side, one shared colour scale.

Rows are queries, columns are keys, both labelled `index:token` (Plotly merges equal
category labels, so the index keeps repeated tokens apart). Every text reaches Plotly through
`figures.text.literal`, once, at the entry of each builder: tokens are what a student typed,
and Plotly would otherwise read "<b>" or "<br>" in them as markup. Matrices go to Plotly as
float32 NumPy arrays, which Plotly serialises as base64 typed arrays: the payload stays
close to the raw n²·H·4 bytes instead of growing as JSON floats.

Drawing cost (measured in bench/, see bench/README.md): in the browser a heatmap costs per
cell (Plotly colours every cell in JavaScript) and per byte of the figure (Streamlit's
front end stringifies, string-replaces its theme colours into and re-parses the whole
figure JSON on every update), and each labelled axis costs a measurement of every label.
So axis margins are fixed here (no automargin), only the outer axes carry labels, and a
grid too large to send as numbers (`IMAGE_CELLS`) is sent as pictures: each panel becomes
a palette PNG of its colours (1 byte per cell before compression instead of 4), except
the `exact` panels, which stay heatmaps whose hover reads the exact weight.
"""

from __future__ import annotations

import base64
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.png import colour_indices, palette_png
from attention_core.figures.png import palette as sampled_palette
from attention_core.figures.style import FONT, matrix_axes
from attention_core.figures.text import literal, literals

__all__ = ["HeadGrid", "head_grid", "matrix_figure", "plot_heads", "plot_matrix"]

CELL_TEXT_MAX = 12  # write the weight into each cell up to this many tokens
TICKS_MAX = 48  # label axis ticks up to this many tokens; beyond, hover tells
COLORSCALE = "Blues"
# Above this many cells in one grid (n² × panels) the panels other than `exact` ones are sent
# as pictures. 2^19 cells are 2.8 MB of base64 float32: measured in bench/, a typed update
# of a 512-token grid of 4 heatmaps (5.6 MB) cost more browser CPU than 12 heads as pictures.
IMAGE_CELLS = 1 << 19
LABEL_CHARS_MAX = 12  # tick labels are cut to this many characters (hover shows them whole)
TICK_FONT_PX = 11
TITLE_PX = 24  # room above each panel for its title
ROW_GAP_PX = 8  # between a panel and the title below it when no labels are in between
NOMINAL_WIDTH_PX = 760  # about the main column of the wide layout: sizes the panels
NO_TICKS = {"showticklabels": False, "ticks": ""}


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


def _short(label: str, limit: int = LABEL_CHARS_MAX) -> str:
    """A tick label cut to `limit` characters (hover still shows the whole `index:token`).

    Takes the raw text: cut before `literal`, so an entity such as `&lt;` is never cut in half.
    """
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _text_px(text: str, font_px: float) -> float:
    """Rough rendered width of `text`: CJK and other wide characters 1 em, the rest 0.62 em.

    Axis labels get fixed room (automargin off, see `plot_heads`), so it is estimated here.
    """
    return sum(font_px if unicodedata.east_asian_width(c) in "WF" else 0.62 * font_px for c in text)


def _heatmap_trace(
    z: np.ndarray, labels: list[str], name: str, axis: str, *, text: bool
) -> dict[str, Any]:
    """One panel as a heatmap trace on axes x{axis}/y{axis}, coloured by the shared axis.

    `labels` and `name` are already escaped (`literal`): they go to Plotly as they are.
    """
    trace: dict[str, Any] = {
        "type": "heatmap",
        "z": z,  # float32: serialised as a base64 typed array
        "x": labels,
        "y": labels,
        "name": name,
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "coloraxis": "coloraxis",
        "hovertemplate": "%{y} → %{x}: %{z:.3f}<extra>" + name + "</extra>",
        # no gaps: Plotly then paints one pixel per cell and lets the browser scale it
        # (its fast path); with gaps it fills one rectangle per cell
        "xgap": 1 if text else 0,
        "ygap": 1 if text else 0,
    }
    if text:
        trace["texttemplate"] = "%{z:.2f}"
        trace["textfont"] = {"size": 11}
    return trace


def _image_trace(
    z: np.ndarray, palette: np.ndarray, name: str, axis: str, *, zmin: float, zmax: float
) -> dict[str, Any]:
    """One panel as a picture of its colours; hover names the query and key indices.

    `name` is already escaped (`literal`).
    """
    png = palette_png(colour_indices(z, zmin, zmax), palette)
    return {
        "type": "image",
        "source": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
        "name": name,
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "hovertemplate": "%{y} → %{x}<extra>" + name + "</extra>",
    }


def plot_heads(
    grid: HeadGrid,
    *,
    zmin: float = 0.0,
    zmax: float = 1.0,
    colorscale: str = COLORSCALE,
    colorbar_title: str = "",
    cols: int | None = None,
    panel_px: int | None = None,
    exact: Sequence[int] = (0,),
) -> go.Figure:
    """One heatmap per panel in a grid, square cells, one shared colour bar (zmin…zmax).

    Built for speed in the browser, which redraws it on every rerun: axis margins are
    computed here instead of by Plotly's automargin (which measures every tick label and
    redraws), queries are labelled left of the first column and keys under the lowest panel
    of each column only, and beyond TICKS_MAX tokens no tick labels are drawn (hover tells).

    A grid of more than IMAGE_CELLS cells draws its panels as pictures (same colours;
    hover gives the query and key indices), except the panels listed in `exact`, which stay
    heatmaps whose hover reads `query → key: weight`.

    Labels and titles are drawn literally (escaped once here); tick labels are cut and
    measured on the raw text.
    """
    P, n = grid.matrices.shape[0], len(grid.labels)
    if P == 0 or n == 0:
        return go.Figure(layout={"height": 120})
    cols = max(1, min(cols or _columns(P, n), P))
    rows = math.ceil(P / cols)
    text = n <= CELL_TEXT_MAX
    show_ticks = n <= TICKS_MAX
    labels = list(grid.labels)  # raw: cut and measured as the student typed them
    categories = literals(labels)  # what Plotly gets: shown literally
    names = literals(grid.titles)
    pictures = n * n * P > IMAGE_CELLS
    palette = sampled_palette(colorscale) if pictures else None

    # --- room for labels and titles, in pixels -------------------------------------------
    tick_text = [_short(label) for label in labels]
    # explicit tick texts only when a label had to be cut: else the categories are the texts
    ticks: dict[str, Any] = {"showticklabels": True}
    if tick_text != labels:
        ticks.update(tickmode="array", tickvals=categories, ticktext=literals(tick_text))
    widest = max(_text_px(t, TICK_FONT_PX) for t in tick_text) if show_ticks else 0.0
    angle = -45 if n > 6 else 0
    y_labels_px = math.ceil(widest) + 8 if show_ticks else 0
    if not show_ticks:
        x_band_px = 8
    elif angle:
        x_band_px = math.ceil(widest * math.sin(math.radians(-angle))) + TICK_FONT_PX + 8
    else:
        x_band_px = TICK_FONT_PX + 12
    title_px = TITLE_PX if any(names) else 6
    panel = panel_px or min(380, NOMINAL_WIDTH_PX // cols)

    # keys are labelled under the lowest panel of each column only, queries left of the
    # first column only: a labelled axis is the expensive part of drawing a panel (Plotly
    # measures each of its labels), and every panel of a column shares the same keys
    def keys_shown(p: int) -> bool:
        return show_ticks and p + cols >= P

    tops: list[int] = []  # pixels from the top of the plot area to each row's panels
    y_px = 0
    for r in range(rows):
        y_px += title_px
        tops.append(y_px)
        y_px += panel
        labelled = any(keys_shown(p) for p in range(r * cols, min(P, (r + 1) * cols)))
        y_px += x_band_px if labelled else ROW_GAP_PX
    margin = {"l": 10 + y_labels_px, "r": 10, "t": 10, "b": 10}
    height = y_px + margin["t"] + margin["b"]
    gap = 0.02 if cols > 1 else 0.0
    col_w = (1 - gap * (cols - 1)) / cols

    # --- traces, axes and titles ----------------------------------------------------------
    traces: list[dict[str, Any]] = []
    layout: dict[str, Any] = {}
    titles: list[dict[str, Any]] = []
    for p in range(P):
        r, c = divmod(p, cols)
        axis = "" if p == 0 else str(p + 1)
        picture = pictures and p not in exact
        name = names[p]
        if picture:
            traces.append(_image_trace(grid.matrices[p], palette, name, axis, zmin=zmin, zmax=zmax))
        else:
            traces.append(_heatmap_trace(grid.matrices[p], categories, name, axis, text=text))
        x0 = c * (col_w + gap)
        top = 1 - tops[r] / y_px
        bottom = 1 - (tops[r] + panel) / y_px
        common = {
            # a picture's pixels sit at 0 … n-1 on a numeric axis, a heatmap's on categories
            "type": "linear" if picture else "category",
            "range": [-0.5, n - 0.5],
            "automargin": False,
            "tickfont": {"size": TICK_FONT_PX},
            "showgrid": False,
            "zeroline": False,
            "constrain": "domain",
        }
        layout[f"xaxis{axis}"] = {
            **common,
            **(ticks if keys_shown(p) and not picture else NO_TICKS),
            "domain": [x0, x0 + col_w],
            "anchor": f"y{axis}",
            "tickangle": angle,
        }
        layout[f"yaxis{axis}"] = {
            **common,
            **(ticks if show_ticks and c == 0 and not picture else NO_TICKS),
            "range": [n - 0.5, -0.5],  # query 0 on top, as in a matrix
            "domain": [max(0.0, bottom), min(1.0, top)],
            "anchor": f"x{axis}",
            "scaleanchor": f"x{axis}",  # square cells
            "constraintoward": "top",  # spare height goes below the panel, not between
        }
        if name:
            titles.append(
                {
                    "text": name,
                    "xref": "paper",
                    "yref": "paper",
                    "x": x0 + col_w / 2,
                    "y": min(1.0, top + 2 / y_px),
                    "xanchor": "center",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": 13},
                }
            )
    if not any(t["type"] == "heatmap" for t in traces):
        # pictures only: an empty scatter on the shared colour axis keeps the colour bar
        traces.append(
            {
                "type": "scatter",
                "x": [None, None],
                "y": [None, None],
                "mode": "markers",
                "marker": {"color": [zmin, zmax], "coloraxis": "coloraxis"},
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
    layout.update(
        coloraxis={
            "colorscale": colorscale,
            "cmin": zmin,
            "cmax": zmax,
            "colorbar": {"title": {"text": literal(colorbar_title)}, "thickness": 14},
        },
        annotations=titles,
        height=height,
        margin=margin,
        font=FONT,
        showlegend=False,
    )
    return go.Figure(data=traces, layout=layout)


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
    """Any labelled matrix (Q, K, V, scores, differences) as one heatmap; rows top-down.

    Labels and title are drawn literally (escaped once here).
    """
    shown_title = literal(title)
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2 or m.size == 0:
        return go.Figure(layout={"height": 120, "title": {"text": shown_title}})
    rows, cols = m.shape
    show_text = (rows <= CELL_TEXT_MAX and cols <= 16) if text is None else text
    return matrix_figure(
        m,
        literals(col_labels),
        literals(row_labels),
        title=shown_title,
        height=height or max(220, min(640, 40 + 28 * rows)),
        top_px=60 if title else 30,
        cell_text="%{z:.2f}" if show_text else None,
        axes={"square": False, "top": True},
        colorscale=colorscale,
        zmid=zmid if zmin is None and zmax is None else None,
        zmin=zmin,
        zmax=zmax,
        hovertemplate="%{y}, %{x}: %{z:.4f}<extra></extra>",
    )


def matrix_figure(
    z: np.ndarray,
    x: Sequence[str],
    y: Sequence[str],
    *,
    title: str,
    height: int,
    top_px: int,
    cell_text: str | None = None,
    gaps: bool | None = None,
    axes: Mapping[str, Any] | None = None,
    **heatmap: Any,
) -> go.Figure:
    """One (rows, cols) matrix as one heatmap in the frame every single-matrix figure
    shares: category axes as `style.matrix_axes(**axes)` (row 0 on top), the house font,
    10 px margins but `top_px` above, `height` pixels in all.

    `x`, `y` and `title` come escaped (`literal`). `cell_text` is the texttemplate written
    into every cell (None: none); cells are parted by 1 px gaps where they carry text,
    unless `gaps` says otherwise. `heatmap` holds the rest of the go.Heatmap: colour
    scale and limits, hover, colour bar, custom data.
    """
    gap = int(bool(cell_text) if gaps is None else gaps)
    trace = go.Heatmap(z=z, x=x, y=y, xgap=gap, ygap=gap, **heatmap)
    if cell_text:
        trace.update(texttemplate=cell_text, textfont={"size": 10})
    fig = go.Figure(trace)
    matrix_axes(fig, **(axes or {}))
    fig.update_layout(
        title={"text": title},
        height=height,
        margin={"l": 10, "r": 10, "t": top_px, "b": 10},
        font=FONT,
    )
    return fig
