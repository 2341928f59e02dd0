""" "Where does this head look?" revealed: the class's taps over the sentence's characters
beside the reader's attention row for the query, the query's jieba word outlined.

Two steps, as every figure here: `where_reveal` makes the counts and the question into
plain data (`WhereReveal`), `plot_where_reveal` draws it. Every label is drawn literally
(`figures.text.literal`): a character that looks like markup stays text on the projector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import plotly.graph_objects as go

from attention_core.figures.poll import BAR_COLOR, MODEL_COLOR, class_shares
from attention_core.figures.style import FONT
from attention_core.figures.text import literal, literals
from attention_core.poll import Question

__all__ = ["WORD_COLOR", "WhereReveal", "plot_where_reveal", "where_reveal"]

WORD_COLOR = "#2E7D32"  # the outline of the query's jieba word


@dataclass(frozen=True)
class WhereReveal:
    """Per option (n: [BOS] and the characters): the class's share of taps, the model's
    weight; the query, the first and last option of its word, the options read as [UNK]."""

    labels: tuple[str, ...]
    shares: tuple[float, ...]  # (n,) sums to 1 once anyone tapped
    weights: tuple[float, ...]  # (n,) the reader's row, sums to 1
    query: int
    word: tuple[int, int]  # first and last option of the query's jieba word
    unknown: tuple[int, ...]
    taps: int  # how many tapped


def where_reveal(counts: Mapping[int, int], question: Question) -> WhereReveal:
    """The plain data of a revealed "where" question (`counts`: option → students)."""
    n = len(question.options)
    word = question.word or (question.query,)
    return WhereReveal(
        labels=question.options,
        shares=tuple(class_shares(counts, n)),
        weights=tuple(float(w) for w in question.probs),
        query=question.query,
        word=(min(word), max(word)),
        unknown=tuple(question.unknown),
        taps=sum(int(counts.get(j, 0)) for j in range(n)),
    )


def plot_where_reveal(
    data: WhereReveal,
    *,
    title: str = "",
    class_name: str = "",
    model_name: str = "",
    y_title: str = "",
    query_mark: str = "",
    word_name: str = "",
    unknown_mark: str = "[UNK]",
    height: int = 440,
) -> go.Figure:
    """Per character the class's share of taps beside the model's weight; the query's
    tick in bold with `query_mark` under it, a [UNK] mark under the characters the reader
    does not know, the query's word outlined and named `word_name`."""
    labels = literals(data.labels)
    if not labels:
        return go.Figure(layout={"height": 120, "title": {"text": literal(title)}})
    ticks = []
    for j, label in enumerate(labels):
        tick = f"<b>{label}</b><br>{literal(query_mark)}" if j == data.query else label
        ticks.append(f"{tick}<br>{literal(unknown_mark)}" if j in data.unknown else tick)
    x = list(range(len(labels)))
    fig = go.Figure()
    for name, values, colour in ((class_name, data.shares, BAR_COLOR),
                                 (model_name, data.weights, MODEL_COLOR)):  # fmt: skip
        fig.add_trace(
            go.Bar(
                x=x,
                y=list(values),
                name=literal(name),
                marker={"color": colour},
                customdata=labels,
                hovertemplate=f"%{{customdata}} {literal(name)}: %{{y:.1%}}<extra></extra>",
            )
        )
    first, last = data.word
    fig.add_shape(
        type="rect", xref="x", yref="y domain", x0=first - 0.5, x1=last + 0.5, y0=0, y1=1,
        line={"color": WORD_COLOR, "width": 3, "dash": "dash"}, fillcolor="rgba(0,0,0,0)",
    )  # fmt: skip
    fig.add_annotation(
        x=(first + last) / 2, xref="x", y=1, yref="y domain", yanchor="bottom",
        text=literal(word_name), showarrow=False, font={"color": WORD_COLOR, "size": 14},
    )  # fmt: skip
    top = max(1e-9, *data.shares, *data.weights)
    fig.update_layout(
        barmode="group",
        title={"text": literal(title)},
        font=FONT,
        height=height,
        margin={"t": 80, "b": 10, "l": 10, "r": 10},
        xaxis={"tickmode": "array", "tickvals": x, "ticktext": ticks, "tickfont": {"size": 18},
               "range": [-0.5, len(labels) - 0.5]},
        yaxis={"title": {"text": literal(y_title)}, "range": [0, min(1.0, top) * 1.2],
               "tickformat": ".0%"},
        legend={"orientation": "h", "y": 1.08, "x": 1, "xanchor": "right", "yanchor": "bottom"},
    )  # fmt: skip
    return fig
