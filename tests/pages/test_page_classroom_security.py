"""The Classroom page's security and limits in AppTest ("the class poll: secure
and durable"): each session is its own browser, sharing one SQLite store (a file of the
test's own), as replicas would. The same over the websocket protocol, with forged
requests, is tests/core/poll/test_protocol.py; in Chromium, tests/browser/.

References: the store read back through a second SQLiteStore on the same file; the
decisive margin recomputed with numpy from the pushed question's own weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.i18n import t
from attention_core.poll import MAX_NAME, SQLiteStore
from attention_core.poll.guard import HOLD_S
from attention_core.quiz import DECISIVE_MARGIN
from tests.support.apptest import md_unescape, open_after_first_run, texts

PAGE = "pages/classroom.py"
ISSUE_SENTENCE = "中和有一個永和路"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "poll.sqlite3"
    monkeypatch.setenv("ATTENTION_POLL_DB", str(path))
    monkeypatch.delenv("ATTENTION_POLL_REDIS_URL", raising=False)
    monkeypatch.delenv("ATTENTION_POLL_SECRET", raising=False)
    return path


def _param(at: AppTest, name: str) -> str:
    value = at.query_params.get(name, "")
    return value[0] if isinstance(value, list) else value


def _open(params: dict[str, str] | None = None) -> tuple[AppTest, str, str]:
    at = open_after_first_run(PAGE, params)
    at.button(key="poll_open").click().run()
    assert not at.exception, at.exception
    code, key = at.session_state["poll_teacher"]
    return at, code, key


def _join(code: str, name: str = "", **params: str) -> AppTest:
    at = open_after_first_run(PAGE, {"class": code, **params})
    at.text_input(key="poll_join_name").input(name).run()
    at.button(key="poll_join").click().run()
    assert not at.exception, at.exception
    return at


def _buttons(at: AppTest) -> list[str]:
    return [b.key for b in at.button if b.key]


def test_a_link_copied_from_another_class_is_refused_with_a_message(db: Path) -> None:
    teacher_a, code_a, _ = _open()
    ann = _join(code_a, "Ann")
    sid = _param(ann, "sid")
    assert SQLiteStore(db).info(code_a).students == 1
    teacher_a.button(key="poll_close").click().run()
    _teacher_b, code_b, _ = _open()  # a later class (its code may even be the same)
    replayed = open_after_first_run(PAGE, {"class": code_b, "sid": sid})
    assert t("poll_sid_forged", "en") in md_unescape(texts(replayed))
    assert "poll_join" in _buttons(replayed)  # not seated: asked to join
    assert _param(replayed, "sid") == ""  # the replayed id is dropped from the URL
    assert SQLiteStore(db).info(code_b).students == 0
    replayed.button(key="poll_join").click().run()  # joining gives an id of its own
    assert _param(replayed, "sid") not in ("", sid)
    assert SQLiteStore(db).info(code_b).students == 1


def test_an_edited_student_id_is_refused(db: Path) -> None:
    _teacher, code, _ = _open()
    sid = _param(_join(code, "Ann"), "sid")
    edited = sid[:-1] + ("0" if sid[-1] != "0" else "1")
    for forged in (edited, "0123456789abcdef", "a" * 40):
        at = open_after_first_run(PAGE, {"class": code, "sid": forged})
        assert t("poll_sid_forged", "en") in md_unescape(texts(at)), forged
        assert not [k for k in _buttons(at) if k.startswith("poll_answer_")]
    assert SQLiteStore(db).info(code).students == 1


def test_a_student_with_the_code_on_the_teachers_page_cannot_push_or_close(db: Path) -> None:
    _teacher, code, key = _open()
    # the teacher's page URL with the code, or with a guessed key: a student's view
    for params in ({"class": code}, {"class": code, "teacher": "guess" + key[5:]}):
        intruder = open_after_first_run(PAGE, params)
        assert not {"poll_push", "poll_reveal", "poll_reset", "poll_close"} & set(
            _buttons(intruder)
        )
        assert "poll_teacher" not in intruder.session_state
        if "teacher" in params:
            shown = md_unescape(texts(intruder))
            assert md_unescape(t("poll_teacher_link_bad", "en", code=code)) in shown
    info = SQLiteStore(db).info(code)
    assert info.open and info.question is None


def test_the_teachers_link_carries_the_class_to_another_replica(db: Path) -> None:
    """A new session with the teacher's URL (the tab reconnected to another replica,
    whose memory never saw this teacher) carries on; the join link never holds the key."""
    teacher, code, key = _open()
    assert (_param(teacher, "class"), _param(teacher, "teacher")) == (code, key)
    (link,) = [c.value for c in teacher.code]
    assert key not in link and link.endswith(f"?class={code}&lang=en")
    teacher.button(key="poll_push").click().run()
    teacher.switch_page("pages/quiz.py")  # another page clears the URL …
    teacher.query_params.clear()
    teacher.session_state["quiz_sources"] = ["untrained"]
    teacher.run()
    assert "teacher" not in teacher.query_params  # … so the quiz's share link has no key
    teacher.switch_page(PAGE).run()  # … and back on the Classroom page it is there again
    assert (_param(teacher, "class"), _param(teacher, "teacher")) == (code, key)
    elsewhere = open_after_first_run(PAGE, {"class": code, "teacher": key})
    assert {"poll_push", "poll_reveal", "poll_close"} <= set(_buttons(elsewhere))
    (link,) = [c.value for c in elsewhere.code]
    assert key not in link
    elsewhere.button(key="poll_reveal").click().run()
    assert SQLiteStore(db).info(code).revealed
    elsewhere.button(key="poll_close").click().run()
    assert not SQLiteStore(db).info(code).open
    assert _param(elsewhere, "teacher") == ""


@pytest.mark.parametrize("length", [41, 500])
def test_a_long_name_is_cut_to_forty_and_the_student_is_told(db: Path, length: int) -> None:
    _teacher, code, _ = _open()
    at = open_after_first_run(PAGE, {"class": code})
    field = at.text_input(key="poll_join_name")
    assert field.max_chars in (None, 0)  # a browser drops a pasted text over max_chars
    field.input("長" * length).run()
    at.button(key="poll_join").click().run()
    assert t("poll_name_cut", "en", most=MAX_NAME) in md_unescape(texts(at))
    at.run()  # the live view's next refresh: the notice stays while the student is in class
    assert t("poll_name_cut", "en", most=MAX_NAME) in md_unescape(texts(at))
    assert SQLiteStore(db).info(code, with_names=True).names == ("長" * MAX_NAME,)
    assert str(MAX_NAME) in t("poll_name_help", "en", most=MAX_NAME)


def test_a_full_class_says_so(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from attention_core.poll import store as store_module

    monkeypatch.setattr(store_module, "MAX_CLASS_SIZE", 1)
    _teacher, code, _ = _open()
    _join(code, "Ann")
    late = _join(code, "Bob")
    assert t("poll_class_full", "en", most=1) in md_unescape(texts(late))
    assert _param(late, "sid") == ""
    assert SQLiteStore(db).info(code).students == 1


def test_a_pushed_question_is_decisive_as_the_quizs_are(db: Path) -> None:
    teacher, code, _ = _open({"text": ISSUE_SENTENCE})
    for number in range(1, 7):
        teacher.button(key="poll_push").click().run()
        assert not teacher.exception
        question = SQLiteStore(db).info(code).question
        assert question is not None and question.number == number
        row = np.sort(np.asarray(question.matrix)[question.query])[::-1]  # (n,) descending
        assert row[0] - row[1] >= DECISIVE_MARGIN - 1e-3, (number, row[:2])  # 4-digit rows
        assert question.answers == (int(np.argmax(np.asarray(question.matrix)[question.query])),)


def test_a_classmates_copied_link_cannot_answer_while_its_owner_is_in_class(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import attention_core.poll.sqlite as sqlite_module

    teacher, code, _ = _open()
    teacher.button(key="poll_push").click().run()
    owner = _join(code, "Ann")
    sid = _param(owner, "sid")
    copier = open_after_first_run(PAGE, {"class": code, "sid": sid})  # the copied link
    taken = md_unescape(t("poll_seat_taken", "en", seconds=int(HOLD_S)))
    assert taken in md_unescape(texts(copier))
    assert not [k for k in _buttons(copier) if k.startswith("poll_answer_")]
    owner.button(key="poll_answer_1_1").click().run()  # the owner answers, as before
    store = SQLiteStore(db)
    class_id = store.info(code).class_id
    assert store.counts(class_id, 1) == {1: 1} and store.my_answer(class_id, 1, sid) == 1
    # the owner's phone goes away: after HOLD_S the same link carries on in a new session
    monkeypatch.setattr(sqlite_module, "HOLD_S", 0.0)
    copier.run()
    assert taken not in md_unescape(texts(copier))
