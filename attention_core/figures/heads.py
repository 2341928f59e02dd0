"""The main view: one heatmap per head, heads side by side, one colour scale of three.

Colours are one of the three scales of `figures.scales` (relative to an even share, the
default; absolute 0…1; per-head contrast); hover always reads the absolute weight (z, or
customdata where causal rows are coloured by their own even share). Panels, labels and cell
numbers follow the one rule of `figures.layout`, as `figures.matrix.matrix_figure` does.

Rows are queries, columns are keys, both labelled `index:token` (Plotly merges equal
category labels, so the index keeps repeated tokens apart). Every text reaches Plotly through
`figures.text.literal`, once, at the entry of each builder: tokens are what a student typed,
and Plotly would otherwise read "<b>" or "<br>" in them as markup. Matrices go to Plotly as
float32 NumPy arrays, which Plotly serialises as base64 typed arrays: the payload stays
close to the raw n²·H·4 bytes instead of growing as JSON floats.

Drawing cost (bench/README.md): in the browser a heatmap costs per cell, per byte of the
figure (re-parsed on every update) and per labelled axis (every label measured). So axis
margins are fixed here, only the outer axes carry labels, and a grid too large to send as
numbers (`IMAGE_CELLS`) is sent as pictures (`_picture`), except the `exact` panels, which
stay heatmaps whose hover reads the exact weight.
The scales (`colour_scale`, ...) and `plot_matrix` / `matrix_figure` are importable here.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.layout import (
    FONT_PX,
    LABEL_CHARS_MAX,
    MIN_WIDTH_META,
    NOMINAL_WIDTH_PX,
    PanelLayout,
    axis_ticks,
    column_px,
    panel_layout,
    title_lines,
)
from attention_core.figures.matrix import matrix_figure, plot_matrix
from attention_core.figures.png import colour_indices, palette_png
from attention_core.figures.png import palette as sampled_palette
from attention_core.figures.scales import (
    DEFAULT_SCALE,
    RELATIVE_MAX,
    SCALES,
    ColourScale,
    colour_bar,
    colour_scale,
    colour_stops,
)
from attention_core.figures.style import FONT
from attention_core.figures.text import literals

__all__ = [
    "CELL_TEXT_MAX",
    "DEFAULT_SCALE",
    "IMAGE_CELLS",
    "LABEL_CHARS_MAX",
    "PICTURE_LEVELS",
    "RELATIVE_MAX",
    "SCALES",
    "ColourScale",
    "HeadGrid",
    "colour_scale",
    "head_grid",
    "heads_spec",
    "matrix_figure",
    "plot_heads",
    "plot_matrix",
    "pooled",
]

CELL_TEXT_MAX = 12  # the quiz offers one radio button per token up to this many tokens
# Above this many cells in one grid (n² × panels) the panels other than `exact` ones are sent
# as pictures. 2^19 cells are 2.8 MB of base64 float32: measured in bench/, a typed update
# of a 512-token grid of 4 heatmaps (5.6 MB) cost more browser CPU than 12 heads as pictures.
IMAGE_CELLS = 1 << 19
# A picture panel uses this many evenly spaced colours of its scale. On the relative scale an
# untrained 512-token head fills the whole scale with noise, which 256 colours compress
# badly (240 kB a 512² panel); 16–17 compress to 131 kB (measured), 74 kB at the 352 pixels
# a side the panel is drawn (`pooled`), and still show the structure; the exact panel
# keeps every shade. An odd number: the middle of a diverging scale (the relative scale's
# 1 × = white) is one of the levels; with 16 an even share was drawn light red.
PICTURE_LEVELS = 17
TITLE_PX = 24  # room above each panel for its title (one line) ...
TITLE_LINE_PX = 17  # ... and for each further line of a title broken to fit its column
TITLE_FONT_PX = 13
ROW_GAP_PX = 8  # between a panel and the title below it when no labels are in between
NO_TICKS = {"showticklabels": False, "ticks": ""}
COLORBAR_LEN_PX = 360  # a head grid's colour bar is at most this long
MASKED_COLOUR = "#d4d4d4"  # causal rows' masked cells: neither more nor less than even


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


def _heatmap_trace(
    z: np.ndarray, labels: list[str], name: str, axis: str, coloraxis: str, *, text: int,
    weights: np.ndarray | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One panel as a heatmap trace on axes x{axis}/y{axis}, coloured by `coloraxis`,
    with its weights written in `text` px type (0: none; `layout.cell_number_px`).
    `weights`: the weights when `z` is not them (colours per row: `ColourScale.values`);
    hover and cell numbers read them.

    `labels` and `name` are already escaped (`literal`): they go to Plotly as they are.
    """
    shown = "%{z:.3f}" if weights is None else "%{customdata:.3f}"
    trace: dict[str, Any] = {
        "type": "heatmap",
        "z": z,  # float32: serialised as a base64 typed array
        "x": labels,
        "y": labels,
        "name": name,
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "coloraxis": coloraxis,
        "hovertemplate": "%{y} → %{x}: " + shown + "<extra>" + name + "</extra>",
        # no gaps: Plotly then paints one pixel per cell and lets the browser scale it
        # (its fast path); with gaps it fills one rectangle per cell
        "xgap": 1 if text else 0,
        "ygap": 1 if text else 0,
    }
    if weights is not None:  # (a heatmap's texttemplate reads z and text, not customdata)
        trace["customdata"] = weights
    if text:
        trace["texttemplate"] = "%{z:.2f}" if weights is None else "%{text}"
        trace["textfont"] = {"size": text}
        if weights is not None:
            trace["text"] = [[f"{w:.2f}" for w in row] for row in weights.tolist()]
    return trace


