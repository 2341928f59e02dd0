"""AppTest of pages/explain.py in both languages, against attention_core.attribution run
here on the same sentence (the numbers drawn are the library's, the library's are checked
against Captum and SciPy in tests/core/attribution): the two rows, the worked heads, the
table, the quiz, a sentence the reader cannot take, and no exception anywhere."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.attribution import agreement
from attention_core.i18n import t
from tests.support.apptest import chart, decode, open_after_first_run, texts

SENTENCE = "這家餐廳的牛肉麵很好吃，可是要排很久。"  # heads that agree, and a sink
ARTICLE = "中和有一個永和路"  # too short for any head's agreement to be significant
EVERYDAY_EN = "The bank raised interest rates, so I walked along the river bank."  # both sides
PAGE = "pages/explain.py"


@pytest.fixture(scope="module")
def expected():
    return agreement("reader", SENTENCE)


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_page_draws_attention_beside_attribution_in_both_languages(lang, expected):
    at = open_after_first_run(PAGE, {"text": SENTENCE, "lang": lang})
    shown = texts(at)
    assert t("page_explain", lang) in [title.value for title in at.title]
    ig = expected.attributions["integrated_gradients"]
    rows = chart(at, "explain_rows")["data"][0]
    values = decode(rows["customdata"])[::-1]  # the first row on top
    np.testing.assert_allclose(values[0], expected.views.rollout[-1], rtol=1e-6)
    np.testing.assert_allclose(values[1], np.abs(ig.scores[expected.views.keys]), rtol=1e-6)
    best = max((r for r in expected.table if r.verdict == "agrees"), key=lambda r: r.rho)
    case = decode(chart(at, "explain_case_agree")["data"][0]["customdata"])[::-1]
    np.testing.assert_allclose(case[0], expected.views.raw[best.layer, best.head], rtol=1e-6)
    assert chart(at, "explain_case_disagree")
    assert "Jain" in shown and "Sundararajan" in shown and "Kobayashi" in shown
    frame = at.dataframe[0].value
    assert len(frame) == len(expected.table)
    assert frame.columns[0] == t("explain_col_layer", lang)
    at.selectbox(key="explain_quiz_pick").set_value(0).run()
    at.button(key="explain_quiz_check").click().run()
    assert not at.exception
    assert at.success or at.error


def test_a_sentence_where_no_head_agrees_says_so_instead_of_a_case():
    found = agreement("reader", ARTICLE)
    assert not [r for r in found.table if r.verdict == "agrees"]
    at = open_after_first_run(PAGE, {"text": ARTICLE})
    assert not at.exception
    assert t("explain_case_none", "en") in [i.value for i in at.info]
    assert chart(at, "explain_case_disagree")
    # one click to a sentence with a head on both sides, in the interface's language
    at.button(key="explain_try_agree").click().run()
    assert not at.exception
    assert at.session_state["text"] == EVERYDAY_EN
    assert chart(at, "explain_case_agree") and chart(at, "explain_case_disagree")
    assert "explain_try_agree" not in [b.key for b in at.button]
    at = open_after_first_run(PAGE, {"text": ARTICLE, "lang": "zh-TW"})
    at.button(key="explain_try_agree").click().run()
    assert not at.exception and at.session_state["text"] == SENTENCE
    assert chart(at, "explain_case_agree")


def test_another_method_and_a_sentence_the_reader_cannot_take():
    at = open_after_first_run(PAGE, {"text": SENTENCE})
    at.segmented_control(key="explain_method").set_value("occlusion").run()
    assert not at.exception
    assert t("explain_method_occlusion", "en")
    at = open_after_first_run(PAGE, {"text": "字" * 70})
    assert not at.exception
    assert t("explain_too_long", "en", n=71, most=64) in texts(at).replace("\\", "")
