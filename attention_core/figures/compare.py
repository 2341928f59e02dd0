"""Figures for comparing heads: the layer × head model view, difference and similarity maps,
and bar charts of head statistics.

The model view follows jessevig/bertviz's `model_view` (every layer × head of a pretrained
model at a glance), drawn as heatmaps. It is ONE heatmap trace: all panels tiled into a
single matrix with NaN gaps between them, one pair of axes and one colour scale. A
72-subplot figure would make Plotly lay out 72 axis pairs; one tiled trace paints as one
image. Long inputs are shown as thumbnails: each cell is the largest weight of a block of
tokens (max, not mean, so a sharp one-token pattern such as "attend to the previous token"
stays visible instead of averaging away).

As in attention_core/figures/heads.py, data is prepared by a pure function (`model_view`)
and drawn by a thin `plot_*` function; arrays reach Plotly as float32. The data keeps the raw
text; each `plot_*` function escapes it once (`figures.text.literal`), so tokens are drawn
as typed, not read as Plotly's markup.

Shape legend: L layers, H heads, n tokens (k keys where they are not the n queries: cross-
attention), t cells per panel side (u across), b tokens per cell side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attention_core.compare import diverging_limit
from attention_core.figures.matrix import matrix_figure
from attention_core.figures.scales import ColourScale, colour_bar, colour_scale
from attention_core.figures.style import FONT, Y_TITLE_PX, tick_angle, y_title_above
from attention_core.figures.text import literal, literals

__all__ = [
    "CELL_PX_MIN",
    "THUMB_CELLS",
    "ModelView",
    "model_view",
    "model_view_colours",
    "plot_difference",
    "plot_model_view",
    "plot_similarity",
    "plot_stat_bars",
    "without_cramped_text",
]

THUMB_CELLS = 64  # most cells per panel side in the model view; longer inputs are pooled
_GAP = 1  # NaN rows/columns between panels (drawn transparent)
_WIDTH_PX = 1100  # about the plot width of the wide layout; sets the panel height
_DIFF_TEXT_MAX = 10  # "+0.00" in every cell up to this many tokens
CELL_PX_MIN = 36  # narrower cells cannot hold "0.00" in 11 px type: the numbers overlap


@dataclass(frozen=True)
class ModelView:
    """Plain data for `plot_model_view`: every panel tiled into one matrix."""

    tiles: np.ndarray  # (L·(t+1)−1, H·(t+1)−1) float32; NaN between panels
    num_layers: int  # L
    num_heads: int  # H
    cells: int  # t: cells per panel side
    block: int  # b: tokens per cell side (1 = every weight is shown)
    tokens: int  # n: keys per panel before pooling (the "relative" scale's 1/n)
    x: list[str]  # one unique label per column: "head h · key"
    y: list[str]  # one unique label per row: "layer l · query"
    x_ticks: list[str]  # the column label at the centre of each head's panels
    y_ticks: list[str]  # the row label at the centre of each layer's panels
    head_titles: list[str]
    layer_titles: list[str]
    key_cells: int | None = None  # u: cells per panel across, where keys ≠ queries (cross)

    def panel(self, layer: int, head: int) -> np.ndarray:
        """The (t, u) cells of one layer and head, read back from the tiles."""
        u = self.cells if self.key_cells is None else self.key_cells
        r, c = layer * (self.cells + _GAP), head * (u + _GAP)
        return self.tiles[r : r + self.cells, c : c + u]


def _pool_max(w: np.ndarray, block: int) -> np.ndarray:
    """(..., n, k) → (..., t, u) with t = ceil(n / b), u = ceil(k / b): the largest weight
    of each block."""
    if block == 1:
        return w
    n, k = w.shape[-2:]
    t, u = math.ceil(n / block), math.ceil(k / block)
    # zero padding cannot win a max: weights are >= 0
    pad = [(0, 0)] * (w.ndim - 2) + [(0, t * block - n), (0, u * block - k)]
    blocks = np.pad(w, pad).reshape(*w.shape[:-2], t, block, u, block)  # (..., t, b, u, b)
    return blocks.max(axis=(-3, -1))  # (..., t, u)


def _cell_names(labels: Sequence[str], n: int, block: int) -> list[str]:
    if block == 1:
        return list(labels)
    names = []
    for start in range(0, n, block):
        end = min(start + block, n) - 1
        names.append(f"{start}–{end}")
    return names


def model_view(
    attentions: np.ndarray,
    labels: Sequence[str],
    *,
    max_cells: int = THUMB_CELLS,
    layer_title: str = "layer {l}",
    head_title: str = "head {i}",
    layer_ids: Sequence[int] | None = None,
    head_ids: Sequence[int] | None = None,
    key_labels: Sequence[str] | None = None,
) -> ModelView:
    """(L, H, n, n) weights → one tiled matrix; panels pooled to at most `max_cells` a side.

    `labels` are the n `index:token` labels; pooled cells are labelled by their token range.
    `layer_ids` / `head_ids` name the panels when they are a choice of the model's layers
    and heads (default 0 … L−1, 0 … H−1). `key_labels`: cross-attention (L, H, n, k),
    whose k keys are not the n queries (an encoder-decoder's decoder → encoder).
    """
    w = np.asarray(attentions, dtype=np.float32)
    if w.ndim != 4 or (key_labels is None and w.shape[-1] != w.shape[-2]):
        raise ValueError(f"attentions must have shape (L, H, n, n), got {w.shape}")
    if max_cells < 1:
        raise ValueError(f"max_cells must be >= 1, got {max_cells}")
    L, H, n, k = w.shape
    keys = labels if key_labels is None else key_labels
    if len(labels) != n or len(keys) != k:
        raise ValueError(f"need one label per token: {n} × {k} tokens, {len(labels)} labels")
    block = max(1, math.ceil(max(n, k) / max_cells))
    pooled = _pool_max(w, block)  # (L, H, t, u)
    t, u = pooled.shape[-2:]
    rstep, cstep = t + _GAP, u + _GAP
    # pad every panel with NaN on its right and bottom, then lay the panels out row-major
    padded = np.pad(
        pooled, [(0, 0), (0, 0), (0, _GAP), (0, _GAP)], constant_values=np.nan
    )  # (L, H, t+1, u+1)
    tiles = padded.transpose(0, 2, 1, 3).reshape(L * rstep, H * cstep)  # (L·(t+1), H·(u+1))
    tiles = np.ascontiguousarray(tiles[: L * rstep - _GAP, : H * cstep - _GAP])

    rows, columns = _cell_names(labels, n, block), _cell_names(keys, k, block)
    layer_ids = list(range(L)) if layer_ids is None else list(layer_ids)
    head_ids = list(range(H)) if head_ids is None else list(head_ids)
    if len(layer_ids) != L or len(head_ids) != H:
        raise ValueError(f"need {L} layer ids and {H} head ids")
    layer_titles = [layer_title.format(l=layer) for layer in layer_ids]
    head_titles = [head_title.format(i=head) for head in head_ids]
    # Category labels must be unique, or Plotly merges the rows/columns that share one.
    y = [
        f"{layer_titles[r // rstep]} · {rows[r % rstep]}" if r % rstep < t else f"·{r}"
        for r in range(tiles.shape[0])
    ]
    x = [
        f"{head_titles[c // cstep]} · {columns[c % cstep]}" if c % cstep < u else f"·{c}"
        for c in range(tiles.shape[1])
    ]
    return ModelView(
        tiles=tiles,
        num_layers=L,
        num_heads=H,
        cells=t,
        block=block,
        tokens=k,
        x=x,
        y=y,
        x_ticks=[x[h * cstep + u // 2] for h in range(H)] if u else [],
        y_ticks=[y[layer * rstep + t // 2] for layer in range(L)] if t else [],
        head_titles=head_titles,
        layer_titles=layer_titles,
        key_cells=u,
    )


def model_view_colours(
    view: ModelView, scale: str = "absolute", *, zmin: float = 0.0, zmax: float = 1.0
) -> ColourScale:
    """The colour scale `scale` (`figures.scales.SCALES`) of a tiled model view: ONE colour
    axis for the whole heatmap (it is one trace), built by `figures.scales.colour_scale`.

    - absolute: zmin … zmax (0 … 1);
    - relative: 0 … RELATIVE_MAX / n, 1/n (white) in the middle, n being the view's tokens
      (`view.tokens`), not its pooled cells; on thumbnails (block > 1) each cell is the
      largest weight of its block, so cells lean above the even share;
    - contrast: 0 … the largest value shown in any panel (not each panel's own maximum,
      as `plot_heads` does: one trace has one colour axis). The NaN gaps are left out.
    """
    if scale == "relative":
        probe = np.zeros((1, 1, view.tokens), dtype=np.float32)  # (1, 1, n): only n counts
    else:
        shown = view.tiles[~np.isnan(view.tiles)]  # (L·H·t²,) every cell, no gaps
        probe = shown.reshape(1, 1, -1)  # (1, 1, L·H·t²): all panels as one → one axis
    return colour_scale(scale, probe, zmin=zmin, zmax=zmax)


def plot_model_view(
    view: ModelView,
    *,
    scale: str = "absolute",
    zmin: float = 0.0,
    zmax: float = 1.0,
    colorscale: str | None = None,
    colorbar_title: str = "",
) -> go.Figure:
    """The tiled layer × head grid as one heatmap: heads across, layers down, no cell text.

    Colours by `scale` (`model_view_colours`: absolute zmin … zmax, relative to 1/n, or
    contrast: 0 … the largest value shown, one colour axis for every panel); z holds the
    weights under every scale, so hover reads the absolute weight. `colorscale` overrides
    the scale's own colours. The NaN gaps between panels stay transparent.

    Labels (they hold tokens) and titles are drawn literally: escaped here, and the tick
    values with them, so they still name the escaped categories.
    """
    if view.cells == 0 or view.tiles.size == 0:  # no tokens: an empty figure, not an error
        return go.Figure(layout={"height": 120})
    colours = model_view_colours(view, scale, zmin=zmin, zmax=zmax)
    (low, high), *_ = colours.limits
    panel_px = min(160.0, max(40.0, _WIDTH_PX / view.num_heads))
    fig = matrix_figure(
        view.tiles,
        literals(view.x),
        literals(view.y),
        title="",
        height=int(view.num_layers * panel_px + 70),
        top_px=40,
        axes={"top": True},
        zmin=low,
        zmax=high,
        colorscale=colorscale or colours.colorscale,
        hoverongaps=False,
        hovertemplate="%{y} → %{x}: %{z:.3f}<extra></extra>",
        colorbar=colour_bar(colours, colorbar_title),
    )
    # one tick per head (across) and per layer (down), at the centre of its panels; the
    # NaN gaps between panels stay transparent
    ticks = {"tickmode": "array", "showgrid": False}
    fig.update_xaxes(**ticks, tickvals=literals(view.x_ticks), ticktext=literals(view.head_titles))
    fig.update_yaxes(**ticks, tickvals=literals(view.y_ticks), ticktext=literals(view.layer_titles))
    fig.update_layout(plot_bgcolor="rgba(0,0,0,0)")
    return fig


def without_cramped_text(fig: go.Figure, *, width_px: float = _WIDTH_PX) -> go.Figure:
    """Drop the numbers written in heatmap cells when the cells are too narrow for them.

    `plot_heads` writes every weight into its cell for up to 12 tokens; with 12 heads in
    four columns (or a grid in half the page) the numbers run into each other. `width_px`
    is the width the figure gets on the page; the panels in one row of the figure share
    it. Returns `fig`, changed in place.
    """
    heatmaps = [t for t in fig.data if t.type == "heatmap" and t.z is not None]
    if not heatmaps:
        return fig
    n = max(np.asarray(t.z).shape[-1] for t in heatmaps)
    # one x axis per panel; panels in the same column share a domain
    columns = {tuple(fig.layout[k].domain or (0, 1)) for k in fig.layout if k.startswith("xaxis")}
    if width_px / (max(len(columns), 1) * n) < CELL_PX_MIN:
        fig.update_traces(texttemplate=None, selector={"type": "heatmap"})
    return fig


def plot_difference(
    diff: np.ndarray,
    labels: Sequence[str],
    *,
    title: str = "",
    colorbar_title: str = "A − B",
    height: int | None = None,
    zoom: bool = False,
) -> go.Figure:
    """A − B as a heatmap with a diverging scale centred on 0.

    Blue: A puts more weight there; red: B does; white: the same. The limits are ±1, the
    most two weights can differ, so noise between two untrained heads stays pale; with
    `zoom`, ±max|A − B| (±1 when the heads are identical), and the caller says so (the
    colour bar title is the place). Text is drawn literally.
    """
    labels, title = literals(labels), literal(title)
    d = np.asarray(diff, dtype=np.float32)
    if d.ndim != 2 or d.size == 0:
        return go.Figure(layout={"height": 120, "title": {"text": title}})
    limit = diverging_limit(d) if zoom else 1.0
    n = d.shape[0]
    return matrix_figure(
        d,
        labels,
        labels,
        title=title,
        height=height or max(300, min(720, 140 + 42 * n)),
        top_px=50 if title else 20,
        cell_text="%{z:+.2f}" if n <= _DIFF_TEXT_MAX else None,
        axes={"tickangle": tick_angle(n)},
        colorscale="RdBu",
        zmid=0.0,
        zmin=-limit,
        zmax=limit,
        hovertemplate="%{y} → %{x}: %{z:+.4f}<extra></extra>",
        colorbar={"title": {"text": literal(colorbar_title)}, "thickness": 14},
    )


def plot_similarity(
    similarity: np.ndarray,
    names: Sequence[str],
    *,
    order: Sequence[int] | None = None,
    title: str = "",
    colorbar_title: str = "",
    zmin: float | None = None,
) -> go.Figure:
    """(H, H) head similarity as a heatmap, rows and columns in `order` (default: as given).

    The colour scale runs from `zmin` to 1; by default from 0, where the similarity's
    meaning starts: untrained heads, all 0.95 or more alike, then look alike, as they are.
    A caller that zooms (passes a higher `zmin`) says so in the colour bar title. Text is
    drawn literally.
    """
    s = np.asarray(similarity, dtype=np.float32)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] != len(names):
        raise ValueError(
            f"similarity must be (H, H) with one name per head, got {s.shape} and "
            f"{len(names)} names"
        )
    title = literal(title)
    if s.size == 0:
        return go.Figure(layout={"height": 120, "title": {"text": title}})
    idx = list(range(len(names))) if order is None else list(order)
    if sorted(idx) != list(range(len(names))):
        raise ValueError(f"order must be a permutation of 0..{len(names) - 1}, got {idx}")
    shown = np.ascontiguousarray(s[np.ix_(idx, idx)])  # (H, H) reordered
    if zmin is None:
        zmin = 0.0
    labels = literals(names[i] for i in idx)
    H = len(idx)
    return matrix_figure(
        shown,
        labels,
        labels,
        title=title,
        height=max(300, min(720, 140 + 30 * H)),
        top_px=50 if title else 20,
        cell_text="%{z:.2f}" if H <= 16 else None,
        axes={"tickangle": tick_angle(H)},
        zmin=zmin,
        zmax=1.0,
        colorscale="Viridis",
        hovertemplate="%{y} ~ %{x}: %{z:.3f}<extra></extra>",
        colorbar={"title": {"text": literal(colorbar_title)}, "thickness": 14},
    )


def plot_stat_bars(
    values: Sequence[float],
    names: Sequence[str],
    *,
    order: Sequence[int] | None = None,
    title: str = "",
    axis_title: str = "",
    y_range: tuple[float, float] | None = None,
) -> go.Figure:
    """One statistic per head as bars, in `order` (e.g. `compare.sort_heads`); text literal.

    `y_range`: the statistic's whole range (0…1 for entropy and the weight shares), so that
    heads 0.97 and 0.99 alike do not look far apart; None lets Plotly fit the data.
    `axis_title` names the statistic above the y axis, written across (`y_title_above`).
    """
    if len(values) != len(names):
        raise ValueError(f"need one name per value: {len(values)} values, {len(names)} names")
    idx = list(range(len(values))) if order is None else list(order)
    fig = go.Figure(
        go.Bar(
            x=literals(names[i] for i in idx),
            y=np.asarray([values[i] for i in idx], dtype=np.float32),
            marker_color="#3b75af",
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.update_xaxes(type="category", tickangle=-45 if len(idx) > 8 else 0)
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    top = (50 if title else 20) + (Y_TITLE_PX if axis_title else 0)
    fig.update_layout(
        title={"text": literal(title)},
        annotations=[y_title_above(literal(axis_title))] if axis_title else [],
        height=320 + (Y_TITLE_PX if axis_title else 0),
        margin={"l": 10, "r": 10, "t": top, "b": 10},
        font=FONT,
    )
    return fig
