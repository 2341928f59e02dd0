"""A class of simulated students against one real server, with Locust.

Each student is a Locust user that speaks Streamlit's websocket protocol
(`bench/streamlit_client.py`): it opens the landing page, then types a new sentence (24
English words at 64 dims x 8 heads) five times with 5-15 s of thinking in between, and
leaves. Students arrive evenly over the first 10 s. A reply is timed from sending the
change to the script run that answers it being finished; it counts as an error if it
carries an exception or error box or draws someone else's tokens. Bounded: the run stops
by itself when every student has left, or at a hard deadline.

    python -m bench load                 # 100 students on one server, then 2 replicas
    python -m bench load --quick         # 20 students, one server

The server's CPU time and memory are read from its process (psutil) before and after.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass
from typing import Any

import gevent
import psutil
from locust import User, between, events, task
from locust.env import Environment
from locust.exception import StopUser

from bench.streamlit_client import StreamlitTab

__all__ = ["ClassResult", "run_class"]

EDITS = 5
WORDS = 24
ARRIVAL_S = 10.0
DEADLINE_S = 240.0
_numbers = itertools.count()


def _sentence(student: int, edit: int) -> list[str]:
    return [f"s{student}e{edit}w{j}" for j in range(WORDS)]


class Student(User):
    """One student: open the page, type EDITS sentences, think 5-15 s between them."""

    wait_time = between(5, 15)
    abstract = False

    def on_start(self) -> None:
        self.number = next(_numbers)
        self.edit = 0
        # arrivals spread over ARRIVAL_S, whatever Locust's spawn batches do
        gevent.sleep(random.uniform(0, ARRIVAL_S))
        params = {"text": f"s{self.number} opens", "tokenizer": "word", "embed_dim": 64}
        self.tab = StreamlitTab(self.host, {**params, "num_heads": 8}).__enter__()
        self._timed("open", lambda: self.tab.open(), [f"s{self.number}", "opens"])

    def on_stop(self) -> None:
        self.tab.close()

    @task
    def type_sentence(self) -> None:
        if self.edit >= EDITS:
            raise StopUser()
        words = _sentence(self.number, self.edit)
        self.edit += 1
        self._timed("edit", lambda: self.tab.type_text(" ".join(words)), words)

    def _timed(self, name: str, action: Any, words: list[str]) -> None:
        started = time.perf_counter()
        error: Exception | None = None
        size = 0
        try:
            update = action()
            size = update.bytes
            expected = [f"{i}:{w}" for i, w in enumerate(words)]
            if update.exceptions or update.errors:
                error = RuntimeError(f"error on the page: {update.exceptions or update.errors}")
            elif update.labels != expected:
                error = RuntimeError(f"foreign labels: {update.labels[:2]} for {expected[:2]}")
        except Exception as caught:  # a broken connection is an error, not a crash
            error = caught
        self.environment.events.request.fire(
            request_type="WS",
            name=name,
            response_time=(time.perf_counter() - started) * 1000,
            response_length=size,
            exception=error,
            context={},
        )


@dataclass
class ClassResult:
    students: int
    edits: int
    errors: int
    open_p50_s: float
    open_p95_s: float
    p50_s: float
    p95_s: float
    max_s: float
    wall_s: float
    server_cpu_s: float
    server_rss_mb: tuple[float, float]  # before, after
    error_samples: list[str]


def _processes(pids: list[int]) -> list[psutil.Process]:
    return [psutil.Process(pid) for pid in pids]


def _cpu(procs: list[psutil.Process]) -> float:
    total = 0.0
    for proc in procs:
        for p in [proc, *proc.children(recursive=True)]:
            times = p.cpu_times()
            total += times.user + times.system
    return total


def _rss_mb(procs: list[psutil.Process]) -> float:
    return sum(p.memory_info().rss for p in procs) / 2**20


def run_class(url: str, students: int, *, server_pids: list[int]) -> ClassResult:
    """`students` simulated students against `url` (one server or nginx in front of several)."""
    env = Environment(user_classes=[Student], host=url, events=events)
    samples: list[str] = []

    def keep_error(exception: Exception | None = None, **_: Any) -> None:
        if exception is not None and len(samples) < 5:
            samples.append(str(exception)[:200])

    env.events.request.add_listener(keep_error)
    procs = _processes(server_pids)
    rss_before, cpu_before = _rss_mb(procs), _cpu(procs)
    runner = env.create_local_runner()
    started = time.perf_counter()
    runner.start(students, spawn_rate=students)  # all spawned at once; each waits to arrive
    deadline = started + DEADLINE_S
    gevent.sleep(1)
    while runner.user_count and time.perf_counter() < deadline:
        gevent.sleep(0.5)
    wall = time.perf_counter() - started
    runner.quit()
    env.events.request.remove_listener(keep_error)
    edits, opens = env.stats.get("edit", "WS"), env.stats.get("open", "WS")
    return ClassResult(
        students=students,
        edits=edits.num_requests,
        errors=edits.num_failures + opens.num_failures,
        open_p50_s=opens.get_response_time_percentile(0.5) / 1000,
        open_p95_s=opens.get_response_time_percentile(0.95) / 1000,
        p50_s=edits.get_response_time_percentile(0.5) / 1000,
        p95_s=edits.get_response_time_percentile(0.95) / 1000,
        max_s=edits.max_response_time / 1000,
        wall_s=wall,
        server_cpu_s=_cpu(procs) - cpu_before,
        server_rss_mb=(rss_before, _rss_mb(procs)),
        error_samples=samples,
    )
