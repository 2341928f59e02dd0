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

__all__ = ["BAR_COLOR", "histogram_data", "plot_poll_histogram"]

BAR_COLOR = "#0068C9"


def histogram_data(counts: Mapping[int, int], n: int) -> list[int]:
    """Counts (option → students) as one bar per option 0…n-1; unknown options dropped."""
    return [int(counts.get(j, 0)) for j in range(n)]


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
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=bars,
            text=[str(b) for b in bars],
            textposition="outside",
            marker={"color": colors},
            hovertemplate="%{x}: %{y}<extra></extra>",
            cliponaxis=False,
        )
    )
    fig.update_layout(
        title={"text": literal(title)},
        font=FONT,
        height=height,
        margin={"t": 60, "b": 10, "l": 10, "r": 10},
        xaxis={"type": "category", "title": {"text": literal(x_title)},
               "tickangle": tick_angle(len(labels))},
        yaxis={"title": {"text": literal(y_title)}, "rangemode": "tozero",
               "range": [0, max(1, *bars) * 1.2], "dtick": max(1, max(bars) // 8 or 1)},
        showlegend=False,
    )  # fmt: skip
    return fig
