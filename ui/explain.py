"""The "Is attention an explanation?" page's computing: the reader's agreement for a
sentence, kept for every session, with a bar and Cancel while it runs.

Not `st.cache_data`: the bar is drawn by `progress(done, total)` from inside the run, which
a cached function's replay cannot draw again; a run cancelled midway (the page reran from
inside `progress`) keeps nothing. The last few results are kept for every session.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from ui.language import tr

if TYPE_CHECKING:
    from attention_core.attribution import Agreement

CANCELLED = "explain_cancelled"
BAR_AFTER_S = 1.0  # a run expected to take longer than this shows its bar and Cancel
_KEPT = 8
_kept: OrderedDict[tuple[str, str], Agreement] = OrderedDict()
_lock = threading.Lock()


def reader_agreement(
    text: str, method: str, progress: Callable[[int, int], None] | None = None
) -> Agreement:
    """The shipped reader's agreement for `text`, `method` first (attention_core.attribution)."""
    from attention_core.attribution import METHODS, agreement

    key = (text, method)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    methods = [method, *(m for m in METHODS if m != method)]
    found = agreement("reader", text, methods=methods, progress=progress)
    with _lock:
        _kept[key] = found
        while len(_kept) > _KEPT:
            _kept.popitem(last=False)
    return found


def _run_key(text: str, method: str) -> str:
    return hashlib.sha1(f"{method}\x00{text}".encode()).hexdigest()


def _cancelled(key: str | None) -> None:
    st.session_state[CANCELLED] = key


def agreement_or_cancelled(text: str, method: str) -> Agreement | None:
    """`reader_agreement`, with a bar and Cancel when it takes over BAR_AFTER_S; None (and
    a button to start again) once cancelled, for this sentence and method only."""
    key = _run_key(text, method)
    if st.session_state.get(CANCELLED) == key:
        st.info(tr("explain_cancelled"))
        st.button(
            tr("explain_again"),
            key="explain_again",
            icon=":material/replay:",
            on_click=_cancelled,
            args=(None,),
        )
        return None
    running = st.container()
    bar, cancel = running.empty(), running.empty()
    started = time.monotonic()
    shown = False

    def progress(done: int, total: int) -> None:
        nonlocal shown
        elapsed = time.monotonic() - started
        if not shown and elapsed / max(done, 1) * total < BAR_AFTER_S:
            return  # this run ends within a second: no bar to flash
        if not shown:
            shown = True
            cancel.button(
                tr("explain_cancel"),
                key="explain_cancel",
                icon=":material/stop_circle:",
                on_click=_cancelled,
                args=(key,),
            )
        bar.progress(done / total, text=tr("explain_progress", done=done, total=total))

    found = reader_agreement(text, method, progress)
    bar.empty()
    cancel.empty()
    return found
