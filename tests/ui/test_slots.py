"""Tests for ui/slots.py: at most SLOTS script runs compute at once; a waiting run gives
its place back; nothing is held after an exception (st.stop, a rerun)."""

from __future__ import annotations

import threading
import time

import pytest

from ui import slots


def _run_together(count: int, body) -> int:
    """`count` threads each run `body` inside a place; the most ever inside at once."""
    inside = peak = 0
    lock = threading.Lock()

    def run() -> None:
        nonlocal inside, peak
        with slots.script_place():
            with lock:
                inside += 1
                peak = max(peak, inside)
            try:
                body()
            finally:  # a body that raised has left its place too
                with lock:
                    inside -= 1

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    return peak


def test_no_more_runs_compute_at_once_than_there_are_places() -> None:
    assert slots.SLOTS >= 2
    assert _run_together(3 * slots.SLOTS, lambda: time.sleep(0.05)) == slots.SLOTS


def test_a_run_that_sleeps_gives_its_place_back() -> None:
    """Every run waits at once (the barrier only opens when all are in): had they kept
    their places, only SLOTS could. How long that takes: `python -m bench pace`."""
    everyone = threading.Barrier(4 * slots.SLOTS)

    def sleeper() -> None:
        with slots.place_released():
            everyone.wait(timeout=10)

    assert _run_together(4 * slots.SLOTS, sleeper) == 4 * slots.SLOTS


def test_an_exception_gives_the_place_back_and_nesting_takes_one() -> None:
    for _ in range(3 * slots.SLOTS):
        with pytest.raises(RuntimeError), slots.script_place(), slots.script_place():
            raise RuntimeError("st.stop()")
    everyone = threading.Barrier(slots.SLOTS)  # only passes when all SLOTS are in at once
    assert _run_together(slots.SLOTS, lambda: everyone.wait(timeout=10)) == slots.SLOTS
