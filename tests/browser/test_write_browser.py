"""Watch it write (pages/write.py) in headless Chromium: the trained reader writing after a
Traditional Chinese prompt on a projector (1920 × 1080) and a phone (390 × 844).

Desktop: ▶ paints the new row (the time from the click to the frame after Plotly drew it
is measured in the page and written to tests/artifacts/write-step-ms.json, not asserted:
the machine is shared), "Play" writes five more, an alternative opens a branch beside the
run, a switch to English mid-session keeps the step and ▶ still works; presenter mode. A
teacher pushes "What comes next?" from the page, a phone answers on the Classroom page,
the reveal draws the class beside the model and the page writes the token.
Screenshots: tests/artifacts/write-*.png.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest
from playwright.sync_api import Browser, Page, expect

from .checks import SCREENSHOTS, assert_no_exception, collect_page_errors, screenshot, window_shot
from .chromium import configure
from .server import ARTIFACTS_DIR
from .waits import expect_rerun, open_page, wait_for_charts
from .widgets import set_language

pytestmark = pytest.mark.browser

PROMPT = "這個程式"
DESKTOP = {"viewport": {"width": 1920, "height": 1080}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/120.0 Mobile Safari/537.36",
}

# The triangles are the chart with the most heatmaps (one per head); its rows = steps shown.
_ROWS = """() => {
  const charts = [...document.querySelectorAll('.studio-chart.js-plotly-plot')];
  const maps = (c) => (c._fullData || []).filter((t) => t.type === 'heatmap');
  const tri = charts.sort((a, b) => maps(b).length - maps(a).length)[0];
  const first = tri && maps(tri)[0];
  return first && first.z ? first.z.length : 0;
}"""
# Click ▶ and wait in the page for the frame after the triangles hold `rows` rows:
# {painted: ms from the click to that frame, ran: ms to the script run's end as the page
# saw it (the server's part and the trip), or -1 when it took over 30 s}
_STEP_MS = f"""async (rows) => {{
  const count = {_ROWS};
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = () => app.getAttribute('data-test-script-state') === 'notRunning';
  const start = performance.now();
  let ran = null, busy = false;
  document.querySelector('.st-key-write_next button').click();
  while (count() !== rows || ran === null) {{
    await new Promise((done) => setTimeout(done, 1));
    busy = busy || !idle();
    if (ran === null && busy && idle()) ran = performance.now() - start;
    if (ran === null && count() === rows) ran = performance.now() - start;
    if (performance.now() - start > 30000) return {{painted: -1, ran: -1}};
  }}
  await frame();
  return {{painted: performance.now() - start, ran}};
}}"""


def _rows(page: Page) -> int:
    return int(page.evaluate(_ROWS))


def _wait_rows(page: Page, rows: int) -> None:
    page.wait_for_function(f"() => ({_ROWS})() === {rows}", timeout=30_000)


_SCROLL = "(dy) => document.querySelector('[data-testid=\"stMain\"]').scrollBy(0, dy)"


def _screens(page: Page, name: str, count: int = 3, step_px: int = 700) -> None:
    """What the screen shows, down the page as its reader scrolls. checks.screenshot's
    full-page shot makes the window as tall as the page: a phone's charts laid out for the
    narrow window are then drawn empty, and presenter mode scales every chart to the tall
    window (both seen on every page, not only this one)."""
    if not SCREENSHOTS:
        return
    for i in range(count):
        window_shot(page, f"{name}-{i + 1}")
        page.evaluate(_SCROLL, step_px)
        page.wait_for_timeout(200)


def _fits(page: Page) -> int:
    return int(page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth"))


def test_write_step_play_branch_and_switch_language(browser: Browser, app_server: str) -> None:
    context = configure(browser.new_context(locale="zh-TW", **DESKTOP))
    try:
        page = context.new_page()
        errors = collect_page_errors(page)
        open_page(page, app_server, "write", {"lang": "zh-TW"})
        wait_for_charts(page)
        expect(page.locator(".st-key-write_prompt input")).to_have_value(PROMPT)
        assert _rows(page) == 1
        timings = []
        for rows in (2, 3, 4, 5, 6):
            timings.append(page.evaluate(_STEP_MS, rows))
            wait_for_charts(page, quiet_ms=100)
        assert all(t["painted"] > 0 for t in timings), timings
        painted = [round(t["painted"]) for t in timings]
        (ARTIFACTS_DIR / "write-step-ms.json").write_text(
            json.dumps({"step_to_painted_ms": painted, "median": statistics.median(painted),
                        "script_run_seen_ms": [round(t["ran"]) for t in timings]})
        )  # fmt: skip
        with expect_rerun(page):
            page.locator(".st-key-write_play_button button").click()
        _wait_rows(page, 11)  # five more, one rerun each
        wait_for_charts(page)
        with expect_rerun(page):
            page.locator(".st-key-write_alt_1 button").click()
        expect(page.get_by_text("兩條支線", exact=True)).to_be_visible()
        wait_for_charts(page)
        assert_no_exception(page)
        screenshot(page, "write-desktop-zh-TW")

        set_language(page, "en")
        expect(page.get_by_text("Two branches", exact=True)).to_be_visible()
        assert _rows(page) == 11  # the step and the branch kept
        assert page.evaluate(_STEP_MS, 12)["painted"] > 0
        wait_for_charts(page)
        assert_no_exception(page)
        screenshot(page, "write-desktop-en")
        assert not errors, errors
    finally:
        context.close()


def test_write_on_a_projector_and_a_phone(browser: Browser, app_server: str) -> None:
    context = configure(browser.new_context(locale="zh-TW", **DESKTOP))
    try:
        page = context.new_page()
        open_page(page, app_server, "write", {"lang": "zh-TW", "present": "1"})
        wait_for_charts(page)
        expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
        page.keyboard.press("ArrowRight")  # presenter mode: → is ▶
        _wait_rows(page, 2)
        wait_for_charts(page)
        assert_no_exception(page)
        _screens(page, "write-presenter-zh-TW", 2, 1000)
    finally:
        context.close()
    phone = configure(browser.new_context(locale="zh-TW", **PHONE))
    try:
        page = phone.new_page()
        open_page(page, app_server, "write", {"lang": "zh-TW"})
        wait_for_charts(page)
        with expect_rerun(page):
            page.locator(".st-key-write_next button").tap()
        _wait_rows(page, 2)
        wait_for_charts(page)
        assert _fits(page) <= 1, "the page scrolls sideways on a phone"
        assert_no_exception(page)
        _screens(page, "write-phone-zh-TW")
    finally:
        phone.close()


def test_a_phone_answers_what_comes_next_and_the_page_writes_it(
    browser: Browser, app_server: str
) -> None:
    teacher_ctx = configure(browser.new_context(locale="en-US", **DESKTOP))
    phone_ctx = configure(browser.new_context(locale="en-US", **PHONE))
    try:
        teacher = teacher_ctx.new_page()
        open_page(teacher, app_server, "classroom", {"lang": "en"})
        with expect_rerun(teacher):
            teacher.get_by_role("button", name="Open a class").click()
        code_box = teacher.locator(".st-key-poll_code h1")
        expect(code_box).to_have_text(re.compile(r"^\s*[A-Z2-9]{4}\s*$"))
        code = code_box.inner_text().strip()
        with expect_rerun(teacher):
            teacher.get_by_role("link", name="Watch it write").click()
        wait_for_charts(teacher)
        with expect_rerun(teacher):
            teacher.locator(".st-key-write_push button").click()
        expect(teacher.get_by_text("Question 1: 0 of 0 students answered.")).to_be_visible()

        phone = phone_ctx.new_page()
        open_page(phone, app_server, "classroom", {"class": code, "lang": "en"})
        with expect_rerun(phone):
            phone.get_by_role("button", name="Join").click()
        expect(phone.get_by_text(f"The text so far: [BOS]{PROMPT}的")).to_be_visible()
        choice = phone.locator(".st-key-poll_answer_1_0 button").first
        expect(choice).to_be_visible()
        assert _fits(phone) <= 1
        _screens(phone, "write-phone-question", 1)
        choice.tap()
        expect(phone.get_by_text("Your answer:")).to_be_visible()

        expect(teacher.get_by_text("Question 1: 1 of 1 students answered.")).to_be_visible()
        with expect_rerun(teacher):
            teacher.locator(".st-key-write_reveal button").click()
        _wait_rows(teacher, 2)  # the model wrote the token the class was asked about
        expect(teacher.locator(".st-key-write_class .studio-chart")).to_be_visible()
        wait_for_charts(teacher)
        assert_no_exception(teacher)
        screenshot(teacher, "write-class-revealed")
        expect(phone.locator('[data-testid="stAlertContentSuccess"]').first).to_be_visible()
        _screens(phone, "write-phone-revealed", 1)
    finally:
        teacher_ctx.close()
        phone_ctx.close()
