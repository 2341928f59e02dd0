"""Figures of the head atlas (attention_core.atlas): plain data in, Plotly figure out.

    plot_head_map      every head as a point: one metric across, one up, a third as colour
                       (HeadVis's map); the heads a search found stand out, the chosen head
                       is ringed, the user's sentence's values ride along as open markers
    plot_qk            one head's queries and keys in one projected space (AttentionViz),
                       coloured by kind or by a character's place in its word; the user's
                       sentence's tokens labelled
    plot_models_side   one metric, layer × head, for several models side by side, one scale

Every string drawn is escaped (`figures.text.literal`); callers pass translated strings.
Shape legend: P heads (L·H, row-major), L layers, H heads, N tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.style import FONT
from attention_core.figures.text import literal, literals

__all__ = ["plot_head_map", "plot_models_side", "plot_qk"]

_FADED = 0.25
WORD_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")  # place 0, 1, 2, 3, 4+


def _empty(message: str) -> go.Figure:
    return go.Figure(
        layout={
            "height": 160,
            "annotations": [{"text": literal(message), "showarrow": False, "font": FONT}],
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
        }
    )


def plot_head_map(
    x: np.ndarray,
    y: np.ndarray,
    color: np.ndarray,
    names: Sequence[str],
    *,
    x_title: str,
    y_title: str,
    color_title: str,
    selected: int | None = None,
    found: Sequence[int] | None = None,
    mine: tuple[np.ndarray, np.ndarray] | None = None,
    mine_name: str = "",
    empty: str = "",
) -> go.Figure:
    """Heads as points: `x`, `y`, `color` (P,) and a name each. `found`: the heads a search
    kept (the others fade); `selected`: one head, ringed; `mine`: (x, y) (P,) of the user's
    sentence, drawn as open markers. Heads whose x or y is undefined (NaN) are left out."""
    xs, ys, cs = (np.asarray(a, dtype=np.float64) for a in (x, y, color))
    if not (xs.shape == ys.shape == cs.shape == (len(names),)):
        raise ValueError("x, y, color and names need one entry per head")
    shown = ~(np.isnan(xs) | np.isnan(ys))
    if not shown.any():
        return _empty(empty)
    keep = set(found) if found is not None else set(range(len(names)))
    opacity = [1.0 if i in keep else _FADED for i in range(len(names))]
    labels = literals(names)
    idx = np.flatnonzero(shown)
    traces: list[go.Scatter] = [
        go.Scatter(
            x=xs[idx],
            y=ys[idx],
            mode="markers",
            text=[labels[i] for i in idx],
            customdata=np.nan_to_num(cs[idx], nan=-1.0),
            marker={
                "size": 12,
                "color": np.nan_to_num(cs[idx], nan=0.0),
                "colorscale": "Viridis",
                "opacity": [opacity[i] for i in idx],
                "line": {"width": 0.5, "color": "#31333F"},
                "colorbar": {"title": {"text": literal(color_title)}, "thickness": 12},
            },
            hovertemplate="%{text} · %{x:.3f}, %{y:.3f} · %{customdata:.3f}<extra></extra>",
            showlegend=False,
        )
    ]
    if mine is not None:
        mx, my = (np.asarray(a, dtype=np.float64) for a in mine)
        ok = np.flatnonzero(~(np.isnan(mx) | np.isnan(my)))
        traces.append(
            go.Scatter(
                x=mx[ok],
                y=my[ok],
                mode="markers",
                name=literal(mine_name),
                text=[labels[i] for i in ok],
                marker={"size": 9, "symbol": "circle-open", "color": "#FF2B2B"},
                hovertemplate="%{text} · %{x:.3f}, %{y:.3f}<extra></extra>",
            )
        )
    if selected is not None and shown[selected]:
        traces.append(
            go.Scatter(
                x=[xs[selected]],
                y=[ys[selected]],
                mode="markers+text",
                text=[labels[selected]],
                textposition="top center",
                marker={
                    "size": 22,
                    "symbol": "circle-open",
                    "color": "#FF2B2B",
                    "line": {"width": 3},
                },
                hoverinfo="skip",
                showlegend=False,
            )
        )
    fig = go.Figure(traces)
    fig.update_layout(
        height=460,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis_title=literal(x_title),
        yaxis_title=literal(y_title),
        font=FONT,
        legend={"orientation": "h", "y": 1.08, "x": 0},
        clickmode="event",
    )
    return fig


def plot_qk(
    xy: np.ndarray,
    tokens: Sequence[str],
    contexts: Sequence[str],
    *,
    mine: np.ndarray,
    query_name: str,
    key_name: str,
    mine_name: str,
    word_position: np.ndarray | None = None,
    word_names: Sequence[str] = (),
    axis_titles: tuple[str, str] = ("", ""),
) -> go.Figure:
    """Queries (first N rows of `xy` (2N, 2)) and keys (the next N) of N tokens. Coloured by
    kind, or with `word_position` (N,) by a character's place in its word (`word_names`:
    the legend for places 0, 1, 2, 3, 4+); `mine` (N,) bool marks the user's tokens."""
    points = np.asarray(xy, dtype=np.float64)
    n = len(tokens)
    if n == 0:
        return _empty(mine_name)
    if points.shape != (2 * n, 2) or len(contexts) != n or np.shape(mine) != (n,):
        raise ValueError("xy must be (2N, 2) for N tokens, with N contexts and N flags")
    hover = literals(contexts)
    traces = []
    for half, (name, symbol) in enumerate(((query_name, "circle"), (key_name, "diamond"))):
        part = points[half * n : (half + 1) * n]
        if word_position is None:
            groups = [(literal(name), np.arange(n), None)]
        else:
            place = np.minimum(np.asarray(word_position), len(WORD_COLORS) - 1)
            groups = [
                (f"{literal(name)} · {literal(word_names[p])}", np.flatnonzero(place == p), p)
                for p in range(len(WORD_COLORS))
                if (place == p).any()
            ]
        for label, idx, p in groups:
            color = WORD_COLORS[p] if p is not None else ("#0068C9" if half == 0 else "#FF8C00")
            traces.append(
                go.Scatter(
                    x=part[idx, 0],
                    y=part[idx, 1],
                    mode="markers",
                    name=label,
                    text=[hover[i] for i in idx],
                    marker={"size": 6, "symbol": symbol, "color": color, "opacity": 0.55},
                    hovertemplate="%{text}<extra>" + label + "</extra>",
                )
            )
    own = np.flatnonzero(np.asarray(mine, dtype=bool))
    if len(own):
        for half, symbol in ((0, "circle"), (1, "diamond")):
            part = points[half * n : (half + 1) * n]
            traces.append(
                go.Scatter(
                    x=part[own, 0],
                    y=part[own, 1],
                    mode="markers+text",
                    name=literal(mine_name) if half == 0 else None,
                    showlegend=half == 0,
                    legendgroup="mine",
                    text=[literal(tokens[i]) for i in own],
                    textposition="top center",
                    customdata=[hover[i] for i in own],
                    marker={
                        "size": 11,
                        "symbol": symbol,
                        "color": "#FF2B2B",
                        "line": {"width": 1, "color": "#31333F"},
                    },
                    hovertemplate="%{customdata}<extra></extra>",
                )
            )
    fig = go.Figure(traces)
    fig.update_layout(
        height=520,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis_title=literal(axis_titles[0]),
        yaxis_title=literal(axis_titles[1]),
        font=FONT,
        legend={"orientation": "h", "y": -0.15, "x": 0},
    )
    fig.update_yaxes(scaleanchor="x", scaleratio=1)  # distances read the same both ways
    return fig


