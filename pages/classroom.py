"""Classroom: a live class poll. The teacher opens a class (a short code, shown large with
its QR code) and pushes "which key does this query attend to most?" questions (or "where
does this head look?" on the trained reader, ui/where_class.py); students
join by the code or the QR link and answer on their phones; the teacher's screen shows the
live histogram of answers, then reveals the head.

Three views of one page: the landing (join a class / open one), the teacher's and the
student's. The class itself lives in the store (ui/classroom.py), so it is the same on
every replica; the live parts are fragments that rerun every half second / second.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.figures.poll import plot_poll_histogram
from attention_core.figures.steps import plot_quiz_matrix
from attention_core.poll import (
    MAX_NAME,
    ClassInfo,
    PollError,
    Question,
    name_was_cut,
    normalise_code,
)
from attention_core.poll.guard import HOLD_S
from ui.charts import show_chart
from ui.classroom import (
    CLASS_PARAM,
    STUDENT_PARAM,
    STUDENT_REFRESH_S,
    TEACHER,
    TEACHER_PARAM,
    TEACHER_REFRESH_S,
    device_id,
    device_seat,
    guarded_callback,
    guarded_view,
    holder,
    live_view,
    poll_store_or_stop,
    push_settings_question,
    refusal,
    show_flash,
    show_next_reveal,
    teacher_class,
)
from ui.common import entry_guard, md_escape
from ui.language import tr
from ui.presenter import address_warning, qr_png, set_share_query, share_link
from ui.where_class import option_name, where_panel, where_reveal_view, where_taps

BUTTONS_PER_ROW = 4  # on a phone Streamlit stacks the columns: one big button per line
PROMPT_SHOWN = 240  # characters of a "what comes next?" prefix a phone shows (its end)

state = st.session_state
entry_guard()
store = poll_store_or_stop()
st.html(
    "<style>.st-key-poll_code h1 { font-size: clamp(4rem, 14vw, 9rem) !important;"
    " letter-spacing: 0.15em; font-family: monospace; padding: 0; }"
    ".st-key-poll_answers button { min-height: 3.2rem; }"
    ".st-key-poll_next_prompt p { font-size: 1.5rem; line-height: 1.5; }"
    # a phone is a student's: no "open a class" section on a narrow screen
    "@media (max-width: 640px) { .st-key-poll_teach { display: none !important; } }</style>"
)


# --- callbacks -------------------------------------------------------------------------
@guarded_callback
def _open_class() -> None:
    code, key = state[TEACHER] = store.open_class()
    set_share_query({CLASS_PARAM: code})  # the presenter QR: the join link, never the key
    st.query_params.pop(STUDENT_PARAM, None)
    # the teacher's own address: another replica carries the class on from it
    st.query_params[CLASS_PARAM] = code
    st.query_params[TEACHER_PARAM] = key


@guarded_callback
def _teacher_action(action: str) -> None:
    code, key = teacher_class() or ("", "")
    try:
        getattr(store, action)(code, key)
    except PollError:
        state["poll_flash"] = ("error", "poll_class_gone", {})
    if action == "close":
        state.pop(TEACHER, None)
        st.query_params.pop(TEACHER_PARAM, None)
        st.query_params.pop(CLASS_PARAM, None)
        set_share_query(None)
        state["poll_flash"] = ("info", "poll_closed_teacher", {"code": code})


@guarded_callback
def _join() -> None:
    code = normalise_code(state.get("poll_join_code", ""))
    if code is None:
        state["poll_flash"] = ("warning", "poll_bad_code", {})
        return
    name = state.get("poll_join_name", "")
    try:
        sid = str(st.query_params.get(STUDENT_PARAM, "")) or device_seat(store, code)
        info = store.join(code, sid, name)  # one device, one seat (ui/classroom.py)
    except PollError as error:  # an id of another class or edited, a full class, too fast
        st.query_params.pop(STUDENT_PARAM, None)
        state["poll_flash"] = refusal(error)
        return
    if info is None:
        state["poll_flash"] = ("warning", "poll_no_class", {"code": code})
        return
    st.query_params[CLASS_PARAM] = code
    st.query_params[STUDENT_PARAM] = info.student
    state["poll_joined"] = code
    # said for as long as the student is in class, not for one run: the live view reruns
    state["poll_name_cut"] = name_was_cut(name)


def _leave() -> None:
    st.query_params.pop(CLASS_PARAM, None)
    st.query_params.pop(STUDENT_PARAM, None)
    state.pop("poll_joined", None)
    state.pop("poll_name_cut", None)


@guarded_callback
def _answer(class_id: str, number: int, choice: int) -> None:
    sid = str(st.query_params.get(STUDENT_PARAM, ""))
    if not store.hold(class_id, sid, holder()):  # the seat is another session's
        state["poll_flash"] = ("warning", "poll_seat_taken", {"seconds": int(HOLD_S)})
        return
    try:
        counted = store.answer(class_id, number, sid, choice)
    except PollError as error:
        state["poll_flash"] = refusal(error)
        return
    if not counted:
        state["poll_flash"] = ("warning", "poll_answer_refused", {})


def _question_line(question: Question) -> str:
    if question.kind == "next":
        return md_escape(tr("poll_question_next", number=question.number))
    query = question.options[question.query]
    names = {"number": question.number, "head": question.head, "query": query}
    if question.kind == "where":
        return md_escape(tr("where_question", layer=question.layer, **names))
    if question.layer >= 0:
        return md_escape(tr("poll_question_layer", layer=question.layer, **names))
    return md_escape(tr("poll_question", **names))


def _next_prompt(question: Question) -> None:
    """A "what comes next?" question's text so far (its end, on a phone), as text."""
    if question.kind == "next":
        with st.container(key="poll_next_prompt"):
            st.markdown(md_escape(tr("poll_next_prompt", prompt=question.prompt[-PROMPT_SHOWN:])))


