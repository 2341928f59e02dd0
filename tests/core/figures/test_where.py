""" "Where does this head look?" revealed (attention_core/figures/where.py): the data
behind the figure (the class's shares, the model's row as the question holds it, the
word's span), the figure drawn from it (two bar series, the word's outline, the query and
[UNK] marks) and every label drawn literally."""

from __future__ import annotations

import pytest

from attention_core.figures.where import WORD_COLOR, plot_where_reveal, where_reveal
from attention_core.poll import question_where

OPTIONS = ("[BOS]", "<b>", "們", "上", "課")
ROW = (0.1, 0.1, 0.2, 0.4, 0.2)


def _question():
    return question_where("<b>們上課", OPTIONS, ROW, query=4, layer=0, head=1, word=(3, 4),
                          unknown=(1,))  # fmt: skip


def test_the_data_are_the_class_shares_and_the_models_row() -> None:
    data = where_reveal({3: 2, 4: 1, 9: 5}, _question())  # option 9 does not exist
    assert data.shares == pytest.approx((0, 0, 0, 2 / 3, 1 / 3))
    assert data.weights == ROW and data.taps == 3
    assert (data.query, data.word, data.unknown) == (4, (3, 4), (1,))
    assert where_reveal({}, _question()).shares == (0, 0, 0, 0, 0)  # nobody tapped yet


def test_the_figure_draws_both_rows_outlines_the_word_and_marks_the_query() -> None:
    data = where_reveal({3: 2, 4: 1}, _question())
    fig = plot_where_reveal(data, class_name="class", model_name="model", query_mark="query",
                            word_name="word: 上課")  # fmt: skip
    class_bars, model_bars = fig.data
    assert list(class_bars.y) == pytest.approx(data.shares)
    assert list(model_bars.y) == list(ROW)
    (outline,) = fig.layout.shapes
    assert (outline.x0, outline.x1, outline.line.color) == (2.5, 4.5, WORD_COLOR)
    ticks = list(fig.layout.xaxis.ticktext)
    assert ticks[4] == "<b>課</b><br>query"
    assert ticks[1] == "&lt;b&gt;<br>[UNK]"  # drawn as typed, and flagged
    assert fig.layout.annotations[0].text == "word: 上課"


def test_an_empty_question_gives_an_empty_figure() -> None:
    data = where_reveal({}, _question())
    empty = type(data)((), (), (), 0, (0, 0), (), 0)
    assert not plot_where_reveal(empty, title="t").data


def test_the_live_histogram_keeps_two_characters_that_read_alike_apart() -> None:
    from attention_core.figures.poll import plot_poll_histogram

    fig = plot_poll_histogram({1: 1, 3: 2}, ("[BOS]", "上", "課", "上"))
    assert list(fig.data[0].y) == [0, 1, 0, 2]  # one bar each, the second 上 its own
    assert list(fig.layout.xaxis.ticktext) == ["[BOS]", "上", "課", "上"]
