"""How many script runs of one server process compute at once: a few, the others wait.

A Streamlit server runs each session's script in a thread of its own, and one interpreter
lock serves them all and the event loop that accepts connections and sends every reply.
When a class arrives at once, dozens of script threads are runnable together: each gets
the lock for a few milliseconds in turn, runs slower for the switching, and the event loop
waits its turn behind all of them, so new students' handshakes and replies queue (the
issue that asked for this measured 31 of 100 arrivals within 10 s failing to connect).
`python -m bench burst` before → after this and the cheaper first visit: page load p95
5.7 → 2.3 s, edit p95 3.9 → 2.0 s, 0 failed connections either way here. A run takes one of
`SLOTS` places (default: the number of cores) for its whole script; the others wait for a
place blocked on a semaphore, off the interpreter lock, so the event loop and the runs that
compute each get a core. The total work is the same, done in turn instead of all at once.

A run that waits on purpose (a paced training run sleeping between frames) gives its place
back while it waits (`place_released`).

    ATTENTION_SCRIPT_SLOTS=4 streamlit run app.py     # more places; 0: no limit
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SLOTS", "place_released", "script_place"]


def _slots() -> int:
    raw = os.environ.get("ATTENTION_SCRIPT_SLOTS", "").strip()
    try:
        return max(0, int(raw)) if raw else max(2, os.cpu_count() or 2)
    except ValueError:
        return max(2, os.cpu_count() or 2)


SLOTS = _slots()
_places = threading.BoundedSemaphore(SLOTS) if SLOTS else None
_held = threading.local()


@contextmanager
def script_place() -> Iterator[None]:
    """Hold one of the SLOTS places for the block (a whole script run); nested: no-op."""
    if _places is None or getattr(_held, "on", False):
        yield
        return
    _places.acquire()
    _held.on = True
    try:
        yield
    finally:
        _held.on = False
        _places.release()


@contextmanager
def place_released() -> Iterator[None]:
    """Give this run's place back for the block (a sleep, a wait on another session)."""
    if _places is None or not getattr(_held, "on", False):
        yield
        return
    _held.on = False
    _places.release()
    try:
        yield
    finally:
        _places.acquire()
        _held.on = True
