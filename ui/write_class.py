""" "What comes next?": the Watch it write page's class poll, for a teacher with an open
class (ui/classroom.py). The teacher pushes the step about to be written (the prefix, the
model's top-5 and their probabilities: `attention_core.poll.question_next`); the phones
answer on the Classroom page; "Reveal, then write it" reveals the class beside the model
and moves the page one step on, to the token the model writes.

The page's step lives in `st.session_state["write_steps"]` (pages/write.py); the step the
class was asked about in "write_asked".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attention_core.poll import Question, question_next
from ui.classroom import (
    TEACHER_REFRESH_S,
    live_view,
    poll_store_or_stop,
    push_question,
    reveal_current,
    show_flash,
    show_next_reveal,
    teacher_class,
)
from ui.common import md_escape
from ui.language import tr

if TYPE_CHECKING:
    from attention_core.decode import DecodeResult

__all__ = ["STEPS", "class_panel"]

STEPS, ASKED = "write_steps", "write_asked"


def _ask(question: Question, step: int) -> None:
    push_question(question)
    st.session_state[ASKED] = step


def _reveal_and_write() -> None:
    state = st.session_state
    if reveal_current():  # the model writes the token the class was asked about
        state[STEPS] = int(state.get(ASKED, state.get(STEPS, 0))) + 1
        state["write_play"] = 0


@live_view(2 * TEACHER_REFRESH_S)
def _live(code: str) -> None:
    """How many answered; once revealed, the class beside the model."""
    store = poll_store_or_stop()
    info = store.info(code)
    question = info.question if info else None
    if question is None or question.kind != "next":
        return
    counts = store.counts(info.class_id, question.number)
    answered = sum(counts.values())
    st.markdown(
        md_escape(tr("write_answered", number=question.number, k=answered, n=info.students))
    )
    if info.revealed:
        show_next_reveal(counts, question, key="write_class_chart")


def class_panel(result: DecodeResult, steps: int, text: str) -> None:
    """For a teacher with an open class: push step `steps` (the next to be written after
    `text`), reveal it, the live answers. Draws nothing for anyone else."""
    teaching = teacher_class()
    if teaching is None:
        return
    with st.container(key="write_class", border=True):
        st.subheader(tr("write_class_header"))
        if steps < len(result.steps):
            coming = result.steps[steps]
            top = [int(i) for i in coming.top_ids]
            answer = top.index(coming.token_id) if coming.token_id in top else 0
            probs = np.asarray(coming.top_probs, dtype=np.float64)
            question = question_next(text, coming.top_tokens, probs, answer=answer)
            st.button(
                tr("write_push", code=teaching[0]),
                key="write_push",
                on_click=_ask,
                args=(question, steps),
                icon=":material/cast_for_education:",
                type="primary",
            )
            st.caption(tr("write_push_help"))
        else:
            st.caption(tr("write_no_next"))
        info = poll_store_or_stop().info(teaching[0])
        current = info.question if info else None
        st.button(
            tr("write_reveal"),
            key="write_reveal",
            on_click=_reveal_and_write,
            disabled=not (current and current.kind == "next" and not info.revealed),
        )
        show_flash()
        _live(teaching[0])