def _answer_names(question: Question) -> str:
    return ", ".join(option_name(question, j) for j in question.answers)


# --- the teacher's screen ---------------------------------------------------------------
@live_view(TEACHER_REFRESH_S)
def teacher_live(code: str) -> None:
    info = store.info(code, with_names=True)
    if info is None or not info.open:
        st.warning(tr("poll_class_gone"))
        return
    st.markdown(md_escape(tr("poll_students", n=info.students)))
    if info.names:
        named = [name for name in info.names if name]
        st.caption(md_escape(", ".join(named)) if named else "")
    question = info.question
    if question is None:
        st.info(tr("poll_no_question_teacher"))
        return
    counts = store.counts(info.class_id, question.number)
    st.subheader(_question_line(question))
    _next_prompt(question)
    st.markdown(md_escape(tr("poll_answered", k=sum(counts.values()), n=info.students)))
    fig = plot_poll_histogram(
        counts,
        question.options,
        answers=question.answers if info.revealed else (),
        title=tr("poll_histogram_title"),
        x_title=tr("where_histogram_x" if question.kind == "where" else "poll_histogram_x"),
        y_title=tr("poll_histogram_y"),
    )
    show_chart(fig, key="poll_histogram")
    if info.revealed:
        _reveal_view(info, question)


def _reveal_view(info: ClassInfo, question: Question) -> None:
    st.success(md_escape(tr("poll_answer_is", answer=_answer_names(question))))
    if question.kind == "next":
        counts = store.counts(info.class_id, question.number)
        show_next_reveal(counts, question, key="poll_next_chart")
    elif question.kind == "where":
        counts = store.counts(info.class_id, question.number)
        where_reveal_view(counts, question, key="where_chart")
    elif question.matrix:
        fig = plot_quiz_matrix(
            np.asarray(question.matrix, dtype=np.float32),  # (n, n) of the question's head
            list(question.options),
            query=question.query,
            answer=question.answers[0],
            guess=None,
            title=tr("poll_matrix_title", head=question.head, query=question.query),
            answer_name=tr("quiz_answer_name"),
            guess_name=tr("quiz_guess_name"),
        )
        show_chart(fig, key="poll_matrix")


@guarded_view
def teacher_view(code: str) -> None:
    info = store.info(code)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.caption(tr("poll_code_caption"))
        with st.container(key="poll_code"):
            st.markdown(f"# {code}")  # from the store's own alphabet: no user text
        link = share_link()  # ?class=…&lang=…, at an address phones can open
        st.caption(tr("poll_join_link"))
        st.code(link, language=None)
        address_warning()
    with right:
        st.image(qr_png(link, scale=8), caption=tr("poll_qr_caption"), width=260)
    number = info.question.number if info and info.question else 0
    push, reveal, reset, close = st.columns(4)
    push.button(
        tr("poll_push"),
        key="poll_push",
        on_click=push_settings_question,
        args=(number,),
        type="primary",
        width="stretch",
    )  # its help is a caption below: a tooltip stayed over the join link after the click
    reveal.button(
        tr("poll_reveal"),
        key="poll_reveal",
        on_click=_teacher_action,
        args=("reveal",),
        disabled=not (info and info.question and not info.revealed),
        width="stretch",
    )
    reset.button(
        tr("poll_reset"),
        key="poll_reset",
        on_click=_teacher_action,
        args=("reset",),
        width="stretch",
        help=tr("poll_reset_help"),
    )
    close.button(
        tr("poll_close"), key="poll_close", on_click=_teacher_action, args=("close",),
        width="stretch",
    )  # fmt: skip
    st.caption(tr("poll_push_help"))
    show_flash()
    where_panel(number)
    teacher_live(code)


