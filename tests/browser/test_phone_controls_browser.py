"""A phone's "Language and sentence" in real headless Chromium (ui/phone.py): its header and
the token picker are 44 px tap targets, and it stays open after a language switch made in
it; Streamlit's English table toolbar is hidden. The phone's picture for the docs:
docs/images/phone-zh-TW.png (`checks.docs_picture`).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from .checks import assert_no_exception, collect_page_errors, docs_picture
from .chromium import configure
from .waits import expect_rerun, open_page, wait_for_charts

pytestmark = pytest.mark.browser
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/120.0 Mobile Safari/537.36",
}
# a probe with the table toolbar's test id: its English tooltips ("Download as CSV",
# "Search", "Fullscreen") must be hidden by the app's CSS (ui/presenter.py)
_TOOLBAR_HIDDEN = """() => { const probe = document.createElement('div');
  probe.setAttribute('data-testid', 'stElementToolbar'); probe.textContent = 'Search';
  document.querySelector('[data-testid="stApp"]').appendChild(probe);
  const hidden = getComputedStyle(probe).display === 'none'; probe.remove(); return hidden; }"""


def _height(page: Page, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box["height"]


def test_the_phone_controls_are_tap_sized_and_stay_open_across_a_language_switch(
    browser: Browser, app_server: str
) -> None:
    context = configure(browser.new_context(**PHONE))
    try:
        page = context.new_page()
        errors = collect_page_errors(page)
        open_page(page, app_server, "", {"text": "中和有一個永和路", "lang": "zh-TW"})
        wait_for_charts(page)
        controls = page.locator(".st-key-phone_controls")
        expect(controls).to_be_visible()
        assert _height(page, ".st-key-phone_controls summary") >= 44 - 0.5
        assert _height(page, '.st-key-highlight_token [role="group"]') >= 44 - 0.5
        controls.locator("summary").click()
        expect(controls.locator("textarea")).to_be_visible()
        with expect_rerun(page):
            controls.get_by_text("English", exact=True).click()
        expect(page.locator('[data-testid="stMain"] h1').first).not_to_contain_text("注意")
        expect(controls.locator("textarea")).to_be_visible()  # still open, in English
        expect(controls.locator("summary")).to_contain_text("Language and sentence")
        with expect_rerun(page):
            controls.get_by_text("繁體中文", exact=True).click()
        expect(controls.locator("textarea")).to_be_visible()
        wait_for_charts(page)
        assert page.evaluate(_TOOLBAR_HIDDEN)
        docs_picture(page, "phone-zh-TW")
        assert_no_exception(page)
        assert not errors, errors
    finally:
        context.close()
