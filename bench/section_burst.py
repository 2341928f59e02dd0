"""A class that arrives at once: 100 students opening the link within 10 s (and 30 s).

    python -m bench burst              # 100 students over 10 s, then over 30 s; one server
    python -m bench burst --quick      # 30 students over 10 s
    python -m bench.section_burst      # the same, alone (Locust's gevent patches the
                                       # standard library at import: its own process)
    python -m bench.section_burst --app-dir ../old-checkout   # serve another tree: A/B

Two parts, each against a fresh `streamlit run app.py` (deploy/app_server.py), warmed up
as deploy/ does:

1. **CPU per visit, one at a time** (no contention, so the CPU is the visit's own): 20
   first visits of the teacher's shared link (the QR code: the same sentence), 20 first
   visits with a sentence of their own, then 20 edits (24 new words each), each on its own
   session; server CPU (psutil, the process and its children) per action.
2. **The burst**: Locust users over Streamlit's websocket protocol (bench/section_load.py's
   `Student`) arriving evenly at random over 10 s (or 30 s), each opening the shared link
   and then typing 3 sentences of 24 words (64 dims × 8 heads) with 5–15 s of thought. A
   student whose websocket does not open within 10 s counts as a failed connection.
"""

from __future__ import annotations

import argparse
import http.client
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import gevent
import psutil
from locust.exception import StopUser

from bench.app_server import wait_warm
from bench.section_load import CONNECT_S, SHARED_TEXT, WORDS, ClassResult, Student, run_class
from bench.streamlit_client import StreamlitTab
from bench.tables import RESULTS_DIR, Table, fmt_s
from deploy.app_server import (
    APP_DIR,
    HEALTH_PATH,
    free_port,
    serving,
    start_app,
    stop,
    wait_healthy,
    warm_up,
)
from deploy.run_replicas import start_nginx

__all__ = ["VisitCost", "run", "visit_cost"]

PARAMS = {"tokenizer": "word", "embed_dim": 64, "num_heads": 8}
CALIBRATION = 20
BROWSER_CONNECTIONS = 6  # HTTP/1.1: a browser opens at most six connections to one host


class BurstStudent(Student):
    """A student of the burst: the browser's files first (what a new phone downloads before
    it opens the websocket, recorded from a real Chromium visit), then the shared link, then
    3 typed sentences."""

    abstract = True  # made concrete per run by `_student`
    edits = 3
    shared_open = True
    files: tuple[str, ...] = ()

    def before_open(self) -> None:
        started, error, size = time.perf_counter(), None, 0
        try:
            size = fetch_files(self.host, self.files)
        except Exception as caught:  # a refused or broken download is a failed visit
            error = caught
        self._fire("files", time.perf_counter() - started, size, error, kind="HTTP")
        if error is not None:
            raise StopUser() from error


def fetch_files(host: str, paths: Sequence[str]) -> int:
    """GET `paths` from `host` as a browser does: the first alone (the page), the rest
    over BROWSER_CONNECTIONS keep-alive connections at once, gzip accepted. Returns the
    bytes received; raises on an error status or a connection that fails."""
    if not paths:
        return 0
    where = urlsplit(host)
    pending = list(paths[1:])
    received = [0]

    def connection(first: str | None) -> None:
        conn = http.client.HTTPConnection(where.hostname, where.port, timeout=CONNECT_S)
        try:
            while first or pending:
                path = first or pending.pop(0)
                first = None
                conn.request("GET", path, headers={"Accept-Encoding": "gzip, deflate, br"})
                reply = conn.getresponse()
                received[0] += len(reply.read())
                if reply.status >= 400:
                    raise RuntimeError(f"GET {path}: {reply.status}")
        finally:
            conn.close()

    connection(paths[0])
    gevent.joinall(
        [gevent.spawn(connection, None) for _ in range(BROWSER_CONNECTIONS)], raise_error=True
    )
    return received[0]


def _student(arrival_s: float, files: Sequence[str]) -> type[Student]:
    attrs = {"abstract": False, "arrival_s": arrival_s, "files": tuple(files)}
    return type("Burst", (BurstStudent,), attrs)


