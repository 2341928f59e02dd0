"""The teaching pages (steps, scaling, quiz) in real headless Chromium.

What AppTest cannot see: a lecturer's link `/steps?step=3` opening step 3 in a fresh
browser, the prev/next buttons rewriting the address bar, KaTeX actually typesetting the
formulas, and the quiz's hidden matrix appearing only after the guess. Screenshots land in
tests/artifacts/teaching-*.png.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from .checks import alerts, assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .waits import expect_rerun, open_page, wait_for_heatmaps
from .widgets import main_area as _main

pytestmark = pytest.mark.browser

EXAMPLE = {
    "text": "中和有一個永和路",
    "tokenizer": "jieba",
    "attention": "multi",
    "embed_dim": "8",
    "num_heads": "2",
}


def _step(page: Page) -> str | None:
    return parse_qs(urlsplit(page.url).query).get("step", [None])[-1]


def test_a_step_link_opens_that_step_and_next_moves_the_address_bar(page, app_server):
    open_page(page, app_server, "steps", {**EXAMPLE, "step": 3})
    assert_no_exception(page)
    expect(_main(page).get_by_role("heading", name="Step 3 of 8")).to_be_visible(timeout=WAIT_MS)
    expect(_main(page).locator(".katex").first).to_be_visible(
        timeout=WAIT_MS
    )  # the formula is typeset
    wait_for_heatmaps(page, 1, chart=0)  # the scores matrix
    screenshot(page, "teaching-steps-3")
    with expect_rerun(page):
        _main(page).get_by_role("button", name="Next step →").click()
    expect(_main(page).get_by_role("heading", name="Step 4 of 8")).to_be_visible(timeout=WAIT_MS)
    assert _step(page) == "4"
    assert parse_qs(urlsplit(page.url).query)["num_heads"] == ["2"]  # settings kept


def test_an_invalid_step_link_shows_step_one_with_a_message(page, app_server):
    open_page(page, app_server, "steps", {**EXAMPLE, "step": "abc"})
    assert_no_exception(page)
    assert any("showing step 1" in text for text in alerts(page))
    expect(_main(page).get_by_role("heading", name="Step 1 of 8")).to_be_visible(timeout=WAIT_MS)
    assert _step(page) == "1"


def test_scaling_page_paints_its_charts(page, app_server):
    open_page(page, app_server, "scaling", EXAMPLE)
    assert_no_exception(page)
    wait_for_heatmaps(page, 2, chart=3)  # the sentence: without and with scaling
    assert page.locator(".studio-chart").count() == 4
    screenshot(page, "teaching-scaling")


def test_quiz_reveals_the_matrix_only_after_the_guess(page, app_server):
    open_page(page, app_server, "quiz", {**EXAMPLE, "lang": "zh-TW"})
    assert_no_exception(page)
    assert page.locator(".studio-chart").count() == 0
    with expect_rerun(page):
        # the round may come from a trained toy model or the pretrained one: its own options
        _main(page).get_by_role("radiogroup").locator("label").first.click()
    with expect_rerun(page):
        _main(page).get_by_role("button", name="對答案").click()
    wait_for_heatmaps(page, 1, chart=0)
    expect(_main(page).get_by_text("1 / 1").or_(_main(page).get_by_text("0 / 1"))).to_be_visible(
        timeout=WAIT_MS
    )
    screenshot(page, "teaching-quiz-revealed")
