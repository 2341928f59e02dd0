"""The class poll's live histogram: how many students chose each key, as a bar chart.

Plain data in (counts per option index, the option labels, the correct options once they
are revealed), a figure out; every label is drawn literally (`figures.text.literal`), so a
token that looks like markup stays text on the projector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from attention_core.figures.steps import ANSWER_COLOR
from attention_core.figures.style import FONT, tick_angle
from attention_core.figures.text import literal, literals

__all__ = ["BAR_COLOR", "MODEL_COLOR", "class_shares", "histogram_data", "plot_class_vs_model",
           "plot_poll_histogram"]  # fmt: skip

BAR_COLOR = "#0068C9"
MODEL_COLOR = "#FF8C00"


def histogram_data(counts: Mapping[int, int], n: int) -> list[int]:
    """Counts (option → students) as one bar per option 0…n-1; unknown options dropped."""
    return [int(counts.get(j, 0)) for j in range(n)]


def class_shares(counts: Mapping[int, int], n: int) -> list[float]:
    """Each option's share of the class's answers (0 when nobody answered)."""
    bars = histogram_data(counts, n)
    total = sum(bars)
    return [b / total if total else 0.0 for b in bars]


def plot_class_vs_model(
    counts: Mapping[int, int],
    options: Sequence[str],
    probs: Sequence[float],
    *,
    answers: Sequence[int] = (),
    title: str = "",
    class_name: str = "",
    model_name: str = "",
    y_title: str = "",
    height: int = 420,
) -> go.Figure:
    """ "What comes next?" revealed: per option the class's share of answers beside the
    model's probability, the token the model writes (`answers`) named in bold below."""
    labels = literals(options)
    if not labels:
        return go.Figure(layout={"height": 120, "title": {"text": literal(title)}})
    shares = class_shares(counts, len(labels))
    model = [float(p) for p in probs][: len(labels)]
    shown = set(answers)
    ticks = [f"<b>{label}</b>" if j in shown else label for j, label in enumerate(labels)]
    fig = go.Figure()
    for name, values, colour in ((class_name, shares, BAR_COLOR),
                                 (model_name, model, MODEL_COLOR)):  # fmt: skip
        fig.add_trace(
            go.Bar(
                x=list(range(len(labels))),
                y=values,
                name=literal(name),
                marker={"color": colour},
                text=[f"{v:.0%}" for v in values],
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"{literal(name)}: %{{y:.1%}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title={"text": literal(title)},
        font=FONT,
        height=height,
        margin={"t": 60, "b": 10, "l": 10, "r": 10},
        xaxis={"tickmode": "array", "tickvals": list(range(len(labels))), "ticktext": ticks,
               "tickfont": {"size": 18}},
        yaxis={"title": {"text": literal(y_title)}, "range": [0, 1.15], "tickformat": ".0%"},
        legend={"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
    )  # fmt: skip
    return fig


def plot_poll_histogram(
    counts: Mapping[int, int],
    options: Sequence[str],
    *,
    answers: Sequence[int] = (),
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    height: int = 420,
) -> go.Figure:
    """One bar per option (n options, `counts` option → students); the `answers`' bars
    green once revealed (pass none before). An empty `options` gives an empty figure."""
    labels = literals(options)
    if not labels:
        return go.Figure(layout={"height": 120, "title": {"text": literal(title)}})
    bars = histogram_data(counts, len(labels))
    shown = set(answers)
    colors = [ANSWER_COLOR if j in shown else BAR_COLOR for j in range(len(labels))]
    x = list(range(len(labels)))  # positions, not labels: two options that read alike
    fig = go.Figure(  # (a "where" sentence's 上 … 上) stay two bars
        go.Bar(
            x=x,
            y=bars,
            text=[str(b) for b in bars],
            textposition="outside",
            marker={"color": colors},
            customdata=labels,
            hovertemplate="%{customdata}: %{y}<extra></extra>",
            cliponaxis=False,
        )
    )
    fig.update_layout(
        title={"text": literal(title)},
        font=FONT,
        height=height,
        margin={"t": 60, "b": 10, "l": 10, "r": 10},
        xaxis={"tickmode": "array", "tickvals": x, "ticktext": labels,
               "title": {"text": literal(x_title)}, "tickangle": tick_angle(len(labels))},
        yaxis={"title": {"text": literal(y_title)}, "rangemode": "tozero",
               "range": [0, max(1, *bars) * 1.2], "dtick": max(1, max(bars) // 8 or 1)},
        showlegend=False,
    )  # fmt: skip
    return fig
