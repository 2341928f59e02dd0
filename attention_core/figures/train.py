"""Figures of the "Train attention live" page: the loss and accuracy curves of a run, the
induction detector, and the accuracy with each head knocked out.

Plain data in (steps, losses, accuracies as arrays), a `go.Figure` out; the heads
themselves are drawn with `attention_core.figures.heads.plot_heads`. Arrays go to Plotly
as float32 / int32 NumPy arrays, serialised as base64 typed arrays, so redrawing the
curves a few times a second during training stays cheap. Titles are drawn literally
(`figures.text.literal`, escaped once at the entry); only the panel titles' bold is markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.style import FONT
from attention_core.figures.text import literal

__all__ = ["plot_curves", "plot_detector", "plot_knockout"]

LOSS_COLOR = "#d62728"
ACCURACY_COLOR = "#1f77b4"
MARKER_COLOR = "#ff7f0e"
_GAP = 0.12  # between the two panels, as a fraction of the width


def plot_curves(
    steps: Sequence[int] | np.ndarray,
    losses: Sequence[float] | np.ndarray,
    accuracies: Sequence[float] | np.ndarray,
    *,
    total_steps: int | None = None,
    marker_step: int | None = None,
    chance: float | None = None,
    loss_title: str = "loss",
    accuracy_title: str = "accuracy",
    step_title: str = "step",
    chance_title: str = "chance",
    height: int = 260,
) -> go.Figure:
    """Loss (left) and accuracy (right) against the training step, side by side.

    steps, losses, accuracies: (S,) each, one value per snapshot. `total_steps` fixes
    the x range (so the curves grow to the right during training), `marker_step` draws
    a vertical line on both panels (the replayed snapshot), `chance` a dotted line at the
    accuracy of guessing. Accuracy is a fraction in [0, 1], shown in percent. No
    snapshots → an empty figure.
    """
    loss_title, accuracy_title = literal(loss_title), literal(accuracy_title)
    step_title, chance_title = literal(step_title), literal(chance_title)
    x = np.asarray(steps, dtype=np.int32).reshape(-1)  # (S,)
    loss = np.asarray(losses, dtype=np.float32).reshape(-1)  # (S,)
    accuracy = np.asarray(accuracies, dtype=np.float32).reshape(-1)  # (S,)
    if not len(x) == len(loss) == len(accuracy):
        raise ValueError(
            f"steps, losses and accuracies must have the same length, got "
            f"{len(x)}, {len(loss)} and {len(accuracy)}"
        )
    if len(x) == 0:
        return go.Figure(layout={"height": 120})
    width = (1 - _GAP) / 2
    x_end = max(int(x.max()), total_steps or 0, 1)
    x_range = [0, x_end]
    mode = "lines+markers" if len(x) <= 40 else "lines"
    panels = (  # left, then right: values, name, colour, hover format, axis suffix
        (loss, loss_title, LOSS_COLOR, ".4f", ""),
        (accuracy, accuracy_title, ACCURACY_COLOR, ".1%", "2"),
    )
    traces = [
        go.Scatter(
            x=x,
            y=y,
            mode=mode,
            name=name,
            line={"color": color},
            marker={"size": 4},
            hovertemplate=step_title + " %{x}: %{y:" + fmt + "}<extra>" + name + "</extra>",
            xaxis=f"x{axis}",
            yaxis=f"y{axis}",
        )
        for y, name, color, fmt, axis in panels
    ]
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = [
        _panel_title(loss_title, width / 2),
        _panel_title(accuracy_title, 1 - width / 2),
    ]
    if chance is not None:
        line, label = _level(chance, chance_title, "2")
        shapes.append(line)
        annotations.append(label)
    if marker_step is not None:
        shapes += [_marker(marker_step, axis) for axis in ("", "2")]
    axis_common = {"showgrid": True, "zeroline": False}
    layout = {
        "xaxis": {
            **axis_common,
            "domain": [0, width],
            "range": x_range,
            "title": {"text": step_title},
            "anchor": "y",
        },
        "yaxis": {**axis_common, "rangemode": "tozero", "anchor": "x"},
        "xaxis2": {
            **axis_common,
            "domain": [1 - width, 1],
            "range": x_range,
            "title": {"text": step_title},
            "anchor": "y2",
        },
        "yaxis2": {**axis_common, "range": [0, 1.05], "tickformat": ".0%", "anchor": "x2"},
        "shapes": shapes,
        "annotations": annotations,
        "showlegend": False,
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "font": FONT,
    }
    return go.Figure(data=traces, layout=layout)


def _marker(step: int, axis: str = "") -> dict[str, Any]:
    """The replayed snapshot: a vertical line at `step` across panel `axis` ("" or "2")."""
    return {
        "type": "line",
        "xref": f"x{axis}",
        "yref": f"y{axis} domain",
        "x0": step,
        "x1": step,
        "y0": 0,
        "y1": 1,
        "line": {"color": MARKER_COLOR, "width": 2},
    }


def _level(
    value: float, text: str, axis: str = "", *, at_left: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A dotted horizontal line at `value` across panel `axis` ("" or "2") and its label
    (`text`, already escaped) above it at the right end (or the left)."""
    line = {
        "type": "line",
        "xref": f"x{axis} domain",
        "yref": f"y{axis}",
        "x0": 0,
        "x1": 1,
        "y0": value,
        "y1": value,
        "line": {"color": "#888", "dash": "dot", "width": 1},
    }
    label = {
        "text": text,
        "xref": f"x{axis} domain",
        "yref": f"y{axis}",
        "x": 0 if at_left else 1,
        "y": value,
        "xanchor": "left" if at_left else "right",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 11, "color": "#666"},
    }
    return line, label


