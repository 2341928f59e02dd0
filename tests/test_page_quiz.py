"""The quiz page (pages/quiz.py) in AppTest, and its rounds (attention_core/quiz.py).

Reference for "the right answer": the argmax of `forward()`'s weights, computed here, for
the head and query the page asked about. The library is checked on hand-made matrices.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers_teaching import (
    EXAMPLE_LINK,
    LONG_TEXT,
    charts,
    decode,
    open_page,
    reference_from_params,
    texts,
)

from attention_core.figures.steps import plot_quiz_matrix
from attention_core.i18n import t
from attention_core.quiz import QuizRound, new_round

EXAMPLE = {**EXAMPLE_LINK, "seed": "1"}


def asked(at) -> QuizRound:
    """The round on screen (which head and query the page picked; the answer is ours)."""
    return at.session_state["quiz_round"]


def right_and_wrong(params: dict[str, str], quiz: QuizRound) -> tuple[int, int]:
    row = reference_from_params(params)["weights"][quiz.head, quiz.query]
    best = int(np.argmax(row))
    worst = int(np.argmin(row))
    assert row[worst] < row[best] - 1e-3  # the wrong key really is worse
    return best, worst


def score(at) -> tuple[int, int]:
    return at.session_state["quiz_score"], at.session_state["quiz_answered"]


# --- the page ------------------------------------------------------------------------------
def test_right_guess_scores_and_reveals_the_matrix():
    at = open_page("quiz", EXAMPLE)
    assert not at.exception
    assert "quiz_chart" not in charts(at)  # hidden before the guess
    quiz = asked(at)
    best, _ = right_and_wrong(EXAMPLE, quiz)
    at.radio(key="quiz_guess").set_value(best)
    at.button(key="quiz_submit").click().run()
    assert not at.exception
    assert score(at) == (1, 1)
    assert at.success and not at.error
    matrix = charts(at)["quiz_chart"]
    ref = reference_from_params(EXAMPLE)["weights"][quiz.head]
    np.testing.assert_allclose(decode(matrix["data"][0]["z"]), ref, atol=1e-6)
    rect = matrix["layout"]["shapes"][0]  # the asked row is boxed
    assert (rect["y0"], rect["y1"]) == (quiz.query - 0.5, quiz.query + 0.5)
    assert at.button(key="quiz_submit").disabled  # one guess per round
    at.run()  # a rerun (any widget) keeps the round revealed and the score as it was
    assert score(at) == (1, 1) and "quiz_chart" in charts(at)


def test_wrong_guess_does_not_score_and_next_hides_again():
    at = open_page("quiz", EXAMPLE)
    _, worst = right_and_wrong(EXAMPLE, asked(at))
    at.radio(key="quiz_guess").set_value(worst)
    at.button(key="quiz_submit").click().run()
    assert score(at) == (0, 1)
    assert at.error and "quiz_chart" in charts(at)
    at.button(key="quiz_next").click().run()
    assert not at.exception
    assert "quiz_chart" not in charts(at)
    assert at.radio(key="quiz_guess").value is None
    assert at.session_state["quiz_round_no"] == 1
    # the second round is scored against forward()'s weights too
    best, _ = right_and_wrong(EXAMPLE, asked(at))
    at.radio(key="quiz_guess").set_value(best)
    at.button(key="quiz_submit").click().run()
    assert score(at) == (1, 2)


def test_submit_without_a_guess_asks_for_one():
    at = open_page("quiz", EXAMPLE)
    at.button(key="quiz_submit").click().run()
    assert not at.exception
    assert score(at) == (0, 0)
    assert t("quiz_pick_first", "en") in texts(at)
    assert "quiz_chart" not in charts(at)


def test_reset_score():
    at = open_page("quiz", EXAMPLE)
    best, _ = right_and_wrong(EXAMPLE, asked(at))
    at.radio(key="quiz_guess").set_value(best)
    at.button(key="quiz_submit").click().run()
    at.button(key="quiz_reset").click().run()
    assert score(at) == (0, 0)


def test_one_token_needs_a_longer_sentence():
    at = open_page("quiz", {"text": "中"})
    assert not at.exception
    assert t("quiz_need_two", "en", n=1) in texts(at)
    assert not at.get("radio") or not any(r.key == "quiz_guess" for r in at.radio)


def test_empty_text():
    at = open_page("quiz", {"text": ""})
    assert not at.exception
    assert t("empty_text", "en") in texts(at)


def test_long_sentence_uses_a_selectbox():
    params = {"text": LONG_TEXT, "tokenizer": "word", "causal": "true"}
    at = open_page("quiz", params)
    assert not at.exception
    quiz = asked(at)
    assert quiz.query >= 1  # a causal first row would give the answer away
    best, _ = right_and_wrong(params, quiz)
    at.selectbox(key="quiz_guess").set_value(best)
    at.button(key="quiz_submit").click().run()
    assert not at.exception and score(at) == (1, 1)


def test_traditional_chinese():
    at = open_page("quiz", {**EXAMPLE, "lang": "zh-TW"})
    assert not at.exception
    assert at.title[0].value == t("quiz_title", "zh-TW")
    assert at.button(key="quiz_submit").label == t("quiz_submit", "zh-TW")


# --- attention_core/quiz.py -------------------------------------------------------------------
def test_round_answer_is_the_row_maximum_and_rounds_are_seeded():
    w = np.array(
        [
            [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]],
            [[0.1, 0.1, 0.8], [0.4, 0.4, 0.2], [0.0, 0.9, 0.1]],
        ]
    )
    expected = {(0, 0): 0, (0, 1): 2, (0, 2): 1, (1, 0): 2, (1, 2): 1}
    seen = set()
    for i in range(40):
        quiz = new_round(w, seed=3, round_index=i)
        assert quiz == new_round(w, seed=3, round_index=i)
        seen.add((quiz.head, quiz.query))
        if (quiz.head, quiz.query) == (1, 1):
            assert quiz.answers == (0, 1) and quiz.is_correct(1) and quiz.is_correct(0)
        else:
            assert quiz.answers == (expected[quiz.head, quiz.query],)
        assert quiz.weight == w[quiz.head, quiz.query].max()
        assert not quiz.is_correct(None)
    assert len(seen) == 6  # every head and query comes up


def test_round_skips_rows_with_a_single_allowed_key():
    causal = np.tril(np.ones((3, 3)))
    causal /= causal.sum(1, keepdims=True)  # row 0 can only look at key 0
    queries = {new_round(causal, seed=0, round_index=i).query for i in range(30)}
    assert queries == {1, 2}
    quiz = new_round(causal, seed=0, round_index=0)
    assert quiz.choices == quiz.query + 1
    assert quiz.chance == pytest.approx(len(quiz.answers) / quiz.choices)


@pytest.mark.parametrize(
    ("weights", "kwargs", "message"),
    [
        (np.ones((1, 1, 1)), {}, "at least 2 tokens"),
        (np.ones((2, 3)), {}, "shape"),
        (np.ones((2, 2)) / 2, {"round_index": -1}, "round_index"),
    ],
)
def test_round_rejects_bad_input(weights, kwargs, message):
    with pytest.raises(ValueError, match=message):
        new_round(weights, **kwargs)


def test_quiz_matrix_boxes_row_answer_and_wrong_guess():
    w = np.array([[0.5, 0.5], [0.2, 0.8]], dtype=np.float32)
    fig = plot_quiz_matrix(w, ["0:a", "1:b"], query=1, answer=1, guess=0, title="x")
    row, answer, guess = fig.layout.shapes
    assert (row.x0, row.x1, row.y0, row.y1) == (-0.5, 1.5, 0.5, 1.5)
    assert (answer.x0, answer.x1, answer.y0, answer.y1) == (0.5, 1.5, 0.5, 1.5)
    assert (guess.x0, guess.x1) == (-0.5, 0.5) and guess.line.dash == "dash"
    legend = [tr.name for tr in fig.data if tr.type == "scatter"]
    assert legend == ["answer", "guess"]
    right = plot_quiz_matrix(w, ["0:a", "1:b"], query=1, answer=1, guess=1)
    assert len(right.layout.shapes) == 2
