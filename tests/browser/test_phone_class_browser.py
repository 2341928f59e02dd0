"""Phones in class, in headless Chromium: a student's phone (390 × 844, touch) on
the Chinese landing page and the quiz, and the projector (1920 × 1080).

Phone: every tap target Streamlit draws is at least 44 px both ways (the sidebar's arrow,
the mean-over-heads toggle, page links, help icons, the chart toolbar, a multiselect tag's
×), every colour-scale option is whole on the screen, the chart toolbar covers no chart
text, and the language and the sentence work from the main area. Both sizes: no ⋮ menu, the
"Running… Stop" widget hidden, and 🔀 drawn by a colour emoji font, not as an empty box.
Screenshots: tests/artifacts/phone-class-*.png.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .checks import assert_no_exception, screenshot
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
DESKTOP = {"viewport": {"width": 1920, "height": 1080}}
TEXT = "the cat sat on the mat"
TAP_PX = 44 - 0.5
_BOXES = """(selector) => [...document.querySelectorAll(selector)].map((el) => {
  const r = el.getBoundingClientRect();
  return {width: r.width, height: r.height, left: r.left, right: r.right, top: r.top,
          bottom: r.bottom, clipped: el.scrollWidth > el.clientWidth + 1,
          text: (el.innerText || el.getAttribute('data-title') || '').slice(0, 40)};
}).filter((b) => b.width > 0 && b.height > 0)"""
_BARS_BELOW = """() => {
  const charts = [...document.querySelectorAll('.studio-chart.js-plotly-plot')];
  return charts.length > 0 && charts.every((gd) => {
    const svg = gd.querySelector('.main-svg'), bar = gd.querySelector('.modebar');
    if (!svg || !bar) return false;
    const s = svg.getBoundingClientRect(), b = bar.getBoundingClientRect();
    return s.height > 0 && b.top >= s.bottom - 0.5; }); }"""
# a probe with the status widget's test id: the app's CSS must hide it ("Running… Stop")
_STOP_HIDDEN = """() => { const probe = document.createElement('div');
  probe.setAttribute('data-testid', 'stStatusWidget'); probe.textContent = 'Stop';
  document.querySelector('[data-testid="stApp"]').appendChild(probe);
  const hidden = getComputedStyle(probe).display === 'none'; probe.remove(); return hidden; }"""
# 🔀 drawn on a canvas: a colour emoji font paints coloured pixels, a missing glyph's box grey
_EMOJI_IN_COLOUR = """() => { const c = document.createElement('canvas'); c.width = c.height = 64;
  const g = c.getContext('2d'); g.font = '48px sans-serif'; g.textBaseline = 'top';
  g.fillText('\\u{1F500}', 4, 4); const d = g.getImageData(0, 0, 64, 64).data;
  for (let i = 0; i < d.length; i += 4) {
    const [r, g2, b, a] = [d[i], d[i + 1], d[i + 2], d[i + 3]];
    if (a > 0 && Math.max(r, g2, b) - Math.min(r, g2, b) > 40) return true;
  }
  return false; }"""


def _boxes(page: Page, selector: str) -> list[dict[str, Any]]:
    return page.evaluate(_BOXES, selector)


def _small(page: Page, selector: str, *, height_only: bool = False) -> list[dict[str, Any]]:
    found = _boxes(page, selector)
    assert found, f"nothing drawn for {selector}"
    return [b for b in found if b["height"] < TAP_PX or (not height_only and b["width"] < TAP_PX)]


def _chrome_checks(page: Page) -> None:
    expect(page.locator('[data-testid="stMainMenu"]')).to_have_count(0)  # no ⋮ menu
    assert page.evaluate(_STOP_HIDDEN), "Streamlit's English 'Stop' button would show"
    assert page.evaluate(_EMOJI_IN_COLOUR), "🔀 draws as an empty box: no emoji font"


def test_a_phone_reaches_everything_with_a_finger(browser: Browser, app_server: str) -> None:
    context = configure(browser.new_context(locale="zh-TW", **PHONE))
    try:
        page = context.new_page()
        open_page(page, app_server, "", {"text": TEXT, "lang": "zh-TW", "num_heads": "2"})
        assert wait_for_charts(page) > 0
        assert_no_exception(page)
        screenshot(page, "phone-class-landing")
        _chrome_checks(page)
        for selector in (
            '[data-testid="stExpandSidebarButton"]',
            '[data-testid="stTooltipHoverTarget"]',
            ".studio-chart .modebar-btn",
        ):
            assert not _small(page, selector), (selector, _small(page, selector)[:3])
        for selector in (".st-key-show_mean label", '[data-testid="stPageLink-NavLink"]'):
            small = _small(page, selector, height_only=True)
            assert not small, (selector, small[:3])
        options = [o for o in _boxes(page, ".st-key-color_scale button") if o["text"]]
        assert len(options) == 3 and all(o["right"] <= 390 + 0.5 for o in options), options
        labels = _boxes(page, ".st-key-color_scale button p")
        assert not [o for o in labels if o["clipped"]], labels  # "每個頭各自…" whole
        # the chart toolbar under the plot, not over its titles (polled: a chart being
        # redrawn has a 0 px box for a moment)
        page.wait_for_function(_BARS_BELOW, timeout=10_000)

        # the language and the sentence from the main area, the sidebar folded
        controls = page.locator(".st-key-phone_controls")
        expect(controls).to_be_visible()
        controls.locator("summary").click()
        box = controls.locator("textarea")
        expect(box).to_have_value(TEXT)
        box.fill("中和有一個永和路")
        with expect_rerun(page):
            box.press("Control+Enter")
        expect(page).to_have_url(re.compile("text=%E4%B8%AD%E5%92%8C"))  # text= in the link
        with expect_rerun(page):
            controls.get_by_text("English", exact=True).click()
        expect(page.locator('[data-testid="stMain"] h1').first).not_to_contain_text("注意")
        screenshot(page, "phone-class-controls")

        open_page(page, app_server, "quiz", {"text": TEXT, "lang": "zh-TW"})
        page.locator('[data-testid="stMultiSelect"] [data-tag]').first.wait_for()
        small = _small(page, '[data-testid="stMultiSelect"] button')
        assert not small, small[:3]  # the question source's ×
        screenshot(page, "phone-class-quiz")
    finally:
        context.close()


def test_a_phone_opens_its_sidebar_and_finds_the_settings_of_the_link(
    browser: Browser, app_server: str
) -> None:
    """ui/phone.py: a new phone paints without the settings widgets in its folded sidebar;
    opening the sidebar draws them with the link's values, and they work (the link and the
    chart follow), on every later page too."""
    context = configure(browser.new_context(**PHONE))
    try:
        page = context.new_page()
        link = {"text": TEXT, "lang": "en", "tokenizer": "word", "embed_dim": "8"}
        open_page(page, app_server, "", {**link, "num_heads": "2"})
        assert wait_for_charts(page) > 0
        sidebar = page.locator('[data-testid="stSidebar"]')
        assert sidebar.locator("textarea").count() == 0  # folded: not drawn yet
        with expect_rerun(page):
            page.locator('[data-testid="stExpandSidebarButton"]').click()
        expect(sidebar.locator("textarea")).to_have_value(TEXT, timeout=10_000)
        embed = sidebar.locator(".st-key-embed_dim input")
        expect(embed).to_have_value("8")
        with expect_rerun(page):
            embed.fill("24")
            embed.press("Enter")
        expect(page).to_have_url(re.compile("embed_dim=24"))
        assert "num_heads=2" in page.url  # the chosen head count still divides 24
        assert wait_for_charts(page) > 0
        assert_no_exception(page)
        screenshot(page, "phone-sidebar-opened")
        with expect_rerun(page):  # another page of the same visit: the settings stay drawn
            sidebar.get_by_role("link", name="Compare heads").click()
        expect(page).to_have_url(re.compile("/compare"))
        expect(sidebar.locator(".st-key-embed_dim input")).to_have_value("24", timeout=10_000)
        assert "embed_dim=24" in page.url
    finally:
        context.close()


def test_the_projector_has_no_phone_controls_and_no_streamlit_menu(
    browser: Browser, app_server: str
) -> None:
    context = configure(browser.new_context(locale="zh-TW", **DESKTOP))
    try:
        page = context.new_page()
        open_page(page, app_server, "", {"text": TEXT, "lang": "zh-TW"})
        assert wait_for_charts(page) > 0
        expect(page.locator(".st-key-phone_controls")).to_have_count(0)
        _chrome_checks(page)
    finally:
        context.close()
