"""A class poll over the app server's own websocket protocol (bench/section_poll.py).

Default suite: one real server with the default SQLite store (processes sharing the file
are tested in tests/core/poll/test_store.py), a teacher and 8 students; every tap is counted
exactly once, in the store and on the teacher's histogram, and the numbers match a Counter of what
the students tapped. `-m load`: the 100-student run of the benchmark, two replicas behind
nginx sharing Redis, one replica killed mid-poll. No wall-clock figure is asserted; the
benchmark prints them (`python -m bench poll`).
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from attention_core.i18n import t
from attention_core.poll import SQLiteStore
from attention_core.poll.guard import HOLD_S
from bench.poll_client import PollTab, open_class_as_teacher
from bench.section_poll import run_poll
from deploy.app_server import serving
from tests.support.availability import unavailable


@pytest.mark.slow
def test_every_tap_of_a_small_class_is_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "poll.sqlite3"
    monkeypatch.setenv("ATTENTION_POLL_DB", str(db))  # app_env() hands it to the server
    monkeypatch.delenv("ATTENTION_POLL_REDIS_URL", raising=False)
    with serving(log=tmp_path / "server.log") as app:
        # the teacher's first page load imports torch and jieba before the students arrive
        result = run_poll(
            app.url, app.url, 8, store=SQLiteStore(db), join_s=1.0, answer_s=2.5, end_s=4.5
        )
    assert not result.errors, result.errors
    assert sum(result.store_counts.values()) == 8
    assert result.store_counts == result.sent_counts  # what the students tapped
    assert result.counted_once, result
    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")


@pytest.mark.slow
def test_every_tap_on_a_where_sentence_is_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Where does this head look?" pushed from the teacher's panel over the websocket;
    the phones tap the sentence's characters (bench/poll_client.py's `BUTTONS`)."""
    db = tmp_path / "poll.sqlite3"
    monkeypatch.setenv("ATTENTION_POLL_DB", str(db))
    monkeypatch.delenv("ATTENTION_POLL_REDIS_URL", raising=False)
    with serving(log=tmp_path / "server.log") as app:
        result = run_poll(app.url, app.url, 6, store=SQLiteStore(db), join_s=1.0,
                          answer_s=2.5, end_s=4.5, kind="where")  # fmt: skip
    assert not result.errors, result.errors
    assert result.kind == "where" and sum(result.store_counts.values()) == 6
    assert result.store_counts == result.sent_counts
    assert result.counted_once, result
    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")


def _said(tab: PollTab, key: str, **params: object) -> bool:
    """The tab's last reply showed catalog text `key` (alerts arrive Markdown-escaped)."""
    wanted = t(key, "en", **params)
    return any(re.sub(r"\\(.)", r"\1", alert) == wanted for alert in tab.alerts)


@pytest.mark.slow
def test_forged_requests_over_the_websocket_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several sessions, as several browsers would be, sending what a script could: a
    forged and a copied student id, the teacher's URL with the code and a guessed key, and
    the teacher's own button ids replayed from a student's session."""
    db = tmp_path / "poll.sqlite3"
    monkeypatch.setenv("ATTENTION_POLL_DB", str(db))
    monkeypatch.delenv("ATTENTION_POLL_REDIS_URL", raising=False)
    with serving(log=tmp_path / "server.log") as app:
        teacher, code = open_class_as_teacher(app.url)
        store = SQLiteStore(db)
        class_id = store.info(code).class_id
        with teacher, PollTab(app.url, {"class": code}) as owner:
            assert "teacher=" in teacher.query and "teacher=" not in owner.query
            owner.open()
            owner.click("poll_join")
            sid = re.search(r"sid=(\w+)", owner.query).group(1)
            owner.open()
            answer_key = next(k for k in owner.widget_ids if k.startswith("poll_answer_1_"))
            forged = sid[:-1] + ("0" if sid[-1] != "0" else "1")
            with PollTab(app.url, {"class": code, "sid": forged}) as tab:
                tab.open()
                assert _said(tab, "poll_sid_forged")
                assert not any(k.startswith("poll_answer_") for k in tab.widget_ids)
            with PollTab(app.url, {"class": code, "sid": sid}) as copier:  # a copied link
                copier.open()
                assert _said(copier, "poll_seat_taken", seconds=int(HOLD_S))
                assert not any(k.startswith("poll_answer_") for k in copier.widget_ids)
                copier.widget_ids[answer_key] = owner.widget_ids[answer_key]  # replayed id
                copier.click(answer_key)
            assert store.counts(class_id, 1) == {}  # nothing counted for the owner
            key = re.search(r"teacher=([\w-]+)", teacher.query).group(1)
            for query in (f"class={code}", f"class={code}&teacher={key[:-2]}xx"):
                with PollTab(app.url) as intruder:
                    intruder.query = query
                    intruder.open()
                    assert "poll_push" not in intruder.widget_ids
                    for button in ("poll_push", "poll_reveal", "poll_reset", "poll_close"):
                        intruder.widget_ids[button] = teacher.widget_ids[button]
                        intruder.click(button)  # the teacher's widget ids, replayed
            info = store.info(code)
            assert info.open and not info.revealed and info.question.number == 1
            owner.click(answer_key, in_fragment=True)  # the owner still answers, once
            assert sum(store.counts(class_id, 1).values()) == 1
    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")


@pytest.mark.load
def test_a_hundred_students_on_two_replicas_with_redis_survive_a_killed_replica(
    tmp_path: Path,
) -> None:
    for tool in ("redis-server", "nginx"):
        if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
            unavailable(f"{tool} is not installed")
    from bench.section_poll import _replicas_with_redis

    result = _replicas_with_redis(100, tmp_path, kill=True)
    print(result)
    assert result.killed_at_s is not None
    assert result.counted_once, result
    assert sum(result.store_counts.values()) == 100
    assert result.store_counts == dict(Counter(result.sent_counts))
    assert result.reconnected > 0  # the killed replica's students came back
    # every student who had answered before losing the replica found the answer counted
    assert result.answered_then_dropped > 0
    assert result.saw_earlier_answer == result.answered_then_dropped


@pytest.mark.load
def test_a_teacher_whose_replica_dies_keeps_the_class(tmp_path: Path) -> None:
    """The kill-a-replica run with the teacher's tab on the replica that is killed: it
    reconnects through nginx with its own URL and carries on (histogram, then reveal)."""
    for tool in ("redis-server", "nginx"):
        if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
            unavailable(f"{tool} is not installed")
    from bench.section_poll import _replicas_with_redis

    result = _replicas_with_redis(30, tmp_path, kill=True, teacher_on_victim=True)
    print(result)
    assert result.killed_at_s is not None
    assert result.teacher_back_s is not None and result.teacher_controls_after
    assert result.counted_once, result
    assert sum(result.store_counts.values()) == 30