# --- the student's phone ----------------------------------------------------------------
@live_view(STUDENT_REFRESH_S)
def student_live(code: str, sid: str) -> None:
    show_flash()  # an answer not counted, a store that failed
    info = store.info(code)
    if info is None or not info.open:
        st.warning(tr("poll_closed_student", code=code))
        return
    if not store.hold(info.class_id, sid, holder()):  # a copied link, its owner in class
        st.warning(tr("poll_seat_taken", seconds=int(HOLD_S)))
        return
    question = info.question
    if question is None:
        st.info(tr("poll_wait"))
        return
    st.subheader(_question_line(question))
    _next_prompt(question)
    mine = store.my_answer(info.class_id, question.number, sid)
    if info.revealed:
        right = mine is not None and mine in question.answers
        answer = _answer_names(question)
        if mine is None:
            st.info(md_escape(tr("poll_revealed_none", answer=answer)))
        elif right:
            st.success(md_escape(tr("poll_revealed_right", answer=answer)))
        else:
            mine_label = option_name(question, mine)
            st.error(md_escape(tr("poll_revealed_wrong", answer=answer, mine=mine_label)))
        return
    if mine is not None:
        st.success(md_escape(tr("poll_your_answer", mine=option_name(question, mine))))
        st.caption(tr("poll_wait_reveal"))
        return
    if question.kind == "where":  # the sentence's characters, not a grid of keys
        where_taps(question, _answer, info.class_id)
        return
    st.caption(tr("poll_tap_next" if question.kind == "next" else "poll_tap"))
    with st.container(key="poll_answers"):
        options = list(enumerate(question.options))
        for start in range(0, len(options), BUTTONS_PER_ROW):
            row = options[start : start + BUTTONS_PER_ROW]
            columns = st.columns(BUTTONS_PER_ROW)[: len(row)]
            for column, (j, label) in zip(columns, row, strict=True):
                column.button(
                    md_escape(label),
                    key=f"poll_answer_{question.number}_{j}",
                    on_click=_answer,
                    args=(info.class_id, question.number, j),
                    width="stretch",
                )


@guarded_view
def student_view(code: str) -> None:
    sid = str(st.query_params.get(STUDENT_PARAM, ""))
    if sid and state.get("poll_joined") != code:
        # a known student whose tab reconnected (another replica, a reload): join again
        try:
            if store.join(code, sid) is not None:
                state["poll_joined"] = code
        except PollError as error:  # an id of another class, or edited: refused
            st.query_params.pop(STUDENT_PARAM, None)
            sid = ""
            state["poll_flash"] = refusal(error)
    if state.get("poll_joined") != code:
        st.subheader(tr("poll_join_header", code=code))
        state["poll_join_code"] = code
        _name_input()
        st.button(tr("poll_join"), key="poll_join", on_click=_join, type="primary",
                  width="stretch")  # fmt: skip
        show_flash()
        return
    st.caption(tr("poll_joined_as", code=code))
    if state.get("poll_name_cut"):
        st.info(tr("poll_name_cut", most=MAX_NAME))
    student_live(code, sid)
    st.button(tr("poll_leave"), key="poll_leave", on_click=_leave)


def _name_input() -> None:
    # no max_chars: the browser would drop a pasted name longer than it (an empty field,
    # a nameless student); the store cuts it to MAX_NAME and the page says so
    st.text_input(tr("poll_name_label"), key="poll_join_name", help=tr("poll_name_help",
                  most=MAX_NAME))  # fmt: skip
    device_id()  # this browser's id: one device, one voter in a class
    st.caption(tr("poll_one_device"))


# --- the page --------------------------------------------------------------------------
st.title(tr("classroom_title"))
teaching = teacher_class()
code_in_url = normalise_code(str(st.query_params.get(CLASS_PARAM, "")))
if teaching:
    set_share_query({CLASS_PARAM: teaching[0]})  # the join link, also after a reconnect
    # the teacher's own address again (a visit to another page cleared the URL)
    st.query_params[CLASS_PARAM], st.query_params[TEACHER_PARAM] = teaching
    teacher_view(teaching[0])
elif code_in_url:
    student_view(code_in_url)
else:
    if st.query_params.get(CLASS_PARAM):
        st.warning(tr("poll_bad_code"))
    st.markdown(md_escape(tr("classroom_intro")))
    join_col, teach_col = st.columns(2)
    with join_col, st.container(key="poll_join_box"):
        st.subheader(tr("poll_join_title"))
        st.text_input(tr("poll_code_label"), key="poll_join_code", max_chars=8,
                      placeholder="ABCD")  # fmt: skip
        _name_input()
        st.button(tr("poll_join"), key="poll_join", on_click=_join, type="primary",
                  width="stretch")  # fmt: skip
        show_flash()  # a wrong code's message beside the code field, not under the page
    with teach_col, st.container(key="poll_teach"):
        st.subheader(tr("poll_teach_title"))
        st.markdown(md_escape(tr("poll_teach_text")))
        st.button(tr("poll_open"), key="poll_open", on_click=_open_class, width="stretch")
