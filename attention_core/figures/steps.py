"""Figures of the teaching pages: the five steps, the √d_k experiment and the quiz.

Same two-step shape as the other figure modules (optuna's visualization style): small
functions turn trace arrays into plain data (`merge_heads`, `query_row`, `pair_grid`),
and `plot_*` functions turn plain data into a `go.Figure`. All text (titles, axis names,
legend entries) comes in as arguments, already translated: no i18n and no streamlit here.
Each builder escapes that text once (`figures.text.literal`), so Plotly draws tokens as typed;
those that delegate to `plot_matrix` leave its arguments to it.

Trace arrays are the ones of `attention_core.pipeline.Analysis.trace` (batch axis
dropped): q, k, v, head_outputs (H, n, D); scores, scaled, weights (H, n, n).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attention_core.figures.heads import HeadGrid, plot_matrix
from attention_core.figures.layout import NOMINAL_WIDTH_PX, axis_ticks, tick_plan
from attention_core.figures.style import FONT
from attention_core.figures.text import literal, literals

__all__ = [
    "QueryRow",
    "display_matrix",
    "head_columns",
    "merge_heads",
    "outline_cells",
    "pair_grid",
    "plot_dot_spread",
    "plot_peakedness",
    "plot_query_row",
    "plot_quiz_matrix",
    "plot_score_clue",
    "plot_step_matrix",
    "query_row",
]

HIGHLIGHT = "#ff7f0e"  # the orange of token_chips' highlighted chip
SCALED_COLOR = "#1f77b4"
UNSCALED_COLOR = "#d62728"
ANSWER_COLOR = "#2ca02c"
STACK_BARS_ABOVE = 16  # beyond this many keys the three bar charts sit one above another


def merge_heads(per_head: np.ndarray) -> np.ndarray:
    """(H, n, D) per-head rows → (n, H·D), heads side by side: the inverse of the split."""
    a = np.asarray(per_head, dtype=np.float32)
    if a.ndim != 3:
        raise ValueError(f"per_head must have shape (H, n, D), got {a.shape}")
    H, n, D = a.shape
    return np.ascontiguousarray(a.transpose(1, 0, 2).reshape(n, H * D))  # (n, H·D)


def head_columns(head: int, head_dim: int) -> range:
    """The columns of Q (K, V, concat) that belong to `head`: head·D … (head+1)·D − 1."""
    if head < 0 or head_dim < 1:
        raise ValueError(f"head must be >= 0 and head_dim >= 1, got {head}, {head_dim}")
    return range(head * head_dim, (head + 1) * head_dim)


def display_matrix(matrix: np.ndarray) -> np.ndarray:
    """float32 copy with ±inf (masked scores) as NaN: Plotly leaves NaN cells blank."""
    m = np.array(matrix, dtype=np.float32)
    m[~np.isfinite(m)] = np.nan
    return m


@dataclass(frozen=True)
class QueryRow:
    """One query's row through steps (2)–(4): raw scores, scaled scores, softmax weights."""

    query: int
    head: int
    raw: np.ndarray  # (n,) q·k for every key
    scaled: np.ndarray  # (n,) raw / divisor; masked keys NaN
    weights: np.ndarray  # (n,) softmax(scaled), sums to 1 (0 where masked)
    top: int  # the key with the largest weight
    total: float  # Σ weights: 1 up to rounding (0 for a fully masked row)


def query_row(trace: Mapping[str, np.ndarray], *, head: int, query: int) -> QueryRow:
    """Row `query` of head `head` in `trace` (scores, scaled, weights: (H, n, n))."""
    H, n, _ = np.shape(trace["weights"])
    if not (0 <= head < H and 0 <= query < n):
        raise ValueError(f"head must be in 0..{H - 1} and query in 0..{n - 1}")
    weights = np.asarray(trace["weights"][head, query], dtype=np.float32)  # (n,)
    return QueryRow(
        query=query,
        head=head,
        raw=np.asarray(trace["scores"][head, query], dtype=np.float32),
        scaled=display_matrix(trace["scaled"][head, query]),
        weights=weights,
        top=int(np.argmax(weights)),
        total=float(weights.sum(dtype=np.float64)),
    )


def pair_grid(
    left: np.ndarray, right: np.ndarray, labels: Sequence[str], *, titles: tuple[str, str]
) -> HeadGrid:
    """Two (n, n) matrices as the panels of one `plot_heads` grid (left, right)."""
    panels = np.stack([np.asarray(left, np.float32), np.asarray(right, np.float32)])  # (2, n, n)
    return HeadGrid(np.ascontiguousarray(panels), list(titles), list(labels))


