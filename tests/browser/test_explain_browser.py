"""The "Is attention an explanation?" page in real headless Chromium: the two rows of
tokens painted with the sentence's characters written in them (literally: a typed "<b>"
stays text), the worked heads and the table drawn, another method picked, the quiz
answered, then MiniLM chosen (the similarity of the sentence to a second one, with the
bar and Cancel while it runs), then the same page in 中文. Screenshots:
tests/artifacts/explain-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from attention_core.i18n import t
from tests.support.availability import require_minilm

from .checks import assert_no_exception, collect_page_errors, screenshot
from .waits import expect_rerun, open_page, plotly_traces, wait_for_charts
from .widgets import main_area, set_language

pytestmark = pytest.mark.browser

SENTENCE = "中和有一個永和路<b>"


def test_explain_walk_rows_cases_method_quiz_and_language(app_server: str, page: Page) -> None:
    errors = collect_page_errors(page)
    open_page(page, app_server, "explain", params={"text": SENTENCE})
    assert wait_for_charts(page) == 3  # the two rows, the head that agrees, the one that does not
    (rows,) = plotly_traces(page, 0)
    assert rows["z_shape"] == (2, 12)  # [BOS], 8 characters, "<", "b", ">"
    drawn = page.locator(".studio-chart").first.inner_text()
    assert "永" in drawn and "<" in drawn  # the sign drawn as typed, not read as markup
    assert page.locator(".studio-chart b").count() == 0
    area = main_area(page)
    assert area.get_by_text("Jain & Wallace (2019)", exact=False).count() == 1
    assert page.locator('[data-testid="stDataFrame"]').count() == 1
    screenshot(page, "explain-en")

    with expect_rerun(page):
        area.get_by_text("occlusion (a token taken out)", exact=True).click()
    wait_for_charts(page)
    with expect_rerun(page):
        area.get_by_role("button", name="Check").click()
    assert area.get_by_text("moved it most", exact=False).count() == 1

    require_minilm()  # skips here without the packaged model, fails under CI
    with expect_rerun(page):
        area.get_by_text("MiniLM (sentence similarity)", exact=True).click()
    assert wait_for_charts(page) >= 2
    assert area.get_by_text("the similarity of the sentence to", exact=False).count() == 1
    assert page.get_by_label("Second sentence", exact=False).input_value() == (
        "A cat is sleeping on the mat."
    )
    assert page.locator(".studio-chart b").count() == 0
    screenshot(page, "explain-minilm-en")

    set_language(page, "zh-TW")
    wait_for_charts(page)
    assert area.get_by_text("注意力是解釋嗎？", exact=False).count() >= 1
    assert area.get_by_text("MiniLM（句子相似度）", exact=True).count() == 1
    screenshot(page, "explain-zh-TW")
    assert_no_exception(page)
    assert not errors, errors


@pytest.mark.parametrize(
    ("lang", "size", "suggested"),
    [
        ("zh-TW", {"width": 1920, "height": 1080}, "這家餐廳的牛肉麵很好吃，可是要排很久。"),
        ("en", {"width": 390, "height": 844}, "The bank raised interest rates, so"),
    ],
)
def test_a_sentence_with_no_agreeing_head_offers_one_that_has_both(
    app_server: str, page: Page, lang: str, size: dict[str, int], suggested: str
) -> None:
    """The article's 9 tokens: no head of the reader agrees significantly. The page says so
    and offers, in the interface's language, an example sentence that has both cases; one
    tap makes it the sentence (the address follows) and both cases are drawn; then (on the
    desktop) the language switched mid-session and another method picked."""
    errors = collect_page_errors(page)
    page.set_viewport_size(size)
    open_page(page, app_server, "explain", params={"text": "中和有一個永和路", "lang": lang})
    assert wait_for_charts(page) == 2  # the two rows and the head that does not agree
    offer = main_area(page).get_by_role("button", name=suggested, exact=False)
    assert offer.count() == 1
    offer.scroll_into_view_if_needed()
    with expect_rerun(page):
        offer.click()
    assert wait_for_charts(page) == 3  # now a head agrees too
    assert main_area(page).get_by_role("button", name=suggested, exact=False).count() == 0
    page.wait_for_function(
        "(t) => (new URLSearchParams(location.search).get('text') || '').startsWith(t)",
        arg=suggested,
    )
    screenshot(page, f"explain-offer-{lang}-{size['width']}")
    if size["width"] > 1000:  # the sidebar is open: switch the language mid-session
        set_language(page, "en")
        assert wait_for_charts(page) == 3
        lang = "en"
    # and keep working: another attribution method on the offered sentence
    occlusion = t("explain_method_occlusion", lang)
    with expect_rerun(page):
        main_area(page).get_by_text(occlusion, exact=True).click()
    assert wait_for_charts(page) == 3
    assert_no_exception(page)
    assert not errors, errors
