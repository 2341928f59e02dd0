"""The live class poll's Streamlit side, shared by pages/classroom.py and the quiz.

The state of a class lives in a store (attention_core/poll: SQLite by default, Redis when
ATTENTION_POLL_REDIS_URL is set), so every replica of the app sees the same class. A
session keeps only who it is:
    teacher   st.session_state["poll_teacher"] = (code, teacher key), and the teacher's
              own URL `?class=CODE&teacher=KEY` (never the join link or its QR code): the
              class and its key live in the store, so a teacher whose replica died and
              whose tab reconnected to another one carries on; a URL with the code but
              not the key is a student's view, a wrong key is refused with a message.
    student   the URL's `class` (the code) and `sid` (the id the store signed for this
              class, attention_core/poll/guard.py, written to the URL when the student
              joins), so a student whose replica died and whose tab reconnected to another
              one is still the same student, with the same answers.

    store = poll_store_or_stop()
    push_to_class(quiz_round, analysis)    # the quiz page's one-line hook
    push_question(question)                # any page's question (Watch it write's "next")
    reveal_current()                       # the teacher's class: reveal its question
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import streamlit as st

from attention_core.figures.poll import plot_class_vs_model
from attention_core.poll import (
    PollError,
    PollStore,
    Question,
    normalise_code,
    question_from_round,
)
from attention_core.poll.guard import MAX_CLASS_SIZE, device_student
from ui.cache import cached_analysis, poll_store
from ui.charts import show_chart
from ui.common import current_settings, md_escape, rerun_if_settings_moved
from ui.language import tr

if TYPE_CHECKING:
    from attention_core.quiz import QuizRound, QuizSource

__all__ = [
    "CLASS_PARAM",
    "MAX_CLASS_OPTIONS",
    "STUDENT_PARAM",
    "STUDENT_REFRESH_S",
    "TEACHER",
    "TEACHER_PARAM",
    "TEACHER_REFRESH_S",
    "device_id",
    "device_seat",
    "guarded_callback",
    "guarded_view",
    "holder",
    "live_view",
    "poll_store_or_stop",
    "push_question",
    "push_settings_question",
    "push_to_class",
    "question_for",
    "refusal",
    "reveal_current",
    "show_next_reveal",
    "teacher_class",
]

_F = TypeVar("_F", bound=Callable[..., Any])

CLASS_PARAM, STUDENT_PARAM, TEACHER_PARAM = "class", "sid", "teacher"
TEACHER = "poll_teacher"
MAX_CLASS_OPTIONS = 24  # one big button per key fits a phone screen up to about this many
# The live parts' refresh (st.fragment run_every). Measured with 100 simulated phones on
# two replicas (bench/section_poll.py): at 1 s the phones' refreshes alone are ~100 runs
# a second once a replica is down; 2 s halves that, and a question still shows in time.
# The teacher's one screen refreshing 4 times a second costs little and took the median
# answer → histogram from ~0.4 s (at 0.5 s) to 0.3 s.
TEACHER_REFRESH_S = 0.25  # the histogram follows the answers within about this
STUDENT_REFRESH_S = 2.0  # a phone sees a new question or the reveal within this


def poll_store_or_stop() -> PollStore:
    """The configured store, or a clear message and st.stop() if it cannot be reached."""
    try:
        return poll_store(
            os.environ.get("ATTENTION_POLL_REDIS_URL", "").strip(),
            os.environ.get("ATTENTION_POLL_DB", "").strip(),
        )
    except Exception as error:  # a store that is down: a message, never a traceback
        st.error(tr("poll_store_down", error=type(error).__name__))
        st.stop()


def guarded_callback(function: _F) -> _F:
    """A button's callback whose store may fail (Redis restarting, a locked file): the
    failure becomes a message on the next run, never a traceback."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as error:
            st.session_state["poll_flash"] = ("error", "poll_store_down",
                                              {"error": type(error).__name__})  # fmt: skip
            return None

    return run  # type: ignore[return-value]


