"""Figures of the engineer's lens (attention_core.lens): plain data in, Plotly figure out.

    head_view_data     BertViz's head view as plain data for the head-view component
                       (ui/headview.py): tokens, one layer's weights, one colour per head
    plot_neuron_view   q, k and q⊙k of one (layer, head, query, key) as three rows of cells,
                       with their sum, the scaling and the softmax in the title
    plot_effect_grid   the effect of knocking out each head, layer × head, knocked-out
                       heads marked (click a cell to knock it out)
    plot_effect_vs     each head's effect against one of its statistics (scatter)
    plot_sinks         each head's mass on [CLS] / [SEP] / first / punctuation, layer × head

Every string drawn is escaped (`figures.text.literal`); callers pass translated strings.
Shape legend: L layers, H heads, n tokens, D head size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.headview import SCALE, sparse_weights
from attention_core.figures.style import FONT, matrix_axes
from attention_core.figures.text import literal, literals

__all__ = [
    "HEAD_COLORS",
    "head_view_data",
    "plot_attention_matrix",
    "plot_effect_grid",
    "plot_effect_vs",
    "plot_neuron_view",
    "plot_row_pair",
    "plot_sinks",
]

# One colour per head, as BertViz does (d3's category10, then Tableau's 20 for more heads).
HEAD_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
)
_DIVERGING = "RdBu_r"


def head_view_data(
    weights: np.ndarray,
    labels: Sequence[str],
    head_names: Sequence[str],
    *,
    every_weight: bool = False,
) -> dict[str, Any]:
    """One layer's weights (H, n, n) → the head view's plain data: `tokens` (n labels),
    `sparse` (the weights a line is drawn for, `figures.headview.sparse_weights`: those
    >= MIN_WEIGHT, or all of them with `every_weight`, with how many were left out) and
    its `scale`, `heads` ([{name, color}] per head).

    Labels are sent as text and drawn as text nodes by the component, never as HTML."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 3 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must have shape (H, n, n), got {w.shape}")
    heads, n, _ = w.shape
    if len(labels) != n or len(head_names) != heads:
        raise ValueError(f"need {n} labels and {heads} head names")
    return {
        "tokens": [str(t) for t in labels],
        "sparse": sparse_weights(w, every_weight=every_weight),  # (H, n, n) as integers
        "scale": SCALE,
        "heads": [
            {"name": str(name), "color": HEAD_COLORS[h % len(HEAD_COLORS)]}
            for h, name in enumerate(head_names)
        ],
    }


