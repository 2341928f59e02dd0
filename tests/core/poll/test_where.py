"""The poll's "where does this head look?" question kind (attention_core/poll/where.py):
built from plain data, it travels through both stores as it was pushed, each student's
first tap is the one counted (a phone that taps twice is counted once), and a malformed
question is refused. The row itself is the reader's: tests/core/reader/test_where.py."""

from __future__ import annotations

import pytest

from attention_core.poll import PollError, PollRefused, PollStore, Question, question_where
from tests.core.poll.test_store import redis_url, store  # noqa: F401  (both stores)

SENTENCE = "我們上課"
OPTIONS = ("[BOS]", "我", "們", "上", "課")
ROW = (0.1, 0.123456, 0.2, 0.4, 0.176544)


def _where(**changes: object) -> Question:
    options = {"query": 4, "layer": 1, "head": 2, "word": (4, 3), "unknown": (2,)}
    return question_where(SENTENCE, OPTIONS, ROW, **{**options, **changes})  # type: ignore[arg-type]


def test_a_where_question_keeps_the_row_the_word_and_the_unknown_characters() -> None:
    q = _where()
    assert (q.kind, q.prompt, q.options, q.query, q.layer, q.head) == (
        "where", SENTENCE, OPTIONS, 4, 1, 2
    )  # fmt: skip
    assert q.probs == (0.1, 0.1235, 0.2, 0.4, 0.1765)  # rounded as the phones show it
    assert q.answers == (3,)  # the row's largest weight
    assert (q.word, q.unknown) == ((3, 4), (2,))
    assert Question.from_json(q.to_json()) == q


def test_tied_weights_are_all_answers() -> None:
    row = (0.3, 0.3, 0.2, 0.1, 0.1)
    tied = question_where(SENTENCE, OPTIONS, row, query=2, layer=0, head=0, word=(1, 2))
    assert tied.answers == (0, 1)


@pytest.mark.parametrize(
    "changes",
    [{"probs": (0.5, 0.5)}, {"word": (1,)}, {"word": (4, 9)}, {"unknown": (7,)}],
)
def test_a_malformed_where_question_is_refused(changes: dict) -> None:
    fields = {"options": OPTIONS, "query": 4, "head": 0, "answers": (3,), "kind": "where",
              "prompt": SENTENCE, "probs": ROW, "word": (3, 4)}  # fmt: skip
    with pytest.raises(PollError):
        Question(**{**fields, **changes})


def test_where_through_the_store_one_tap_per_student(store: PollStore) -> None:  # noqa: F811
    code, key = store.open_class()
    pushed = store.push(code, key, _where())
    info = store.info(code)
    assert info.question == pushed and pushed.kind == "where" and pushed.number == 1
    students = [store.join(code).student for _ in range(3)]
    assert store.answer(info.class_id, 1, students[0], 4)
    assert not store.answer(info.class_id, 1, students[0], 3)  # tapped twice: counted once
    assert store.my_answer(info.class_id, 1, students[0]) == 4  # the first tap stays
    assert store.answer(info.class_id, 1, students[1], 3)
    assert store.counts(info.class_id, 1) == {4: 1, 3: 1}
    with pytest.raises(PollRefused):
        store.answer(info.class_id, 1, "0" * 40, 0)  # an id the store never signed
    store.reveal(code, key)
    assert not store.answer(info.class_id, 1, students[2], 3)  # revealed: closed
    assert store.counts(info.class_id, 1) == {4: 1, 3: 1}
