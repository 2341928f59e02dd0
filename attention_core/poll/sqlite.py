"""The class poll's store in one SQLite file, which several replicas on one machine share.

WAL mode, so readers do not wait for the writer; every check and the write after it run in
one `BEGIN IMMEDIATE` transaction, so two processes racing see the same data. One answer
per student per question is the table's PRIMARY KEY (class, question, student) with
INSERT OR IGNORE: the database, not the caller, refuses a second answer.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import tempfile
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path

from attention_core.poll.guard import HOLD_S, Clock
from attention_core.poll.store import ClassInfo, PollError, PollStore, Question, normalise_code

__all__ = ["SQLiteStore"]

DEFAULT_DB = Path(tempfile.gettempdir()) / "attention-studio-poll.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    id TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    teacher_key TEXT NOT NULL,
    open INTEGER NOT NULL DEFAULT 1,
    number INTEGER NOT NULL DEFAULT 0,
    question TEXT,
    revealed INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
-- one open class per code; closed classes keep their rows under their own id
CREATE UNIQUE INDEX IF NOT EXISTS open_code ON classes (code) WHERE open = 1;
CREATE TABLE IF NOT EXISTS students (
    class_id TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
    student TEXT NOT NULL,
    name TEXT NOT NULL,
    joined REAL NOT NULL,
    PRIMARY KEY (class_id, student)
);
CREATE TABLE IF NOT EXISTS answers (
    class_id TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    student TEXT NOT NULL,
    choice INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (class_id, number, student)  -- one answer per student per question
);
-- the signing secret of student ids, made once by the first replica (guard.py)
CREATE TABLE IF NOT EXISTS poll_secret (name TEXT PRIMARY KEY, value TEXT NOT NULL);
-- which browser session holds a student's seat, and when it last said so (guard.py)
CREATE TABLE IF NOT EXISTS poll_holders (
    class_id TEXT NOT NULL, student TEXT NOT NULL, holder TEXT NOT NULL, seen REAL NOT NULL,
    PRIMARY KEY (class_id, student)
);
-- the limits' counters: events of one key within one second
CREATE TABLE IF NOT EXISTS poll_rate (
    key TEXT PRIMARY KEY, second INTEGER NOT NULL, n INTEGER NOT NULL
);
"""