def plot_neuron_view(
    q: np.ndarray,
    k: np.ndarray,
    *,
    rows: Sequence[str],
    title: str,
    hover: str = "%{y}, %{x}: %{z:.3f}<extra></extra>",
) -> go.Figure:
    """q (D,), k (D,) and q⊙k as three rows of D cells on one diverging scale centred on 0.

    `rows` names the three rows (e.g. "q: it", "k: animal", "q⊙k"); `title` carries the
    sum, the scaling and the softmax, already formatted by the caller."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.shape != k.shape or q.ndim != 1:
        raise ValueError(f"q and k must be vectors of one length, got {q.shape} and {k.shape}")
    z = np.stack([q, k, q * k])  # (3, D)
    limit = float(np.abs(z).max()) or 1.0
    dims = [str(i) for i in range(q.shape[0])]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=dims,
            y=literals(rows),
            zmin=-limit,
            zmax=limit,
            colorscale=_DIVERGING,
            hovertemplate=hover,
            colorbar={"thickness": 12},
        )
    )
    fig.update_layout(
        title={"text": literal(title), "font": {"size": 14}},
        height=260,
        margin={"l": 10, "r": 10, "t": 60, "b": 30},
        font=FONT,
    )
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    fig.update_xaxes(type="category", showticklabels=q.shape[0] <= 64)
    return fig


def _layer_head_figure(
    values: np.ndarray,
    *,
    layer_title: str,
    head_title: str,
    colorbar_title: str,
    hover: str,
    **heatmap: Any,
) -> go.Figure:
    """(L, H) values as a layer × head heatmap: heads across (labels on top), layers down,
    1 px gaps, a row of cells 34 px tall. `heatmap` holds the colours and custom data."""
    L, H = values.shape
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=literals(head_title.format(i=h) for h in range(H)),
            y=literals(layer_title.format(l=ly) for ly in range(L)),
            hovertemplate=hover,
            colorbar={"title": {"text": literal(colorbar_title)}, "thickness": 12},
            xgap=1,
            ygap=1,
            **heatmap,
        )
    )
    matrix_axes(fig, square=False, top=True)
    # 34 px a layer; at least 180 px, so a 2-layer model's colour bar still reads
    fig.update_layout(height=max(180, 40 + 34 * L), margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def plot_effect_grid(
    effects: np.ndarray,
    knocked: Sequence[tuple[int, int]] = (),
    *,
    layer_title: str = "layer {l}",
    head_title: str = "head {i}",
    colorbar_title: str = "",
    hover: str = "%{y}, %{x}: %{z:.4f}<extra></extra>",
) -> go.Figure:
    """(L, H) effects as a layer × head heatmap; the heads in `knocked` are marked ✕."""
    e = np.asarray(effects, dtype=np.float64)
    if e.ndim != 2:
        raise ValueError(f"effects must have shape (L, H), got {e.shape}")
    fig = _layer_head_figure(
        e,
        layer_title=layer_title,
        head_title=head_title,
        colorbar_title=colorbar_title,
        hover=hover,
        colorscale="Reds",
        zmin=0.0,
    )
    marks = [(layer, head) for layer, head in knocked if 0 <= layer < e.shape[0]]
    if marks:
        x, y = fig.data[0].x, fig.data[0].y  # the head and layer labels, escaped
        fig.add_trace(
            go.Scatter(
                x=[x[h] for _, h in marks],
                y=[y[layer] for layer, _ in marks],
                mode="text",
                text=["✕"] * len(marks),
                textfont={"size": 16, "color": "#0E1117"},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    return fig


def plot_effect_vs(
    effects: np.ndarray,
    stat: np.ndarray,
    *,
    x_title: str,
    y_title: str,
    names: Sequence[str],
) -> go.Figure:
    """Each head's effect (y) against a statistic of it (x); `names` label the L·H points in
    row-major (layer, head) order."""
    e = np.asarray(effects, dtype=np.float64).ravel()
    s = np.asarray(stat, dtype=np.float64).ravel()
    if e.shape != s.shape or len(names) != e.size:
        raise ValueError("effects, stat and names must have one entry per head")
    fig = go.Figure(
        go.Scatter(
            x=s,
            y=e,
            mode="markers",
            text=literals(names),
            marker={"size": 9, "color": e, "colorscale": "Reds", "line": {"width": 0.5}},
            hovertemplate="%{text}: %{x:.3f}, %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        height=360,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis_title=literal(x_title),
        yaxis_title=literal(y_title),
    )
    return fig


def plot_sinks(
    mass: np.ndarray,
    *,
    layer_title: str = "layer {l}",
    head_title: str = "head {i}",
    colorbar_title: str = "",
    custom: np.ndarray | None = None,
    hover: str = "%{y}, %{x}: %{z:.2f}<extra></extra>",
) -> go.Figure:
    """(L, H) share of attention on one kind of token, 0 to 1; `custom` (L, H) rides along
    for the hover (e.g. the value norm there)."""
    m = np.asarray(mass, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"mass must have shape (L, H), got {m.shape}")
    extra: dict[str, Any] = {}
    if custom is not None:
        extra["customdata"] = np.asarray(custom, dtype=np.float64)
    return _layer_head_figure(
        m,
        layer_title=layer_title,
        head_title=head_title,
        colorbar_title=colorbar_title,
        hover=hover,
        zmin=0.0,
        zmax=1.0,
        colorscale="Blues",
        **extra,
    )


def plot_row_pair(
    row_a: np.ndarray,
    row_b: np.ndarray,
    labels: Sequence[str],
    *,
    names: Sequence[str] = ("A", "B", "B − A"),
    title: str = "",
) -> go.Figure:
    """One query's row in sentence A and in B over the keys both share, and B − A, as
    grouped bars (A, B) and a line of markers (B − A)."""
    a = np.asarray(row_a, dtype=np.float64)
    b = np.asarray(row_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(labels) != a.size:
        raise ValueError("rows A and B and the labels must have one entry per shared key")
    x = literals(labels)
    fig = go.Figure(
        [
            go.Bar(x=x, y=a, name=literal(names[0]), marker_color="#83C9FF"),
            go.Bar(x=x, y=b, name=literal(names[1]), marker_color="#0068C9"),
            go.Scatter(
                x=x, y=b - a, name=literal(names[2]), mode="markers", marker_color="#FF2B2B"
            ),
        ]
    )
    fig.update_layout(
        barmode="group",
        height=340,
        title={"text": literal(title), "font": {"size": 14}},
        margin={"l": 10, "r": 10, "t": 50 if title else 10, "b": 10},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        xaxis={"type": "category", "tickangle": -45 if len(x) > 6 else 0},
    )
    return fig


def plot_attention_matrix(
    weights: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str = "",
    colorbar_title: str = "",
    hover: str = "%{y} → %{x}: %{z:.3f}<extra></extra>",
) -> go.Figure:
    """One head's (m, n) attention, rows = queries (e.g. the tokens a decoder wrote),
    columns = keys (e.g. the text, for cross-attention); 0 to 1, row 0 on top."""
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim != 2 or w.shape != (len(rows), len(cols)):
        raise ValueError(f"need an (m, n) matrix with m row and n column labels, got {w.shape}")
    fig = go.Figure(
        go.Heatmap(
            z=w,
            x=literals(cols),
            y=literals(rows),
            zmin=0.0,
            zmax=1.0,
            colorscale="Blues",
            hovertemplate=hover,
            colorbar={"title": {"text": literal(colorbar_title), "side": "right"}, "thickness": 12},
        )
    )
    # column labels below the grid: the title has the top to itself
    matrix_axes(fig, square=True, tickangle=-45 if len(cols) > 6 else 0)
    fig.update_layout(
        title={"text": literal(title), "font": {"size": 14}},
        height=int(min(700, 200 + 26 * len(rows))),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        font=FONT,
    )
    return fig
