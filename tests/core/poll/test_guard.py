"""Signed student ids, the signing secret and the per-class limits
(attention_core/poll/guard.py), on both stores (the fixtures of tests/core/poll/test_store.py:
SQLite in a temp file, a loopback redis-server).

"Replay" in this design: presenting a signed id outside the class that issued it (another
open class, or a later class that reuses the code). Forged: any id the store did not sign.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from attention_core.poll import (
    MAX_NAME,
    PollError,
    PollRefused,
    PollStore,
    RedisStore,
    SQLiteStore,
    clean_name,
    name_was_cut,
)
from attention_core.poll import store as store_module
from attention_core.poll.guard import (
    ENV_SECRET,
    HOLD_S,
    device_student,
    sign_student,
    signed_for,
)
from tests.core.poll import test_store as stores

_question = stores._question
redis_url, store = stores.redis_url, stores.store  # the fixtures: both stores, for real


def test_a_student_id_is_signed_for_its_class_and_refused_elsewhere(store: PollStore) -> None:
    code, key = store.open_class()
    store.push(code, key, _question())
    info = store.join(code, "", "Ann")
    sid = info.student
    assert signed_for(store.secret(), info.class_id, sid)
    assert store.join(code, sid).students == 1  # a reconnect keeps the seat
    other_code, other_key = store.open_class()
    store.push(other_code, other_key, _question())
    other = store.info(other_code)
    with pytest.raises(PollRefused) as refused:
        store.join(other_code, sid)  # replay in another class
    assert refused.value.reason == "forged"
    with pytest.raises(PollRefused):
        store.answer(other.class_id, 1, sid, 0)
    assert store.counts(other.class_id, 1) == {} and store.info(other_code).students == 0


@pytest.mark.parametrize("how", ["random", "tampered", "old_style", "other_secret"])
def test_forged_ids_are_refused_to_join_and_to_answer(store: PollStore, how: str) -> None:
    code, key = store.open_class()
    store.push(code, key, _question())
    class_id = store.info(code).class_id
    real = store.join(code).student
    forged = {
        "random": secrets.token_hex(20),
        "tampered": real[:-1] + ("0" if real[-1] != "0" else "1"),
        "old_style": secrets.token_hex(8),  # the unsigned ids of before
        "other_secret": sign_student("not the store's secret", class_id),
    }[how]
    with pytest.raises(PollRefused):
        store.join(code, forged)
    with pytest.raises(PollRefused):
        store.answer(class_id, 1, forged, 0)
    assert store.counts(class_id, 1) == {} and store.info(code).students == 1


def test_replicas_sharing_a_store_share_its_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.delenv(ENV_SECRET, raising=False)
    first, second = SQLiteStore(tmp_path / "p.sqlite3"), SQLiteStore(tmp_path / "p.sqlite3")
    assert first.secret() == second.secret() and len(first.secret()) == 64
    assert SQLiteStore(tmp_path / "other.sqlite3").secret() != first.secret()
    url = request.getfixturevalue("redis_url")
    one, two = RedisStore(url), RedisStore(url)
    one.redis.flushdb()
    assert one.secret() == two.secret()
    # an id issued through one replica is a seat on the other
    code, key = first.open_class()
    first.push(code, key, _question())
    sid = first.join(code).student
    assert second.answer(second.info(code).class_id, 1, sid, 2)


def test_the_environments_secret_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_SECRET, "  shared-by-every-replica  ")
    made = SQLiteStore(tmp_path / "p.sqlite3")
    assert made.secret() == "shared-by-every-replica"
    code, _ = made.open_class()
    info = made.join(code)
    assert signed_for("shared-by-every-replica", info.class_id, info.student)


def test_a_full_class_refuses_one_more_and_keeps_its_students(
    store: PollStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "MAX_CLASS_SIZE", 3)
    code, _ = store.open_class()
    seats = [store.join(code).student for _ in range(3)]
    with pytest.raises(PollRefused) as refused:
        store.join(code)
    assert refused.value.reason == "full"
    assert store.join(code, seats[0]).students == 3  # a member reconnecting is let in


def test_joins_and_answers_are_limited_per_student_per_second(store: PollStore) -> None:
    code, key = store.open_class()
    store.push(code, key, _question())
    sid = store.join(code).student
    class_id = store.info(code).class_id
    outcomes = []
    for _ in range(40):  # a script hammering the store within one second
        try:
            store.join(code, sid)
            outcomes.append("ok")
        except PollRefused as refused:
            outcomes.append(refused.reason)
    assert "busy" in outcomes and outcomes[0] == "ok"
    taps = []
    for _ in range(40):
        try:
            taps.append(store.answer(class_id, 1, sid, 1))
        except PollRefused as refused:
            taps.append(refused.reason)
    assert taps.count(True) == 1 and "busy" in taps  # counted once, then slowed down
    assert store.counts(class_id, 1) == {1: 1}


def test_a_long_name_is_cut_to_the_limit_not_dropped(store: PollStore) -> None:
    code, _ = store.open_class()
    for length in (41, 500):
        raw = "名" * length
        assert name_was_cut(raw) and clean_name(raw) == "名" * MAX_NAME
        store.join(code, "", raw)
    assert not name_was_cut("名" * MAX_NAME)
    names = store.info(code, with_names=True).names
    assert names == ("名" * MAX_NAME,) * 2
    with pytest.raises(PollError):
        store.join(code, "bad id!")


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_a_seat_is_held_by_one_session_until_it_falls_silent(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A copied link in the same class: the owner's session holds the seat; the copy is
    refused while the owner renews it, and takes it only after HOLD_S of silence (on the
    store's clock, moved by hand here: no real time passes)."""
    now = [1_800_000_000.0]  # seconds, as time.time

    def clock() -> float:
        return now[0]

    if kind == "sqlite":
        store: PollStore = SQLiteStore(tmp_path / "poll.sqlite3", clock=clock)
    else:
        store = RedisStore(request.getfixturevalue("redis_url"), clock=clock)
        store.redis.flushdb()
    code, _ = store.open_class()
    info = store.join(code)
    owner, copier = "owner-session", "copier-session"
    assert store.hold(info.class_id, info.student, owner)
    for _ in range(3):
        now[0] += HOLD_S / 2  # the owner refreshes well within HOLD_S
        assert not store.hold(info.class_id, info.student, copier)
        assert store.hold(info.class_id, info.student, owner)  # the owner's refresh
    other = store.join(code).student  # another seat is another hold
    assert store.hold(info.class_id, other, copier)
    now[0] += HOLD_S - 0.5  # the owner silent, not yet for HOLD_S: still the owner's
    assert not store.hold(info.class_id, info.student, copier)
    now[0] += 1.0  # the owner's tab closed (or its replica died): the hold lapses
    assert store.hold(info.class_id, info.student, copier)
    assert not store.hold(info.class_id, info.student, owner)


def test_one_device_is_one_seat_whatever_the_name(store: PollStore) -> None:
    """A device joining again (after leaving, from a second tab) under another name sits in
    the same seat: one student, one answer per question; another device is another seat."""
    code, key = store.open_class()
    store.push(code, key, _question())
    class_id = store.info(code).class_id
    phone, other = secrets.token_hex(16), secrets.token_hex(16)
    seat = device_student(store.secret(), class_id, phone)
    assert signed_for(store.secret(), class_id, seat)
    assert store.join(code, seat, "甲").student == seat
    assert store.answer(class_id, 1, seat, 0)
    again = device_student(store.secret(), class_id, phone)
    assert again == seat  # the same device, the same id
    assert store.join(code, again, "甲2").students == 1
    store.answer(class_id, 1, again, 1)
    assert sum(store.counts(class_id, 1).values()) == 1
    assert device_student(store.secret(), class_id, other) != seat
    other_code, _ = store.open_class()
    assert device_student(store.secret(), store.info(other_code).class_id, phone) != seat
