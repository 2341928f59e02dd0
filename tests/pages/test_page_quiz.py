"""The quiz page (pages/quiz.py) in AppTest, and its rounds (attention_core/quiz.py).

Reference for "the right answer": the argmax of `forward()`'s weights, computed here, for
the head and query the page asked about. The library is checked on hand-made matrices.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.figures.steps import plot_quiz_matrix
from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.quiz import (
    DECISIVE_MARGIN,
    QuizRound,
    QuizSource,
    decisive_rows,
    draw_round,
    new_round,
    row_scores,
)
from attention_core.stats import head_patterns
from attention_core.train.tasks import target_positions
from tests.support.availability import require_minilm
from tests.support.teaching import (
    EXAMPLE_LINK,
    LONG_TEXT,
    charts,
    decode,
    open_page,
    reference_from_params,
    texts,
)

EXAMPLE = {**EXAMPLE_LINK, "seed": "1"}
UNTRAINED = {"quiz_sources": ["untrained"]}
TRAINED = {"quiz_sources": ["trained"]}


def asked(at) -> QuizRound:
    """The round on screen (which head and query the page picked; the answer is ours)."""
    return at.session_state["quiz_round"]


def untrained_right_and_wrong(params: dict[str, str], quiz: QuizRound) -> tuple[int, int]:
    """The right key by forward()'s weights for the asked row, and a wrong one."""
    row = reference_from_params(params)["weights"][quiz.head, quiz.query]
    ranked = np.argsort(-row)
    assert row[ranked[0]] - row[ranked[1]] >= DECISIVE_MARGIN  # only decisive rows are asked
    return int(ranked[0]), int(ranked[-1])


def score(at) -> tuple[int, int]:
    return at.session_state["quiz_score"], at.session_state["quiz_answered"]


def _decisive_seed(params: dict[str, str]) -> dict[str, str]:
    """`params` with the first seed whose untrained heads have a decisive row."""
    for seed in range(40):
        w = reference_from_params({**params, "seed": str(seed)})["weights"]
        if len(decisive_rows(w)):
            return {**params, "seed": str(seed)}
    raise AssertionError("no seed gives a decisive untrained row")


# --- the page ------------------------------------------------------------------------------
def test_right_guess_scores_and_reveals_the_matrix_and_the_scores():
    params = _decisive_seed(EXAMPLE)
    at = open_page("quiz", params, UNTRAINED)
    assert not at.exception
    assert "quiz_chart" not in charts(at)  # hidden before the guess
    quiz = asked(at)
    best, _ = untrained_right_and_wrong(params, quiz)
    at.radio(key="quiz_guess").set_value(best)
    at.button(key="quiz_submit").click().run()
    assert not at.exception
    assert score(at) == (1, 1)
    assert at.success and not at.error
    matrix = charts(at)["quiz_chart"]
    ref = reference_from_params(params)
    np.testing.assert_allclose(
        decode(matrix["data"][0]["z"]), ref["weights"][quiz.head], atol=EXACT
    )
    rect = matrix["layout"]["shapes"][0]  # the asked row is boxed
    assert (rect["y0"], rect["y1"]) == (quiz.query - 0.5, quiz.query + 0.5)
    # the clue: the row's scaled scores q·k/√d_k (from the trace), less their mean
    scaled = ref["scores"][quiz.head, quiz.query].astype(np.float64) / ref["head_dim"] ** 0.5
    clue = decode(charts(at)["quiz_clue_chart"]["data"][0]["y"])
    np.testing.assert_allclose(clue, scaled - scaled.mean(), atol=2e-4)
    assert at.button(key="quiz_submit").disabled  # one guess per round
    at.run()  # a rerun (any widget) keeps the round revealed and the score as it was
    assert score(at) == (1, 1) and "quiz_chart" in charts(at)


def _task_answer(task: str, labels: list[str], query: int) -> int:
    """Where the task's rule says query `query` must look (its definition, not the model)."""
    seq = np.array([int(label.split(":", 1)[1]) for label in labels])
    return int(target_positions(task, seq)[query])