class SQLiteStore(PollStore):
    """The store in one SQLite file (WAL mode: readers do not wait for the writer), which
    several replicas on one machine may share. One connection per thread. `clock`: what a
    seat's hold is timed by (guard.py)."""

    def __init__(
        self, path: str | os.PathLike[str] = DEFAULT_DB, *, clock: Clock = time.time
    ) -> None:
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._db().executescript(_SCHEMA)  # commits by itself

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            self._local.db = db
        return db

    def _tx(self) -> _Transaction:
        return _Transaction(self._db())

    def _teacher(self, db: sqlite3.Connection, code: str, key: str) -> str:
        row = db.execute(
            "SELECT id, teacher_key FROM classes WHERE code = ? AND open = 1", (code,)
        ).fetchone()
        if row is None or not secrets.compare_digest(row[1], str(key)):
            raise PollError(f"no open class {code!r} with this teacher key")
        return row[0]

    def open_class(self) -> tuple[str, str]:
        key = secrets.token_urlsafe(16)

        def claim(code: str) -> bool:
            try:
                with self._tx() as db:
                    db.execute(
                        "INSERT INTO classes (id, code, teacher_key, created) VALUES (?,?,?,?)",
                        (secrets.token_hex(16), code, key, time.time()),
                    )
            except sqlite3.IntegrityError:
                return False  # that code is taken by an open class
            return True

        return self._claim_code(claim), key

    def _info(self, db: sqlite3.Connection, code: str, with_names: bool) -> ClassInfo | None:
        row = db.execute(
            "SELECT id, open, number, question, revealed FROM classes WHERE code = ? "
            "ORDER BY open DESC, created DESC LIMIT 1",
            (code,),
        ).fetchone()
        if row is None:
            return None
        class_id, is_open, _number, question, revealed = row
        (students,) = db.execute(
            "SELECT COUNT(*) FROM students WHERE class_id = ?", (class_id,)
        ).fetchone()
        names = (
            db.execute(
                "SELECT name FROM students WHERE class_id = ? ORDER BY joined", (class_id,)
            ).fetchall()
            if with_names
            else []
        )
        return ClassInfo(
            code=code,
            class_id=class_id,
            open=bool(is_open),
            question=Question.from_json(question) if question else None,
            revealed=bool(revealed),
            students=int(students),
            names=tuple(n for (n,) in names),
        )

    def info(self, code: str, *, with_names: bool = False) -> ClassInfo | None:
        code = normalise_code(code) or ""
        return self._info(self._db(), code, with_names)

    def hold(self, class_id: str, student: str, holder: str) -> bool:
        now = self.clock()
        with self._tx() as db:
            cursor = db.execute(
                "INSERT INTO poll_holders (class_id, student, holder, seen) VALUES (?,?,?,?) "
                "ON CONFLICT (class_id, student) DO UPDATE SET holder = excluded.holder, "
                "seen = excluded.seen WHERE poll_holders.holder = excluded.holder "
                "OR poll_holders.seen < ?",
                (str(class_id), str(student), str(holder), now, now - HOLD_S),
            )
            return cursor.rowcount == 1

    def _stored_secret(self) -> str:
        with self._tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO poll_secret (name, value) VALUES ('sid', ?)",
                (secrets.token_hex(32),),
            )
            (value,) = db.execute("SELECT value FROM poll_secret WHERE name = 'sid'").fetchone()
        return str(value)

    def _allow(self, key: str, limit: int) -> bool:
        second = int(time.time())
        with self._tx() as db:
            db.execute(
                "INSERT INTO poll_rate (key, second, n) VALUES (?, ?, 1) ON CONFLICT (key) DO "
                "UPDATE SET n = CASE WHEN second = excluded.second THEN n + 1 ELSE 1 END, "
                "second = excluded.second",
                (key, second),
            )
            (n,) = db.execute("SELECT n FROM poll_rate WHERE key = ?", (key,)).fetchone()
            if second % 60 == 0:  # now and then: forget the counters of past seconds
                db.execute("DELETE FROM poll_rate WHERE second < ?", (second - 5,))
        return int(n) <= limit

    def join(self, code: str, student: str = "", name: str = "") -> ClassInfo | None:
        code, name = normalise_code(code) or "", name
        if student:
            student = self._check_student(student)
        found = (
            self._db()
            .execute("SELECT id FROM classes WHERE code = ? AND open = 1", (code,))
            .fetchone()
        )
        if found is None:
            return None
        student = self._seat(found[0], student)
        self._check_join(found[0], student)
        with self._tx() as db:  # the size check and the insert in one write transaction
            known = db.execute(
                "SELECT 1 FROM students WHERE class_id = ? AND student = ?", (found[0], student)
            ).fetchone()
            (size,) = db.execute(
                "SELECT COUNT(*) FROM students WHERE class_id = ?", (found[0],)
            ).fetchone()
            self._check_size(known is not None, int(size))
            db.execute(
                "INSERT INTO students (class_id, student, name, joined) VALUES (?,?,?,?) "
                "ON CONFLICT (class_id, student) DO UPDATE SET name = "
                "COALESCE(NULLIF(excluded.name, ''), students.name)",
                (found[0], student, self._check_name(name), time.time()),
            )
        info = self.info(code)
        return None if info is None else replace(info, student=student)

    def push(self, code: str, teacher_key: str, question: Question) -> Question:
        with self._tx() as db:
            class_id = self._teacher(db, code, teacher_key)
            (number,) = db.execute(
                "SELECT number + 1 FROM classes WHERE id = ?", (class_id,)
            ).fetchone()
            numbered = Question(**{**asdict(question), "number": number})
            db.execute(
                "UPDATE classes SET number = ?, question = ?, revealed = 0 WHERE id = ?",
                (number, numbered.to_json(), class_id),
            )
        return Question.from_json(numbered.to_json())

    def answer(self, class_id: str, number: int, student: str, choice: int) -> bool:
        student = self._check_answer(class_id, student)
        with self._tx() as db:
            row = db.execute(
                "SELECT open, number, question, revealed FROM classes WHERE id = ?", (class_id,)
            ).fetchone()
            if row is None or not row[0] or row[1] != number or row[3] or not row[2]:
                return False
            if not 0 <= int(choice) < len(json.loads(row[2])["options"]):
                return False
            cursor = db.execute(
                "INSERT OR IGNORE INTO answers (class_id, number, student, choice, at) "
                "VALUES (?,?,?,?,?)",
                (class_id, number, student, int(choice), time.time()),
            )
            return cursor.rowcount == 1

    def counts(self, class_id: str, number: int) -> dict[int, int]:
        rows = self._db().execute(
            "SELECT choice, COUNT(*) FROM answers WHERE class_id = ? AND number = ? "
            "GROUP BY choice",
            (class_id, number),
        )
        return {int(c): int(k) for c, k in rows}

    def my_answer(self, class_id: str, number: int, student: str) -> int | None:
        row = (
            self._db()
            .execute(
                "SELECT choice FROM answers WHERE class_id = ? AND number = ? AND student = ?",
                (class_id, number, str(student)),
            )
            .fetchone()
        )
        return None if row is None else int(row[0])

    def is_teacher(self, code: str, teacher_key: str) -> bool:
        try:
            self._teacher(self._db(), normalise_code(code) or "", teacher_key)
        except PollError:
            return False
        return True

    def reveal(self, code: str, teacher_key: str) -> None:
        with self._tx() as db:
            class_id = self._teacher(db, code, teacher_key)
            db.execute("UPDATE classes SET revealed = 1 WHERE id = ?", (class_id,))

    def reset(self, code: str, teacher_key: str) -> None:
        with self._tx() as db:
            class_id = self._teacher(db, code, teacher_key)
            db.execute("DELETE FROM answers WHERE class_id = ?", (class_id,))
            # numbers keep counting up: a student's stale "answer question 3" cannot hit
            # a new question 3
            db.execute("UPDATE classes SET question = NULL, revealed = 0 WHERE id = ?", (class_id,))

    def close(self, code: str, teacher_key: str) -> None:
        with self._tx() as db:
            class_id = self._teacher(db, code, teacher_key)
            db.execute("UPDATE classes SET open = 0 WHERE id = ?", (class_id,))


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error): the write lock is taken up front, so
    a check and the write after it see the same data, across processes."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if kind else "COMMIT")
