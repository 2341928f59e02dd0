"""The Classroom page with AppTest: a teacher and several students, each its own session,
sharing one SQLite store (a file of the test's own), as replicas would.

References: the store is read back through a second SQLiteStore on the same file; the
histogram is compared with a Counter of what the students tapped; the revealed answer with
numpy's argmax of the head's row from `pipeline.analyze`; a hostile name with `md_escape`.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.i18n import t
from attention_core.pipeline import analyze
from attention_core.poll import SQLiteStore
from attention_core.quiz import QuizRound, QuizSource
from attention_core.settings import Settings
from tests.support.apptest import (
    APP,
    TIMEOUT,
    chart,
    decode,
    md_unescape,
    open_after_first_run,
    texts,
)
from tests.support.qr import read_qr
from ui.classroom import question_for
from ui.common import md_escape

PAGE = "pages/classroom.py"
HOSTILE = "<img src=x onerror=alert(1)>**bold**"


def _teacher(**state: object) -> tuple[AppTest, str]:
    at = open_after_first_run(PAGE, **state)
    at.button(key="poll_open").click().run()
    assert not at.exception, at.exception
    code = at.session_state["poll_teacher"][0]
    return at, code


def _student(code: str, name: str = "", lang: str = "en") -> AppTest:
    at = open_after_first_run(PAGE, {"class": code}, lang=lang)
    at.text_input(key="poll_join_name").input(name).run()
    at.button(key="poll_join").click().run()
    assert not at.exception, at.exception
    return at


def _answer_buttons(at: AppTest) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.startswith("poll_answer_")]


def test_a_teacher_opens_a_class_with_a_big_code_a_qr_code_and_a_join_link(db: Path) -> None:
    at, code = _teacher()
    assert f"# {code}" in [m.value for m in at.markdown]
    assert len(at.get("image")) == 1  # the QR code
    (link,) = [c.value for c in at.code]
    assert link.endswith(f"?class={code}&lang=en")
    info = SQLiteStore(db).info(code)
    assert info is not None and info.open and info.students == 0


def test_a_poll_counts_each_student_once_shows_the_histogram_and_reveals(db: Path) -> None:
    teacher, code = _teacher()
    teacher.button(key="poll_push").click().run()
    assert not teacher.exception
    question = SQLiteStore(db).info(code).question
    assert question is not None and question.number == 1
    taps = {"Ann": 0, HOSTILE: 2, "Chen 陳": 2}
    students = {}
    for name, choice in taps.items():
        student = _student(code, name)
        assert len(_answer_buttons(student)) == len(question.options)
        student.button(key=f"poll_answer_1_{choice}").click().run()
        assert not student.exception
        assert _answer_buttons(student) == []  # answered: no more buttons
        shown = md_unescape(texts(student))
        assert t("poll_your_answer", "en", mine=question.options[choice]) in shown
        students[name] = student

    # the same student again, as after a reconnect to another replica (same sid in the URL)
    sid = students["Ann"].query_params["sid"]
    sid = sid[0] if isinstance(sid, list) else sid
    again = open_after_first_run(PAGE, {"class": code, "sid": sid})
    assert _answer_buttons(again) == []
    assert not SQLiteStore(db).answer(SQLiteStore(db).info(code).class_id, 1, sid, 1)

    teacher.run()
    bars = chart(teacher, "poll_histogram")["data"][0]
    assert list(decode(bars["y"]).astype(int)) == [
        Counter(taps.values())[j] for j in range(len(question.options))
    ]
    shown = texts(teacher)
    assert md_escape(HOSTILE) in shown and HOSTILE not in shown  # the name stays text
    assert t("poll_students", "en", n=3) in md_unescape(shown)

    # the reveal: the answer is the key with the largest weight in that head's row
    teacher.button(key="poll_reveal").click().run()
    weights = analyze(Settings().model).weights  # (H, n, n) of the default sentence
    row = weights[question.head, question.query]
    assert int(np.argmax(row)) in question.answers
    matrix = chart(teacher, "poll_matrix")["data"][0]
    np.testing.assert_allclose(decode(matrix["z"]), weights[question.head], atol=1e-4)
    for name, student in students.items():
        student.run()
        right = taps[name] in question.answers
        kind = student.success if right else student.error
        assert len(kind) == 1, name
    assert teacher.button(key="poll_reveal").disabled  # revealed once


def test_reset_and_close(db: Path) -> None:
    teacher, code = _teacher()
    teacher.button(key="poll_push").click().run()
    student = _student(code, "Ann")
    student.button(key="poll_answer_1_0").click().run()
    teacher.button(key="poll_reset").click().run()
    assert SQLiteStore(db).info(code).question is None
    assert t("poll_no_question_teacher", "en") in texts(teacher)
    student.run()
    assert t("poll_wait", "en") in texts(student)
    teacher.button(key="poll_close").click().run()
    assert not teacher.exception
    assert "poll_teacher" not in teacher.session_state
    assert [b.key for b in teacher.button if b.key == "poll_open"] == ["poll_open"]
    student.run()
    assert md_unescape(t("poll_closed_student", "en", code=code)) in md_unescape(texts(student))
    late = open_after_first_run(PAGE, {"class": code})
    late.button(key="poll_join").click().run()
    assert t("poll_no_class", "en", code=code) in md_unescape(texts(late))


def test_bad_codes_get_a_message_not_a_traceback(db: Path) -> None:
    at = open_after_first_run(PAGE, {"class": "<script>"})
    assert t("poll_bad_code", "en") in texts(at)
    at.text_input(key="poll_join_code").input("zz").run()
    at.button(key="poll_join").click().run()
    assert not at.exception
    assert texts(at).count(t("poll_bad_code", "en")) >= 1


def test_the_quiz_pushes_its_question_to_the_teachers_class(db: Path) -> None:
    teacher, code = _teacher()
    teacher.switch_page("pages/quiz.py")
    teacher.session_state["quiz_sources"] = ["untrained"]  # the sentence's own heads: quick
    teacher.run()
    assert not teacher.exception
    (button,) = [b for b in teacher.button if b.key == "poll_push_quiz"]
    assert code in button.label
    quiz, labels = teacher.session_state["quiz_round"], teacher.session_state["_quiz_labels"]
    _layer, head = teacher.session_state["_quiz_head"]
    button.click().run()
    question = SQLiteStore(db).info(code).question
    assert list(question.options) == list(labels)
    assert (question.head, question.query, question.answers) == (head, quiz.query, quiz.answers)
    assert question.layer == -1  # one layer: not named
    row = np.asarray(question.matrix)[quiz.query]
    assert int(np.argmax(row)) == quiz.answer  # the stored weights agree with the answer


def test_a_question_from_a_model_of_several_layers_names_the_layer() -> None:
    weights = np.full((2, 3, 3), 1 / 3)  # (P, n, n): two heads of a pretrained model
    weights[1, 0] = [0.1, 0.7, 0.2]
    source = QuizSource("pretrained", weights, ["0:a", "1:b", "2:c"], [(0, 4), (5, 11)])
    quiz = QuizRound(head=1, query=0, answer=1, answers=(1,), weight=0.7, choices=3)
    question = question_for(quiz, source)
    assert (question.layer, question.head, question.answers) == (5, 11, (1,))
    assert question.matrix[0] == (0.1, 0.7, 0.2)


def test_a_student_in_chinese(db: Path) -> None:
    teacher, code = _teacher()
    teacher.button(key="poll_push").click().run()
    student = _student(code, "小明", lang="zh-TW")
    assert t("poll_tap", "zh-TW") in texts(student)
    student.button(key="poll_answer_1_1").click().run()
    assert "你的答案" in texts(student)


def test_a_store_that_is_down_gives_a_message_not_a_traceback(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deploy.app_server import free_port
    from ui.cache import poll_store

    teacher, code = _teacher()
    teacher.button(key="poll_push").click().run()
    student = _student(code, "Ann")
    store = poll_store("", str(db))  # the instance the sessions share (st.cache_resource)

    def down(*_: object, **__: object) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store, "info", down)
    monkeypatch.setattr(store, "answer", down)
    student.button(key="poll_answer_1_0").click().run()
    teacher.run()
    for at in (teacher, student):
        assert not at.exception, at.exception
        assert t("poll_store_down", "en", error="OperationalError") in [e.value for e in at.error]
    # Redis configured but not reachable: the page says so
    monkeypatch.setenv("ATTENTION_POLL_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    away = open_after_first_run(PAGE)
    assert [e.value for e in away.error] == [t("poll_store_down", "en", error="ConnectionError")]


def test_a_student_joins_by_typing_the_code(db: Path) -> None:
    teacher, code = _teacher()
    teacher.button(key="poll_push").click().run()
    student = open_after_first_run(PAGE)  # the landing: no code in the link
    student.text_input(key="poll_join_code").input(f"  {code.lower()} ").run()
    student.text_input(key="poll_join_name").input("Bea").run()
    student.button(key="poll_join").click().run()
    assert not student.exception
    assert student.query_params["class"] in (code, [code])
    assert len(_answer_buttons(student)) == len(SQLiteStore(db).info(code).question.options)
    assert SQLiteStore(db).info(code, with_names=True).names == ("Bea",)


def test_the_join_link_and_both_qr_codes_give_phones_the_lan_address_and_the_code(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A teacher on http://localhost:8501 (the app on the laptop): the join link, its QR
    code and presenter mode's corner QR code all say the LAN address and the class code."""
    from urllib.parse import parse_qs, urlsplit

    import ui.address
    import ui.presenter

    drawn: list[bytes] = []  # every QR code the run drew, as PNG

    def recording_qr(text: str, **kwargs: int) -> bytes:
        drawn.append(real_qr(text, **kwargs))
        return drawn[-1]

    real_qr = ui.presenter.qr_png
    monkeypatch.setattr(ui.presenter, "qr_png", recording_qr)
    monkeypatch.setattr(ui.address, "lan_addresses", lambda: ["192.168.1.20"])
    monkeypatch.delenv("ATTENTION_STUDIO_PUBLIC_URL", raising=False)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["present"] = "1"
    at.context = {"url": "http://localhost:8501/classroom"}
    at.run()
    at.switch_page(PAGE)
    at.run()
    drawn.clear()
    at.button(key="poll_open").click().run()
    assert not at.exception, at.exception
    code = at.session_state["poll_teacher"][0]
    (link,) = [c.value for c in at.code]
    assert link == f"http://192.168.1.20:8501/classroom?class={code}&lang=en"
    decoded = [text for png in drawn for text in read_qr(png)]
    assert decoded == [link, link]  # the class's QR code and the presenter corner's
    assert parse_qs(urlsplit(at.session_state["_presenter_link"]).query)["class"] == [code]
    at.button(key="poll_close").click().run()  # closed: the corner links the view again
    assert "class" not in parse_qs(urlsplit(at.session_state["_presenter_link"]).query)
