"""The poll's "what comes next?" question kind (attention_core/poll/store.py), on the SQLite
store for real: it travels through the store as it was pushed, students answer once each
with the ids the store signed, and a forged id is refused, as for the attention kind.
(Both stores share the Question's JSON: tests/core/poll/test_store.py runs the rest on
Redis too.)"""

from __future__ import annotations

import pytest

from attention_core.poll import (
    QUESTION_KINDS,
    PollError,
    PollRefused,
    Question,
    SQLiteStore,
    question_next,
)
from attention_core.poll.store import MAX_PROMPT

PROMPT = "[BOS]這個程式"


def test_question_next_keeps_the_prefix_the_tokens_and_their_probabilities() -> None:
    q = question_next(PROMPT, ["的", "是", "設"], [0.1, 0.07, 0.06], answer=0)
    assert (q.kind, q.prompt, q.options, q.probs, q.answers) == (
        "next", PROMPT, ("的", "是", "設"), (0.1, 0.07, 0.06), (0,)
    )  # fmt: skip
    assert Question.from_json(q.to_json()) == q
    assert QUESTION_KINDS == ("attention", "next", "where")


def test_equal_labels_become_two_buttons_and_a_long_prefix_keeps_its_end() -> None:
    q = question_next("x" * (MAX_PROMPT + 10) + "end", ["a", "a", "b"], [0.3, 0.2, 0.1], answer=1)
    assert q.options == ("a (1)", "a (2)", "b")
    assert len(q.prompt) == MAX_PROMPT and q.prompt.endswith("end")


@pytest.mark.parametrize(
    "changes",
    [{"kind": "poem"}, {"probs": (0.5,)}, {"probs": (0.5, 1.5)}, {"answers": (2,)}],
)
def test_a_malformed_question_is_refused(changes: dict) -> None:
    fields = {"options": ("a", "b"), "query": 0, "head": 0, "answers": (0,), "kind": "next",
              "prompt": "p", "probs": (0.6, 0.4)}  # fmt: skip
    with pytest.raises(PollError):
        Question(**{**fields, **changes})


def test_an_attention_question_of_an_older_replica_still_reads() -> None:
    old = '{"options": ["0:a", "1:b"], "query": 0, "head": 1, "answers": [1]}'
    q = Question.from_json(old)
    assert (q.kind, q.prompt, q.probs) == ("attention", "", ())


def test_next_question_through_the_store_one_answer_per_student(tmp_path) -> None:
    store = SQLiteStore(tmp_path / "poll.sqlite3")
    code, key = store.open_class()
    pushed = store.push(code, key, question_next(PROMPT, ["的", "是"], [0.6, 0.3], answer=0))
    info = store.info(code)
    assert info.question == pushed and pushed.number == 1 and pushed.kind == "next"
    students = [store.join(code).student for _ in range(3)]
    assert store.answer(info.class_id, 1, students[0], 1)
    assert not store.answer(info.class_id, 1, students[0], 0)  # a second tap: not counted
    assert store.answer(info.class_id, 1, students[1], 0)
    assert store.counts(info.class_id, 1) == {1: 1, 0: 1}
    with pytest.raises(PollRefused):
        store.answer(info.class_id, 1, "0" * 40, 0)  # an id the store never signed
    store.reveal(code, key)
    assert not store.answer(info.class_id, 1, students[2], 0)  # revealed: closed
