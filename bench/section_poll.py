"""A live class poll under load: simulated phones answering, a teacher's histogram following.

Every participant speaks the app server's own websocket protocol (bench/streamlit_client.py,
the protobufs that ship in the streamlit package), as a browser tab does on the Classroom
page (bench/poll_client.py): the teacher opens a class and pushes a question, each student
opens the join link (`?class=CODE`), taps "Join", and from then on refreshes its live
fragment every STUDENT_REFRESH_S (what the page's `st.fragment(run_every=...)` makes a
browser do), taps one key's button when it decides, and keeps refreshing. The teacher's tab
refreshes its live fragment every TEACHER_REFRESH_S (its `run_every`) and reads the
histogram it is sent. This module drives them and measures.

The full run (`python -m bench poll`): a throwaway redis-server on loopback, two replicas
of the app sharing it (ATTENTION_POLL_REDIS_URL), nginx in front (deploy/run_replicas.py);
100 students arrive over the first 5 s and answer within 10 s; at 5 s one replica is
killed (SIGKILL). Its students' connections drop; they reconnect through nginx with the
same link (class code and student id), land on the other replica, find their earlier
answer still counted, or answer now. The teacher's tab is on the replica that stays up;
a second run puts it on the replica that is killed: it reconnects through nginx with its
own URL (class code + teacher key, both in the store), shows the histogram again and
reveals from the other replica.

Measured:
  counted     the store's final counts equal a Counter of what the students tapped, each
              student once; the teacher's last histogram shows the same
  latency     answer → histogram: from a student sending its tap to the end of the first
              teacher refresh that *started* after the tap's reply came back (so the tap
              was stored before it): an upper bound on what the projector lags
  reconnects  students whose connection dropped, and whose earlier answer they saw again
  teacher     (second run) seconds from the kill to the teacher's histogram on the other
              replica, and whether its reveal there worked

A last run asks "where does this head look?" (the phones tap the characters of the
trained reader's sentence, ui/where_class.py) with no replica killed.

    python -m bench poll            # 100 students, two replicas, Redis, one killed
    python -m bench poll --quick    # 20 students, no kill
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.poll_client import (
    BUTTONS,
    PollTab,
    Student,
    histogram,
    open_class_as_teacher,
    run_student,
)
from bench.standalone import run_alone
from bench.tables import RESULTS_DIR, Table, fmt_s
from ui.classroom import STUDENT_REFRESH_S, TEACHER_REFRESH_S  # the page's fragment timers

__all__ = ["PollResult", "PollTab", "run", "run_poll", "start_redis"]

JOIN_S = 5.0  # students arrive over this many seconds after the question is pushed
ANSWER_S = 10.0  # and answer within this many
END_S = 14.0  # then everyone keeps refreshing until here


def start_redis(folder: Path) -> tuple[subprocess.Popen, str]:
    """A throwaway redis-server on a free loopback port (no persistence); (process, URL)."""
    import redis

    from deploy.app_server import free_port

    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            return proc, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not answer")


@dataclass
class PollResult:
    kind: str  # the question's kind (attention_core.poll.QUESTION_KINDS)
    students: int
    counted_once: bool
    store_counts: dict[int, int]
    teacher_final: list[int]
    sent_counts: dict[int, int]
    latency_p50_s: float
    latency_p95_s: float
    latency_max_s: float
    answer_p50_s: float
    answer_p95_s: float
    refresh_p95_s: float
    killed_at_s: float | None
    reconnected: int
    saw_earlier_answer: int
    answered_then_dropped: int  # had their tap's reply, then lost their connection
    recovered: int  # tap stored, reply lost with the replica, found counted on reconnect
    errors: list[str]
    teacher_back_s: float | None  # teacher on the killed replica: kill → histogram again
    teacher_controls_after: bool | None  # …and its reveal on the other replica worked
    wall_s: float
    crowd: list[Student] = field(default_factory=list, repr=False)


def run_poll(
    students_url: str | list[str],
    teacher_url: str,
    students: int,
    *,
    store: Any,
    kill: Callable[[], None] | None = None,
    kill_at_s: float = JOIN_S,
    join_s: float = JOIN_S,
    answer_s: float = ANSWER_S,
    end_s: float = END_S,
    seed: int = 0,
    teacher_fallback_url: str | None = None,
    kind: str = "attention",
) -> PollResult:
    """The poll described in the module docstring; `store` reads the final counts.
    `students_url`: one address (nginx) or several, handed out in turn (replicas).
    `teacher_fallback_url`: when the teacher's connection drops (its replica killed), its
    tab reconnects there with its own URL (`class` + `teacher`: the key in the store) and
    carries on; at the end it reveals, a teacher's control on the replica that stayed.
    `kind`: the question's kind ("where": the phones tap the sentence's characters)."""
    rng = random.Random(seed)
    urls = [students_url] if isinstance(students_url, str) else list(students_url)
    teacher, code = open_class_as_teacher(teacher_url, kind)
    info = store.info(code)
    if info.question is None or info.question.kind != kind:
        raise RuntimeError(f"the teacher's push made no {kind!r} question: {info.question}")
    labels = list(info.question.options)
    options = len(labels)
    crowd = []
    for i in range(students):
        arrive = rng.uniform(0, join_s)
        answer = rng.uniform(min(arrive + 1, answer_s), answer_s)
        crowd.append(Student(i, rng.randrange(options), arrive, answer))
    t0 = time.perf_counter()
    stop_at = t0 + end_s
    observations: list[tuple[float, float, list[int]]] = []  # (started, ended, bars)
    refreshes: list[float] = []
    threads = [
        threading.Thread(
            target=run_student,
            args=(urls[me.number % len(urls)], code, me, t0, labels, stop_at, BUTTONS[kind]),
            daemon=True,
        )
        for me in crowd
    ]
    for thread in threads:
        thread.start()
    killed_at = None
    teacher_back: float | None = None
    while time.perf_counter() < stop_at + 2:
        if kill is not None and killed_at is None and time.perf_counter() >= t0 + kill_at_s:
            kill()
            killed_at = time.perf_counter() - t0
        started = time.perf_counter()
        try:
            update = teacher.refresh()
        except Exception:  # the teacher's replica died: reconnect with the teacher's URL
            if teacher_fallback_url is None:
                raise
            teacher = _teacher_again(teacher, teacher_fallback_url)
            update = teacher.refresh()
            if histogram(update) is not None and killed_at is not None:
                teacher_back = time.perf_counter() - t0 - killed_at
        bars = histogram(update)
        if bars is not None:
            observations.append((started, time.perf_counter(), bars))
        refreshes.append(update.seconds)
        time.sleep(max(0.0, TEACHER_REFRESH_S - (time.perf_counter() - started)))
    for thread in threads:
        thread.join(timeout=30)
    controls_after = None
    if teacher_fallback_url is not None and teacher_back is not None:
        teacher.click("poll_reveal")
        controls_after = bool(store.info(code).revealed)
    teacher.close()
    wall = time.perf_counter() - t0

    class_id = store.info(code).class_id
    number = store.info(code).question.number
    store_counts = store.counts(class_id, number)
    sent = Counter(me.choice for me in crowd if me.stored)
    latencies = []
    for me in crowd:
        if not me.stored or me.recovered:
            continue
        after = [end for start, end, _ in observations if start >= me.stored]
        if after:
            latencies.append(after[0] - me.sent)
    answers = [me.stored - me.sent for me in crowd if me.stored and not me.recovered]
    final = observations[-1][2] if observations else []

    def pct(values: list[float], q: float) -> float:
        return float(np.percentile(values, q)) if values else float("nan")

    every_one = all(me.stored for me in crowd)
    return PollResult(
        kind=kind,
        students=students,
        counted_once=every_one
        and store_counts == dict(Counter(me.choice for me in crowd))
        and final == [store_counts.get(j, 0) for j in range(options)],
        store_counts=store_counts,
        teacher_final=final,
        sent_counts=dict(sent),
        latency_p50_s=pct(latencies, 50),
        latency_p95_s=pct(latencies, 95),
        latency_max_s=max(latencies, default=float("nan")),
        answer_p50_s=pct(answers, 50),
        answer_p95_s=pct(answers, 95),
        refresh_p95_s=pct(refreshes, 95),
        killed_at_s=killed_at,
        reconnected=sum(1 for me in crowd if me.reconnects),
        saw_earlier_answer=sum(
            1
            for me in crowd
            if me.saw_earlier_answer and me.lost_at and me.stored and me.stored < me.lost_at
        ),
        recovered=sum(1 for me in crowd if me.recovered),
        answered_then_dropped=sum(
            1 for me in crowd if me.lost_at and me.stored and me.stored < me.lost_at
        ),
        errors=[e for me in crowd for e in me.errors][:5],
        teacher_back_s=teacher_back,
        teacher_controls_after=controls_after,
        wall_s=wall,
        crowd=crowd,
    )


def _teacher_again(lost: PollTab, url: str) -> PollTab:
    """The teacher's tab reconnected to `url` with the same address (class + teacher key),
    as the frontend reconnects; it retries while the proxy still tries the dead replica."""
    lost.close()
    for _ in range(40):
        tab = PollTab(url)
        tab.query = lost.query
        try:
            tab.__enter__()
            tab.open()
            if "poll_reveal" in tab.widget_ids and tab.fragment:
                return tab
        except Exception:
            pass
        tab.close()
        time.sleep(0.25)
    raise RuntimeError("the teacher's tab found no replica that carries its class")


def _replicas_with_redis(
    students: int,
    logs: Path,
    *,
    kill: bool,
    teacher_on_victim: bool = False,
    kind: str = "attention",
) -> PollResult:
    from attention_core.poll import RedisStore
    from deploy.app_server import free_port, start_app, stop, wait_healthy, warm_up
    from deploy.run_replicas import start_nginx

    redis_proc, redis_url = start_redis(logs)
    old = os.environ.get("ATTENTION_POLL_REDIS_URL")
    os.environ["ATTENTION_POLL_REDIS_URL"] = redis_url  # app_env() passes it to the replicas
    procs: list[subprocess.Popen] = []
    try:
        ports = [free_port(), free_port()]
        secret = secrets.token_hex(16)
        for port in ports:
            procs.append(start_app(port, log=logs / f"poll-{port}.log", cookie_secret=secret))
        for port, proc in zip(ports, procs, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc=proc)
            warm_up(f"http://127.0.0.1:{port}")
        listen = f"127.0.0.1:{free_port()}"
        nginx = start_nginx(ports, listen=listen, prefix=logs / "nginx", debug_upstream_header=True)
        procs.append(nginx)
        wait_healthy(f"http://{listen}/_stcore/health", proc=nginx)
        victim = procs[0]  # the teacher is on the other replica, or on this one

        def kill_replica() -> None:
            os.killpg(victim.pid, signal.SIGKILL)

        return run_poll(
            f"http://{listen}",
            f"http://127.0.0.1:{ports[0] if teacher_on_victim else ports[1]}",
            students,
            store=RedisStore(redis_url),
            kill=kill_replica if kill else None,
            teacher_fallback_url=f"http://{listen}" if teacher_on_victim else None,
            kind=kind,
        )
    finally:
        for proc in reversed(procs):
            stop(proc)
        redis_proc.kill()
        redis_proc.wait(10)
        if old is None:
            os.environ.pop("ATTENTION_POLL_REDIS_URL", None)
        else:
            os.environ["ATTENTION_POLL_REDIS_URL"] = old


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    students = 20 if quick else 100
    table = Table(
        "A live class poll: students answer on simulated phones (Streamlit's websocket "
        f"protocol), two replicas behind nginx sharing Redis, arrivals over {JOIN_S:.0f} s, "
        f"answers within {ANSWER_S:.0f} s",
        [
            "question",
            "students",
            "replica killed at",
            "counted exactly once",
            "answer → histogram p50 / p95 / max",
            "tap reply p50 / p95",
            "teacher refresh p95",
            "reconnected",
            "had answered when dropped / saw it counted after reconnecting",
            "teacher's replica killed: histogram back after / reveal works",
        ],
    )
    logs = Path(tempfile.mkdtemp(prefix="bench-poll-", dir=RESULTS_DIR.parent))
    try:
        results = [_replicas_with_redis(students, logs, kill=not quick)]
        if not quick:
            results.append(_replicas_with_redis(students, logs, kill=True, teacher_on_victim=True))
        # "where does this head look?": the phones tap the sentence's characters
        results.append(_replicas_with_redis(students, logs, kill=False, kind="where"))
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    for result in results:
        _add_row(table, result)
    result = results[0]
    table.notes.append(
        "Answer → histogram: from a student sending its tap to the end of the first teacher "
        f"refresh (every {TEACHER_REFRESH_S} s, as the page's fragment) that started after "
        f"the tap was stored. Students refresh every {STUDENT_REFRESH_S} s, as the page's "
        "fragment makes a phone do. The "
        f"load generator ({students + 1} threads) shares the machine's cores with both "
        "replicas, nginx and Redis. A student whose replica died waits for its seat's hold "
        "to lapse (HOLD_S, attention_core/poll/guard.py) before answering again."
    )
    for each in results:
        if each.errors:
            table.notes.append("first reconnect reasons: " + "; ".join(each.errors))
    raws = [{k: v for k, v in each.__dict__.items() if k != "crowd"} for each in results]
    names = [*["poll", "poll_teacher_killed"][: len(raws) - 1], "poll_where"]
    data = {
        name: json.loads(json.dumps(raw, default=str))
        for name, raw in zip(names, raws, strict=True)
    }
    return [table], data


def _add_row(table: Table, result: PollResult) -> None:
    teacher = (
        "—"
        if result.teacher_back_s is None
        else f"{result.teacher_back_s:.1f} s / {'yes' if result.teacher_controls_after else 'NO'}"
    )
    table.add(
        result.kind,
        result.students,
        f"{result.killed_at_s:.1f} s" if result.killed_at_s is not None else "—",
        "yes" if result.counted_once else f"NO: {result.store_counts} vs {result.sent_counts}",
        f"{fmt_s(result.latency_p50_s)} / {fmt_s(result.latency_p95_s)} / "
        f"{fmt_s(result.latency_max_s)} (p95 ≤ 1 s: "
        f"{'yes' if result.latency_p95_s <= 1.0 else 'NO'})",
        f"{fmt_s(result.answer_p50_s)} / {fmt_s(result.answer_p95_s)}",
        fmt_s(result.refresh_p95_s),
        result.reconnected,
        f"{result.answered_then_dropped} / {result.saw_earlier_answer}"
        + (f" (+{result.recovered} whose reply was lost)" if result.recovered else ""),
        teacher,
    )


def main(argv: list[str] | None = None) -> None:
    run_alone(
        run, "python -m bench.section_poll", quick_help="20 students, no replica killed", argv=argv
    )


if __name__ == "__main__":
    main()
