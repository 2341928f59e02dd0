"""Where a live class poll keeps its state: classes, questions, students and answers.

A class is opened by a teacher and gets a short code (`ABCD`, from an alphabet without
look-alikes) that students type or scan; behind the code is a random class id, and every
row or key of the class hangs off that id, so nothing leaks from one class into another,
not even into a later class that happens to get the same code. The teacher holds a secret
key for the class; only it pushes questions, reveals, resets and closes.

A question is plain data (`Question`) of one of three kinds (`QUESTION_KINDS`):
    "attention"  which key does this query attend to most? The option labels (the
                 sentence's tokens), the query token, the head, the correct answers and
                 the head's weights for the reveal.
    "next"       what comes next? A decoder's prefix (`prompt`), its top-k next tokens as
                 the options and their probabilities (`probs`) for the reveal; the answer
                 is the token the model writes (`question_next`).
    "where"      where does this head look? A sentence as the trained reader reads it
                 ([BOS] and one option per character), the query character, the head's
                 attention row for it (`probs`), the jieba word the query belongs to
                 (`word`) and the characters the reader reads as [UNK] (`unknown`);
                 the answer is the row's largest weight (`attention_core.poll.where`).
Questions get increasing numbers within a class; a student answers the current one,
**once**: the store itself refuses a second answer of the same student to the same
question (SQLite: a PRIMARY KEY on (class, question, student) and INSERT OR IGNORE;
Redis: HSETNX inside one Lua script that also counts), so two replicas racing cannot
count anyone twice.

Two stores behind this interface (`PollStore`), one module each, chosen by
`factory.store_from_env`:
    SQLiteStore(path)   the default; one file, WAL mode, shared by several local replicas
                        (`sqlite.py`)
    RedisStore(url)     when ATTENTION_POLL_REDIS_URL is set: replicas on several machines
                        (`redis_store.py`)

Pure Python (no Streamlit), so a notebook or a benchmark can drive a class as well.
"""

from __future__ import annotations

import json
import secrets
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from attention_core.poll.guard import (
    ANSWERS_PER_S_CLASS,
    ANSWERS_PER_S_STUDENT,
    JOINS_PER_S_CLASS,
    JOINS_PER_S_STUDENT,
    MAX_CLASS_SIZE,
    env_secret,
    sign_student,
    signed_for,
)

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "MAX_NAME",
    "QUESTION_KINDS",
    "ClassInfo",
    "PollError",
    "PollRefused",
    "PollStore",
    "Question",
    "clean_name",
    "name_was_cut",
    "normalise_code",
    "question_from_round",
    "question_next",
]

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1: read off a projector
CODE_LENGTH = 4  # 32**4 ≈ 1 million codes; a store holds a few open classes
MAX_NAME = 40  # characters of a student's display name
MAX_OPTIONS = 512  # options of one question (the app's token limit)
QUESTION_KINDS = ("attention", "next", "where")
MAX_PROMPT = 2_000  # characters of a "next" question's prefix (a "where" sentence) kept


class PollError(ValueError):
    """A request the store refuses: unknown class, wrong teacher key, bad question."""


class PollRefused(PollError):
    """A student's request refused for a reason the phone should show: `reason` is
    "forged" (an id the store did not issue for this class), "full" (MAX_CLASS_SIZE),
    or "busy" (too many joins or answers in one second)."""

    def __init__(self, reason: str, *, most: int = 0) -> None:
        super().__init__(f"refused: {reason}")
        self.reason, self.most = reason, most  # most: the limit that was reached


@dataclass(frozen=True)
class Question:
    """One class question, as plain data.

    kind "attention": `options` are the keys' labels (index:token), `answers` the indices
    with the top weight (ties count), `matrix` the head's weights (n, n) for the reveal
    (may be empty). kind "next": `prompt` is the text written so far, `options` the
    model's likeliest next tokens, `probs` their probabilities, `answers` the one the
    model writes; `query` and `head` are 0. kind "where": `prompt` is the sentence,
    `options` [BOS] and its characters, `probs` the head's attention row of the query,
    `word` the options of the query's jieba word, `unknown` the options read as [UNK].
    """

    options: tuple[str, ...]
    query: int
    head: int
    answers: tuple[int, ...]
    matrix: tuple[tuple[float, ...], ...] = ()
    number: int = 0  # given by the store when pushed: 1, 2, … within a class
    layer: int = -1  # the head's layer in a model of several layers (-1: not said)
    kind: str = "attention"  # one of QUESTION_KINDS
    prompt: str = ""  # "next": the text so far
    probs: tuple[float, ...] = ()  # "next": the model's probability of each option
    word: tuple[int, ...] = ()  # "where": the options of the query's jieba word
    unknown: tuple[int, ...] = ()  # "where": the options the reader reads as [UNK]

    def __post_init__(self) -> None:
        if self.kind not in QUESTION_KINDS:
            raise PollError(f"question kind {self.kind!r} is not one of {QUESTION_KINDS}")
        n = len(self.options)
        if self.probs and (len(self.probs) != n or any(not 0 <= p <= 1 for p in self.probs)):
            raise PollError(f"probs must be {n} probabilities in 0…1")
        if self.kind == "where" and (len(self.probs) != n or self.query not in self.word):
            raise PollError("a where question needs one weight per option and the query's word")
        if any(not 0 <= j < n for j in (*self.word, *self.unknown)):
            raise PollError(f"word and unknown must be options 0…{n - 1}")
        if self.kind != "attention" and len(self.prompt) > MAX_PROMPT:
            raise PollError(f"a prompt of {len(self.prompt)} characters; at most {MAX_PROMPT}")
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
            kind=str(data.get("kind", "attention")),
            prompt=str(data.get("prompt", "")),
            probs=tuple(float(p) for p in data.get("probs", ())),
            word=tuple(int(j) for j in data.get("word", ())),
            unknown=tuple(int(j) for j in data.get("unknown", ())),
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
    student: str = ""  # join's answer: the (signed) id the student joined with


