"""The "Watch it write" page's figures: a decoder's run (`attention_core.decode`) as plain
data first (`triangle`, `prefix_strip`, `lens_grid`), then one Plotly figure per view.

    triangle → plot_triangles      per head, the rows that chose each token so far: row i
                                   is step i's query over the t = prompt + i positions it
                                   met, so the rows grow into a triangle; the newest row
                                   framed
    prefix_strip → plot_strip      the prefix as one strip of cells, lit by the newest row
                                   (one layer, its heads' mean or one head), then the token
                                   that row chose
    plot_alternatives              the model's top-5 and their probabilities
    lens_grid → plot_lens          layers × steps: each layer's likeliest next token
    plot_cache                     the key/value cache's bytes, keys and values
    plot_step_differences          two branches: how far their rows part at each step

Every string a caller passes is drawn literally (`figures.text.literal`): tokens are what
the model wrote after what a student typed. The figures are plain dicts ({"data", "layout"},
as `figures.heads.heads_spec`), which ui/charts.py sends as they are: ▶ redraws five of
them, and building them as `go.Figure`s (make_subplots, validation) took longer than the
decoder's step.

Shape legend: S steps shown, L layers, H heads, T positions the newest row met, k
alternatives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attention_core.decode.result import DecodeResult
from attention_core.figures.scales import COLORSCALE, colour_stops
from attention_core.figures.steps import ANSWER_COLOR
from attention_core.figures.style import FONT, Y_TITLE_PX, tick_angle, y_title_above
from attention_core.figures.text import literal, literals
from attention_core.tokenize import token_labels

__all__ = [
    "KEY_COLOR",
    "NEWEST_COLOR",
    "VALUE_COLOR",
    "LensGrid",
    "Strip",
    "Triangle",
    "lens_grid",
    "plot_alternatives",
    "plot_cache",
    "plot_lens",
    "plot_step_differences",
    "plot_strip",
    "plot_triangles",
    "prefix_strip",
    "triangle",
]

NEWEST_COLOR = "#d62728"  # the newest row's frame, the chosen token's cell
KEY_COLOR, VALUE_COLOR = "#0068C9", "#83C9FF"
# plotly.js reads the name "Blues" dark-to-light; the stops keep Plotly Python's light-to-dark
BLUES = colour_stops(COLORSCALE)
BAR_COLOR = "#0068C9"
HEAD_COLUMNS = 2  # triangles per row: two stay readable on a phone and on a projector
PANEL_PX = 260  # one triangle's height
# presenter mode (ui/presenter.py) fills the window with a chart unless its meta says this:
# a one-row strip or five bars drawn a window tall would read as a wall of colour
KEEP_HEIGHT = {"studio_keep_height": True}
Spec = dict[str, Any]  # a Plotly figure as a plain dict: {"data": [...], "layout": {...}}


@dataclass(frozen=True)
class Triangle:
    """One layer's rows for steps 0 … S-1: per head an (S, T) matrix, NaN past each row."""

    heads: list[np.ndarray]  # H × (S, T) float32
    rows: list[str]  # S labels: "i→token", step i counted from 1 (the token row i chose)
    columns: list[str]  # T labels: index:token of the positions
    layer: int


@dataclass(frozen=True)
class Strip:
    """The newest row over the prefix it read, and the token it chose."""

    labels: list[str]  # T labels, index:token
    weights: np.ndarray  # (T,) float32
    chosen: str


@dataclass(frozen=True)
class LensGrid:
    """Per layer and step, the layer's likeliest token and its probability."""

    tokens: list[list[str]]  # L × S
    probs: np.ndarray  # (L, S) float32
    steps: list[str]  # S labels: "i→token" written, counted from 1


def _shown(result: DecodeResult, steps: int) -> int:
    return max(0, min(int(steps), len(result.steps)))


def _step_labels(result: DecodeResult, steps: int) -> list[str]:
    return [f"{i + 1}→{s.token}" for i, s in enumerate(result.steps[:steps])]