def plot_models_side(
    matrices: Sequence[np.ndarray],
    titles: Sequence[str],
    *,
    layer_title: str = "layer {l}",
    head_title: str = "head {i}",
    colorbar_title: str = "",
) -> go.Figure:
    """One metric per model, (L, H) each (sizes may differ), side by side on one colour
    scale (NaN cells blank)."""
    from plotly.subplots import make_subplots

    if not matrices:
        return _empty(colorbar_title)
    finite = [m[np.isfinite(m)] for m in (np.asarray(x, dtype=np.float64) for x in matrices)]
    values = np.concatenate([f for f in finite if f.size] or [np.zeros(1)])
    zmin, zmax = float(values.min()), float(values.max())
    widths = [max(np.shape(m)[1], 6) for m in matrices]  # a 4-head model still readable
    fig = make_subplots(
        rows=1,
        cols=len(matrices),
        column_widths=[w / sum(widths) for w in widths],
        subplot_titles=literals(titles),
        horizontal_spacing=0.09,
    )
    for c, m in enumerate(matrices, start=1):
        m = np.asarray(m, dtype=np.float64)  # (L, H)
        fig.add_trace(
            go.Heatmap(
                z=m,
                x=[literal(head_title.format(i=i)) for i in range(m.shape[1])],
                y=[literal(layer_title.format(l=i)) for i in range(m.shape[0])],
                zmin=zmin,
                zmax=zmax,
                coloraxis="coloraxis",
                hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=c,
        )
        fig.update_yaxes(autorange="reversed", row=1, col=c)
    fig.update_layout(
        height=380,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        coloraxis={
            "colorscale": "Viridis",
            "colorbar": {"title": {"text": literal(colorbar_title)}},
        },
        font=FONT,
    )
    return fig
