"""Quiz: one head's matrix hidden, the student guesses where a query looks, then it is revealed.

Only decisive rounds are asked (the right key's weight at least DECISIVE_MARGIN above the
runner-up's), drawn from heads that mean something: toy models trained on a task, the
pretrained model's heads with a clear pattern on the sidebar sentence, and the sentence's
untrained heads where one of their rows happens to be decisive. The sources are one list
(`quiz_sources`); `attention_core.quiz.draw_round` rebuilds the round on every rerun from
them, the sidebar seed and the round number, so it always fits what is on screen; only the
score, the round number and "revealed" are session state. After a guess the row's scores
are the clue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from attention_core.figures.heads import CELL_TEXT_MAX
from attention_core.figures.steps import plot_quiz_matrix, plot_score_clue
from attention_core.quiz import (
    DECISIVE_MARGIN,
    QuizRound,
    QuizSource,
    draw_round,
    pattern_heads,
    row_scores,
)
from attention_core.resources import minilm_dir
from attention_core.train.induction import head_layer
from ui.cache import pretrained_result, trained_toy
from ui.charts import show_chart
from ui.classroom import push_to_class
from ui.common import (
    analysis_or_stop,
    choose,
    current_settings,
    entry_guard,
    md_escape,
    token_chips,
)
from ui.finished_runs import finished_runs, trained_source
from ui.language import tr
from ui.presenter import arrow_keys

if TYPE_CHECKING:
    from attention_core.pipeline import Analysis

state = st.session_state
DEFAULTS = {"quiz_score": 0, "quiz_answered": 0, "quiz_round_no": 0, "quiz_revealed": False}
DONE = "quiz_done"  # {round number: the guess scored in it}: a round is scored once
KINDS = ("trained", "pretrained", "untrained")
TOY_TASKS = ("previous", "reverse")  # tasks whose trained heads draw one clear pattern


def quiz_sources(kinds: list[str], analysis: Analysis, bar: Any) -> list[QuizSource]:
    """The attention the quiz asks about, one entry per source; a source that cannot be
    built (no pretrained model installed) is left out with a caption. `bar` (st.progress)
    says which of the slow steps runs (the toy models train on a first visit)."""
    sources: list[QuizSource] = []
    slow = [*(TOY_TASKS if "trained" in kinds else ()), *(["pretrained"] * ("pretrained" in kinds))]

    def step(i: int) -> None:
        bar.progress(i / max(len(slow), 1), text=tr("quiz_preparing_step", i=i + 1, n=len(slow)))

    if "trained" in kinds:
        for i, task in enumerate(TOY_TASKS):
            step(i)
            w, names = trained_toy(task)
            sources.append(QuizSource(f"trained:{task}", w, names, [(0, h) for h in range(len(w))]))
    if "pretrained" in kinds:
        if minilm_dir() is None:
            st.caption(tr("quiz_no_pretrained"))
        else:
            try:
                step(len(slow) - 1)
                result = pretrained_result("", analysis.text)
            except Exception as error:  # a message, never a traceback
                st.caption(tr("error_generic", error=type(error).__name__))
            else:
                from attention_core.compare import pretrained_labels

                heads = pattern_heads(result.attentions)
                if heads and len(result.tokens) >= 2:
                    w = result.attentions[tuple(zip(*heads, strict=True))]  # (P, n, n)
                    unknown = tuple(i for i, u in enumerate(result.unknown) if u)
                    labels_p = pretrained_labels(result)
                    sources.append(QuizSource("pretrained", w, labels_p, heads, unknown))
    # the sidebar's module: seeded and untrained, or the trained reader ("reader")
    weights, labels = analysis.weights, analysis.labels
    if "untrained" in kinds and len(labels) >= 2:
        kind = "reader" if analysis.settings.trained else "untrained"
        layer = analysis.settings.layer or 0
        heads = [(layer, h) for h in range(len(weights))]
        sources.append(QuizSource(kind, weights, labels, heads, analysis.unknown))
    return sources


def where(source: QuizSource, head: int) -> str:
    """Which model and head a round comes from, in the interface's language."""
    layer, number = source.heads[head]
    if source.kind.startswith("trained:"):
        task = source.kind.split(":", 1)[1]
        return tr("quiz_from_trained", task=tr(f"quiz_task_{task}"), head=number)
    if source.kind == "pretrained":
        return tr("quiz_from_pretrained", layer=layer, head=number)
    if source.kind.startswith("session:"):  # a training run of this session (ui.finished_runs)
        run = source.kind.split(":", 1)[1]
        return tr("quiz_from_session", run=run, layer=layer, head=number)
    if source.kind == "reader":
        return tr("quiz_from_reader", layer=layer, head=number)
    return tr("quiz_from_untrained", head=number)


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
    state[DONE] = {**state.get(DONE, {}), state["quiz_round_no"]: guess}


def _go_to_round(step: int) -> None:
    """The next (+1) or the previous (-1) round; one answered before shows its answer again
    (scored once: its guess cannot change)."""
    number = max(0, state["quiz_round_no"] + step)
    state["quiz_round_no"] = number
    done = state.get(DONE, {})
    state["quiz_revealed"] = number in done
    state["quiz_last_guess"] = done.get(number)
    state["quiz_guess"] = done.get(number)


def _reset() -> None:
    state["quiz_score"] = state["quiz_answered"] = 0
    state[DONE] = {}
    state["quiz_revealed"] = False