def guarded_view(function: _F) -> _F:
    """A live view (a fragment) whose store may fail: a message in its place instead."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as error:
            st.error(tr("poll_store_down", error=type(error).__name__))
            return None

    return run  # type: ignore[return-value]


def live_view(run_every: float) -> Callable[[_F], _F]:
    """A live part of a page: a fragment run every `run_every` seconds, guarded like
    `guarded_view`, that first runs the whole page if the sidebar's settings moved under it
    (`rerun_if_settings_moved`)."""

    def wrap(function: _F) -> _F:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            rerun_if_settings_moved()
            return function(*args, **kwargs)

        return st.fragment(run_every=run_every)(guarded_view(run))  # type: ignore[return-value]

    return wrap


def teacher_class() -> tuple[str, str] | None:
    """(code, teacher key) of the class this session teaches, if any: the session's, or
    the URL's `class` and `teacher` when the store says that key opened that open class
    (a teacher's tab that reconnected to another replica)."""
    found = st.session_state.get(TEACHER)
    if found:
        return tuple(found)  # type: ignore[return-value]
    key = str(st.query_params.get(TEACHER_PARAM, ""))
    code = normalise_code(str(st.query_params.get(CLASS_PARAM, "")))
    if not key or code is None:
        return None
    if not poll_store_or_stop().is_teacher(code, key):
        st.query_params.pop(TEACHER_PARAM, None)  # a wrong or stale key: a student's view
        st.session_state["poll_flash"] = ("warning", "poll_teacher_link_bad", {"code": code})
        return None
    st.session_state[TEACHER] = (code, key)
    return code, key


def holder() -> str:
    """This browser session's random name, with which it holds a student's seat (a copied
    link opened in another session is another holder: attention_core/poll/guard.py)."""
    if "poll_holder" not in st.session_state:
        st.session_state["poll_holder"] = secrets.token_hex(16)
    return str(st.session_state["poll_holder"])


DEVICE_COOKIE = "studio_device"
# Keeps the device's id in a cookie of the browser profile (a year), unless one is there:
# every tab of the profile then presents the same id (st.context.cookies).
_DEVICE_JS = """
export default function (component) {
  const id = component.data.id;
  const has = document.cookie.split("; ").some((c) => c.startsWith("__NAME__="));
  if (!has && /^[0-9a-f]{32}$/.test(id)) {
    document.cookie = `__NAME__=${id}; path=/; max-age=31536000; SameSite=Lax`;
  }
}
""".replace("__NAME__", DEVICE_COOKIE)
_device = st.components.v2.component("attention_studio_device", js=_DEVICE_JS)


def device_id() -> str:
    """This browser profile's random id (its cookie; a new one, written to the cookie, on
    the profile's first visit): one device, one voter (attention_core/poll/guard.py)."""
    cookie = str(st.context.cookies.get(DEVICE_COOKIE, "") or "")
    if len(cookie) == 32 and all(c in "0123456789abcdef" for c in cookie):
        st.session_state["poll_device"] = cookie
    if "poll_device" not in st.session_state:
        st.session_state["poll_device"] = secrets.token_hex(16)
    device = str(st.session_state["poll_device"])
    _device(key="poll_device_cookie", data={"id": device})
    return device


def device_seat(store: PollStore, code: str) -> str:
    """The id this device sits in the open class `code` with ("" when there is none)."""
    info = store.info(code)
    if info is None or not info.open:
        return ""
    return device_student(store.secret(), info.class_id, st.session_state.get("poll_device", ""))


def refusal(error: PollError) -> tuple[str, str, dict[str, object]]:
    """The flash (kind, catalog key, params) of a refused student request."""
    reason = getattr(error, "reason", "")
    key = {"forged": "poll_sid_forged", "full": "poll_class_full", "busy": "poll_busy"}
    most = getattr(error, "most", 0) or MAX_CLASS_SIZE
    return "warning", key.get(reason, "poll_answer_refused"), {"most": most}


def question_for(quiz: QuizRound, source: QuizSource) -> Question:
    """A class question from a quiz round and the source it was drawn from (pages/quiz.py):
    the tokens as options, the head's weights for the reveal, its (layer, head) name."""
    layer, head = source.heads[quiz.head]
    several_layers = source.kind == "pretrained" or source.kind.startswith("session:")
    return question_from_round(
        source.labels,
        query=quiz.query,
        head=head,
        answers=quiz.answers,
        matrix=source.weights[quiz.head],  # (n, n) of the round's head
        layer=layer if several_layers else -1,
    )


ASKED = "poll_asked"  # {class code: [the (options, query, head, layer) of each push]}
NEW_QUESTION_TRIES = 64  # rounds drawn for a question the class was not asked yet


def _asked(code: str) -> list[tuple[object, ...]]:
    return st.session_state.setdefault(ASKED, {}).setdefault(code, [])


def _what(question: Question) -> tuple[object, ...]:
    return (question.options, question.query, question.head, question.layer, question.prompt)


@guarded_callback
def push_question(question: Question) -> None:
    """Push `question` to the class this session teaches (nothing for anyone else); the
    teacher is told its number, or that the class was asked it before (`show_flash`)."""
    found = teacher_class()
    if found is None:
        return
    try:
        pushed = poll_store_or_stop().push(found[0], found[1], question)
    except PollError:
        st.session_state.pop(TEACHER, None)  # the class was closed elsewhere
        st.session_state["poll_flash"] = ("error", "poll_class_gone", {})
        return
    asked = _asked(found[0])
    if _what(question) in asked:  # the teacher is told, the class sees it again
        first = asked.index(_what(question)) + 1
        flash = ("warning", "poll_pushed_repeat", {"number": pushed.number, "first": first})
    else:
        flash = ("success", "poll_pushed", {"number": pushed.number})
    asked.append(_what(question))
    st.session_state["poll_flash"] = flash


@guarded_callback
def push_settings_question(round_index: int) -> None:
    """Push a question drawn from the sidebar's sentence (the classroom's own button):
    a decisive one, as the quiz's are (the right key at least DECISIVE_MARGIN above the
    next), or a message when the sentence's heads have no such row."""
    from attention_core.quiz import DECISIVE_MARGIN, QuizSource, draw_round

    found = teacher_class()
    if found is not None:
        # the button was drawn when question `round_index` was the last one pushed: a
        # second trigger of the same click (the live fragment reruns every half second and
        # may carry it again) must not push another question
        info = poll_store_or_stop().info(found[0])
        if info is not None and (info.question.number if info.question else 0) != round_index:
            return
    settings = current_settings()
    try:
        analysis = cached_analysis(settings)
        if not 2 <= len(analysis.labels) <= MAX_CLASS_OPTIONS:
            raise ValueError("size")
        weights = analysis.weights  # (H, n, n) of the sidebar's sentence
        heads = [(0, h) for h in range(len(weights))]
        source = QuizSource("untrained", weights, list(analysis.labels), heads)
        asked = _asked(found[0]) if found is not None else []
        quiz = None
        for draw in range(round_index, round_index + NEW_QUESTION_TRIES):
            drawn = draw_round([source], seed=settings.seed, round_index=draw)
            quiz = quiz or drawn  # none new: the first one drawn, pushed as a repeat
            if drawn is None or _what(question_for(drawn, source)) not in asked:
                quiz = drawn or quiz
                break
    except Exception:  # empty or too long a sentence: a message on the page
        n = 0
        try:
            n = len(cached_analysis(settings).labels)
        except Exception:
            pass
        st.session_state["poll_flash"] = ("warning", "poll_bad_sentence",
                                          {"n": n, "most": MAX_CLASS_OPTIONS})  # fmt: skip
        return
    if quiz is None:  # no head is decisive anywhere on this sentence
        st.session_state["poll_flash"] = ("warning", "poll_not_decisive",
                                          {"margin": DECISIVE_MARGIN})  # fmt: skip
        return
    push_question(question_for(quiz, source))


def show_flash() -> None:
    """The message a button's callback left for this run (pushed, class gone, …)."""
    flash = st.session_state.pop("poll_flash", None)
    if flash:
        kind, key, params = flash
        getattr(st, kind)(md_escape(tr(key, **params)))


def push_to_class(quiz: QuizRound, source: QuizSource) -> None:
    """For a teacher with an open class: a button that pushes this quiz question (drawn
    from `source`) to the class's phones. Draws nothing for anyone else."""
    found = teacher_class()
    if found is None:
        return
    n = len(source.labels)
    if n > MAX_CLASS_OPTIONS:
        st.caption(tr("poll_too_many_options", n=n, most=MAX_CLASS_OPTIONS))
        return
    st.button(
        tr("poll_push_quiz", code=found[0]),
        key="poll_push_quiz",
        on_click=push_question,
        args=(question_for(quiz, source),),
        icon=":material/cast_for_education:",
    )
    show_flash()


def reveal_current() -> bool:
    """Reveal the current question of the class this session teaches; False (with a
    flash) when there is no class or the store refused."""
    found = teacher_class()
    if found is None:
        return False
    try:
        poll_store_or_stop().reveal(found[0], found[1])
    except PollError:
        st.session_state["poll_flash"] = ("error", "poll_class_gone", {})
        return False
    except Exception as error:  # a store that failed: a message, never a traceback
        st.session_state["poll_flash"] = ("error", "poll_store_down",
                                          {"error": type(error).__name__})  # fmt: skip
        return False
    return True


def show_next_reveal(counts: dict[int, int], question: Question, *, key: str) -> None:
    """A revealed "what comes next?" question: the class's choices beside the model's
    probabilities (the teacher's Classroom page and Watch it write draw the same chart)."""
    figure = plot_class_vs_model(
        counts,
        question.options,
        question.probs,
        answers=question.answers,
        title=tr("poll_next_title"),
        class_name=tr("poll_next_class"),
        model_name=tr("poll_next_model"),
        y_title=tr("poll_next_share"),
    )
    show_chart(figure, key=key)