def pooled(z: np.ndarray, px: int) -> np.ndarray:
    """(n, n) → (m, m) with m = min(n, px): each pixel the mean of the cells it covers.

    A picture is drawn `px` screen pixels wide: with more tokens than that, neighbouring
    tokens share a pixel anyway, and the browser, scaling a full picture down, would show
    one token's row of each such group and drop the others; averaging keeps them all.
    """
    n = z.shape[0]
    if n <= px:
        return z
    edges = np.linspace(0, n, px + 1).round().astype(np.int64)  # (m + 1,) pixel boundaries
    share = 1.0 / np.diff(edges).astype(z.dtype)  # (m,) 1 / cells per pixel
    # sums over each pixel's rows, then its columns (one thread: a BLAS product of averaging
    # matrices was faster alone but several times slower beside the browser on two cores)
    rows = np.add.reduceat(z, edges[:-1], axis=0)  # (m, n)
    sums = np.add.reduceat(rows, edges[:-1], axis=1)  # (m, m)
    return sums * share[:, None] * share[None, :]  # (m, m) means


def _picture(
    z: np.ndarray, palette: np.ndarray, axis: str, *, zmin: float, zmax: float, px: int
) -> dict[str, Any]:
    """One panel as a layout image on axes x{axis}/y{axis}: a palette PNG of its colours
    (PICTURE_LEVELS of them), at most `px` pixels a side (`pooled`), stretched over the
    panel's n × n cells, query 0 on top.

    A layout image rather than an image trace: Plotly decodes an image trace's whole PNG in
    JavaScript and paints it into a canvas of its own, to read the colour under the mouse;
    measured in Chromium at 512 tokens × 12 heads, the layout images cost ~0.1 s less per
    update. The price: no hover on a picture (the exact panels have it).
    """
    n = z.shape[0]
    idx = colour_indices(pooled(z, px), zmin, zmax)  # (m, m) 0…255
    step = 255 / (PICTURE_LEVELS - 1)
    idx = np.rint(np.rint(idx / step) * step).astype(np.uint8)  # PICTURE_LEVELS colours
    png = palette_png(idx, palette)
    return {
        "source": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
        "xref": f"x{axis}",
        "yref": f"y{axis}",
        "x": -0.5,  # the left edge of key 0
        "y": -0.5,  # the top edge of query 0 (the y axis runs downwards)
        "sizex": n,
        "sizey": n,
        "sizing": "stretch",
        "xanchor": "left",
        "yanchor": "top",
        "layer": "below",
    }


def _picture_ticks(layout: PanelLayout) -> dict[str, Any]:
    """A picture panel's axis (numeric, 0 … n-1): token indices, as many as fit."""
    plan = layout.ticks
    if not plan.shown:
        return dict(NO_TICKS)
    return {
        "showticklabels": True,
        "tickmode": "auto",
        "nticks": max(2, math.ceil(plan.n / plan.step)),
        "tickfont": {"size": plan.font_px},
        "tickangle": 0,
    }