entry_guard()
st.title(tr("quiz_title"))
st.markdown(md_escape(tr("quiz_intro", margin=DECISIVE_MARGIN)))

settings = current_settings()
analysis = analysis_or_stop(settings)

for key, value in DEFAULTS.items():
    state.setdefault(key, value)

kinds = choose(
    st.multiselect,
    tr("quiz_sources_label"),
    KINDS,
    key="quiz_sources",
    default=list(KINDS),
    format_func=lambda kind: tr(f"quiz_source_{kind}"),
    help=tr("quiz_sources_help", margin=DECISIVE_MARGIN),
)
preparing = st.progress(0.0, text=tr("quiz_preparing"))  # a step at a time, not a spinner
sources = quiz_sources(kinds, analysis, preparing)
preparing.empty()
# a finished training run of this session (?trained=): the quiz asks about it alone
session = trained_source("quiz_trained")
if session is not None:
    config = finished_runs()[session.number].config
    heads = [head_layer(config, h) for h in range(len(session.weights))]
    sources = [QuizSource(f"session:{session.number}", session.weights, session.labels, heads)]

# a new sentence, model or choice of sources mid-round: the old guess no longer fits. The
# message says which changed; other sources are another quiz, which starts at round 1
context = (
    tuple(sorted((k, v) for k, v in settings.to_query_params().items() if k != "lang")),
    (tuple(sorted(kinds)), session.number if session is not None else None),
)
before = state.get("quiz_context")
if before != context:
    if before is not None and before[1] != context[1]:
        st.info(tr("quiz_sources_changed"))
        state["quiz_round_no"] = 0
    elif before is not None:
        st.info(tr("quiz_settings_changed"))
    state["quiz_context"] = context
    state["quiz_revealed"] = False
    state[DONE] = {}  # other rounds now
    # set, not popped: choose() would bring a popped guess back from its memory, and the
    # browser would keep showing it (a guess for a question never asked)
    state["quiz_guess"] = None

quiz = draw_round(sources, seed=settings.seed, round_index=state["quiz_round_no"])
if quiz is None:
    st.info(tr("quiz_no_rounds", margin=DECISIVE_MARGIN, n=len(analysis.labels)))
    st.stop()
state["quiz_round"] = quiz
source = sources[quiz.source]
labels = source.labels
# plain copies of where the round comes from (read by tests, and by a class poll)
state["_quiz_kind"], state["_quiz_labels"] = source.kind, labels
state["_quiz_head"] = source.heads[quiz.head]
n = len(labels)
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
    "quiz_question",
    round=state["quiz_round_no"] + 1,
    where=where(source, quiz.head),
    query=labels[quiz.query],
)
st.subheader(md_escape(question))
token_chips([label.split(":", 1)[1] for label in labels], highlight=quiz.query)
st.caption(
    tr("quiz_chance", choices=quiz.choices, chance=quiz.chance)
    + " "
    + tr("quiz_decisive", margin=DECISIVE_MARGIN)
)

if state.get("quiz_guess") not in (None, *range(n)):  # a guess from a longer sequence
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
prev_col, submit_col, next_col, _ = st.columns([1, 1, 1, 2])
prev_col.button(
    tr("quiz_prev"),
    key="quiz_prev",
    on_click=_go_to_round,
    args=(-1,),
    disabled=state["quiz_round_no"] == 0,
)
submit_col.button(
    tr("quiz_submit"), key="quiz_submit", on_click=_submit, disabled=revealed, type="primary"
)
next_col.button(tr("quiz_next"), key="quiz_next", on_click=_go_to_round, args=(1,))
if state.pop("quiz_no_pick", False):
    st.warning(tr("quiz_pick_first"))
push_to_class(quiz, source)  # ui/classroom.py: a teacher's open class gets this question
# ui/presenter.py: in presenter mode → is the next round, ← the previous one
arrow_keys(right=("quiz_next",), left=("quiz_prev",))

# --- the answer and the clue: only after the guess ----------------------------------------
if revealed:
    guess = state.get("quiz_last_guess")
    if guess is not None and not 0 <= guess < n:
        guess = None
    matrix = source.weights[quiz.head]  # (n, n)
    row = matrix[quiz.query]  # (n,)
    names = {"query": labels[quiz.query], "answer": labels[quiz.answer], "weight": quiz.weight}
    if quiz.is_correct(guess):
        st.success(md_escape(tr("quiz_correct", **names)))
    else:
        guess_name = labels[guess] if guess is not None else "—"
        guess_weight = float(row[guess]) if guess is not None else 0.0
        st.error(md_escape(tr("quiz_wrong", guess=guess_name, guess_weight=guess_weight, **names)))
    st.caption(tr("quiz_margin_note", weight=quiz.weight, runner_up=quiz.runner_up))
    fig = plot_quiz_matrix(
        matrix,
        labels,
        query=quiz.query,
        answer=quiz.answer,
        guess=guess,
        title=tr("quiz_matrix_title", where=where(source, quiz.head), query=quiz.query),
        answer_name=tr("quiz_answer_name"),
        guess_name=tr("quiz_guess_name"),
    )
    show_chart(fig, key="quiz_chart")
    st.markdown(md_escape(tr("quiz_clue_text")))
    show_chart(
        plot_score_clue(
            row_scores(row),
            labels,
            answer=quiz.answer,
            guess=guess,
            title=tr("quiz_clue_title", query=labels[quiz.query]),
            axis_title=tr("quiz_clue_axis"),
        ),
        key="quiz_clue_chart",
    )