def test_trained_toy_rounds_follow_the_task_rule_and_keep_score():
    at = open_page("quiz", EXAMPLE, TRAINED)
    assert not at.exception
    agree = 0
    for round_no in range(6):
        quiz = asked(at)
        kind = quiz_kind(at)
        assert kind.startswith("trained:")
        labels = at.session_state["_quiz_labels"]
        rule = _task_answer(kind.split(":")[1], labels, quiz.query)
        agree += rule == quiz.answer
        assert quiz.margin >= DECISIVE_MARGIN
        at.radio(key="quiz_guess").set_value(quiz.answer)
        at.button(key="quiz_submit").click().run()
        assert not at.exception and score(at) == (round_no + 1, round_no + 1)
        at.button(key="quiz_next").click().run()
    assert agree >= 4  # trained heads look where the task says (a head may do other work)


def quiz_kind(at) -> str:
    return at.session_state["_quiz_kind"]


def test_wrong_guess_does_not_score_and_next_hides_again():
    params = _decisive_seed(EXAMPLE)
    at = open_page("quiz", params, UNTRAINED)
    _, worst = untrained_right_and_wrong(params, asked(at))
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
    best, _ = untrained_right_and_wrong(params, asked(at))
    at.radio(key="quiz_guess").set_value(best)
    at.button(key="quiz_submit").click().run()
    assert score(at) == (1, 2)


def test_previous_question_shows_an_answered_round_again_scored_once():
    params = _decisive_seed(EXAMPLE)
    at = open_page("quiz", params, UNTRAINED)
    assert at.button(key="quiz_prev").disabled  # nothing before the first round
    first = asked(at)
    _, worst = untrained_right_and_wrong(params, first)
    at.radio(key="quiz_guess").set_value(worst)
    at.button(key="quiz_submit").click().run()
    at.button(key="quiz_next").click().run()
    assert at.session_state["quiz_round_no"] == 1 and "quiz_chart" not in charts(at)
    at.button(key="quiz_prev").click().run()
    assert not at.exception
    assert at.session_state["quiz_round_no"] == 0 and asked(at) == first  # the same question
    assert "quiz_chart" in charts(at) and at.error  # its answer, the wrong guess as given
    assert at.radio(key="quiz_guess").value == worst and at.radio(key="quiz_guess").disabled
    assert at.button(key="quiz_submit").disabled and score(at) == (0, 1)
    at.button(key="quiz_next").click().run()  # the unanswered round asks again
    assert "quiz_chart" not in charts(at) and at.radio(key="quiz_guess").value is None


def test_submit_without_a_guess_asks_for_one():
    at = open_page("quiz", EXAMPLE, TRAINED)
    at.button(key="quiz_submit").click().run()
    assert not at.exception
    assert score(at) == (0, 0)
    assert t("quiz_pick_first", "en") in texts(at)
    assert "quiz_chart" not in charts(at)


def test_reset_score():
    at = open_page("quiz", EXAMPLE, TRAINED)
    at.radio(key="quiz_guess").set_value(asked(at).answer)
    at.button(key="quiz_submit").click().run()
    assert score(at) == (1, 1)
    at.button(key="quiz_reset").click().run()
    assert score(at) == (0, 0)


def test_flat_untrained_heads_ask_nothing_and_say_why():
    params = {"text": LONG_TEXT, "tokenizer": "word", "embed_dim": "64", "num_heads": "8"}
    at = open_page("quiz", params, UNTRAINED)
    assert not at.exception
    assert len(decisive_rows(reference_from_params(params)["weights"])) == 0
    assert t("quiz_no_rounds", "en", margin=DECISIVE_MARGIN, n=120) in texts(at)
    assert not at.get("radio") or not any(r.key == "quiz_guess" for r in at.radio)


def test_one_token_still_gets_trained_questions():
    at = open_page("quiz", {"text": "中"})
    assert not at.exception
    assert quiz_kind(at) != "untrained"


def test_empty_text():
    at = open_page("quiz", {"text": ""})
    assert not at.exception
    assert t("empty_text", "en") in texts(at)