def plot_step_matrix(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    **options: object,
) -> go.Figure:
    """A step's matrix: `plot_matrix`, whose title sits above the column labels (drawn
    on top), upright or flat, in the band `figures.layout` keeps for it.

    Raw labels and title: `plot_matrix` escapes them.
    """
    return plot_matrix(matrix, row_labels, col_labels, title=title, **options)


def outline_cells(
    fig: go.Figure,
    *,
    rows: tuple[int, int],
    cols: tuple[int, int],
    color: str = HIGHLIGHT,
    width: int = 3,
) -> go.Figure:
    """Draw a box around cells rows[0]…rows[1]-1 × cols[0]…cols[1]-1 of a category heatmap.

    Category axes put cell i at coordinate i, so the box runs from i - 0.5 to j - 0.5.
    """
    fig.add_shape(
        type="rect",
        x0=cols[0] - 0.5,
        x1=cols[1] - 0.5,
        y0=rows[0] - 0.5,
        y1=rows[1] - 0.5,
        line={"color": color, "width": width},
        fillcolor="rgba(0,0,0,0)",
        layer="above",
    )
    return fig


def plot_query_row(
    row: QueryRow,
    key_labels: Sequence[str],
    *,
    titles: tuple[str, str, str],
    title: str = "",
) -> go.Figure:
    """Three bar charts of one query row: raw scores, scaled scores, softmax weights.

    Side by side for short sentences, one above another for long ones; the key with the
    largest weight is drawn in the highlight colour in all three. Text is drawn literally.
    """
    labels = literals(key_labels)
    names = literals(titles)  # one per panel: subplot title, trace name
    title = literal(title)
    n = len(labels)
    if n == 0:
        return go.Figure(layout={"height": 120, "title": {"text": title}})
    stacked = n > STACK_BARS_ABOVE
    rows, cols = (3, 1) if stacked else (1, 3)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=names,
        horizontal_spacing=0.07,
        vertical_spacing=0.12,
    )
    colors = [HIGHLIGHT if j == row.top else SCALED_COLOR for j in range(n)]
    for i, (name, values) in enumerate(zip(names, (row.raw, row.scaled, row.weights), strict=True)):
        r, c = (i + 1, 1) if stacked else (1, i + 1)
        fig.add_trace(
            go.Bar(
                x=labels,
                y=np.asarray(values, dtype=np.float32),
                name=name,
                marker={"color": colors},
                hovertemplate="%{x}: %{y:.4f}<extra>" + name + "</extra>",
                showlegend=False,
            ),
            row=r,
            col=c,
        )
    fig.update_xaxes(type="category", tickangle=-45 if n > 6 else 0, showticklabels=n <= 48)
    fig.update_yaxes(range=[0, 1], row=rows, col=cols)  # the weights: probabilities
    fig.update_layout(
        title={"text": title},
        height=760 if stacked else 340,
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        bargap=0.25,
        font=FONT,
    )
    return fig


def plot_dot_spread(
    dims: np.ndarray,
    dot_std: np.ndarray,
    *,
    measured_name: str,
    reference_name: str,
    title: str = "",
    x_title: str = "d_k",
    y_title: str = "",
) -> go.Figure:
    """Measured std of q·k against d_k on log-log axes, with the √d_k reference line."""
    d = np.asarray(dims, dtype=np.float32)
    reference = {"mode": "lines", "line": {"color": "#7f7f7f", "dash": "dash", "width": 6}}
    curves = [
        (reference_name, np.sqrt(d), {**reference, "opacity": 0.6}),
        (measured_name, dot_std, {"mode": "lines+markers", "line": {"color": UNSCALED_COLOR}}),
    ]
    return _against_dk(d, curves, title, x_title, y_title, log_y=True, height=420)


def plot_peakedness(
    dims: np.ndarray,
    unscaled: np.ndarray,
    scaled: np.ndarray,
    *,
    unscaled_name: str,
    scaled_name: str,
    title: str = "",
    x_title: str = "d_k",
    y_title: str = "",
) -> go.Figure:
    """A softmax statistic (entropy or max weight, both in [0, 1]) against d_k, two curves."""
    curves = [
        (unscaled_name, unscaled, {"mode": "lines+markers", "line": {"color": UNSCALED_COLOR}}),
        (scaled_name, scaled, {"mode": "lines+markers", "line": {"color": SCALED_COLOR}}),
    ]
    fig = _against_dk(dims, curves, title, x_title, y_title, log_y=False, height=400)
    fig.update_yaxes(range=[0, 1.05])
    return fig


