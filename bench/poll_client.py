"""The class poll's participants as the app server sees them: a teacher's tab, the phones.

Each speaks the server's own websocket protocol (bench/streamlit_client.py) as a browser
tab does on the Classroom page. The teacher's tab (`open_class_as_teacher`) opens a class,
pushes a question and then refreshes its live fragment, whose histogram `histogram` reads.
A phone (`run_student`) opens the join link (`?class=CODE`), taps "Join", refreshes its
live fragment every STUDENT_REFRESH_S (what the page's `st.fragment(run_every=...)` makes a
browser do), taps one key's button when it decides, and keeps refreshing; when its
connection drops it reconnects with the same link (class code and student id), waits for
the dead session's hold on its seat to lapse (HOLD_S), and looks for its earlier answer.
What each phone did and saw is kept in its `Student`.
"""

from __future__ import annotations

import base64
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from attention_core.i18n import t
from attention_core.poll.guard import HOLD_S
from bench.streamlit_client import _DONE, CHART, StreamlitTab, Update
from ui.classroom import STUDENT_REFRESH_S  # the page's fragment timer

__all__ = ["BUTTONS", "PollTab", "Student", "histogram", "open_class_as_teacher", "run_student"]

PAGE = "classroom"
SENTENCE = "the cat sat on the mat because it was warm"  # 10 word tokens: 10 buttons
_CODE = re.compile(r"^# ([A-Z2-9]{4})$")
_FINISHED = {*_DONE, ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


class PollTab(StreamlitTab):
    """A tab of the Classroom page: its widgets by key, its live fragment, what it shows."""

    def __init__(self, base_url: str, params: dict[str, object] | None = None, **kw: Any):
        super().__init__(base_url, params, **kw)
        self.fragment = ""  # the page's run_every fragment (from the server's auto_rerun)
        self.alerts: list[str] = []  # st.success/info/warning/error bodies of the last reply
        self.upstream = ""

    def __enter__(self) -> PollTab:
        super().__enter__()
        assert self._ws is not None
        self.upstream = self._ws.response.headers.get("X-Upstream", "") if self._ws.response else ""
        return self

    def open(self) -> Update:
        return self.send([])

    def click(self, key: str, *, in_fragment: bool = False) -> Update:
        """Tap the button with `key` (in the live fragment: a fragment rerun, as a browser)."""
        state = WidgetState(id=self.widget_ids[key], trigger_value=True)
        return self.send([state], fragment=self.fragment if in_fragment else "")

    def refresh(self) -> Update:
        """What the fragment's timer sends: rerun the live fragment only."""
        return self.send([], fragment=self.fragment, auto=True)

    def send(self, states: list[WidgetState], *, fragment: str = "", auto: bool = False) -> Update:
        if self._ws is None:
            raise RuntimeError("use the tab in a `with` block")
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        if not self.page_hash:
            msg.rerun_script.page_name = PAGE
        msg.rerun_script.widget_states.widgets.extend(states)
        if fragment:
            msg.rerun_script.fragment_id = fragment
            msg.rerun_script.is_auto_rerun = auto
        started = time.perf_counter()
        self._ws.send(msg.SerializeToString())
        return self._read(started)

    finished = _FINISHED  # a fragment's run ends a reply too

    def _read(self, started: float) -> Update:
        self.alerts = []
        return super()._read(started)

    def _message(self, kind: str | None, fm: ForwardMsg) -> None:
        if kind == "navigation" and fm.navigation.page_script_hash:
            self.page_hash = fm.navigation.page_script_hash  # the page shown, not app.py
        elif kind == "auto_rerun":
            self.fragment = fm.auto_rerun.fragment_id

    def _element(self, element: Any, update: Update) -> None:
        kind = element.WhichOneof("type")
        widget = getattr(element, kind, None)
        element_id = getattr(widget, "id", "") if widget is not None else ""
        if isinstance(element_id, str) and element_id.startswith("$$ID-"):
            self.widget_ids[element_id.rsplit("-", 1)[-1]] = element_id
        if kind == "alert":
            self.alerts.append(element.alert.body)
        if kind == "bidi_component" and element.bidi_component.component_name != CHART:
            return
        super()._element(element, update)


def histogram(update: Update) -> list[int] | None:
    """The bar heights of the poll's histogram in `update`, if it drew one."""
    for chart in update.charts:
        for trace in chart.get("data", []):
            if trace.get("type") == "bar":
                y = trace["y"]
                if isinstance(y, dict) and "bdata" in y:
                    flat = np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"]))
                    return [int(v) for v in flat]
                return [int(v) for v in y]
    return None


@dataclass
class Student:
    """One phone: what it will tap and when (seconds from the start), and what it saw."""

    number: int
    choice: int
    arrive_s: float
    answer_s: float
    sent: float = 0.0  # perf_counter when the tap was sent
    stored: float = 0.0  # perf_counter when the tap's reply came back
    upstream: str = ""
    reconnects: int = 0
    saw_earlier_answer: bool = False
    recovered: bool = False  # its tap was stored but the reply was lost (not timed)
    seen_after_reconnect: list[str] = field(default_factory=list)  # alerts shown then
    lost_at: float = 0.0  # perf_counter when its connection first dropped
    errors: list[str] = field(default_factory=list)


BUTTONS = {"attention": "poll_answer_", "where": "where_tap_"}  # a phone's answer keys


def open_class_as_teacher(url: str, kind: str = "attention") -> tuple[PollTab, str]:
    """The teacher's tab, open on `url` with a class opened and a question pushed, its live
    fragment known: (tab, class code). The caller closes the tab. `kind` "attention": a
    key of SENTENCE; "where": the "where does this head look?" panel's defaults (the
    everyday sentence, its last character, the trained reader's default layer, head 0)."""
    tab = PollTab(url, {"text": SENTENCE, "tokenizer": "word"}).__enter__()
    tab.open()
    update = tab.click("poll_open")
    code = next((m.group(1) for md in update.markdown if (m := _CODE.match(md))), None)
    if code is None:
        raise RuntimeError(f"no class code on the teacher's page: {update.markdown[:5]}")
    if kind == "where":  # the panel's toggle on, then its push button with it still on
        opened = WidgetState(id=tab.widget_ids["where_open"], bool_value=True)
        tab.send([opened])
        push = WidgetState(id=tab.widget_ids["where_push"], trigger_value=True)
        tab.send([opened, push])
    else:
        tab.click("poll_push")
    if not tab.fragment:
        tab.open()
    return tab, code


def _unescape(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def _seat_taken(tab: PollTab) -> bool:
    """The page said this link's seat is held by another session (guard.py's HOLD_S)."""
    said = t("poll_seat_taken", "en", seconds=int(HOLD_S))
    return any(_unescape(alert) == said for alert in tab.alerts)


def run_student(
    url: str,
    code: str,
    me: Student,
    t0: float,
    labels: list[str],
    stop_at: float,
    buttons: str = BUTTONS["attention"],
) -> None:
    """One phone: arrive, join, refresh every STUDENT_REFRESH_S, tap at `answer_s`, keep
    refreshing; on a dropped connection, reconnect with the same link (class code and
    student id). `buttons`: the answer buttons' key prefix (`BUTTONS` of the kind)."""
    time.sleep(max(0.0, t0 + me.arrive_s - time.perf_counter()))
    query = ""
    while time.perf_counter() < stop_at:
        try:
            tab = PollTab(url, {"class": code})
            if query:
                tab.query = query
            with tab:
                me.upstream = tab.upstream or me.upstream
                tab.open()
                if "sid=" not in tab.query:
                    tab.click("poll_join")
                    if "sid=" not in tab.query:
                        raise RuntimeError(f"join failed: {tab.alerts}")
                elif me.reconnects:  # back after a drop: is my earlier answer still there?
                    # the dead replica's session held the seat: free within HOLD_S
                    while _seat_taken(tab) and time.perf_counter() < stop_at:
                        time.sleep(STUDENT_REFRESH_S)
                        tab.refresh()
                    me.seen_after_reconnect = [_unescape(a) for a in tab.alerts]
                    shown = any(labels[me.choice] in _unescape(a) for a in tab.alerts)
                    no_buttons = not any(k.startswith(buttons) for k in tab.widget_ids)
                    if shown and no_buttons:
                        me.saw_earlier_answer = True
                        if not me.stored:  # stored, but the reply was lost with the replica
                            me.stored, me.recovered = time.perf_counter(), True
                query = tab.query
                while time.perf_counter() < stop_at:
                    if not me.stored and time.perf_counter() >= t0 + me.answer_s:
                        key = next(
                            (k for k in tab.widget_ids if k.startswith(buttons)
                             and k.endswith(f"_{me.choice}")),
                            None,
                        )  # fmt: skip
                        if key is not None:
                            me.sent = time.perf_counter()
                            tab.click(key, in_fragment=True)
                            me.stored = time.perf_counter()
                    refresh_at = time.perf_counter() + STUDENT_REFRESH_S * random.uniform(0.9, 1.1)
                    due = t0 + me.answer_s
                    if not me.stored and due < refresh_at:  # the tap comes before the timer
                        time.sleep(max(0.0, due - time.perf_counter()))
                        continue
                    time.sleep(max(0.0, refresh_at - time.perf_counter()))
                    tab.refresh()
            return
        except Exception as error:  # a dropped connection: reconnect, as the frontend does
            if time.perf_counter() >= stop_at:
                return
            me.reconnects += 1
            me.lost_at = me.lost_at or time.perf_counter()
            if len(me.errors) < 3:
                me.errors.append(f"{type(error).__name__}: {str(error)[:120]}")
            time.sleep(0.5)
