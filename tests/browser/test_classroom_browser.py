"""The live class poll in real headless Chromium: a teacher's screen and three phones.

One lesson: the teacher opens a class; its QR code decodes (zxing-cpp) to the join link;
three students, each in a browser context of its own with a phone's viewport (390 × 844,
touch), open that link, give a name (one of them markup), join and tap a key. The
teacher's histogram follows (bar heights read from what Plotly drew), the markup name
stays text; the teacher switches to 繁體中文 mid-lesson, reveals (the phones show right or
wrong), pushes a second question, and a phone's answer reaches the histogram again.

Phones: the landing page, the quiz and the Step-by-step page (and the classroom, above) at
390 × 844,
with no sideways scrolling of the page, tap targets of at least 40 px and charts no wider
than the screen (the small "?" of a help tooltip and Plotly's toolbar aside).
Screenshots: tests/artifacts/classroom-*.png, phone-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .checks import (
    assert_no_exception,
    collect_dialogs,
    collect_page_errors,
    decode_qr,
    expected_errors,
    screenshot,
)
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .chromium import configure as _configure
from .server import ARTIFACTS_DIR
from .test_readable_heatmaps_browser import labels_drawn, overlaps
from .waits import expect_rerun, open_page, wait_for_charts
from .widgets import set_language

pytestmark = pytest.mark.browser
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SENTENCE = {"text": "the cat sat on the mat", "tokenizer": "word"}
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def phones(browser: Browser) -> Iterator[list[Page]]:
    contexts: list[BrowserContext] = []
    pages = []
    for _ in range(3):
        ctx = _configure(browser.new_context(locale="en-US", **PHONE))
        contexts.append(ctx)
        pages.append(ctx.new_page())
    yield pages
    for ctx in contexts:
        ctx.close()


def _bars(page: Page) -> list[int]:
    return page.evaluate(
        """() => {
          const plot = document.querySelector('.studio-chart.js-plotly-plot');
          const bar = plot && (plot._fullData || []).find((t) => t.type === 'bar');
          return bar ? Array.from(bar.y, Number) : [];
        }"""
    )


def _wait_total(page: Page, total: int) -> list[int]:
    page.wait_for_function(
        """(n) => {
          const plot = document.querySelector('.studio-chart.js-plotly-plot');
          const bar = plot && (plot._fullData || []).find((t) => t.type === 'bar');
          return bar && Array.from(bar.y, Number).reduce((a, b) => a + b, 0) === n;
        }""",
        arg=total,
        timeout=WAIT_MS,
    )
    return _bars(page)


def fits_the_phone(page: Page) -> dict:
    """Sideways overflow of the page and of its main area, the widest chart, and the
    smallest tap target (buttons, radio options) that is shown."""
    return page.evaluate(
        """() => {
          const root = document.documentElement, main = document.querySelector(
            '[data-testid="stMain"]');
          const shown = (el) => { const r = el.getBoundingClientRect();
                                  return r.width > 0 && r.height > 0; };
          // the app's own controls: buttons, segmented controls, pills, radio options
          // (not Plotly's toolbar, nor the small "?" of a help tooltip)
          const taps = [...main.querySelectorAll('[data-testid^="stBaseButton-"], '
              + 'button[data-variant], [data-testid="stRadio"] label')]
            .filter(shown).map((el) => el.getBoundingClientRect().height);
          // a chart wider than the phone scrolls in its own box: that box must fit
          const charts = [...document.querySelectorAll('.studio-chart')].filter(shown)
            .map((el) => el.parentElement.getBoundingClientRect().right);
          return {page: root.scrollWidth - window.innerWidth,
                  main: main ? main.scrollWidth - main.clientWidth : 0,
                  chartRight: Math.max(0, ...charts), width: window.innerWidth,
                  smallestTap: Math.min(1000, ...taps)};
        }"""
    )


# What each page draws of its own once it has run (the quiz hides its matrix until a guess:
# its guess picker), and when a phone's layout can be measured: the app's phone CSS
# (ui/phone.py, drawn lazily in an st.html element) is in effect, no skeleton stands in for
# a widget still loading, and the web fonts the labels are measured in have loaded.
OWN_WIDGET = {
    "": ".studio-chart .main-svg",
    "quiz": '[data-testid="stRadio"], [data-testid="stSelectbox"]',
    "steps": ".studio-chart .main-svg",
}
_LAID_OUT_FOR_A_PHONE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  const probe = document.createElement('div');
  probe.className = 'st-key-phone_controls';  // shown as flex only by PHONE_CSS on a phone
  app.appendChild(probe);
  const styled = getComputedStyle(probe).display === 'flex';
  probe.remove();
  return styled && document.fonts.status === 'loaded';
}"""


