"""attention_core/figures/text.py and its use in every figure builder: text is drawn literally.

Plotly reads a pseudo-HTML subset (<b>, <br>, <a href>, <sup>, <span style>, entities) in all
the text it draws. References (tests/support/apptest.py): the standard library's `html`
module — `shown_text` gives what Plotly shows (`html.unescape`) and fails unless each string
is exactly `html.escape` of it — and `assert_drawn_literally`, which finds no `<`, `>` or
stray `&` in any string of a figure apart from the builders' own tags. Figures are checked
as the browser receives them: `fig.to_json()`, parsed (the raw JSON writes `<` as \\u003c,
so a substring search in it would always pass).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attention_core.figures import literal as reexported_literal
from attention_core.figures.compare import (
    model_view,
    plot_difference,
    plot_model_view,
    plot_similarity,
    plot_stat_bars,
)
from attention_core.figures.heads import IMAGE_CELLS, head_grid, plot_heads, plot_matrix
from attention_core.figures.masks import plot_bool_matrix, plot_padded_weights
from attention_core.figures.steps import (
    plot_dot_spread,
    plot_peakedness,
    plot_query_row,
    plot_quiz_matrix,
    plot_step_matrix,
    query_row,
)
from attention_core.figures.text import literal, literals
from attention_core.figures.train import plot_curves
from attention_core.pipeline import token_labels
from tests.support.apptest import OWN_MARKUP, assert_drawn_literally, drawn_strings, shown_text

TOKENS = [
    "<b>b</b>",
    "x<br>y",
    "a&amp;b",
    "<a href='javascript:alert(1)'>x</a>",
    "&lt;",
    "&#x41;",
    "<sup>2</sup>",
    '<span style="color:red">r</span>',
]
LABELS = token_labels(TOKENS)  # `index:token`, as the pages pass them
N = len(LABELS)
TITLE = "<i>title</i> & <br>"  # stands for any text argument: titles, names, captions
DIMS = np.array([2, 4, 8])  # d_k of the curves against d_k (figures/steps.py)
DK_TITLES = {"title": TITLE, "x_title": TITLE, "y_title": TITLE}  # and their titles


def _spec(fig: go.Figure) -> dict[str, Any]:
    """The figure as the browser receives it."""
    return json.loads(fig.to_json())


def _weights(n: int = N, heads: int = 1) -> np.ndarray:
    """(heads, n, n) float32 rows that sum to 1."""
    w = np.random.default_rng(0).random((heads, n, n)).astype(np.float32)
    return w / w.sum(-1, keepdims=True)


def _trace() -> dict[str, np.ndarray]:
    """A pipeline-like trace of one head: scores, scaled, weights (1, n, n)."""
    scores = np.random.default_rng(1).normal(size=(1, N, N)).astype(np.float32)
    return {"scores": scores, "scaled": scores / 2, "weights": _weights()}


# --- literal ----------------------------------------------------------------------------------


def test_literal_escapes_amp_first_then_lt_and_gt():
    assert literal("<b>a & b</b>") == "&lt;b&gt;a &amp; b&lt;/b&gt;"
    assert literal("plain 中和 →") == "plain 中和 →"
    assert literal("") == ""


def test_literal_is_not_idempotent_on_purpose():
    # what a student typed as "&lt;" is shown as "&lt;", not as "<"
    assert literal("&lt;") == "&amp;lt;"
    assert literal(literal("<")) == "&amp;lt;"


@given(st.text())
def test_literal_round_trips_through_html_unescape(text):
    escaped = literal(text)
    assert html.unescape(escaped) == text
    assert "<" not in escaped and ">" not in escaped
    assert not re.search(r"&(?!amp;|lt;|gt;)", escaped)


def test_literals_keeps_order_and_takes_any_iterable():
    assert literals(["<", "a", "&"]) == ["&lt;", "a", "&amp;"]
    assert literals(t for t in ("x>",)) == ["x&gt;"]
    assert literals([]) == []
    assert reexported_literal is literal


# --- every builder: no text reaches Plotly as markup ------------------------------------------

BUILDERS: dict[str, Callable[[], go.Figure]] = {
    "plot_heads": lambda: plot_heads(
        head_grid(_weights(heads=2), LABELS, head_title=TITLE + "{i}", mean_title=TITLE),
        colorbar_title=TITLE,
    ),
    "plot_heads_pictures": lambda: plot_heads(
        head_grid(_weights(300, heads=6), token_labels(TOKENS * 38)[:300], head_title=TITLE + "{i}")
    ),
    "plot_matrix": lambda: plot_matrix(_weights()[0], LABELS, LABELS[::-1], title=TITLE),
    "plot_step_matrix": lambda: plot_step_matrix(_weights()[0], LABELS, LABELS, title=TITLE),
    "plot_query_row": lambda: plot_query_row(
        query_row(_trace(), head=0, query=1), LABELS, titles=(TITLE, TITLE, TITLE), title=TITLE
    ),
    "plot_quiz_matrix": lambda: plot_quiz_matrix(
        _weights()[0],
        LABELS,
        query=1,
        answer=2,
        guess=3,
        title=TITLE,
        answer_name=TITLE,
        guess_name=TITLE,
    ),
    "plot_dot_spread": lambda: plot_dot_spread(
        DIMS, np.array([1.4, 2.0, 2.8]), measured_name=TITLE, reference_name=TITLE, **DK_TITLES
    ),
    "plot_peakedness": lambda: plot_peakedness(
        DIMS,
        np.array([0.5, 0.4, 0.3]),
        np.array([0.6, 0.6, 0.6]),
        unscaled_name=TITLE,
        scaled_name=TITLE,
        **DK_TITLES,
    ),
    "plot_bool_matrix": lambda: plot_bool_matrix(
        np.tri(N, dtype=bool), LABELS, LABELS, title=TITLE, true_text=TITLE, false_text="<i>no"
    ),
    "plot_padded_weights": lambda: plot_padded_weights(
        _weights()[0], LABELS, [True] * (N - 2) + [False] * 2, title=TITLE, padded_text=TITLE
    ),
    "plot_model_view": lambda: plot_model_view(
        model_view(
            _weights(heads=6).reshape(2, 3, N, N),
            LABELS,
            layer_title=TITLE + "{l}",
            head_title=TITLE + "{i}",
        ),
        colorbar_title=TITLE,
    ),
    "plot_difference": lambda: plot_difference(
        _weights()[0] - 0.1, LABELS, title=TITLE, colorbar_title=TITLE
    ),
    "plot_similarity": lambda: plot_similarity(
        np.eye(3, dtype=np.float32), ["<b>h0</b>", "h&1", "h<br>2"], title=TITLE
    ),
    "plot_stat_bars": lambda: plot_stat_bars(
        [0.1, 0.2], ["<b>h0</b>", "h&1"], title=TITLE, axis_title=TITLE
    ),
    "plot_curves": lambda: plot_curves(
        [0, 1],
        [1.0, 0.5],
        [0.2, 0.8],
        chance=0.1,
        loss_title=TITLE,
        accuracy_title=TITLE,
        step_title=TITLE,
        chance_title=TITLE,
    ),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_no_text_reaches_plotly_as_markup(name):
    spec = _spec(BUILDERS[name]())
    # figures/train.py's panel titles are the one place with markup of our own: bold
    own = OWN_MARKUP + r"|^<b>|</b>$" if name == "plot_curves" else OWN_MARKUP
    assert_drawn_literally(spec, own)
    # the argument texts are there, escaped exactly once
    assert any(literal(TITLE) in text for text in drawn_strings(spec))


# --- every builder: the categories show the labels exactly ------------------------------------


def test_plot_heads_categories_titles_and_hover_show_the_text():
    grid = head_grid(_weights(heads=2), LABELS, head_title="<i>h</i>{i}", mean_title="a&b")
    spec = _spec(plot_heads(grid, colorbar_title="<b>w</b>"))
    for trace in spec["data"]:
        assert shown_text(trace["x"]) == shown_text(trace["y"]) == LABELS
    assert shown_text([t["name"] for t in spec["data"]]) == ["<i>h</i>0", "<i>h</i>1", "a&b"]
    assert shown_text([a["text"] for a in spec["layout"]["annotations"]]) == grid.titles
    assert all(
        t["hovertemplate"].endswith("<extra>" + t["name"] + "</extra>") for t in spec["data"]
    )
    assert shown_text([spec["layout"]["coloraxis"]["colorbar"]["title"]["text"]]) == ["<b>w</b>"]
    assert grid.labels == LABELS, "the plain data keeps the raw text"


def test_plot_heads_cuts_the_raw_label_so_no_entity_is_cut_in_half():
    labels = token_labels(["abcdefgh&lt;x", "<b>bold</b>!", "a&b"])
    spec = _spec(plot_heads(head_grid(_weights(3), labels)))
    x = spec["layout"]["xaxis"]
    assert x["tickvals"] == spec["data"][0]["x"] == literals(labels)
    assert x["ticktext"] == ["0:abcdefgh&amp;…", "1:&lt;b&gt;bold&lt;/…", "2:a&amp;b"]
    assert shown_text(x["ticktext"]) == ["0:abcdefgh&…", "1:<b>bold</…", "2:a&b"]
    assert_drawn_literally(spec)


def test_plot_heads_measures_the_raw_text_not_its_entities():
    """'<' is as wide as 'a' on screen: the margins must not grow by the length of '&lt;'."""
    margins = [
        _spec(plot_heads(head_grid(_weights(2), token_labels([token, "b"]))))["layout"]["margin"]
        for token in ("<<<<<<", "aaaaaa")
    ]
    assert margins[0] == margins[1]


def test_plot_heads_pictures_keep_the_exact_panel_literal():
    labels = token_labels(TOKENS * 38)[:300]  # 300² × 6 cells: more than IMAGE_CELLS
    assert 300 * 300 * 6 > IMAGE_CELLS
    spec = _spec(plot_heads(head_grid(_weights(300, heads=6), labels, head_title="<i>{i}")))
    (exact,) = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert shown_text(exact["x"]) == shown_text(exact["y"]) == labels
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert shown_text(titles) == [f"<i>{i}" for i in range(6)]
    assert shown_text([exact["name"]]) == ["<i>0"]


@pytest.mark.parametrize("builder", [plot_matrix, plot_step_matrix])
def test_plot_matrix_rows_columns_and_title(builder):
    columns = ["<b>dim</b>", "&", "1"]
    spec = _spec(builder(np.ones((N, 3)), LABELS, columns, title="Q<sub>0</sub>"))
    (trace,) = spec["data"]
    assert shown_text(trace["y"]) == LABELS and shown_text(trace["x"]) == columns
    assert shown_text([spec["layout"]["title"]["text"]]) == ["Q<sub>0</sub>"]


def test_empty_figures_show_their_title_literally():
    for fig in (
        plot_matrix(np.zeros((0, 0)), [], [], title=TITLE),
        plot_bool_matrix(np.zeros((0, 0)), [], [], title=TITLE),
        plot_difference(np.zeros((0, 0)), [], title=TITLE),
        plot_query_row(query_row(_trace(), head=0, query=0), [], titles=("", "", ""), title=TITLE),
    ):
        assert shown_text([_spec(fig)["layout"]["title"]["text"]]) == [TITLE]


def test_plot_query_row_bars_and_panel_titles():
    titles = ("<b>raw</b>", "s&s", "x<br>y")
    spec = _spec(plot_query_row(query_row(_trace(), head=0, query=1), LABELS, titles=titles))
    assert [shown_text(t["x"]) for t in spec["data"]] == [LABELS] * 3
    assert shown_text([t["name"] for t in spec["data"]]) == list(titles)
    assert shown_text([a["text"] for a in spec["layout"]["annotations"]]) == list(titles)


def test_plot_quiz_matrix_labels_title_and_legend():
    spec = _spec(
        plot_quiz_matrix(
            _weights()[0],
            LABELS,
            query=0,
            answer=1,
            guess=2,
            title="row <b>0</b>",
            answer_name="<i>answer</i>",
            guess_name="guess & co",
        )
    )
    heatmap, *legend = spec["data"]
    assert shown_text(heatmap["x"]) == shown_text(heatmap["y"]) == LABELS
    assert shown_text([t["name"] for t in legend]) == ["<i>answer</i>", "guess & co"]
    assert shown_text([spec["layout"]["title"]["text"]]) == ["row <b>0</b>"]


def test_scaling_curves_show_names_and_titles():
    spec = _spec(BUILDERS["plot_dot_spread"]())
    assert shown_text([t["name"] for t in spec["data"]]) == [TITLE, TITLE]
    layout = spec["layout"]
    texts = [layout["title"]["text"], layout["xaxis"]["title"]["text"]]
    assert shown_text([*texts, layout["yaxis"]["title"]["text"]]) == [TITLE] * 3


def test_plot_bool_matrix_labels_and_cell_words():
    spec = _spec(
        plot_bool_matrix(np.eye(2, dtype=bool), ["<b>s1</b>", "s&2"], ["0", "<1>"], true_text="<T>")
    )
    (trace,) = spec["data"]
    assert shown_text(trace["y"]) == ["<b>s1</b>", "s&2"] and shown_text(trace["x"]) == ["0", "<1>"]
    words = [shown_text(row) for row in trace["customdata"]]
    assert words == [["<T>", "False"], ["False", "<T>"]]
    assert [shown_text(row) for row in trace["text"]] == words


def test_plot_padded_weights_escapes_once():
    spec = _spec(
        plot_padded_weights(_weights()[0], LABELS, [True] * N, title="a&b", padded_text="p<q")
    )
    assert shown_text(spec["data"][0]["x"]) == LABELS
    assert shown_text([spec["layout"]["title"]["text"]]) == ["a&b"]
    spec = _spec(plot_padded_weights(_weights()[0], LABELS, [False] * N, padded_text="p<q"))
    assert shown_text([a["text"] for a in spec["layout"]["annotations"]]) == ["p<q"]


@pytest.mark.parametrize("max_cells", [64, 3])  # every token, and pooled into ranges
def test_plot_model_view_categories_ticks_and_titles(max_cells):
    view = model_view(
        _weights(heads=6).reshape(2, 3, N, N),
        LABELS,
        max_cells=max_cells,
        layer_title="<b>L</b>{l}",
        head_title="h&{i}",
    )
    spec = _spec(plot_model_view(view))
    (trace,) = spec["data"]
    assert shown_text(trace["x"]) == view.x and shown_text(trace["y"]) == view.y
    x, y = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    assert set(x["tickvals"]) <= set(trace["x"]) and set(y["tickvals"]) <= set(trace["y"])
    assert shown_text(x["tickvals"]) == view.x_ticks and shown_text(y["tickvals"]) == view.y_ticks
    assert shown_text(x["ticktext"]) == ["h&0", "h&1", "h&2"]
    assert shown_text(y["ticktext"]) == ["<b>L</b>0", "<b>L</b>1"]
    if max_cells == 64:
        assert any(LABELS[0] in label for label in view.x), "tokens reach the categories"


def test_plot_difference_labels():
    spec = _spec(plot_difference(_weights()[0] - 0.1, LABELS, colorbar_title="A<B"))
    (trace,) = spec["data"]
    assert shown_text(trace["x"]) == shown_text(trace["y"]) == LABELS
    assert shown_text([trace["colorbar"]["title"]["text"]]) == ["A<B"]


def test_plot_similarity_and_stat_bars_names_in_order():
    names = ["<b>h0</b>", "h&1", "h<br>2"]
    spec = _spec(plot_similarity(np.eye(3, dtype=np.float32), names, order=[2, 0, 1]))
    assert (
        shown_text(spec["data"][0]["x"])
        == shown_text(spec["data"][0]["y"])
        == [names[i] for i in (2, 0, 1)]
    )
    spec = _spec(plot_stat_bars([0.1, 0.2, 0.3], names, order=[1, 2, 0], axis_title="<i>e</i>"))
    assert shown_text(spec["data"][0]["x"]) == [names[i] for i in (1, 2, 0)]
    # the axis title written across, above the axis (figures.style.y_title_above)
    assert shown_text([a["text"] for a in spec["layout"]["annotations"]]) == ["<i>e</i>"]


def test_plot_curves_keeps_its_bold_and_escapes_the_title_inside():
    spec = _spec(
        plot_curves([0, 1], [1.0, 0.5], [0.2, 0.8], loss_title="<i>loss</i>", accuracy_title="a&b")
    )
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert titles == ["<b>&lt;i&gt;loss&lt;/i&gt;</b>", "<b>a&amp;b</b>"]
    assert shown_text([t["name"] for t in spec["data"]]) == ["<i>loss</i>", "a&b"]
