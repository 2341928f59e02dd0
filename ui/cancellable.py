"""A long computation on a page, with a bar and Cancel while it runs (the Lens page's
every-head ablation, the Explain page's attribution).

Cancel reruns the page, which stops the run at its next `progress` report (a rerun is a
BaseException, so the run's own error handling lets it pass); the page then says so and
offers to start again, for that run's key only (another sentence runs as usual). A run
expected to end within BAR_AFTER_S shows nothing, so no bar flashes.

The strings and widget keys follow one prefix: `<prefix>_progress`, `<prefix>_cancel`,
`<prefix>_cancelled` (the message, and the state key holding the cancelled run's key)
and `<prefix>_again`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from ui.language import tr

BAR_AFTER_S = 1.0  # a run expected to take longer than this shows its bar and Cancel

Result = TypeVar("Result")
Progress = Callable[[int, int], None]


def _cancelled(state_key: str, key: str | None) -> None:
    st.session_state[state_key] = key


def run_or_cancelled(run: Callable[[Progress], Result], *, key: str, prefix: str) -> Result | None:
    """`run(progress)`, with a bar and Cancel once it is expected to take over BAR_AFTER_S;
    None (and a button to start again) once the run `key` was cancelled."""
    state_key = f"{prefix}_cancelled"
    if st.session_state.get(state_key) == key:
        st.info(tr(f"{prefix}_cancelled"))
        st.button(  # its click reruns the page with the flag down (a callback: no st.rerun)
            tr(f"{prefix}_again"),
            key=f"{prefix}_again",
            icon=":material/replay:",
            on_click=_cancelled,
            args=(state_key, None),
        )
        return None
    # one container for both: a button drawn where the page's previous run had another button
    # (Knock out … again) ignored its clicks in Chromium (Streamlit 1.67), so Cancel never
    # takes that place
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
                tr(f"{prefix}_cancel"),
                key=f"{prefix}_cancel",
                icon=":material/stop_circle:",
                on_click=_cancelled,
                args=(state_key, key),
            )
        bar.progress(done / total, text=tr(f"{prefix}_progress", done=done, total=total))

    found = run(progress)
    bar.empty()
    cancel.empty()
    return found
