"""tests/support/workers.py: an `alone` test waits for the test in progress on the other worker, and
no other test starts while it runs (the locks, driven from two threads)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.support.workers import LONGEST_FIRST, _turn


@pytest.fixture(autouse=True)
def _one_run(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", f"test-workers-{id(request)}-{time.time()}")


def _hold(alone: bool, entered: threading.Event, release: threading.Event, log: list) -> None:
    with _turn(alone):
        log.append(("in", alone))
        entered.set()
        release.wait(5)
        log.append(("out", alone))


def test_an_alone_test_waits_for_the_test_in_progress_and_blocks_the_next() -> None:
    log: list[tuple[str, bool]] = []
    running, done = threading.Event(), threading.Event()
    other = threading.Thread(target=_hold, args=(False, running, done, log))
    other.start()
    assert running.wait(5)

    alone_in, alone_out = threading.Event(), threading.Event()
    alone = threading.Thread(target=_hold, args=(True, alone_in, alone_out, log))
    alone.start()
    assert not alone_in.wait(0.3)  # the other worker's test is still running
    done.set()
    assert alone_in.wait(5)  # …until it ends

    next_in, next_out = threading.Event(), threading.Event()
    follower = threading.Thread(target=_hold, args=(False, next_in, next_out, log))
    follower.start()
    assert not next_in.wait(0.3)  # no new test while the alone test runs
    alone_out.set()
    assert next_in.wait(5)
    next_out.set()
    for thread in (other, alone, follower):
        thread.join(5)
    assert log[:4] == [("in", False), ("out", False), ("in", True), ("out", True)]


def test_one_process_needs_no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID")
    with _turn(True), _turn(True):  # would deadlock if it locked
        pass
    assert "test_lecturer_walk.py" in LONGEST_FIRST


def test_the_longest_files_are_real_unique_names_and_xdist_keeps_their_order(
    pytestconfig: pytest.Config,
) -> None:
    """Each name in LONGEST_FIRST is one file under tests/, and xdist does not reorder the
    files by their number of tests (which would leave the one-test walks to the end)."""
    tests = Path(__file__).resolve().parents[1]
    for name in LONGEST_FIRST:
        assert len(list(tests.rglob(name))) == 1, name
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    assert pytestconfig.getoption("loadscopereorder") is False