def heads_spec(
    grid: HeadGrid,
    *,
    scale: str = "absolute",
    zmin: float = 0.0,
    zmax: float = 1.0,
    colorscale: str | None = None,
    colorbar_title: str = "",
    cols: int | None = None,
    panel_px: int | None = None,
    exact: Sequence[int] = (0,),
    width_px: float = NOMINAL_WIDTH_PX,
    row_shares: bool = True,
    fonts: Sequence[int] = FONT_PX,
) -> dict[str, Any]:
    """`plot_heads`' figure as a plain dict ({"data": [...], "layout": {...}}) for ui/charts.py.

    One heatmap per panel in a grid, square cells, colours by `scale` (see `colour_scale`;
    `row_shares`: causal rows relative to their own even share 1/(i+1), the landing page's).
    `width_px`: the width the chart gets on the page (a half-width column: HALF_WIDTH_PX);
    `fonts`: the label sizes allowed (`layout.panel_layout`; a projector's: one size).

    Layout and labels follow the one rule of `figures.layout`. Built for speed in the
    browser: axis margins are computed here (no automargin), queries are labelled left of
    the first column and keys under the lowest panel of each column only.

    A grid of more than IMAGE_CELLS cells draws its panels as pictures (same colours, at most
    the panel's pixels a side, no hover: `_picture`), except the `exact` panels (heatmaps).

    Labels and titles are drawn literally (escaped once here, a broken title line by line).
    """
    P, n = grid.matrices.shape[0], len(grid.labels)
    if P == 0 or n == 0:
        return go.Figure(layout={"height": 120})
    cols_asked, panel_asked, asked = cols, panel_px, {"width_px": width_px, "fonts": fonts}
    plan = panel_layout(grid.labels, P, cols=cols, panel_px=panel_px, **asked)
    cols, rows, panel, ticks = plan.cols, plan.rows, plan.panel_px, plan.ticks
    colours = colour_scale(scale, grid.matrices, zmin=zmin, zmax=zmax, rows=row_shares)
    by_row = colours.rows is not None  # causal rows: colours in multiples of 1/(i+1)
    colorscale = colorscale or colours.colorscale
    stops = colour_stops(colorscale)  # the figure skips Plotly's validation, which does this
    categories = literals(grid.labels)  # what Plotly gets: shown literally
    names = literals(grid.titles)
    pictures = n * n * P > IMAGE_CELLS
    palette = sampled_palette(colorscale) if pictures else None
    x_ticks, y_ticks = axis_ticks(ticks, categories, "x"), axis_ticks(ticks, categories, "y")

    # --- room for labels and titles, in pixels -------------------------------------------
    y_labels_px = ticks.margin_px if ticks.shown else 0
    if pictures and 0 not in exact:
        y_labels_px = 8 + math.ceil(len(str(n)) * 0.62 * ticks.font_px) if ticks.shown else 0
    x_band_px = ticks.band_px
    # a title wider than its column breaks into lines (layout.title_lines): neighbouring
    # titles never run into each other, and every row of panels makes room for the most
    title_width = column_px(cols, width_px=width_px, margin_px=10 + y_labels_px) - 8
    lines = [title_lines(title, max(title_width, 40.0), TITLE_FONT_PX) for title in grid.titles]
    shown_titles = ["<br>".join(literals(title)) for title in lines]
    most_lines = max(len(title) for title in lines)
    title_px = TITLE_PX + TITLE_LINE_PX * (most_lines - 1) if any(names) else 6

    # keys are labelled under the lowest panel of each column only, queries left of the
    # first column only: a labelled axis is the expensive part of drawing a panel (Plotly
    # measures each of its labels), and every panel of a column shares the same keys
    def keys_shown(p: int) -> bool:
        return ticks.shown and p + cols >= P

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
    pictures_drawn: list[dict[str, Any]] = []
    layout: dict[str, Any] = {}
    titles: list[dict[str, Any]] = []
    axis_of = (
        (lambda p: "coloraxis")
        if colours.shared
        else (lambda p: "coloraxis" if p == 0 else f"coloraxis{p + 1}")
    )
    for p in range(P):
        r, c = divmod(p, cols)
        axis = "" if p == 0 else str(p + 1)
        picture = pictures and p not in exact
        name = names[p]
        lo, hi = colours.limits[p]
        if picture:
            pictures_drawn.append(
                _picture(
                    colours.values(grid.matrices[p]), palette, axis, zmin=lo, zmax=hi, px=panel
                )
            )
        else:
            traces.append(
                _heatmap_trace(
                    colours.values(grid.matrices[p]),
                    categories,
                    name,
                    axis,
                    axis_of(p),
                    text=plan.cell_font_px,
                    weights=grid.matrices[p] if by_row else None,
                )
            )
        x0 = c * (col_w + gap)
        top = 1 - tops[r] / y_px
        bottom = 1 - (tops[r] + panel) / y_px
        common = {
            # a picture's pixels sit at 0 … n-1 on a numeric axis, a heatmap's on categories
            "type": "linear" if picture else "category",
            "range": [-0.5, n - 0.5],
            "automargin": False,
            "showgrid": False,
            "zeroline": False,
            "constrain": "domain",
        }
        if picture:
            x_shown = y_shown = _picture_ticks(plan)
        else:
            x_shown, y_shown = x_ticks, y_ticks
        layout[f"xaxis{axis}"] = {
            **common,
            **(x_shown if keys_shown(p) else NO_TICKS),
            "domain": [x0, x0 + col_w],
            "anchor": f"y{axis}",
        }
        layout[f"yaxis{axis}"] = {
            **common,
            **(y_shown if ticks.shown and c == 0 else NO_TICKS),
            "range": [n - 0.5, -0.5],  # query 0 on top, as in a matrix
            "domain": [max(0.0, bottom), min(1.0, top)],
            "anchor": f"x{axis}",
            "scaleanchor": f"x{axis}",  # square cells
            "constraintoward": "top",  # spare height goes below the panel, not between
        }
        if name:
            titles.append(
                {
                    "text": shown_titles[p],
                    "xref": "paper",
                    "yref": "paper",
                    "x": x0 + col_w / 2,
                    "y": min(1.0, top + 2 / y_px),
                    "xanchor": "center",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": TITLE_FONT_PX},
                }
            )
    if not any(t["type"] == "heatmap" for t in traces):
        # pictures only: an empty scatter on the shared colour axis keeps the colour bar
        lo, hi = colours.limits[0]
        traces.append(
            {
                "type": "scatter",
                "x": [None, None],
                "y": [None, None],
                "mode": "markers",
                "marker": {"color": [lo, hi], "coloraxis": "coloraxis"},
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
    colour_axes: dict[str, Any] = {}
    for p in range(1 if colours.shared else P):
        lo, hi = colours.limits[p]
        colour_axes["coloraxis" if p == 0 else f"coloraxis{p + 1}"] = {
            "colorscale": stops,
            "cmin": lo,
            "cmax": hi,
            "showscale": p == 0,
        }
    colour_axes["coloraxis"]["colorbar"] = colour_bar(
        colours,
        colorbar_title,
        # beside the first row, not the whole height: a tall grid would stretch its ticks
        lenmode="pixels",
        len=max(120, min(height - 40, COLORBAR_LEN_PX)),
        yanchor="top",
        y=1.0,
    )
    layout.update(
        **colour_axes,
        annotations=titles,
        height=height,
        margin=margin,
        font=FONT,
        showlegend=False,
    )
    if pictures_drawn:
        layout["images"] = pictures_drawn
    if by_row:  # the masked cells (no colour) show the plot's background: grey, not "even"
        layout["plot_bgcolor"] = MASKED_COLOUR
    if cols_asked is None and panel_asked is None:
        # the width the layout rule planned for: much narrower (a phone), the chart keeps it
        # and scrolls sideways in its own box instead of squeezing its labels (ui/charts.py)
        layout["meta"] = {MIN_WIDTH_META: round(width_px)}
    return {"data": traces, "layout": layout}


def plot_heads(grid: HeadGrid, *, row_shares: bool = False, **options: Any) -> go.Figure:
    """One heatmap per panel in a grid (`heads_spec`, same keyword options) as a figure;
    causal rows on the relative scale keep 1/n unless `row_shares` (the masks page says so).

    Not validated property by property (on every rerun: 16 → 4 ms at 32 tokens × 8 heads);
    the dicts follow Plotly's schema, and tests/core/figures/test_heads.py checks that the
    validated figure is the same."""
    spec = heads_spec(grid, row_shares=row_shares, **options)
    return go.Figure(data=spec["data"], layout=spec["layout"], _validate=False)
