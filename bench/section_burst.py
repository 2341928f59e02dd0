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
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench.section_load import SHARED_TEXT, WORDS, ClassResult, Student, run_class
from bench.streamlit_client import StreamlitTab
from bench.tables import RESULTS_DIR, Table, fmt_s
from deploy.app_server import APP_DIR, serving, warm_up

__all__ = ["VisitCost", "run", "visit_cost"]

PARAMS = {"tokenizer": "word", "embed_dim": 64, "num_heads": 8}
CALIBRATION = 20


class BurstStudent(Student):
    """A student of the burst: opens the shared link, then types 3 sentences."""

    abstract = True  # made concrete per run by `_student`
    edits = 3
    shared_open = True


def _student(arrival_s: float) -> type[Student]:
    return type("Burst", (BurstStudent,), {"abstract": False, "arrival_s": arrival_s})


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


def _burst(students: int, arrival_s: float, logs: Path, app_dir: Path) -> ClassResult:
    with serving(log=logs / f"burst-{arrival_s:.0f}.log", app_dir=app_dir) as app:
        print(f"warm-up: {warm_up(app.url)}", flush=True)
        return run_class(app.url, students, server_pids=[app.process.pid], user=_student(arrival_s))


def run(*, quick: bool = False, app_dir: Path = APP_DIR) -> tuple[list[Table], dict]:
    students = 30 if quick else 100
    logs = Path(tempfile.mkdtemp(prefix="bench-burst-", dir=RESULTS_DIR.parent))
    cost_table = Table(
        "Server CPU per action, one at a time (24 words, 64 dims × 8 heads)",
        ["first visit, shared link", "first visit, own sentence", "edit"],
    )
    try:
        with serving(log=logs / "visits.log", app_dir=app_dir) as app:
            warm_up(app.url)
            cost = visit_cost(app.url, app.process.pid, 8 if quick else CALIBRATION)
        spent = (cost.shared_visit, cost.own_visit, cost.edit)
        cost_table.add(*(f"{seconds * 1000:.0f} ms" for seconds in spent))
        cost_table.notes.append(
            "Each action on a session of its own; the shared link is what the teacher's QR code "
            "gives every student (the same sentence), own = a sentence nobody opened before."
        )
        burst_table = Table(
            f"{students} students arriving at once, one `streamlit run app.py` (3 edits each, "
            "5–15 s think time; Locust over the websocket protocol)",
            [
                "arrivals over",
                "connections failed",
                "errors",
                "edits",
                "page load p50 / p95",
                "edit p50 / p95 / max",
                "server CPU s",
                "server RSS MB",
            ],
        )
        raw: dict[str, object] = {"cost": cost.__dict__}
        for arrival in (10.0,) if quick else (10.0, 30.0):
            r = _burst(students, arrival, logs, app_dir)
            raw[f"burst_{arrival:.0f}"] = r.__dict__
            burst_table.add(
                f"{arrival:.0f} s",
                r.connect_failed,
                r.errors,
                r.edits,
                f"{fmt_s(r.open_p50_s)} / {fmt_s(r.open_p95_s)}",
                f"{fmt_s(r.p50_s)} / {fmt_s(r.p95_s)} / {fmt_s(r.max_s)}",
                f"{r.server_cpu_s:.1f}",
                f"{r.server_rss_mb[0]:.0f} → {r.server_rss_mb[1]:.0f}",
            )
            burst_table.notes.extend(f"{arrival:.0f} s: {e}" for e in r.error_samples[:3])
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    burst_table.notes.append(
        "A connection fails when the websocket does not open within 10 s; an error is a "
        "failed connection, a broken reply, an exception or error box, or another "
        "student's tokens. The load generator shares the 2 cores with the server."
    )
    return [cost_table, burst_table], raw


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.section_burst")
    parser.add_argument("--quick", action="store_true", help="30 students over 10 s")
    parser.add_argument("--app-dir", type=Path, default=APP_DIR, help="serve this tree's app.py")
    args = parser.parse_args(argv)
    tables, _ = run(quick=args.quick, app_dir=args.app_dir.resolve())
    print(f"app: {args.app_dir.resolve()}")
    print("\n".join(t.markdown() for t in tables))


if __name__ == "__main__":
    main()
