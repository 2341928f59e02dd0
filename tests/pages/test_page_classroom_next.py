""" "What comes next?" with AppTest: a teacher with an open class pushes the step about to be
written from Watch it write, a student answers on the Classroom page (the text so far and
the model's top-5 as buttons), the reveal draws the class beside the model and the page
writes the token. The store is read back through its own SQLiteStore; the reference for
the options is `attention_core.decode.decode` on the same prompt."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attention_core.decode import decode
from attention_core.i18n import t
from attention_core.poll import SQLiteStore
from tests.support.apptest import chart, md_unescape, open_after_first_run, texts
from tests.support.apptest import decode as plotly_array

WRITE, CLASSROOM = "pages/write.py", "pages/classroom.py"
PROMPT = "這個程式"


def test_the_class_guesses_the_next_token_and_the_page_writes_it(db: Path) -> None:
    teacher = open_after_first_run(CLASSROOM)
    teacher.button(key="poll_open").click().run()
    code = teacher.session_state["poll_teacher"][0]
    teacher.switch_page(WRITE)
    teacher.run()
    teacher.button(key="write_push").click().run()
    assert not teacher.exception, teacher.exception
    store = SQLiteStore(db)
    question = store.info(code).question
    step = decode("reader", PROMPT, 2).steps[1]  # the page shows step 1: step 2 is asked
    assert question.kind == "next" and question.number == 1
    assert question.prompt == f"[BOS]{PROMPT}{decode('reader', PROMPT, 1).steps[0].token}"
    assert list(question.options) == step.top_tokens
    np.testing.assert_allclose(question.probs, step.top_probs, atol=1e-4)
    assert question.answers == (0,)  # greedy: the likeliest is written

    student = open_after_first_run(CLASSROOM, {"class": code})
    student.button(key="poll_join").click().run()
    shown = md_unescape(texts(student))
    assert t("poll_question_next", "en", number=1) in shown
    assert t("poll_next_prompt", "en", prompt=question.prompt) in shown
    student.button(key="poll_answer_1_1").click().run()
    class_id, sid = store.info(code).class_id, student.query_params["sid"]
    assert store.counts(class_id, 1) == {1: 1}
    assert not store.answer(class_id, 1, sid, 0)  # one answer per device: a second not counted
    assert store.counts(class_id, 1) == {1: 1}

    teacher.run()
    assert t("write_answered", "en", number=1, k=1, n=1) in md_unescape(texts(teacher))
    teacher.button(key="write_reveal").click().run()
    assert not teacher.exception
    assert teacher.session_state["write_steps"] == 2  # the model wrote it
    bars = chart(teacher, "write_class_chart")["data"]
    np.testing.assert_allclose(plotly_array(bars[0]["y"]), [0, 1, 0, 0, 0])  # the class
    np.testing.assert_allclose(plotly_array(bars[1]["y"]), question.probs)  # the model
    assert teacher.button(key="write_reveal").disabled

    student.run()
    wrong = t("poll_revealed_wrong", "en", answer=question.options[0], mine=question.options[1])
    assert wrong in md_unescape(texts(student))
    teacher.switch_page(CLASSROOM)
    teacher.run()
    assert not teacher.exception
    model_bars = chart(teacher, "poll_next_chart")["data"][1]
    np.testing.assert_allclose(plotly_array(model_bars["y"]), question.probs)
