""" "Where does this head look?" in class, in headless Chromium and Traditional Chinese: a
teacher's screen (1920 × 1080) and three phones (390 × 844, touch).

The teacher opens a class, opens the question's panel, keeps the everyday sentence and
its last character as the query and pushes it; each phone shows the sentence as
characters, every one a tap target of at least 44 × 44 CSS px (measured with
`getBoundingClientRect`), the query's the only highlighted one; three students tap. The
teacher's histogram counts three taps; the reveal draws the class beside the model's row,
and the row Plotly drew is the reader's own (`ReaderLM.forward` on `Vocab.encode`'s ids,
computed here), the query's jieba word outlined. The phone's question and the teacher's
reveal show no English beyond names (tests/browser/language.py).
Screenshots: tests/artifacts/where-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from attention_core.i18n import t

from .checks import (
    assert_no_exception,
    collect_dialogs,
    collect_page_errors,
    expected_errors,
    screenshot,
)
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .chromium import configure
from .language import foreign_text
from .waits import expect_rerun, open_page

pytestmark = pytest.mark.browser
ZH = "zh-TW"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, "
         "like Gecko) Chrome/120.0 Mobile Safari/537.36"}  # fmt: skip
DESKTOP = {"viewport": {"width": 1920, "height": 1080}}
TAP_PX = 44 - 0.5
_TAPS = """() => [...document.querySelectorAll('.st-key-where_taps button')].map((el) => {
  const r = el.getBoundingClientRect();
  return {text: el.innerText, width: r.width, height: r.height, right: r.right,
          kind: el.getAttribute('data-testid')}; })"""
_WHERE_CHART = """() => {
  const plot = [...document.querySelectorAll('.studio-chart.js-plotly-plot')]
    .find((gd) => ((gd.layout || {}).shapes || []).length === 1);
  if (!plot) return null;
  const bars = (plot._fullData || []).filter((t) => t.type === 'bar');
  return {bars: bars.map((t) => Array.from(t.y, Number)), shape: plot.layout.shapes[0],
          word: plot.querySelectorAll('.annotation-text')[0]?.textContent || ''}; }"""


_HIDE_ADDRESS_WARNING = """() => [...document.querySelectorAll('[data-testid="stAlert"]')]
  .filter((el) => el.innerText.includes('--server.address'))
  .forEach((el) => { el.style.display = 'none'; })"""


def _total(page: Page, n: int) -> None:
    page.wait_for_function(
        """(n) => [...document.querySelectorAll('.studio-chart.js-plotly-plot')].some((gd) => {
          const bar = (gd._fullData || []).find((t) => t.type === 'bar');
          return bar && Array.from(bar.y, Number).reduce((a, b) => a + b, 0) === n; })""",
        arg=n,
        timeout=WAIT_MS,
    )


@pytest.fixture
def phones(browser: Browser) -> Iterator[list[Page]]:
    contexts: list[BrowserContext] = [configure(browser.new_context(locale=ZH, **PHONE))
                                      for _ in range(3)]  # fmt: skip
    yield [ctx.new_page() for ctx in contexts]
    for ctx in contexts:
        ctx.close()


def _reader_row(text: str, layer: int, head: int, query: int) -> np.ndarray:
    import torch

    from attention_core.reader import load_shipped

    reader = load_shipped()
    ids = torch.tensor([reader.vocab.encode(text).ids])  # (1, n)
    with torch.inference_mode():
        _, weights = reader.model(ids)  # L x (1, H, n, n)
    return weights[layer][0, head, query].double().numpy()


def test_three_phones_tap_where_a_head_looks_and_the_teacher_reveals_it(
    browser: Browser, app_server: str, phones: list[Page]
) -> None:
    from attention_core.reader.card import shipped_shape

    context = configure(browser.new_context(locale=ZH, **DESKTOP))
    teacher = context.new_page()
    pages = [teacher, *phones]
    dialogs, errors = [collect_dialogs(p) for p in pages], [collect_page_errors(p) for p in pages]
    try:
        open_page(teacher, app_server, "classroom", {"lang": ZH})
        with expect_rerun(teacher):
            teacher.get_by_role("button", name=t("poll_open", ZH)).click()
        code_box = teacher.locator(".st-key-poll_code h1")
        expect(code_box).to_have_text(re.compile(r"^\s*[A-Z2-9]{4}\s*$"), timeout=WAIT_MS)
        code = code_box.inner_text().strip()
        with expect_rerun(teacher):
            teacher.get_by_text(t("where_toggle", ZH), exact=True).click()
        sentence = t("where_default_sentence", ZH)
        expect(teacher.locator(".st-key-where_text input")).to_have_value(sentence)
        push = teacher.get_by_role("button", name=t("where_push", ZH, code=code))
        with expect_rerun(teacher):
            push.click()
        layer, head, query = shipped_shape().default_layer, 0, len(sentence)
        asked = t("where_question", ZH, number=1, layer=layer, head=head, query=sentence[-1])
        expect(teacher.get_by_text(asked)).to_be_visible(timeout=WAIT_MS)

        taps = [query, query - 1, query]  # 課, 上, 課
        for number, (phone, tap) in enumerate(zip(phones, taps, strict=True)):
            open_page(phone, app_server, "classroom", {"class": code, "lang": ZH})
            with expect_rerun(phone):
                phone.get_by_role("button", name=t("poll_join", ZH), exact=True).click()
            targets = phone.locator(".st-key-where_taps button")
            expect(targets).to_have_count(len(sentence) + 1, timeout=WAIT_MS)
            boxes = phone.evaluate(_TAPS)
            small = [b for b in boxes if b["width"] < TAP_PX or b["height"] < TAP_PX]
            assert not small, small
            assert all(b["right"] <= 390 + 0.5 for b in boxes), boxes  # none off the screen
            marked = [b["text"] for b in boxes if b["kind"] == "stBaseButton-primary"]
            assert marked == [sentence[-1]], marked  # the query, and only it
            if number == 0:
                print("tap targets (CSS px):", sorted({(b["width"], b["height"]) for b in boxes}))
                screenshot(phone, "where-phone-question")
                assert not foreign_text(phone, ZH, "classroom", sentence)
            phone.locator(f".st-key-where_tap_1_{tap} button").tap()
            char = sentence[tap - 1]  # 上 occurs twice: named with its place
            named = (
                t("where_char_at", ZH, char=char, index=tap) if sentence.count(char) > 1 else char
            )
            mine = t("poll_your_answer", ZH, mine=named)
            expect(phone.get_by_text(mine)).to_be_visible(timeout=WAIT_MS)

        _total(teacher, 3)
        with expect_rerun(teacher):
            teacher.get_by_role("button", name=t("poll_reveal", ZH), exact=True).click()
        teacher.wait_for_function(f"({_WHERE_CHART})() !== null", timeout=WAIT_MS)
        drawn = teacher.evaluate(_WHERE_CHART)
        shares = np.zeros(len(sentence) + 1)
        shares[[query, query - 1]] = [2 / 3, 1 / 3]
        np.testing.assert_allclose(drawn["bars"][0], shares, atol=1e-9)
        row = _reader_row(sentence, layer, head, query)
        np.testing.assert_allclose(drawn["bars"][1], row, atol=1e-4)  # the reader's own row
        assert drawn["shape"]["x1"] == query + 0.5  # the word ends at the query, 上課
        assert drawn["word"] == t("where_reveal_word", ZH, word="上課")
        screenshot(teacher, "where-teacher-reveal")
        # every word in Chinese; the test server's own address warning aside (it names the
        # `streamlit run … --server.address` command: a class served on a LAN has none)
        teacher.evaluate(_HIDE_ADDRESS_WARNING)
        assert not foreign_text(teacher, ZH, "classroom", sentence)
        for phone in phones:
            expect(phone.locator('[data-testid="stAlertContentSuccess"], '
                                 '[data-testid="stAlertContentError"]').first).to_be_visible(
                timeout=WAIT_MS
            )  # fmt: skip
        screenshot(phones[1], "where-phone-revealed")
        for p in pages:  # a phone that chose wrong is told so in red, by design
            assert_no_exception(p, allow_errors=expected_errors("poll_revealed_wrong"))
        assert not any(dialogs) and not any(errors), (dialogs, errors)
    finally:
        context.close()
