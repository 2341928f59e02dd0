""" "Where does this head look?" with AppTest, in English and in Traditional Chinese: a
teacher with an open class chooses a sentence, a layer, a head and a query character of
the trained reader and pushes the question; students tap characters on the Classroom
page (a second tap is not counted); the reveal draws the class's taps beside the reader's
row. The store is read back through its own SQLiteStore; the reference for the row is
`ReaderLM.forward`'s attention weights on `Vocab.encode`'s ids, never the page's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attention_core.i18n import t
from attention_core.poll import SQLiteStore
from attention_core.reader import load_shipped
from attention_core.reader.card import shipped_shape
from tests.support.apptest import chart, md_unescape, open_after_first_run, texts
from tests.support.apptest import decode as plotly_array

PAGE = "pages/classroom.py"
EVERYDAY, ARTICLE = "我們明天早上去學校上課", "中和有一個永和路"


def _forward_row(text: str, layer: int, head: int, query: int) -> np.ndarray:
    reader = load_shipped()
    ids = torch.tensor([reader.vocab.encode(text).ids[: reader.config.context]])  # (1, n)
    with torch.inference_mode():
        _, weights = reader.model(ids)  # L x (1, H, n, n)
    return weights[layer][0, head, query].double().numpy()


def _teacher(lang: str):
    teacher = open_after_first_run(PAGE, lang=lang)
    teacher.button(key="poll_open").click().run()
    teacher.toggle(key="where_open").set_value(True).run()
    assert not teacher.exception, teacher.exception
    return teacher, teacher.session_state["poll_teacher"][0]


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_class_taps_where_a_head_looks_and_the_reveal_shows_the_row(
    db: Path, lang: str
) -> None:
    teacher, code = _teacher(lang)
    assert teacher.text_input(key="where_text").value == EVERYDAY
    assert teacher.session_state["where_layer"] == shipped_shape().default_layer
    teacher.text_input(key="where_text").input(ARTICLE).run()
    teacher.selectbox(key="where_head").set_value(1).run()
    teacher.selectbox(key="where_query").set_value(6).run()  # 永: its word is 永和路
    preview = t("where_preview", lang, query="永", index=6, word="永和路")
    assert preview in md_unescape(texts(teacher))
    teacher.button(key="where_push").click().run()
    assert not teacher.exception, teacher.exception

    store = SQLiteStore(db)
    question = store.info(code).question
    layer = shipped_shape().default_layer
    assert (question.kind, question.prompt, question.layer, question.head) == (
        "where", ARTICLE, layer, 1
    )  # fmt: skip
    assert question.options == ("[BOS]", *ARTICLE) and question.query == 6
    np.testing.assert_allclose(question.probs, _forward_row(ARTICLE, layer, 1, 6), atol=1e-4)
    assert question.word == (6, 7, 8)

    students = [open_after_first_run(PAGE, {"class": code}, lang=lang) for _ in range(3)]
    for student in students:
        student.button(key="poll_join").click().run()
    shown = md_unescape(texts(students[0]))
    assert t("where_question", lang, number=1, layer=layer, head=1, query="永") in shown
    assert students[0].button(key="where_tap_1_6").proto.type == "primary"  # the query
    assert students[0].button(key="where_tap_1_5").proto.type == "secondary"
    taps = [6, 5, 6]
    for student, j in zip(students, taps, strict=True):
        student.button(key=f"where_tap_1_{j}").click().run()
        assert not student.exception, student.exception
    class_id = store.info(code).class_id
    first = students[0].query_params["sid"]
    assert not store.answer(class_id, 1, first, 2)  # a phone that taps twice: counted once
    assert store.counts(class_id, 1) == {6: 2, 5: 1}

    teacher.run()
    assert t("poll_answered", lang, k=3, n=3) in md_unescape(texts(teacher))
    teacher.button(key="poll_reveal").click().run()
    assert not teacher.exception, teacher.exception
    bars = chart(teacher, "where_chart")
    class_bars, model_bars = bars["data"]
    shares = np.zeros(len(question.options))
    shares[[6, 5]] = [2 / 3, 1 / 3]
    np.testing.assert_allclose(plotly_array(class_bars["y"]), shares)
    np.testing.assert_allclose(
        plotly_array(model_bars["y"]), _forward_row(ARTICLE, layer, 1, 6), atol=1e-4
    )  # the row drawn is the reader's own
    (outline,) = bars["layout"]["shapes"]
    assert (outline["x0"], outline["x1"]) == (5.5, 8.5)  # 永和路
    word_name = t("where_reveal_word", lang, word="永和路")
    assert bars["layout"]["annotations"][0]["text"] == word_name

    students[1].run()

    def named(j: int) -> str:  # a character that occurs twice (和 … 和) with its place
        c = question.options[j]
        return t("where_char_at", lang, char=c, index=j) if ARTICLE.count(c) > 1 else c

    answer = ", ".join(named(j) for j in question.answers)
    said = md_unescape(texts(students[1]))
    if 5 in question.answers:
        assert t("poll_revealed_right", lang, answer=answer) in said
    else:
        assert t("poll_revealed_wrong", lang, answer=answer, mine="個") in said


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_unknown_characters_are_flagged_and_a_long_sentence_is_cut(db: Path, lang: str) -> None:
    teacher, code = _teacher(lang)
    rare = next(c for c in "龘靐齉爩鱻麤" if c not in load_shipped().vocab.index)
    context = load_shipped().config.context
    text = f"<b>{rare}</b>" + "上課" * context
    teacher.text_input(key="where_text").input(text).run()
    assert not teacher.exception, teacher.exception
    shown = md_unescape(texts(teacher))
    dropped = text[context - 1 :]  # one unit per character here: [BOS] + context-1 kept
    assert t("where_cut", lang, most=context - 1, dropped=dropped) in shown
    assert t("where_unknown", lang, chars=rare) in shown
    teacher.button(key="where_push").click().run()
    question = SQLiteStore(db).info(code).question
    assert question.options[1:8] == ("<", "b", ">", rare, "<", "/", "b")
    assert question.unknown == (4,) and len(question.options) == context
    student = open_after_first_run(PAGE, {"class": code}, lang=lang)
    student.button(key="poll_join").click().run()
    assert t("where_unknown_phone", lang, chars=rare) in md_unescape(texts(student))
    assert md_unescape(student.button(key="where_tap_1_1").label) == "<"  # text, not markup


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_a_character_that_occurs_twice_is_named_with_its_place(db: Path, lang: str) -> None:
    teacher, code = _teacher(lang)  # 我們明天早上去學校上課: 上 is characters 6 and 10
    teacher.button(key="where_push").click().run()
    student = open_after_first_run(PAGE, {"class": code}, lang=lang)
    student.button(key="poll_join").click().run()
    student.button(key="where_tap_1_6").click().run()
    mine = t("where_char_at", lang, char="上", index=6)
    assert t("poll_your_answer", lang, mine=mine) in md_unescape(texts(student))
    student.run()
    assert t("poll_your_answer", lang, mine="上") not in md_unescape(texts(student))


def test_only_the_teacher_sees_the_question_and_an_empty_sentence_is_a_message(db: Path) -> None:
    student = open_after_first_run(PAGE)
    assert not [w for w in student.toggle if w.key == "where_open"]
    teacher, _ = _teacher("en")
    teacher.text_input(key="where_text").input("   ").run()
    assert not teacher.exception
    assert t("where_empty", "en") in texts(teacher)
    assert not [b for b in teacher.button if b.key == "where_push"]


def test_a_missing_reader_is_a_message(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ui.where_class

    monkeypatch.setattr(ui.where_class, "shipped_shape", lambda: None)
    teacher, _ = _teacher("zh-TW")
    assert not teacher.exception
    assert t("where_no_reader", "zh-TW") in texts(teacher)
    assert not [b for b in teacher.button if b.key == "where_push"]