def record_files(url: str) -> list[str]:
    """The paths a real Chromium visit GETs (bench/section_visit.py, its own process:
    Playwright does not run under Locust's gevent patches)."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.section_visit", "--files", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    paths = json.loads(out.stdout.strip().splitlines()[-1])
    # a session's media (the page icon) exists only while that session does: the browser
    # asks for it after its websocket opens, not before
    return [p for p in paths if not p.startswith("/media/")]


def _cpu(pid: int) -> float:
    proc = psutil.Process(pid)
    return sum(sum(p.cpu_times()[:2]) for p in [proc, *proc.children(recursive=True)])


@dataclass(frozen=True)
class VisitCost:
    """Server CPU seconds per action, measured one action at a time."""

    shared_visit: float
    own_visit: float
    edit: float


def visit_cost(url: str, pid: int, n: int = CALIBRATION) -> VisitCost:
    """Per-action server CPU: `n` first visits of the shared link, `n` with a sentence of
    their own, `n` edits (after an uncounted first visit); a new session for each, while
    the teacher's tab stays open (as in class: Streamlit drops its compiled scripts when
    the last session leaves, and the next visit would pay for compiling them again)."""
    spent: dict[str, float] = {"shared": 0.0, "own": 0.0, "edit": 0.0}
    teacher = StreamlitTab(url, {"text": SHARED_TEXT, **PARAMS}).__enter__()
    teacher.open()
    for kind in spent:
        for i in range(n):
            text = SHARED_TEXT if kind == "shared" else f"visitor {kind} {i}"
            with StreamlitTab(url, {"text": text, **PARAMS}) as tab:
                before = _cpu(pid)
                tab.open()
                if kind == "edit":
                    before = _cpu(pid)
                    tab.type_text(" ".join(f"v{i}w{j}" for j in range(WORDS)))
                spent[kind] += _cpu(pid) - before
    teacher.close()
    return VisitCost(spent["shared"] / n, spent["own"] / n, spent["edit"] / n)


def _wait_warm(log: Path, app_dir: Path) -> None:
    """`wait_warm`, for a tree whose server has a deferred warm-up (an older one has none)."""
    server = app_dir / "ui" / "server.py"
    if server.exists() and "WARM_UP_LOG" in server.read_text():
        wait_warm(log)


@contextmanager
def _served(logs: Path, app_dir: Path, replicas: int, name: str) -> Iterator[tuple[str, list[int]]]:
    """One `streamlit run app.py`, or `replicas` of them behind nginx (deploy/: sticky,
    websocket-aware) → (the URL students open, the servers' pids), once every server has
    finished its deferred warm-up (ui/server.py: it runs 4 s after the start, long before a
    class has scanned the teacher's QR code)."""
    if replicas == 1:
        with serving(log=logs / f"{name}.log", app_dir=app_dir) as app:
            _wait_warm(app.log, app_dir)
            yield app.url, [app.process.pid]
        return
    ports, procs = [free_port() for _ in range(replicas)], []
    secret = secrets.token_hex(16)
    try:
        for port in ports:
            log = logs / f"{name}-{port}.log"
            procs.append(start_app(port, log=log, cookie_secret=secret, app_dir=app_dir))
        for port, proc in zip(ports, procs, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}{HEALTH_PATH}", proc=proc)
        for port in ports:
            _wait_warm(logs / f"{name}-{port}.log", app_dir)
        listen = f"127.0.0.1:{free_port()}"
        nginx = start_nginx(ports, listen=listen, prefix=logs / f"{name}-nginx")
        wait_healthy(f"http://{listen}{HEALTH_PATH}", proc=nginx)
        procs.append(nginx)
        yield f"http://{listen}", [p.pid for p in procs[:replicas]]
    finally:
        for proc in reversed(procs):
            stop(proc)


def _burst(
    students: int, arrival_s: float, logs: Path, app_dir: Path, replicas: int
) -> ClassResult:
    """A fresh server (or replicas), the teacher's first visit in Chromium (which records the
    files a browser fetches), then the class."""
    name = f"burst-{students}-{arrival_s:.0f}-{replicas}"
    with _served(logs, app_dir, replicas, name) as (url, pids):
        files = record_files(url)
        return run_class(url, students, server_pids=pids, user=_student(arrival_s, files))


def run(
    *,
    quick: bool = False,
    app_dir: Path = APP_DIR,
    classes: Sequence[tuple[int, float, int]] | None = None,
) -> tuple[list[Table], dict]:
    """`classes`: (students, arrival seconds, replicas) per burst; default 100 over 10 s and
    over 30 s on one process (quick: 30 over 10 s)."""
    if classes is None:
        classes = [(30, 10.0, 1)] if quick else [(100, 10.0, 1), (100, 30.0, 1)]
    logs = Path(tempfile.mkdtemp(prefix="bench-burst-", dir=RESULTS_DIR.parent))
    cost_table = Table(
        "Server CPU per action over the websocket protocol, one at a time (24 words, 64 dims "
        "× 8 heads; a browser's files not included: see `python -m bench visit`)",
        ["first visit, shared link", "first visit, own sentence", "edit"],
    )
    burst_table = Table(
        "A class arriving at once (each student: a new browser's files, the shared link, 3 "
        "edits with 5–15 s think time; Locust over HTTP and the websocket protocol)",
        [
            "students",
            "arrivals over",
            "servers",
            "connections failed",
            "errors",
            "edits",
            "files p50 / p95",
            "websocket page p50 / p95",
            "edit p50 / p95 / max",
            "server CPU s (per student)",
            "server RSS MB",
        ],
    )
    raw: dict[str, object] = {}
    try:
        with serving(log=logs / "visits.log", app_dir=app_dir) as app:
            warm_up(app.url)
            cost = visit_cost(app.url, app.process.pid, 8 if quick else CALIBRATION)
        raw["cost"] = cost.__dict__
        spent = (cost.shared_visit, cost.own_visit, cost.edit)
        cost_table.add(*(f"{seconds * 1000:.0f} ms" for seconds in spent))
        cost_table.notes.append(
            "Each action on a session of its own; the shared link is what the teacher's QR code "
            "gives every student (the same sentence), own = a sentence nobody opened before."
        )
        for students, arrival, replicas in classes:
            r = _burst(students, arrival, logs, app_dir, replicas)
            raw[f"burst_{students}_{arrival:.0f}_{replicas}"] = r.__dict__
            burst_table.add(
                students,
                f"{arrival:.0f} s",
                "one process" if replicas == 1 else f"{replicas} behind nginx",
                r.connect_failed,
                r.errors,
                r.edits,
                f"{fmt_s(r.files_p50_s)} / {fmt_s(r.files_p95_s)}",
                f"{fmt_s(r.open_p50_s)} / {fmt_s(r.open_p95_s)}",
                f"{fmt_s(r.p50_s)} / {fmt_s(r.p95_s)} / {fmt_s(r.max_s)}",
                f"{r.server_cpu_s:.1f} ({r.server_cpu_s / students * 1000:.0f} ms)",
                f"{r.server_rss_mb[0]:.0f} → {r.server_rss_mb[1]:.0f}",
            )
            burst_table.notes.extend(
                f"{students}/{arrival:.0f} s: {e}" for e in r.error_samples[:3]
            )
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    burst_table.notes.append(
        "A connection fails when the websocket does not open within 10 s; an error is a "
        "failed download or connection, a broken reply, an exception or error box, or "
        "another student's tokens. The load generator shares the 2 cores with the servers."
    )
    return [cost_table, burst_table], raw


def _classes(text: str) -> list[tuple[int, float, int]]:
    """ "100x10,300x10x2" → [(100, 10.0, 1), (300, 10.0, 2)]."""
    out = []
    for item in text.split(","):
        parts = item.strip().split("x")
        out.append((int(parts[0]), float(parts[1]), int(parts[2]) if len(parts) > 2 else 1))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.section_burst")
    parser.add_argument("--quick", action="store_true", help="30 students over 10 s")
    parser.add_argument("--app-dir", type=Path, default=APP_DIR, help="serve this tree's app.py")
    parser.add_argument(
        "--classes",
        type=_classes,
        help="students x arrival seconds [x replicas], comma-separated, e.g. 100x10,300x10x2",
    )
    args = parser.parse_args(argv)
    tables, _ = run(quick=args.quick, app_dir=args.app_dir.resolve(), classes=args.classes)
    print(f"app: {args.app_dir.resolve()}")
    print("\n".join(t.markdown() for t in tables))


if __name__ == "__main__":
    main()
