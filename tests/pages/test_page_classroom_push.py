"""The Classroom's "Push a question" with AppTest: each push is a new question (another
query or head of the sentence) while the sentence has one, and the teacher is told when a
push can only repeat an earlier one. The store is read back through its own SQLiteStore."""

from __future__ import annotations

from pathlib import Path

from attention_core.i18n import t
from attention_core.poll import SQLiteStore
from tests.support.apptest import md_unescape, open_after_first_run, texts

PAGE = "pages/classroom.py"


def test_each_push_after_a_reveal_is_a_new_question_or_says_it_repeats(db: Path) -> None:
    # two decisive rows in this sentence's untrained heads (quiz.decisive_rows)
    teacher = open_after_first_run(PAGE, {"text": "the cat sat on the mat", "tokenizer": "word"})
    teacher.button(key="poll_open").click().run()
    code = teacher.session_state["poll_teacher"][0]
    asked: list[tuple[int, int]] = []
    for number in range(1, 5):
        teacher.button(key="poll_push").click().run()
        assert not teacher.exception, teacher.exception
        question = SQLiteStore(db).info(code).question
        assert question is not None and question.number == number
        shown = md_unescape(texts(teacher))
        pair = (question.query, question.head)
        if pair in asked:  # only a repeat is left: the teacher is told which one
            first = asked.index(pair) + 1
            assert t("poll_pushed_repeat", "en", number=number, first=first) in shown
        else:
            assert t("poll_pushed", "en", number=number) in shown
        asked.append(pair)
        teacher.button(key="poll_reveal").click().run()
    assert len(set(asked[:2])) == 2  # both rows asked before a repeat
    assert len(set(asked)) == 2


def test_push_explains_itself_in_a_caption_not_a_tooltip_over_the_join_link(db: Path) -> None:
    teacher = open_after_first_run(PAGE)
    teacher.button(key="poll_open").click().run()
    assert not teacher.button(key="poll_push").help  # a tooltip stayed up after the click
    assert t("poll_push_help", "en") in md_unescape(texts(teacher))