def triangle(result: DecodeResult, steps: int, layer: int) -> Triangle:
    """The first `steps` rows of `layer` (every head) as a growing triangle."""
    shown = _shown(result, steps)
    if shown == 0:
        return Triangle([], [], [], layer)
    width = result.steps[shown - 1].positions  # T
    heads = result.steps[0].attention.shape[1]
    out = np.full((heads, shown, width), np.nan, dtype=np.float32)  # (H, S, T)
    for i, step in enumerate(result.steps[:shown]):
        row = step.attention[layer]  # (H, t)
        out[:, i, : row.shape[-1]] = row
    return Triangle(
        heads=list(out),
        rows=_step_labels(result, shown),
        columns=token_labels(result.tokens[:width]),
        layer=layer,
    )


def prefix_strip(
    result: DecodeResult, steps: int, layer: int, head: int | None = None
) -> Strip | None:
    """The newest shown row of `layer` (its heads' mean, or `head`) over its prefix."""
    shown = _shown(result, steps)
    if shown == 0:
        return None
    step = result.steps[shown - 1]
    rows = step.attention[layer]  # (H, T)
    weights = rows.mean(axis=0) if head is None else rows[head]
    return Strip(
        labels=token_labels(result.tokens[: step.positions]),
        weights=weights.astype(np.float32),
        chosen=step.token,
    )


def lens_grid(result: DecodeResult, steps: int) -> LensGrid:
    """Layers × the first `steps` steps: each layer's likeliest next token (logit lens)."""
    shown = result.steps[: _shown(result, steps)]
    layers = shown[0].lens_probs.shape[0] if shown else 0
    return LensGrid(
        tokens=[[s.lens_tokens[layer][0] for s in shown] for layer in range(layers)],
        probs=np.array([[s.lens_probs[layer, 0] for s in shown] for layer in range(layers)],
                       dtype=np.float32).reshape(layers, len(shown)),
        steps=_step_labels(result, len(shown)),
    )  # fmt: skip


def _spec(data: list[Spec], title: str, height: int, **layout: Any) -> Spec:
    """The figure; its axes' margins fixed here (no automargin: Plotly would lay out twice
    whenever a new label changes a margin, and ▶ brings new labels every step)."""
    # untitled (the page writes titles above its charts): room for Plotly's toolbar only
    margin = {"t": 50 if title else 30, "b": 10, "l": 10, "r": 10, **layout.pop("margin", {})}
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            axis.setdefault("automargin", False)
    return {
        "data": data,
        "layout": {"title": {"text": literal(title)}, "font": FONT,
                   "height": height if title else height - 20,  # no title: its room
                   "margin": margin, **layout},
    }  # fmt: skip


def _empty(message: str, height: int = 120) -> Spec:
    hidden = {"visible": False}
    note = {"text": literal(message), "showarrow": False, "x": 0.5, "y": 0.5,
            "xref": "paper", "yref": "paper"}  # fmt: skip
    return _spec([], "", height, annotations=[note], xaxis=hidden, yaxis=hidden)


def _domains(count: int, gap: float) -> list[list[float]]:
    """`count` equal spans of 0…1, `gap` between neighbours; the first at the low end."""
    size = (1 - gap * (count - 1)) / count
    return [[i * (size + gap), i * (size + gap) + size] for i in range(count)]