def normalise_code(raw: str) -> str | None:
    """A typed code as stored (`abcd ` → `ABCD`), or None if it cannot be one."""
    code = unicodedata.normalize("NFKC", str(raw)).strip().upper()
    if len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code):
        return code
    return None


def clean_name(raw: str) -> str:
    """A student's display name: printable characters only, spaces collapsed, cut to
    MAX_NAME. It is still user text: screens show it escaped (ui/common.md_escape)."""
    return _collapsed(raw)[:MAX_NAME].strip()


def name_was_cut(raw: str) -> bool:
    """True when `clean_name(raw)` had to cut the name to MAX_NAME characters."""
    return len(_collapsed(raw)) > MAX_NAME


def _collapsed(raw: str) -> str:
    kept = "".join(
        " " if c.isspace() else "" if unicodedata.category(c)[0] in "CZ" else c for c in str(raw)
    )
    return " ".join(kept.split())


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
    def join(self, code: str, student: str = "", name: str = "") -> ClassInfo | None:
        """A student joins the open class `code` (None if there is no such class), with
        the id the store issued for this class (`student`; a reconnect keeps its seat and
        its answers) or, when `student` is "", a new one: ClassInfo.student. PollRefused:
        a forged or other class's id, a full class, too many joins this second."""

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
    def is_teacher(self, code: str, teacher_key: str) -> bool:
        """True when `teacher_key` is the key of the open class `code`."""

    @abstractmethod
    def reveal(self, code: str, teacher_key: str) -> None:
        """Reveal the current question's answer: no more answers to it."""

    @abstractmethod
    def reset(self, code: str, teacher_key: str) -> None:
        """Forget every question and answer of the class; the code and students stay."""

    @abstractmethod
    def close(self, code: str, teacher_key: str) -> None:
        """Close the class: no more joins or answers; its code may later be reused."""

    @abstractmethod
    def hold(self, class_id: str, student: str, holder: str) -> bool:
        """Session `holder` takes or renews the seat `student` of class `class_id`; False
        while another holder renewed it within the last HOLD_S seconds (guard.py)."""

    @abstractmethod
    def _stored_secret(self) -> str:
        """The secret kept in the store, made by the first replica that asked."""

    @abstractmethod
    def _allow(self, key: str, limit: int) -> bool:
        """Count one event of `key` in this second; False when it is over `limit`."""

    # --- shared by the stores -----------------------------------------------------------
    def secret(self) -> str:
        """The signing secret: ATTENTION_POLL_SECRET, else the store's own (guard.py)."""
        cached = getattr(self, "_secret_cache", "")
        if not cached:
            cached = env_secret() or self._stored_secret()
            self._secret_cache = cached
        return cached

    def _seat(self, class_id: str, student: str) -> str:
        """`student` if the store issued it for `class_id`, a new id if it is ""."""
        if not student:
            return sign_student(self.secret(), class_id)
        if not signed_for(self.secret(), class_id, student):
            raise PollRefused("forged")
        return student

    def _check_answer(self, class_id: str, student: str) -> str:
        student = self._check_student(student)
        if not signed_for(self.secret(), str(class_id), student):
            raise PollRefused("forged")
        if not self._allow(f"a:{class_id}:{student}", ANSWERS_PER_S_STUDENT) or not self._allow(
            f"a:{class_id}", ANSWERS_PER_S_CLASS
        ):
            raise PollRefused("busy")
        return student

    @staticmethod
    def _check_size(known: bool, size: int) -> None:
        """A new student in a class of `size`: PollRefused("full") at MAX_CLASS_SIZE."""
        if not known and size >= MAX_CLASS_SIZE:
            raise PollRefused("full", most=MAX_CLASS_SIZE)

    def _check_join(self, class_id: str, student: str) -> None:
        if not self._allow(f"j:{class_id}:{student}", JOINS_PER_S_STUDENT) or not self._allow(
            f"j:{class_id}", JOINS_PER_S_CLASS
        ):
            raise PollRefused("busy")

    @staticmethod
    def _claim_code(claim: Callable[[str], bool]) -> str:
        """A new class code that `claim(code)` took for the class (False: an open class
        holds that code already); PollError after 50 codes that were all taken."""
        for _ in range(50):
            code = _new_code()
            if claim(code):
                return code
        raise PollError("no free class code; close some classes")

    @staticmethod
    def _check_name(name: str) -> str:
        return clean_name(name)

    @staticmethod
    def _check_student(student: str) -> str:
        student = str(student)
        if not 8 <= len(student) <= 64 or not student.isascii() or not student.isalnum():
            raise PollError("a student id is 8-64 letters and digits")
        return student


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


def question_next(
    prompt: str,
    options: Sequence[str],
    probs: Sequence[float],
    *,
    answer: int,
    digits: int = 4,
) -> Question:
    """A "what comes next?" question: the text so far, the model's likeliest next tokens
    and their probabilities (rounded to `digits`), the option the model writes. Equal
    labels (two ids that read alike) get their rank added, so every option is one button
    and one bar; a prefix longer than MAX_PROMPT keeps its end."""
    labels = [str(o) for o in options]
    seen = {label for label in labels if labels.count(label) > 1}
    labels = [f"{label} ({j + 1})" if label in seen else label for j, label in enumerate(labels)]
    return Question(
        options=tuple(labels),
        query=0,
        head=0,
        answers=(int(answer),),
        kind="next",
        prompt=str(prompt)[-MAX_PROMPT:],
        probs=tuple(round(float(p), digits) for p in probs),
    )
