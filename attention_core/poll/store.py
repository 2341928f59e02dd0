"""Where a live class poll keeps its state: classes, questions, students and answers.

A class is opened by a teacher and gets a short code (`ABCD`, from an alphabet without
look-alikes) that students type or scan; behind the code is a random class id, and every
row or key of the class hangs off that id, so nothing leaks from one class into another,
not even into a later class that happens to get the same code. The teacher holds a secret
key for the class; only it pushes questions, reveals, resets and closes.

A question is plain data (`Question`): the option labels (the sentence's tokens), the query
token, the head, the correct answers and the head's weights for the reveal. Questions get
increasing numbers within a class; a student answers the current one, **once**: the store
itself refuses a second answer of the same student to the same question (SQLite: a
PRIMARY KEY on (class, question, student) and INSERT OR IGNORE; Redis: HSETNX inside one
Lua script that also counts), so two replicas racing cannot count anyone twice.

Two stores behind one interface, chosen by `store_from_env`:
    SQLiteStore(path)   the default; one file, WAL mode, shared by several local replicas
    RedisStore(url)     when ATTENTION_POLL_REDIS_URL is set: replicas on several machines

Pure Python (no Streamlit), so a notebook or a benchmark can drive a class as well.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import tempfile
import threading
import time
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "MAX_NAME",
    "ClassInfo",
    "PollError",
    "PollStore",
    "Question",
    "RedisStore",
    "SQLiteStore",
    "clean_name",
    "normalise_code",
    "question_from_round",
    "store_from_env",
]

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1: read off a projector
CODE_LENGTH = 4  # 32**4 ≈ 1 million codes; a store holds a few open classes
MAX_NAME = 40  # characters of a student's display name
MAX_OPTIONS = 512  # options of one question (the app's token limit)
TTL_S = 12 * 3600  # a class's Redis keys expire this long after its last change
ENV_REDIS = "ATTENTION_POLL_REDIS_URL"
ENV_SQLITE = "ATTENTION_POLL_DB"
DEFAULT_DB = Path(tempfile.gettempdir()) / "attention-studio-poll.sqlite3"


class PollError(ValueError):
    """A request the store refuses: unknown class, wrong teacher key, bad question."""


@dataclass(frozen=True)
class Question:
    """One "which key does this query attend to most?" question, as plain data.

    `options` are the keys' labels (index:token), `answers` the indices with the top
    weight (ties count), `matrix` the head's weights (n, n) for the reveal (may be empty).
    """

    options: tuple[str, ...]
    query: int
    head: int
    answers: tuple[int, ...]
    matrix: tuple[tuple[float, ...], ...] = ()
    number: int = 0  # given by the store when pushed: 1, 2, … within a class
    layer: int = -1  # the head's layer in a model of several layers (-1: not said)

    def __post_init__(self) -> None:
        n = len(self.options)
        if not 2 <= n <= MAX_OPTIONS:
            raise PollError(f"a question needs 2 to {MAX_OPTIONS} options, got {n}")
        if not 0 <= self.query < n:
            raise PollError(f"query {self.query} is not one of the {n} options")
        if not self.answers or any(not 0 <= a < n for a in self.answers):
            raise PollError(f"answers {self.answers} must be options 0…{n - 1}")
        if self.matrix and (len(self.matrix) != n or any(len(r) != n for r in self.matrix)):
            raise PollError(f"matrix must be {n} x {n}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Question:
        data = json.loads(text)
        return cls(
            options=tuple(data["options"]),
            query=int(data["query"]),
            head=int(data["head"]),
            answers=tuple(data["answers"]),
            matrix=tuple(tuple(row) for row in data.get("matrix", ())),
            number=int(data.get("number", 0)),
            layer=int(data.get("layer", -1)),
        )


@dataclass(frozen=True)
class ClassInfo:
    """What anyone in a class may know of it (never the teacher key)."""

    code: str
    class_id: str
    open: bool
    question: Question | None = None
    revealed: bool = False
    students: int = 0
    names: tuple[str, ...] = field(default=())


def normalise_code(raw: str) -> str | None:
    """A typed code as stored (`abcd ` → `ABCD`), or None if it cannot be one."""
    code = unicodedata.normalize("NFKC", str(raw)).strip().upper()
    if len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code):
        return code
    return None


def clean_name(raw: str) -> str:
    """A student's display name: printable characters only, spaces collapsed, cut to
    MAX_NAME. It is still user text: screens show it escaped (ui/common.md_escape)."""
    kept = "".join(
        " " if c.isspace() else "" if unicodedata.category(c)[0] in "CZ" else c for c in str(raw)
    )
    return " ".join(kept.split())[:MAX_NAME]


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class PollStore(ABC):
    """The interface both stores implement; every method is safe across processes."""

    @abstractmethod
    def open_class(self) -> tuple[str, str]:
        """A new open class: (code, teacher key)."""

    @abstractmethod
    def info(self, code: str, *, with_names: bool = False) -> ClassInfo | None:
        """The open class with `code` (or the latest closed one), None if there is none;
        the students' names only `with_names` (the teacher's screen; a phone needs none)."""

    @abstractmethod
    def join(self, code: str, student: str, name: str = "") -> ClassInfo | None:
        """Student `student` joins the open class `code`; None if there is no such class."""

    @abstractmethod
    def push(self, code: str, teacher_key: str, question: Question) -> Question:
        """Make `question` the class's current one; returns it with its number."""

    @abstractmethod
    def answer(self, class_id: str, number: int, student: str, choice: int) -> bool:
        """Record one answer; False if the student already answered this question, the
        question is no longer the current one, it was revealed or the class is closed."""

    @abstractmethod
    def counts(self, class_id: str, number: int) -> dict[int, int]:
        """How many students chose each option of question `number` (options never chosen
        are absent)."""

    @abstractmethod
    def my_answer(self, class_id: str, number: int, student: str) -> int | None:
        """The option `student` chose for question `number`, if any."""

    @abstractmethod
    def reveal(self, code: str, teacher_key: str) -> None:
        """Reveal the current question's answer: no more answers to it."""

    @abstractmethod
    def reset(self, code: str, teacher_key: str) -> None:
        """Forget every question and answer of the class; the code and students stay."""

    @abstractmethod
    def close(self, code: str, teacher_key: str) -> None:
        """Close the class: no more joins or answers; its code may later be reused."""

    # --- shared checks ------------------------------------------------------------------
    @staticmethod
    def _check_name(name: str) -> str:
        return clean_name(name)

    @staticmethod
    def _check_student(student: str) -> str:
        student = str(student)
        if not 8 <= len(student) <= 64 or not student.isascii() or not student.isalnum():
            raise PollError("a student id is 8-64 letters and digits")
        return student