def plot_triangles(
    tri: Triangle,
    *,
    title: str,
    head_titles: Sequence[str],
    colorbar_title: str,
    hover: str,
    empty: str = "",
) -> Spec:
    """One heatmap per head, HEAD_COLUMNS a row, rows = steps, columns = positions; the
    newest row framed. `hover`: a template with {step}, {key}, {weight} (translated)."""
    if not tri.heads:
        return _empty(empty)
    count = len(tri.heads)
    cols = min(HEAD_COLUMNS, count)
    grid_rows = -(-count // cols)
    rows, columns = literals(tri.rows), literals(tri.columns)
    template = (
        literal(hover).replace("{step}", "%{y}").replace("{key}", "%{x}")
        .replace("{weight}", "%{z:.3f}") + "<extra></extra>"
    )  # fmt: skip
    x_spans, y_spans = _domains(cols, 0.06), _domains(grid_rows, 0.1)[::-1]  # row 0 on top
    data, shapes, notes, layout = [], [], [], {}
    newest = len(rows) - 1
    for h, matrix in enumerate(tri.heads):
        r, c, n = h // cols, h % cols, str(h + 1) if h else ""
        bottom = r == grid_rows - 1 or h + cols >= count  # the lowest panel of its column
        data.append({
            "type": "heatmap", "z": matrix, "x": columns, "y": rows, "xaxis": f"x{n}",
            "yaxis": f"y{n}", "zmin": 0.0, "zmax": 1.0, "colorscale": BLUES,
            "showscale": h == 0, "hovertemplate": template, "xgap": 1, "ygap": 1,
            "colorbar": {"title": {"text": literal(colorbar_title)}, "thickness": 12},
        })  # fmt: skip
        layout[f"xaxis{n}"] = {"domain": x_spans[c], "anchor": f"y{n}", "type": "category",
                               "showticklabels": bottom and len(columns) <= 24,
                               "tickangle": -45, "tickfont": {"size": 11}}  # fmt: skip
        layout[f"yaxis{n}"] = {"domain": y_spans[r], "anchor": f"x{n}", "type": "category",
                               "autorange": "reversed", "tickfont": {"size": 11},
                               "showticklabels": c == 0 and len(rows) <= 32}  # fmt: skip
        shapes.append({"type": "rect", "xref": f"x{n}", "yref": f"y{n}", "x0": -0.5,
                       "x1": len(columns) - 0.5, "y0": newest - 0.5, "y1": newest + 0.5,
                       "line": {"color": NEWEST_COLOR, "width": 2}})  # fmt: skip
        notes.append({"text": literal(head_titles[h]) if h < len(head_titles) else "",
                      "x": sum(x_spans[c]) / 2, "y": y_spans[r][1], "xref": "paper",
                      "yref": "paper", "xanchor": "center", "yanchor": "bottom",
                      "showarrow": False, "font": {"size": 14}})  # fmt: skip
    return _spec(data, title, 110 + PANEL_PX * grid_rows, shapes=shapes, annotations=notes,
                 margin={"t": 70 if title else 50, "l": 70,
                         "b": 60 if len(columns) <= 24 else 10},
                 **layout)  # fmt: skip


def plot_strip(strip: Strip | None, *, title: str, empty: str = "") -> Spec:
    """The prefix as cells lit by the newest row's weights, then the chosen token framed."""
    if strip is None:
        return _empty(empty)
    labels = [*literals(strip.labels), literal(f"→ {strip.chosen}")]
    text = [literal(label.split(":", 1)[1]) for label in strip.labels] + [literal(strip.chosen)]
    z = np.append(strip.weights, np.nan).astype(np.float32)[None, :]  # (1, T + 1)
    top = float(strip.weights.max()) if strip.weights.size else 1.0
    heatmap = {
        "type": "heatmap", "z": z, "x": labels, "y": [""], "text": [text],
        "texttemplate": "%{text}", "textfont": {"size": 16}, "zmin": 0.0,
        "zmax": max(top, 1e-6), "colorscale": BLUES, "showscale": False,
        "hovertemplate": "%{x}: %{z:.3f}<extra></extra>", "xgap": 2,
    }  # fmt: skip
    last = len(labels) - 1
    frame = {"type": "rect", "x0": last - 0.5, "x1": last + 0.5, "y0": -0.5, "y1": 0.5,
             "line": {"color": NEWEST_COLOR, "width": 3}}  # fmt: skip
    return _spec([heatmap], title, 130, shapes=[frame], meta=KEEP_HEIGHT,
                 xaxis={"type": "category", "showticklabels": False},
                 yaxis={"showticklabels": False})  # fmt: skip


def plot_alternatives(
    tokens: Sequence[str],
    probs: Sequence[float],
    *,
    written: int | None,
    title: str,
    x_title: str,
) -> Spec:
    """The k likeliest next tokens as bars (rank. token), the one written in green."""
    labels = [literal(f"{j + 1}. {tok}") for j, tok in enumerate(tokens)]
    values = [float(p) for p in probs][: len(labels)]
    colours = [ANSWER_COLOR if j == written else BAR_COLOR for j in range(len(labels))]
    bars = {"type": "bar", "x": values, "y": labels, "orientation": "h",
            "marker": {"color": colours}, "text": [f"{p:.1%}" for p in values],
            "textposition": "outside", "cliponaxis": False,
            "hovertemplate": "%{y}: %{x:.3f}<extra></extra>"}  # fmt: skip
    return _spec(
        [bars], title, 110 + 36 * max(1, len(labels)), margin={"r": 40, "l": 110, "b": 50},
        meta=KEEP_HEIGHT,
        showlegend=False,
        xaxis={"title": {"text": literal(x_title)}, "range": [0, max([0.05, *values]) * 1.3],
               "tickformat": ".0%"},
        yaxis={"type": "category", "autorange": "reversed", "tickfont": {"size": 16}},
    )  # fmt: skip


def plot_lens(grid: LensGrid, *, title: str, layer_name: str, empty: str = "") -> Spec:
    """Layers (bottom = first) × steps: each cell the layer's likeliest token, coloured by
    its probability. `layer_name`: a template with {layer}."""
    if not grid.steps:
        return _empty(empty)
    layers = [literal(layer_name.replace("{layer}", str(i))) for i in range(len(grid.tokens))]
    heatmap = {
        "type": "heatmap", "z": grid.probs, "x": literals(grid.steps), "y": layers,
        "text": [literals(row) for row in grid.tokens], "texttemplate": "%{text}",
        "textfont": {"size": 14}, "zmin": 0.0, "zmax": 1.0, "colorscale": BLUES,
        "colorbar": {"thickness": 12, "tickformat": ".0%"}, "xgap": 1, "ygap": 1,
        "hovertemplate": "%{y} · %{x}: %{text} (%{z:.2f})<extra></extra>",
    }  # fmt: skip
    return _spec(
        [heatmap], title, 130 + 34 * len(layers), margin={"l": 80, "b": 70}, meta=KEEP_HEIGHT,
        xaxis={"type": "category", "tickangle": tick_angle(len(grid.steps)),
               "showticklabels": len(grid.steps) <= 32},
        yaxis={"type": "category"},
    )  # fmt: skip


def plot_cache(
    keys_bytes: int,
    values_bytes: int,
    *,
    most_bytes: int,
    title: str,
    keys_name: str,
    values_name: str,
) -> Spec:
    """One stacked bar: the cache's key and value bytes now, on an axis up to `most_bytes`
    (the run's largest cache), so the bar visibly grows step by step."""
    data = [
        {"type": "bar", "x": [value / 1024], "y": [""], "orientation": "h",
         "name": literal(name), "marker": {"color": colour},
         "text": [f"{value / 1024:.1f} KiB"], "textposition": "inside", "textangle": 0,
         "hovertemplate": f"{literal(name)}: %{{x:.1f}} KiB<extra></extra>"}
        for name, value, colour in ((keys_name, keys_bytes, KEY_COLOR),
                                    (values_name, values_bytes, VALUE_COLOR))
    ]  # fmt: skip
    most = max(most_bytes, keys_bytes + values_bytes, 1) / 1024
    return _spec(
        data, title, 190, barmode="stack", meta=KEEP_HEIGHT,
        legend={"orientation": "h", "y": -0.45, "traceorder": "normal"},
        margin={"b": 60},
        xaxis={"range": [0, most], "ticksuffix": " KiB"}, yaxis={"showticklabels": False},
    )  # fmt: skip


def plot_step_differences(
    differences: Sequence[float],
    steps: Sequence[str],
    *,
    tol: float,
    parted: int | None,
    title: str,
    y_title: str,
) -> Spec:
    """Per step the largest difference of two branches' rows; bars over `tol` red, the
    first of them (`parted`) outlined; a dashed line at `tol`."""
    values = [float(d) for d in differences]
    bars = {
        "type": "bar", "x": literals(steps), "y": values,
        "marker": {"color": [NEWEST_COLOR if d > tol else BAR_COLOR for d in values],
                   "line": {"width": [3 if i == parted else 0 for i in range(len(values))],
                            "color": "#000000"}},
        "hovertemplate": "%{x}: %{y:.3f}<extra></extra>",
    }  # fmt: skip
    line = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": tol, "y1": tol,
            "line": {"dash": "dash", "color": "#888888"}}  # fmt: skip
    return _spec(
        [bars], title, 260, shapes=[line], meta=KEEP_HEIGHT,
        annotations=[y_title_above(literal(y_title))],
        margin={"t": (50 if title else 30) + Y_TITLE_PX, "l": 40, "b": 50}, showlegend=False,
        xaxis={"type": "category", "tickangle": tick_angle(len(values))},
        yaxis={"range": [0, 1]},
    )  # fmt: skip
