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
    python -m bench.section_load         # the same, alone (its own process: Locust's
                                         # gevent patches the standard library at import)

The server's CPU time and memory are read from its process (psutil) before and after.
"""

from __future__ import annotations

import itertools
import random
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gevent
import psutil
from locust import User, between, events, task
from locust.env import Environment
from locust.exception import StopUser

from bench.standalone import run_alone
from bench.streamlit_client import StreamlitTab
from bench.tables import RESULTS_DIR, Table, fmt_s
from deploy.app_server import free_port, serving, start_app, stop, wait_healthy, warm_up
from deploy.run_replicas import start_nginx

__all__ = ["ClassResult", "run", "run_class"]

EDITS = 5
WORDS = 24
ARRIVAL_S = 10.0
CONNECT_S = 10.0  # a phone's browser gives up opening the websocket after about this long
DEADLINE_S = 240.0
_numbers = itertools.count()


def _sentence(student: int, edit: int) -> list[str]:
    return [f"s{student}e{edit}w{j}" for j in range(WORDS)]


SHARED_TEXT = "the whole class opens the same link"  # what every student's QR scan says


class Student(User):
    """One student: open the page, type `edits` sentences, think 5-15 s between them.

    Arrivals are spread evenly at random over `arrival_s`. With `shared_open` every
    student opens the same link (the teacher's QR code) before typing their own."""

    wait_time = between(5, 15)
    abstract = False
    arrival_s = ARRIVAL_S
    edits = EDITS
    shared_open = False

    def on_start(self) -> None:
        self.number = next(_numbers)
        self.edit = 0
        # arrivals spread over arrival_s, whatever Locust's spawn batches do
        gevent.sleep(random.uniform(0, self.arrival_s))
        self.before_open()
        text = SHARED_TEXT if self.shared_open else f"s{self.number} opens"
        params = {"text": text, "tokenizer": "word", "embed_dim": 64, "num_heads": 8}
        try:
            self.tab = StreamlitTab(self.host, params, connect_timeout=CONNECT_S).__enter__()
        except Exception as caught:  # could not even open the websocket: a failed visit
            self._fire("connect", 0.0, 0, caught)
            raise StopUser() from caught
        self._timed("open", lambda: self.tab.open(), text.split())

    def before_open(self) -> None:
        """What the student's browser does before its websocket opens (nothing here)."""

    def on_stop(self) -> None:
        if hasattr(self, "tab"):  # not when it never connected
            self.tab.close()

    @task
    def type_sentence(self) -> None:
        if self.edit >= self.edits:
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
        self._fire(name, time.perf_counter() - started, size, error)

    def _fire(
        self, name: str, seconds: float, size: int, error: Exception | None, kind: str = "WS"
    ) -> None:
        self.environment.events.request.fire(
            request_type=kind,
            name=name,
            response_time=seconds * 1000,
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
    connect_failed: int = 0  # students whose websocket did not open within CONNECT_S
    files_p50_s: float = float("nan")  # a browser's files fetched before the websocket
    files_p95_s: float = float("nan")


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


def run_class(
    url: str, students: int, *, server_pids: list[int], user: type[Student] = Student
) -> ClassResult:
    """`students` simulated students against `url` (one server or nginx in front of several)."""
    env = Environment(user_classes=[user], host=url, events=events)
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
    failed = env.stats.get("connect", "WS").num_failures
    files = env.stats.get("files", "HTTP")
    return ClassResult(
        students=students,
        edits=edits.num_requests,
        errors=edits.num_failures + opens.num_failures + failed,
        open_p50_s=opens.get_response_time_percentile(0.5) / 1000,
        open_p95_s=opens.get_response_time_percentile(0.95) / 1000,
        p50_s=edits.get_response_time_percentile(0.5) / 1000,
        p95_s=edits.get_response_time_percentile(0.95) / 1000,
        max_s=edits.max_response_time / 1000,
        wall_s=wall,
        server_cpu_s=_cpu(procs) - cpu_before,
        server_rss_mb=(rss_before, _rss_mb(procs)),
        error_samples=samples,
        connect_failed=failed,
        files_p50_s=files.get_response_time_percentile(0.5) / 1000
        if files.num_requests
        else float("nan"),
        files_p95_s=files.get_response_time_percentile(0.95) / 1000
        if files.num_requests
        else float("nan"),
    )


def _row(table: Table, setup: str, r: ClassResult) -> None:
    table.add(
        setup,
        r.students,
        r.edits,
        r.errors,
        f"{fmt_s(r.open_p50_s)} / {fmt_s(r.open_p95_s)}",
        f"{fmt_s(r.p50_s)} / {fmt_s(r.p95_s)} / {fmt_s(r.max_s)}",
        f"{r.server_cpu_s / max(1, r.edits + r.students) * 1000:.0f}",
        f"{r.server_rss_mb[0]:.0f} → {r.server_rss_mb[1]:.0f}",
    )


def _one_server(students: int, logs: Path) -> ClassResult:
    with serving(log=logs / "load-one.log") as app:
        print(f"warm-up: {warm_up(app.url)}", flush=True)
        return run_class(app.url, students, server_pids=[app.process.pid])


def _two_replicas(students: int, logs: Path) -> ClassResult:
    """Two replicas behind nginx (deploy/make_nginx_conf.py: sticky, websocket-aware)."""
    ports, procs = [free_port(), free_port()], []
    secret = secrets.token_hex(16)
    try:
        for port in ports:
            log = logs / f"load-replica-{port}.log"
            procs.append(start_app(port, log=log, cookie_secret=secret))
        for port, proc in zip(ports, procs, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc=proc)
            warm_up(f"http://127.0.0.1:{port}")
        listen = f"127.0.0.1:{free_port()}"
        nginx = start_nginx(ports, listen=listen, prefix=logs / "nginx")
        procs.append(nginx)
        wait_healthy(f"http://{listen}/_stcore/health", proc=nginx)
        return run_class(f"http://{listen}", students, server_pids=[p.pid for p in procs[:2]])
    finally:
        for proc in reversed(procs):
            stop(proc)


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    students = 20 if quick else 100
    table = Table(
        f"A class over the websocket protocol ({EDITS} edits of {WORDS} words, 64 dims x 8 "
        "heads, 5-15 s think time, arrivals over 10 s; Locust)",
        [
            "setup",
            "students",
            "edits",
            "errors",
            "page load p50 / p95",
            "edit p50 / p95 / max",
            "server CPU ms per run",
            "server RSS MB",
        ],
    )
    logs = Path(tempfile.mkdtemp(prefix="bench-load-", dir=RESULTS_DIR.parent))
    raw: dict[str, object] = {}
    try:
        one = _one_server(students, logs)
        _row(table, "one server", one)
        raw["one"] = one.__dict__
        if not quick and shutil.which("nginx"):
            two = _two_replicas(students, logs)
            _row(table, "two replicas behind nginx", two)
            raw["two"] = two.__dict__
        elif not quick:
            table.notes.append("two replicas skipped: nginx is not installed")
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    table.notes.append(
        "A reply is timed from sending the change to the end of the script run that answers "
        "it; an error is a broken connection, an exception or error box, or another "
        "student's tokens. Server CPU counts every run, page loads included. The load "
        "generator shares the 2 cores with the server."
    )
    return [table], raw


def main(argv: list[str] | None = None) -> None:
    run_alone(run, "python -m bench.section_load", quick_help="20 students, one server", argv=argv)


if __name__ == "__main__":
    main()