def _against_dk(
    dims: np.ndarray,
    curves: list[tuple[str, np.ndarray, dict[str, Any]]],
    title: str,
    x_title: str,
    y_title: str,
    *,
    log_y: bool,
    height: int,
) -> go.Figure:
    """Curves against d_k, each (name, values, go.Scatter style); legend under the plot.

    The log x axis is ticked at the d_k actually measured (2, 4, …, 1024). A log y axis is
    ticked at powers of two too: Plotly's own log ticks (2, 5, 10, 20…) would hide that
    √d_k doubles for every fourfold d_k. Names and titles are drawn literally.
    """
    d = np.asarray(dims, dtype=np.float32)
    fig = go.Figure()
    for name, values, style in curves:
        y = np.asarray(values, dtype=np.float32)
        fig.add_trace(go.Scatter(x=d, y=y, name=literal(name), **style))
    ticks = [int(v) for v in d]
    fig.update_xaxes(type="log", title={"text": literal(x_title)}, tickvals=ticks, ticktext=ticks)
    if log_y:
        top = float(np.sqrt(d.max())) * 2 if d.size else 2.0
        y_ticks = [2.0**p for p in range(-1, int(np.ceil(np.log2(top))) + 1)]
        fig.update_yaxes(type="log", tickvals=y_ticks, ticktext=[f"{v:g}" for v in y_ticks])
    fig.update_yaxes(title={"text": literal(y_title)})
    fig.update_layout(
        title={"text": literal(title)},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0},
        font=FONT,
        hovermode="x unified",
    )
    return fig


def plot_quiz_matrix(
    weights: np.ndarray,
    labels: Sequence[str],
    *,
    query: int,
    answer: int,
    guess: int | None,
    title: str = "",
    answer_name: str = "answer",
    guess_name: str = "guess",
) -> go.Figure:
    """One head's (n, n) weights, the quiz row boxed, the answer (and a wrong guess) boxed.

    Boxes rather than markers, so the cells' numbers stay readable; two empty traces
    carry the legend entries for the boxes. Labels and title are escaped by `plot_matrix`,
    the legend entries here.
    """
    answer_name, guess_name = literal(answer_name), literal(guess_name)
    w = np.asarray(weights, dtype=np.float32)
    labels = list(labels)
    fig = plot_step_matrix(w, labels, labels, title=title, colorscale="Blues", zmin=0.0, zmax=1.0)
    if w.ndim != 2 or w.size == 0:
        return fig
    n = w.shape[1]
    outline_cells(fig, rows=(query, query + 1), cols=(0, n))
    marks = [(answer, answer_name, ANSWER_COLOR, "solid")]
    if guess is not None and guess != answer:
        marks.append((guess, guess_name, UNSCALED_COLOR, "dash"))
    for key, name, color, dash in marks:
        box = outline_cells(fig, rows=(query, query + 1), cols=(key, key + 1), color=color)
        box.layout.shapes[-1].line.dash = dash
        fig.add_trace(  # legend entry only: no data point
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                marker={"symbol": "square-open", "size": 14, "color": color, "line": {"width": 3}},
            )
        )
    fig.update_layout(
        showlegend=True, legend={"orientation": "h", "yanchor": "top", "y": -0.02, "x": 0}
    )
    return fig


def plot_score_clue(
    scores: np.ndarray,
    labels: Sequence[str],
    *,
    answer: int,
    guess: int | None,
    title: str = "",
    axis_title: str = "",
    width_px: float = NOMINAL_WIDTH_PX,
) -> go.Figure:
    """One query row's scores (n,) as bars, the answer's bar green, a wrong guess's red.

    `scores` are `quiz.row_scores` (q·k/√d_k less the row's mean; NaN where masked, drawn
    as no bar). Key labels follow the layout rule of `figures.layout`. Text drawn literally.
    """
    s = np.asarray(scores, dtype=np.float32)
    categories = literals(labels)
    n = len(categories)
    if n == 0 or s.shape != (n,):
        return go.Figure(layout={"height": 120, "title": {"text": literal(title)}})
    colours = [SCALED_COLOR] * n
    colours[answer] = ANSWER_COLOR
    if guess is not None and guess != answer:
        colours[guess] = UNSCALED_COLOR
    fig = go.Figure(
        go.Bar(
            x=categories,
            y=s,
            marker={"color": colours},
            hovertemplate="%{x}: %{y:+.3f}<extra></extra>",
        )
    )
    plan = tick_plan(labels, width_px - 80)
    fig.update_xaxes(type="category", **axis_ticks(plan, categories, "x"))
    fig.update_yaxes(title={"text": literal(axis_title)}, zeroline=True)
    fig.update_layout(
        title={"text": literal(title)},
        height=320 + (plan.band_px if plan.angle else 0),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        font=FONT,
        showlegend=False,
    )
    return fig