def _panel_title(text: str, x: float) -> dict[str, Any]:
    """A bold title above a panel; `text` comes escaped, the <b> is the only markup."""
    return {
        "text": f"<b>{text}</b>",
        "xref": "paper",
        "yref": "paper",
        "x": x,
        "y": 1.0,
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 13},
    }


def plot_detector(
    steps: Sequence[int] | np.ndarray,
    scores: np.ndarray,
    names: Sequence[str],
    *,
    thresholds: tuple[float, float],
    panel_titles: tuple[str, str] = ("previous-token score", "induction score"),
    step_title: str = "step",
    threshold_title: str = "threshold",
    total_steps: int | None = None,
    marker_step: int | None = None,
    height: int = 260,
) -> go.Figure:
    """Previous-token (left) and induction (right) score of every head against the step.

    steps: (S,); scores: (S, 2, H) (`attention_core.train.induction.detector_scores` per
    snapshot); names: H head titles; thresholds: the dotted line of each panel. No
    snapshots → an empty figure.
    """
    x = np.asarray(steps, dtype=np.int32).reshape(-1)  # (S,)
    s = np.asarray(scores, dtype=np.float32)
    if len(x) == 0 or s.size == 0:
        return go.Figure(layout={"height": 120})
    if s.ndim != 3 or s.shape[:2] != (len(x), 2) or s.shape[2] != len(names):
        raise ValueError(
            f"scores must have shape (S={len(x)}, 2, H={len(names)}), got {tuple(s.shape)}"
        )
    titles = [literal(t) for t in panel_titles]
    step_title, threshold_title = literal(step_title), literal(threshold_title)
    labels = [literal(n) for n in names]
    width = (1 - _GAP) / 2
    x_range = [0, max(int(x.max()), total_steps or 0, 1)]
    palette = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
    traces = []
    for panel, axis in ((0, ""), (1, "2")):
        for head, label in enumerate(labels):
            traces.append(
                go.Scatter(
                    x=x,
                    y=s[:, panel, head],
                    mode="lines",
                    name=label,
                    legendgroup=label,
                    showlegend=panel == 0,
                    line={"color": palette[head % len(palette)], "width": 2},
                    hovertemplate=f"{step_title} %{{x}}: %{{y:.2f}}<extra>{label}</extra>",
                    xaxis=f"x{axis}",
                    yaxis=f"y{axis}",
                )
            )
    shapes: list[dict[str, Any]] = []
    annotations = [_panel_title(titles[0], width / 2), _panel_title(titles[1], 1 - width / 2)]
    for value, axis in zip(thresholds, ("", "2"), strict=True):
        line, label = _level(value, threshold_title, axis, at_left=True)
        shapes.append(line)
        annotations.append(label)
        if marker_step is not None:
            shapes.append(_marker(marker_step, axis))
    axis_common = {"showgrid": True, "zeroline": False}
    layout = {
        "xaxis": {**axis_common, "domain": [0, width], "range": x_range, "anchor": "y"},
        "yaxis": {**axis_common, "range": [0, 1.05], "anchor": "x"},
        "xaxis2": {**axis_common, "domain": [1 - width, 1], "range": x_range, "anchor": "y2"},
        "yaxis2": {**axis_common, "range": [0, 1.05], "anchor": "x2"},
        "shapes": shapes,
        "annotations": annotations,
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.25},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "font": FONT,
    }
    for name in ("xaxis", "xaxis2"):
        layout[name]["title"] = {"text": step_title}
    return go.Figure(data=traces, layout=layout)


def plot_knockout(
    names: Sequence[str],
    knocked: Sequence[float] | np.ndarray,
    *,
    accuracy: float,
    chance: float,
    accuracy_title: str = "accuracy",
    base_title: str = "all heads",
    chance_title: str = "chance",
    height: int = 260,
) -> go.Figure:
    """Held-out accuracy with each head knocked out alone, one bar per head.

    names: H head titles; knocked: (H,) accuracy (fraction in [0, 1]) with that head's
    output zeroed (`attention_core.lens.toy_head_effects`); `accuracy` (the model with
    every head) and `chance` (guessing) are drawn as labelled dotted lines, so a bar that
    falls to the chance line is a head the model cannot do without.
    """
    acc = np.asarray(knocked, dtype=np.float32).reshape(-1)  # (H,)
    if len(acc) != len(names):
        raise ValueError(f"{len(names)} names for {len(acc)} accuracies")
    labels = [literal(n) for n in names]
    accuracy_title = literal(accuracy_title)
    drop = accuracy - acc  # (H,) how much each head carries
    colors = ["#d62728" if d >= 0.5 * max(accuracy - chance, 1e-9) else "#1f77b4" for d in drop]
    bars = go.Bar(
        x=labels,
        y=acc,
        marker={"color": colors},
        text=[f"{a:.0%}" for a in acc],
        textposition="outside",
        hovertemplate=f"%{{x}}: {accuracy_title} %{{y:.1%}}<extra></extra>",
        showlegend=False,
    )
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for value, title in ((accuracy, base_title), (chance, chance_title)):
        line, label = _level(value, f"{literal(title)} {value:.0%}")
        shapes.append(line)
        annotations.append(label)
    layout = {
        "yaxis": {"range": [0, 1.15], "tickformat": ".0%", "title": {"text": accuracy_title}},
        "xaxis": {"type": "category"},
        "shapes": shapes,
        "annotations": annotations,
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 20, "b": 10},
        "font": FONT,
    }
    return go.Figure(data=[bars], layout=layout)