def test_pretrained_rounds_come_from_heads_with_a_clear_pattern():
    folder = require_minilm()
    import torch
    from transformers import AutoModel, AutoTokenizer

    text = "The cat sat on the mat because it was tired."
    at = open_page("quiz", {"text": text}, {"quiz_sources": ["pretrained"]})
    assert not at.exception
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    with torch.no_grad():
        attentions = model(
            **tokenizer(text, return_tensors="pt"), output_attentions=True
        ).attentions
    for _ in range(3):
        quiz = asked(at)
        assert quiz_kind(at) == "pretrained"
        layer, head = at.session_state["_quiz_head"]
        row = attentions[layer][0, head, quiz.query].numpy()
        ranked = np.argsort(-row)
        assert int(ranked[0]) == quiz.answer
        assert row[ranked[0]] - row[ranked[1]] >= DECISIVE_MARGIN
        assert head_patterns(attentions[layer][0].numpy())[head][0] != "broad"
        at.selectbox(key="quiz_guess").set_value(quiz.answer) if len(row) > 12 else (
            at.radio(key="quiz_guess").set_value(quiz.answer)
        )
        at.button(key="quiz_submit").click().run()
        assert at.success
        at.button(key="quiz_next").click().run()


def test_traditional_chinese():
    at = open_page("quiz", {**EXAMPLE, "lang": "zh-TW"}, TRAINED)
    assert not at.exception
    assert at.title[0].value == t("quiz_title", "zh-TW")
    assert at.button(key="quiz_submit").label == t("quiz_submit", "zh-TW")
    assert at.multiselect(key="quiz_sources").value == ["trained"]


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


def test_decisive_rows_by_hand():
    w = np.array(
        [
            [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]],  # margins 0.5, 0.3, 0.2
            [[0.1, 0.1, 0.8], [0.4, 0.4, 0.2], [0.0, 1.0, 0.0]],  # 0.7, 0 (tie), one key only
        ]
    )
    assert decisive_rows(w, margin=0.25).tolist() == [[0, 0], [0, 1], [1, 0]]
    assert decisive_rows(w, margin=0.15).tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert decisive_rows(np.full((1, 4, 4), 0.25)).shape == (0, 2)


def test_draw_round_asks_only_decisive_rows_and_draws_every_source():
    flat = QuizSource(
        "untrained", np.full((2, 3, 3), 1 / 3), ["0:a", "1:b", "2:c"], [(0, 0), (0, 1)]
    )
    eye = QuizSource("trained:x", np.eye(3)[None] * 0.9 + 0.1 / 3, ["0:a", "1:b", "2:c"], [(0, 0)])
    prev = np.array([[1, 0, 0], [0.9, 0.1, 0], [0.05, 0.9, 0.05]])[None]
    prev_source = QuizSource("pretrained", prev, ["0:x", "1:y", "2:z"], [(3, 7)])
    assert draw_round([flat]) is None  # nothing decisive: no question
    seen = set()
    for i in range(60):
        quiz = draw_round([flat, eye, prev_source], seed=5, round_index=i)
        assert quiz == draw_round([flat, eye, prev_source], seed=5, round_index=i)
        assert quiz.source in (1, 2)  # never the flat source
        row = [eye, prev_source][quiz.source - 1].weights[quiz.head, quiz.query]
        assert quiz.answer == int(np.argmax(row)) and quiz.answers == (quiz.answer,)
        assert quiz.margin >= DECISIVE_MARGIN and quiz.runner_up == sorted(row)[-2]
        assert quiz.choices == int((row > 0).sum()) >= 2
        seen.add((quiz.source, quiz.query))
    # rows 0 (one key) of prev is skipped; every other decisive row comes up
    assert seen == {(1, 0), (1, 1), (1, 2), (2, 1), (2, 2)}
    with pytest.raises(ValueError, match="labels"):
        QuizSource("x", np.ones((1, 2, 2)) / 2, ["0:a"], [(0, 0)])


@pytest.mark.parametrize("causal", [False, True])
def test_row_scores_are_the_traces_scaled_scores_less_their_mean(causal):
    params = {**EXAMPLE_LINK, "causal": "true" if causal else "false", "text": "我愛台灣的夜市"}
    ref = reference_from_params(params)
    scaled = ref["scores"] / math.sqrt(ref["head_dim"])  # (H, n, n) by hand from nn.Linear
    n = scaled.shape[-1]
    for h in range(scaled.shape[0]):
        for i in range(n):
            got = row_scores(ref["weights"][h, i])
            live = np.arange(n) <= i if causal else np.ones(n, bool)
            want = scaled[h, i, live] - scaled[h, i, live].mean()
            np.testing.assert_allclose(got[live], want, atol=1e-4)
            assert np.isnan(got[~live]).all()