def _assert_fits(page: Page, what: str) -> None:
    fit = fits_the_phone(page)
    assert fit["page"] <= 1 and fit["main"] <= 1, (what, fit)
    assert fit["chartRight"] <= fit["width"] + 1, (what, fit)
    assert fit["smallestTap"] >= 40, (what, fit)


def test_a_class_answers_on_phones_and_the_teacher_sees_it_live(
    page: Page, app_server: str, phones: list[Page]
) -> None:
    teacher = page
    dialogs = [collect_dialogs(p) for p in [teacher, *phones]]
    errors = [collect_page_errors(p) for p in [teacher, *phones]]
    open_page(teacher, app_server, "classroom", SENTENCE)
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="Open a class").click()
    code_box = teacher.locator(".st-key-poll_code h1")
    expect(code_box).to_have_text(re.compile(r"^\s*[A-Z2-9]{4}\s*$"), timeout=WAIT_MS)
    code = code_box.inner_text().strip()
    link = decode_qr(teacher.locator('[data-testid="stImage"] img').first)
    assert link == f"{app_server}/classroom?class={code}&lang=en"
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="Push a question").click()
    expect(teacher.get_by_text("Question 1:")).to_be_visible(timeout=WAIT_MS)

    names = ["Ann", HOSTILE, "陳小明"]
    taps = [0, 2, 2]
    for phone, name, tap in zip(phones, names, taps, strict=True):
        open_page(phone, link)
        phone.get_by_label("Your name (optional)", exact=True).fill(name)
        with expect_rerun(phone):
            phone.get_by_role("button", name="Join").click()
        button = phone.locator(f".st-key-poll_answer_1_{tap} button").first
        expect(button).to_be_visible(timeout=WAIT_MS)
        _assert_fits(phone, "the question on a phone")
        button.tap()
        expect(phone.get_by_text("Your answer:")).to_be_visible(timeout=WAIT_MS)
    phones[1].screenshot(path=str(ARTIFACTS_DIR / "classroom-phone-answered.png"))

    bars = _wait_total(teacher, 3)
    assert bars[0] == 1 and bars[2] == 2 and sum(bars) == 3
    expect(teacher.get_by_text(HOSTILE, exact=False)).to_be_visible()  # as text
    assert teacher.locator('img[src="x"]').count() == 0
    screenshot(teacher, "classroom-teacher-histogram")

    # mid-lesson: another language, the reveal, a second question
    set_language(teacher, "zh-TW")
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="揭曉").click()
    expect(teacher.get_by_text("答案：")).to_be_visible(timeout=WAIT_MS)
    for phone in phones:
        expect(phone.locator('[data-testid="stAlertContentSuccess"], '
                             '[data-testid="stAlertContentError"]').first).to_be_visible(
            timeout=WAIT_MS
        )  # fmt: skip
    phones[0].screenshot(path=str(ARTIFACTS_DIR / "classroom-phone-revealed.png"))
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="推送題目").click()
    expect(teacher.get_by_text("第 2 題：")).to_be_visible(timeout=WAIT_MS)
    second = phones[0].locator(".st-key-poll_answer_2_1 button").first
    expect(second).to_be_visible(timeout=WAIT_MS)
    second.tap()
    assert _wait_total(teacher, 1)[1] == 1
    screenshot(teacher, "classroom-teacher-zh")
    for p in [teacher, *phones]:  # a phone that chose wrong is told so in red, by design
        assert_no_exception(p, allow_errors=expected_errors("poll_revealed_wrong"))
    assert not any(dialogs), dialogs  # alert(1) never ran
    assert not any(errors), errors


def test_the_landing_quiz_and_steps_pages_fit_a_phone(browser: Browser, app_server: str) -> None:
    ctx = _configure(browser.new_context(locale="en-US", **PHONE))
    try:
        phone = ctx.new_page()
        for path in ("", "quiz", "steps"):
            open_page(phone, app_server, path, SENTENCE)
            assert_no_exception(phone)
            expect(phone.locator(OWN_WIDGET[path]).first).to_be_visible(timeout=WAIT_MS)
            wait_for_charts(phone)  # every chart drawn and painted, holding still
            phone.wait_for_function(_LAID_OUT_FOR_A_PHONE, timeout=WAIT_MS)
            _assert_fits(phone, path or "landing")
            if path == "":  # the heads keep the width their labels were laid out for
                boxes = labels_drawn(phone)
                assert boxes and not overlaps(boxes), overlaps(boxes)
            screenshot(phone, f"phone-{path or 'landing'}")
            assert parse_qs(urlsplit(phone.url).query)["text"] == [SENTENCE["text"]]
    finally:
        ctx.close()
