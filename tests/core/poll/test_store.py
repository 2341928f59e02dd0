"""The class poll's stores, for real: SQLite in a temp file, and Redis from Debian's
redis-server started on loopback (skips locally without it, fails under CI).

Every behaviour is checked on both stores with the same tests; counts are compared with a
`collections.Counter` of what the simulated students sent, never with the store itself.
"""

from __future__ import annotations

import multiprocessing
import secrets
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from attention_core.poll import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_NAME,
    PollError,
    PollRefused,
    PollStore,
    Question,
    RedisStore,
    SQLiteStore,
    clean_name,
    normalise_code,
    question_from_round,
    store_from_env,
)
from attention_core.poll import store as store_module
from attention_core.poll.guard import sign_student
from deploy.app_server import free_port
from tests.support.availability import unavailable

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _question(n: int = 4, answers: tuple[int, ...] = (1,)) -> Question:
    matrix = [[1.0 / n] * n for _ in range(n)]
    return question_from_round([f"{i}:t{i}" for i in range(n)], query=0, head=0,
                               answers=answers, matrix=matrix)  # fmt: skip


def _sid() -> str:
    return secrets.token_hex(8)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A throwaway redis-server on a free loopback port, no persistence."""
    if not Path(REDIS_SERVER).exists():
        unavailable(f"{REDIS_SERVER} is missing (apt-get install redis-server)")
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        import redis

        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> PollStore:
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "poll.sqlite3")
    url = request.getfixturevalue("redis_url")
    made = RedisStore(url)
    made.redis.flushdb()
    return made


def test_a_code_is_short_and_readable_off_a_projector(store: PollStore) -> None:
    code, key = store.open_class()
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert not set(code) & set("IO01")
    assert len(key) >= 16
    assert normalise_code(f"  {code.lower()} ") == code
    info = store.info(code)
    assert info is not None and info.open and info.question is None


def test_each_answer_is_counted_once_per_student_and_question(store: PollStore) -> None:
    code, key = store.open_class()
    pushed = store.push(code, key, _question())
    assert pushed.number == 1
    sent = {}
    for i in range(7):
        info = store.join(code, "", f"s{i}")
        assert info is not None
        student = info.student
        sent[student] = i % 3
        assert store.answer(info.class_id, 1, student, i % 3)
        assert not store.answer(info.class_id, 1, student, 3)  # a second answer: refused
        assert store.my_answer(info.class_id, 1, student) == i % 3
    class_id = store.info(code).class_id
    assert store.counts(class_id, 1) == dict(Counter(sent.values()))
    assert store.info(code).students == 7


def test_racing_answers_of_one_student_count_once_and_of_many_count_all(
    store: PollStore,
) -> None:
    """Threads on separate connections race: the store's uniqueness, not the caller's
    check, keeps one answer per student."""
    code, key = store.open_class()
    store.push(code, key, _question(6))
    class_id = store.info(code).class_id
    twin = sign_student(store.secret(), class_id)
    crowd = {sign_student(store.secret(), class_id): k % 6 for k in range(40)}
    results: list[bool] = []
    lock = threading.Lock()

    def send(student: str, choice: int) -> None:
        try:
            ok = store.answer(class_id, 1, student, choice)
        except PollRefused:  # the twin's taps beyond ANSWERS_PER_S_STUDENT in one second
            ok = False
        with lock:
            results.append(ok)

    threads = [threading.Thread(target=send, args=(twin, k % 6)) for k in range(12)]
    threads += [threading.Thread(target=send, args=item) for item in crowd.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(results) == 1 + len(crowd)
    expected = Counter(crowd.values())
    expected[store.my_answer(class_id, 1, twin)] += 1
    assert store.counts(class_id, 1) == dict(expected)


def _answer_in_another_process(path: str, class_id: str, students: list[str]) -> int:
    other = SQLiteStore(path)
    return sum(other.answer(class_id, 1, s, 2) for s in students)


def test_sqlite_file_is_shared_by_processes_like_local_replicas(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    store = SQLiteStore(path)
    code, key = store.open_class()
    store.push(code, key, _question())
    class_id = store.info(code).class_id
    # signed with this store's secret: the other processes read the same one from the file
    students = [sign_student(store.secret(), class_id) for _ in range(30)]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:  # both processes send every student: each counts once
        counted = pool.starmap(_answer_in_another_process, [(str(path), class_id, students)] * 2)
    assert sum(counted) == 30
    assert store.counts(class_id, 1) == {2: 30}


def test_answers_never_leak_between_classes(store: PollStore) -> None:
    code_a, key_a = store.open_class()
    code_b, key_b = store.open_class()
    assert code_a != code_b
    store.push(code_a, key_a, _question())
    store.push(code_b, key_b, _question())
    a, b = store.join(code_a), store.join(code_b)
    assert store.answer(a.class_id, 1, a.student, 0)
    assert store.answer(b.class_id, 1, b.student, 3)
    # replay: an id signed for class A is refused in class B, to join or to answer
    with pytest.raises(PollRefused):
        store.join(code_b, a.student)
    with pytest.raises(PollRefused):
        store.answer(b.class_id, 1, a.student, 0)
    assert store.counts(a.class_id, 1) == {0: 1}
    assert store.counts(b.class_id, 1) == {3: 1}
    with pytest.raises(PollError):
        store.reveal(code_a, key_b)  # one class's key is no key to another


def test_a_reused_code_starts_empty(store: PollStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "_new_code", lambda: "ABCD")
    code, key = store.open_class()
    store.push(code, key, _question())
    old = store.join(code, "", "old")
    student = old.student
    assert store.answer(old.class_id, 1, student, 1)
    with pytest.raises(PollError):
        store.open_class()  # the code is held by an open class
    store.close(code, key)
    assert store.join(code, _sid()) is None  # closed: no joins
    assert not store.answer(old.class_id, 1, student, 2)  # nor answers
    code2, key2 = store.open_class()
    assert code2 == code and key2 != key
    fresh = store.info(code2)
    assert fresh.class_id != old.class_id and fresh.students == 0 and fresh.question is None
    store.push(code2, key2, _question())
    assert store.counts(fresh.class_id, 1) == {}
    assert not store.answer(old.class_id, 1, student, 1)  # the old class stays closed
    with pytest.raises(PollRefused):  # replay: the old class's id is no seat in the new one
        store.join(code2, student)
    with pytest.raises(PollError):
        store.push(code2, key, _question())  # the old key is no key to the new class


def test_reveal_reset_and_stale_questions(store: PollStore) -> None:
    code, key = store.open_class()
    store.push(code, key, _question())
    s1, s2, s3 = (store.join(code).student for _ in range(3))
    class_id = store.info(code).class_id
    assert store.answer(class_id, 1, s1, 1)
    assert not store.answer(class_id, 1, s2, 9)  # not an option
    assert not store.answer(class_id, 1, s2, -1)
    assert not store.answer(class_id, 2, s2, 1)  # no such question yet
    store.reveal(code, key)
    assert store.info(code).revealed
    assert not store.answer(class_id, 1, s2, 1)  # revealed: closed for answers
    second = store.push(code, key, _question(3, answers=(0, 2)))
    assert second.number == 2 and not store.info(code).revealed
    assert not store.answer(class_id, 1, s3, 1)  # question 1 is over
    assert store.answer(class_id, 2, s3, 2)
    store.reset(code, key)
    info = store.info(code)
    assert info.question is None and info.students == 3
    assert store.counts(class_id, 1) == {} and store.counts(class_id, 2) == {}
    assert not store.answer(class_id, 2, s1, 1)
    third = store.push(code, key, _question())
    assert third.number == 3  # numbers keep counting after a reset
    with pytest.raises(PollError):
        store.close(code, "not-the-key")


def test_names_are_cleaned_but_kept_as_text(store: PollStore) -> None:
    code, _ = store.open_class()
    hostile = "<img src=x onerror=alert(1)>\u202e\n\tBob" + "x" * 100
    student = store.join(code, "", hostile).student
    store.join(code, student)  # again, after a reconnect: the name stays
    info = store.info(code, with_names=True)
    assert info.students == 1 and store.info(code).names == ()
    (name,) = info.names
    assert name.startswith("<img src=x onerror=alert(1)> Bob")  # text, escaped on screen
    assert len(name) == MAX_NAME and "\u202e" not in name and "\n" not in name
    assert clean_name("  a \x00 b  ") == "a b"
    with pytest.raises(PollError):
        store.join(code, "bad id!")


def test_questions_are_checked() -> None:
    with pytest.raises(PollError):
        Question(options=("a",), query=0, head=0, answers=(0,))
    with pytest.raises(PollError):
        Question(options=("a", "b"), query=2, head=0, answers=(0,))
    with pytest.raises(PollError):
        Question(options=("a", "b"), query=0, head=0, answers=(5,))
    q = _question()
    assert Question.from_json(q.to_json()) == q


def test_store_from_env_picks_redis_only_when_configured(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    chosen = store_from_env({"ATTENTION_POLL_DB": str(tmp_path / "x.sqlite3")})
    assert isinstance(chosen, SQLiteStore) and chosen.path == tmp_path / "x.sqlite3"
    url = request.getfixturevalue("redis_url")
    assert isinstance(store_from_env({"ATTENTION_POLL_REDIS_URL": url}), RedisStore)
