"""One device is one voter in a class, in real headless Chromium (ui/classroom.py's
device cookie, attention_core/poll/guard.py's `device_student`).

A phone joins as 甲 and answers; it leaves the class and joins again as 甲2, then opens a
second tab and joins as 甲3: the same seat every time, so the teacher still counts one
student and one answer. The join page says so. Screenshot: tests/artifacts/one-device-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .checks import assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .chromium import configure as _configure
from .waits import expect_rerun, open_page

pytestmark = pytest.mark.browser
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SENTENCE = {"text": "the cat sat on the mat", "tokenizer": "word", "lang": "zh-TW"}


@pytest.fixture
def phone(browser: Browser) -> Iterator[BrowserContext]:
    """One phone: one browser profile (its cookies), in which tabs may be opened."""
    ctx = _configure(browser.new_context(locale="zh-TW", **PHONE))
    yield ctx
    ctx.close()


def _join(tab: Page, name: str) -> None:
    tab.get_by_label("你的名字（可不填）", exact=True).fill(name)
    with expect_rerun(tab):
        tab.get_by_role("button", name="加入", exact=True).click()


def test_leaving_and_rejoining_or_a_second_tab_does_not_vote_twice(
    page: Page, phone: BrowserContext, app_server: str
) -> None:
    teacher = page
    open_page(teacher, app_server, "classroom", SENTENCE)
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="開一堂課").click()
    code_box = teacher.locator(".st-key-poll_code h1")
    expect(code_box).to_have_text(re.compile(r"^\s*[A-Z2-9]{4}\s*$"), timeout=WAIT_MS)
    code = code_box.inner_text().strip()
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="推送題目").click()

    first = phone.new_page()
    open_page(first, app_server, "classroom", {"class": code, "lang": "zh-TW"})
    expect(first.get_by_text("一支手機（一個瀏覽器）在一個課堂裡只算一位作答者")).to_be_visible(
        timeout=WAIT_MS
    )
    _join(first, "甲")
    first.locator(".st-key-poll_answer_1_0 button").first.tap()
    expect(first.get_by_text("你的答案", exact=False)).to_be_visible(timeout=WAIT_MS)
    expect(teacher.get_by_text("1 位學生中有 1 位已作答", exact=False)).to_be_visible(
        timeout=WAIT_MS
    )

    with expect_rerun(first):  # leave, and join again under another name
        first.get_by_role("button", name="離開課堂").click()
    _join(first, "甲2")
    expect(first.get_by_text("你的答案", exact=False)).to_be_visible(timeout=WAIT_MS)
    answers = first.locator(".st-key-poll_answer_1_1 button")
    if answers.count():
        answers.first.tap()  # a second tap changes this seat's answer, it adds none

    second = phone.new_page()  # a second tab of the same browser
    open_page(second, app_server, "classroom", {"class": code, "lang": "zh-TW"})
    _join(second, "甲3")
    expect(second.get_by_text("這個連結正在這堂課的另一支手機上使用", exact=False)).to_be_visible(
        timeout=WAIT_MS
    )
    assert second.locator(".st-key-poll_answer_1_2 button").count() == 0
    screenshot(second, "one-device-second-tab")

    expect(teacher.get_by_text("1 位學生中有 1 位已作答", exact=False)).to_be_visible(
        timeout=WAIT_MS
    )
    for tab in (teacher, first, second):
        assert_no_exception(tab)