# --- SQLite ------------------------------------------------------------------------------
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
"""


class SQLiteStore(PollStore):
    """The store in one SQLite file (WAL mode: readers do not wait for the writer), which
    several replicas on one machine may share. One connection per thread."""

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_DB) -> None:
        self.path = Path(path)
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
        for _ in range(50):
            code = _new_code()
            try:
                with self._tx() as db:
                    db.execute(
                        "INSERT INTO classes (id, code, teacher_key, created) VALUES (?,?,?,?)",
                        (secrets.token_hex(16), code, key, time.time()),
                    )
                return code, key
            except sqlite3.IntegrityError:
                continue  # that code is taken by an open class
        raise PollError("no free class code; close some classes")

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

    def join(self, code: str, student: str, name: str = "") -> ClassInfo | None:
        code, student, name = normalise_code(code) or "", self._check_student(student), name
        with self._tx() as db:
            found = db.execute(
                "SELECT id FROM classes WHERE code = ? AND open = 1", (code,)
            ).fetchone()
            if found is None:
                return None
            db.execute(
                "INSERT INTO students (class_id, student, name, joined) VALUES (?,?,?,?) "
                "ON CONFLICT (class_id, student) DO UPDATE SET name = "
                "COALESCE(NULLIF(excluded.name, ''), students.name)",
                (found[0], student, self._check_name(name), time.time()),
            )
        return self.info(code)

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
        student = self._check_student(student)
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


# --- Redis -------------------------------------------------------------------------------
# Keys of a class hang off its id: poll:c:<id> (hash: code, teacher_key, open, number,
# question, revealed), poll:c:<id>:students (hash id → name), poll:c:<id>:joined (zset by
# time), poll:c:<id>:a:<n> (hash student → choice), poll:c:<id>:n:<n> (hash choice → count).
# poll:code:<code> → the id of the open class with that code (SET NX: one per code).
_ANSWER_LUA = """
local meta = KEYS[1]
if redis.call('HGET', meta, 'open') ~= '1' then return 0 end
if redis.call('HGET', meta, 'number') ~= ARGV[1] then return 0 end
if redis.call('HGET', meta, 'revealed') == '1' then return 0 end
local options = tonumber(redis.call('HGET', meta, 'options') or '0')
local choice = tonumber(ARGV[3])
if choice == nil or choice < 0 or choice >= options then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 1
"""


class RedisStore(PollStore):
    """The store in Redis, for replicas on several machines (`redis://host:6379/0`)."""

    def __init__(self, url: str) -> None:
        import redis  # only when configured

        self.redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)
        self.redis.ping()
        self._answer = self.redis.register_script(_ANSWER_LUA)

    @staticmethod
    def _meta(class_id: str) -> str:
        return f"poll:c:{class_id}"

    def _class_id(self, code: str) -> str | None:
        return self.redis.get(f"poll:code:{code}")

    def _teacher(self, code: str, key: str) -> str:
        class_id = self._class_id(code)
        stored = self.redis.hget(self._meta(class_id), "teacher_key") if class_id else None
        if stored is None or not secrets.compare_digest(stored, str(key)):
            raise PollError(f"no open class {code!r} with this teacher key")
        return class_id  # type: ignore[return-value]

    def _touch(self, class_id: str) -> None:
        for suffix in ("", ":students", ":joined"):
            self.redis.expire(self._meta(class_id) + suffix, TTL_S)

    def open_class(self) -> tuple[str, str]:
        key, class_id = secrets.token_urlsafe(16), secrets.token_hex(16)
        for _ in range(50):
            code = _new_code()
            if self.redis.set(f"poll:code:{code}", class_id, nx=True, ex=TTL_S):
                self.redis.hset(
                    self._meta(class_id),
                    mapping={"code": code, "teacher_key": key, "open": "1", "number": "0",
                             "question": "", "revealed": "0", "options": "0"},
                )  # fmt: skip
                self._touch(class_id)
                self.redis.set(f"poll:last:{code}", class_id, ex=TTL_S)
                return code, key
        raise PollError("no free class code; close some classes")

    def info(self, code: str, *, with_names: bool = False) -> ClassInfo | None:
        code = normalise_code(code) or ""
        class_id = self._class_id(code) or self.redis.get(f"poll:last:{code}")
        if not class_id:
            return None
        meta = self.redis.hgetall(self._meta(class_id))
        if not meta:
            return None
        names: tuple[str, ...] = ()
        if with_names:
            students = self.redis.hgetall(self._meta(class_id) + ":students")
            order = self.redis.zrange(self._meta(class_id) + ":joined", 0, -1)
            names = tuple(students.get(s, "") for s in order)
        return ClassInfo(
            code=code,
            class_id=class_id,
            open=meta.get("open") == "1",
            question=Question.from_json(meta["question"]) if meta.get("question") else None,
            revealed=meta.get("revealed") == "1",
            students=int(self.redis.hlen(self._meta(class_id) + ":students")),
            names=names,
        )

    def join(self, code: str, student: str, name: str = "") -> ClassInfo | None:
        code, student = normalise_code(code) or "", self._check_student(student)
        class_id = self._class_id(code)
        if not class_id or self.redis.hget(self._meta(class_id), "open") != "1":
            return None
        pipe = self.redis.pipeline()
        name = self._check_name(name)
        if name:
            pipe.hset(self._meta(class_id) + ":students", student, name)
        else:  # joining again after a reconnect: keep the name given before
            pipe.hsetnx(self._meta(class_id) + ":students", student, "")
        pipe.zadd(self._meta(class_id) + ":joined", {student: time.time()}, nx=True)
        pipe.execute()
        self._touch(class_id)
        return self.info(code)

    def push(self, code: str, teacher_key: str, question: Question) -> Question:
        class_id = self._teacher(code, teacher_key)
        number = int(self.redis.hincrby(self._meta(class_id), "number", 1))
        numbered = Question(**{**asdict(question), "number": number})
        self.redis.hset(
            self._meta(class_id),
            mapping={"question": numbered.to_json(), "revealed": "0",
                     "options": str(len(numbered.options))},
        )  # fmt: skip
        self._touch(class_id)
        return Question.from_json(numbered.to_json())

    def answer(self, class_id: str, number: int, student: str, choice: int) -> bool:
        student = self._check_student(student)
        meta = self._meta(str(class_id))
        keys = [meta, f"{meta}:a:{int(number)}", f"{meta}:n:{int(number)}"]
        args = [str(int(number)), student, str(int(choice)), str(TTL_S)]
        return bool(self._answer(keys=keys, args=args))

    def counts(self, class_id: str, number: int) -> dict[int, int]:
        raw = self.redis.hgetall(f"{self._meta(str(class_id))}:n:{int(number)}")
        return {int(c): int(k) for c, k in raw.items() if int(k) > 0}

    def my_answer(self, class_id: str, number: int, student: str) -> int | None:
        raw = self.redis.hget(f"{self._meta(str(class_id))}:a:{int(number)}", str(student))
        return None if raw is None else int(raw)

    def reveal(self, code: str, teacher_key: str) -> None:
        self.redis.hset(self._meta(self._teacher(code, teacher_key)), "revealed", "1")

    def reset(self, code: str, teacher_key: str) -> None:
        class_id = self._teacher(code, teacher_key)
        meta = self._meta(class_id)
        number = int(self.redis.hget(meta, "number") or 0)
        # the question first: from here on no answer to it is accepted
        self.redis.hset(meta, mapping={"question": "", "revealed": "0", "options": "0"})
        stale = [f"{meta}:{kind}:{n}" for n in range(1, number + 1) for kind in ("a", "n")]
        for start in range(0, len(stale), 500):
            self.redis.delete(*stale[start : start + 500])

    def close(self, code: str, teacher_key: str) -> None:
        class_id = self._teacher(code, teacher_key)
        self.redis.hset(self._meta(class_id), "open", "0")
        # the code is free again only if it still names this class
        self.redis.eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
            "end return 0",
            1,
            f"poll:code:{code}",
            class_id,
        )


def store_from_env(env: dict[str, str] | None = None) -> PollStore:
    """RedisStore if ATTENTION_POLL_REDIS_URL is set, else SQLiteStore at
    ATTENTION_POLL_DB (default: attention-studio-poll.sqlite3 in the temp folder)."""
    env = dict(os.environ if env is None else env)
    url = env.get(ENV_REDIS, "").strip()
    if url:
        return RedisStore(url)
    return SQLiteStore(env.get(ENV_SQLITE, "").strip() or DEFAULT_DB)


def question_from_round(
    options: Sequence[str],
    *,
    query: int,
    head: int,
    answers: Sequence[int],
    matrix: Any = (),
    layer: int = -1,
    digits: int = 4,
) -> Question:
    """A Question from a quiz round's parts; `matrix` (n, n) rounded to `digits`."""
    rows = tuple(tuple(round(float(w), digits) for w in row) for row in matrix)
    return Question(
        options=tuple(str(o) for o in options),
        query=int(query),
        head=int(head),
        answers=tuple(int(a) for a in answers),
        matrix=rows,
        layer=int(layer),
    )
