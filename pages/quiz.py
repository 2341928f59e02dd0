"""Quiz: one head's matrix hidden, the student guesses where a query looks, then it is revealed.

The round (head, query, answer) is rebuilt on every rerun from the current weights, the
sidebar seed and the round number (`attention_core.quiz.new_round`), so it always fits
the sentence on screen; only the score, the round number and "revealed" are session state.
"""

from __future__ import annotations

import streamlit as st

from attention_core.figures.heads import CELL_TEXT_MAX
from attention_core.figures.steps import plot_quiz_matrix
from attention_core.quiz import QuizRound, new_round
from ui.charts import show_chart
from ui.classroom import push_to_class
from ui.common import (
    analysis_or_stop,
    choose,
    current_settings,
    entry_guard,
    md_escape,
    token_chips,
    tr,
)
from ui.presenter import arrow_keys

state = st.session_state
DEFAULTS = {"quiz_score": 0, "quiz_answered": 0, "quiz_round_no": 0, "quiz_revealed": False}


def _submit() -> None:
    """Score the guess once per round; the page then reveals the matrix."""
    quiz: QuizRound | None = state.get("quiz_round")
    guess = state.get("quiz_guess")
    if quiz is None or state.get("quiz_revealed"):
        return
    if guess is None:
        state["quiz_no_pick"] = True
        return
    state["quiz_answered"] += 1
    state["quiz_score"] += int(quiz.is_correct(guess))
    state["quiz_last_guess"] = guess
    state["quiz_revealed"] = True


def _next_round() -> None:
    state["quiz_round_no"] += 1
    state["quiz_revealed"] = False
    state["quiz_guess"] = None


def _reset() -> None:
    state["quiz_score"] = state["quiz_answered"] = 0


entry_guard()
st.title(tr("quiz_title"))
st.markdown(md_escape(tr("quiz_intro")))

settings = current_settings()
analysis = analysis_or_stop(settings)
labels = analysis.labels
n = len(labels)
if n < 2:
    st.info(tr("quiz_need_two", n=n))
    st.stop()

for key, value in DEFAULTS.items():
    state.setdefault(key, value)
# a new sentence or model mid-round: the old guess no longer refers to these tokens
context = tuple(sorted((k, v) for k, v in settings.to_query_params().items() if k != "lang"))
if state.get("quiz_context") != context:
    if state.get("quiz_context") is not None:
        st.info(tr("quiz_settings_changed"))
    state["quiz_context"] = context
    state["quiz_revealed"] = False
    # set, not popped: choose() would bring a popped guess back from its memory, and the
    # browser would keep showing it (a guess for a question never asked)
    state["quiz_guess"] = None

quiz = new_round(analysis.weights, seed=settings.seed, round_index=state["quiz_round_no"])
state["quiz_round"] = quiz
revealed = state["quiz_revealed"]

score_col, round_col, reset_col = st.columns([1, 1, 2], vertical_alignment="bottom")
score_col.metric(
    tr("quiz_score"),
    tr("quiz_score_value", correct=state["quiz_score"], answered=state["quiz_answered"]),
)
round_col.metric(tr("quiz_round"), state["quiz_round_no"] + 1)
reset_col.button(tr("quiz_reset"), key="quiz_reset", on_click=_reset)

# --- the question --------------------------------------------------------------------------
question = tr(
    "quiz_question", round=state["quiz_round_no"] + 1, head=quiz.head, query=labels[quiz.query]
)
st.subheader(md_escape(question))
token_chips([t.label for t in analysis.tokens], highlight=quiz.query)
st.caption(tr("quiz_chance", choices=quiz.choices, chance=quiz.chance))

if state.get("quiz_guess") not in (None, *range(n)):  # a guess from a longer sentence
    state["quiz_guess"] = None
picker = st.radio if n <= CELL_TEXT_MAX else st.selectbox
choose(
    picker,
    tr("quiz_guess_label"),
    range(n),
    key="quiz_guess",
    default=None,
    format_func=lambda j: labels[j],
    disabled=revealed,
    **({"horizontal": True} if picker is st.radio else {"placeholder": tr("highlight_none")}),
)
submit_col, next_col, _ = st.columns([1, 1, 3])
submit_col.button(
    tr("quiz_submit"), key="quiz_submit", on_click=_submit, disabled=revealed, type="primary"
)
next_col.button(tr("quiz_next"), key="quiz_next", on_click=_next_round)
if state.pop("quiz_no_pick", False):
    st.warning(tr("quiz_pick_first"))
push_to_class(quiz, analysis)  # a teacher with an open class: send it to the phones
arrow_keys(right=("quiz_next",))  # presenter mode: → is "next question"

# --- the answer: only after the guess ------------------------------------------------------
if revealed:
    guess = state.get("quiz_last_guess")
    row = analysis.weights[quiz.head, quiz.query]
    names = {"query": labels[quiz.query], "answer": labels[quiz.answer], "weight": quiz.weight}
    if quiz.is_correct(guess):
        st.success(md_escape(tr("quiz_correct", **names)))
    else:
        guess_name = labels[guess] if guess is not None else "—"
        guess_weight = float(row[guess]) if guess is not None else 0.0
        st.error(md_escape(tr("quiz_wrong", guess=guess_name, guess_weight=guess_weight, **names)))
    if len(quiz.answers) > 1:
        st.caption(md_escape(tr("quiz_tie", answers=", ".join(labels[j] for j in quiz.answers))))
    fig = plot_quiz_matrix(
        analysis.weights[quiz.head],
        labels,
        query=quiz.query,
        answer=quiz.answer,
        guess=guess,
        title=tr("quiz_matrix_title", head=quiz.head, query=quiz.query),
        answer_name=tr("quiz_answer_name"),
        guess_name=tr("quiz_guess_name"),
    )
    show_chart(fig, key="quiz_chart")
