"""The class poll's security and a phone's landing, in real headless Chromium, several
browser contexts at once ("the class poll: secure and durable").

- A phone (390 × 844) sees no "open a class" section, and a wrong code's message appears
  beside the code field, not at the bottom of the page.
- A 41-character name pasted into the name field is cut to 40 (before: the field stayed
  empty and the student joined nameless), and the phone says so.
- A student who opens the teacher's page URL with the code (or a guessed key) cannot push
  or close; a classmate's copied link answers nothing while its owner is in class.
Screenshots: tests/artifacts/classroom-phone-landing.png, classroom-copied-link.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .checks import assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .chromium import configure as _configure
from .waits import expect_rerun, open_page

pytestmark = pytest.mark.browser
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SENTENCE = {"text": "the cat sat on the mat", "tokenizer": "word"}
CONTROLS = ("Push a question", "Reveal", "Reset", "Close the class")


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[Page]]:
    """Three phones, each a browser of its own (own cookies, own session)."""
    made: list[BrowserContext] = []
    for _ in range(3):
        made.append(_configure(browser.new_context(locale="en-US", **PHONE)))
    yield [ctx.new_page() for ctx in made]
    for ctx in made:
        ctx.close()


def _open_class(teacher: Page, app_server: str) -> str:
    open_page(teacher, app_server, "classroom", SENTENCE)
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="Open a class").click()
    code_box = teacher.locator(".st-key-poll_code h1")
    expect(code_box).to_have_text(re.compile(r"^\s*[A-Z2-9]{4}\s*$"), timeout=WAIT_MS)
    return code_box.inner_text().strip()


def test_a_phone_sees_no_open_a_class_and_a_wrong_code_message_by_the_field(
    contexts: list[Page], app_server: str
) -> None:
    phone = contexts[0]
    open_page(phone, app_server, "classroom")
    expect(phone.get_by_role("button", name="Join")).to_be_visible(timeout=WAIT_MS)
    # hidden by the page's CSS, which arrives in an st.html element drawn once its script loads
    expect(phone.get_by_role("button", name="Open a class")).to_be_hidden(timeout=WAIT_MS)
    assert not phone.get_by_text("Teach a class", exact=False).first.is_visible()
    code_field = phone.get_by_label("Class code", exact=True)
    code_field.fill("ZZ")
    with expect_rerun(phone):
        phone.get_by_role("button", name="Join").click()
    message = phone.locator('[data-testid="stAlert"]').filter(has_text="A class code is 4")
    expect(message).to_be_visible(timeout=WAIT_MS)
    field_box, message_box = code_field.bounding_box(), message.bounding_box()
    assert field_box and message_box
    gap = message_box["y"] - (field_box["y"] + field_box["height"])
    assert 0 <= gap <= 300, (field_box, message_box)  # below the field, within a thumb
    message.scroll_into_view_if_needed()
    assert message_box["y"] < 844 * 1.2, message_box  # not pages below, past other sections
    screenshot(phone, "classroom-phone-landing")
    assert_no_exception(phone)


def test_a_pasted_long_name_is_cut_to_forty_and_said(
    page: Page, contexts: list[Page], app_server: str
) -> None:
    teacher = page
    code = _open_class(teacher, app_server)
    phone = contexts[0]
    open_page(phone, app_server, "classroom", {"class": code})
    name = "Bartholomew-Alexander Montgomery-Smithson"  # 41 characters
    assert len(name) == 41
    phone.get_by_label("Your name (optional)", exact=True).fill(name)  # what a paste does
    with expect_rerun(phone):
        phone.get_by_role("button", name="Join").click()
    expect(phone.get_by_text("Your name was cut to its first 40 characters")).to_be_visible(
        timeout=WAIT_MS
    )
    expect(teacher.get_by_text(name[:40], exact=True)).to_be_visible(timeout=WAIT_MS)


def test_the_code_alone_controls_nothing_and_a_copied_link_answers_nothing(
    page: Page, contexts: list[Page], app_server: str
) -> None:
    teacher = page
    code = _open_class(teacher, app_server)
    key = parse_qs(urlsplit(teacher.url).query)["teacher"][0]
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="Push a question").click()
    expect(teacher.get_by_text("Question 1:")).to_be_visible(timeout=WAIT_MS)
    intruder, owner, copier = contexts
    for params in ({"class": code}, {"class": code, "teacher": key[:-3] + "abc"}):
        open_page(intruder, app_server, "classroom", params)  # the teacher's page URL
        expect(intruder.get_by_role("button", name="Join")).to_be_visible(timeout=WAIT_MS)
        for control in CONTROLS:
            assert intruder.get_by_role("button", name=control).count() == 0, control
    expect(intruder.get_by_text("This teacher's link is not valid")).to_be_visible()

    open_page(owner, app_server, "classroom", {"class": code})
    with expect_rerun(owner):
        owner.get_by_role("button", name="Join").click()
    expect(owner.locator(".st-key-poll_answer_1_0 button").first).to_be_visible(timeout=WAIT_MS)
    open_page(copier, owner.url)  # the owner's link, copied to another phone
    expect(copier.get_by_text("This link is open on another phone")).to_be_visible(timeout=WAIT_MS)
    assert copier.locator(".st-key-poll_answer_1_0 button").count() == 0
    screenshot(copier, "classroom-copied-link")
    owner.locator(".st-key-poll_answer_1_2 button").first.tap()
    expect(owner.get_by_text("Your answer:")).to_be_visible(timeout=WAIT_MS)
    expect(teacher.get_by_text("1 of 1 students answered", exact=False)).to_be_visible(
        timeout=WAIT_MS
    )
    for p in (teacher, *contexts):
        assert_no_exception(p)
