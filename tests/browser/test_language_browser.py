"""The English interface is English throughout (the Chinese one is checked page by page in
the lecturer's walk, tests/browser/test_lecturer_walk.py, which opens every page after a
switch to 繁體中文): every page of the navigation is opened in headless Chromium, in one tab,
moving through the sidebar's navigation as a teacher would, and every visible string is
gathered (tests/browser/language.py says what, and what may be Chinese: the user's own
sentence 中和有一個永和路 and its tokens, the language radio's 繁體中文, quoted article
examples, the Chinese column of the glossary). On the way every page must have run and
painted: its title, its own element, its fewest charts, no exception or error box before
anyone acts on it (one tab instead of one fresh browser per page: the front end's start is
5-6 s of Chromium's CPU on two cores, a move between pages 2 s). Screenshots land in
tests/artifacts/lang-*.png.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attention_core.i18n import t

from .checks import assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS
from .language import STOP_HIDDEN, foreign_text, settle
from .waits import expect_rerun, open_page, wait_for_charts

pytestmark = pytest.mark.browser

PAGES = [
    "",
    "compare",
    "handmade",
    "steps",
    "scaling",
    "masks",
    "positions",
    "quiz",
    "train",
    "pretrained",
    "write",
    "lens",
    "explain",
    "atlas",
    "minimal_pairs",
    "attention_file",
    "classroom",
    "glossary",
]
# What only each page shows in the main area once it has run, and its fewest charts (the
# pages that show error boxes by design, e.g. an offline model's, are not listed)
PAINTS = {
    "": (".studio-chart", 1),
    "compare": (".studio-chart", 3),
    "handmade": ('[data-testid="stDataFrame"]', 1),
    "steps": (".katex", 2),
    "scaling": (".studio-chart", 4),
    "masks": (".studio-chart", 5),
    "positions": (".studio-chart", 5),
    # before a guess the quiz hides its matrix: the guess picker is the page's own widget
    "quiz": ('[data-testid="stRadio"], [data-testid="stSelectbox"]', 0),
    "train": ('[data-testid="stButton"] button[kind="primary"]', 1),
    "glossary": ('[data-testid="stTable"]', 0),
    "pretrained": (".studio-chart", 1),
    "write": (".studio-chart", 5),
    # the token rows and the case that disagrees (on the article's sentence no head of the
    # reader agrees significantly: the page says so instead of a third chart)
    "explain": (".studio-chart", 2),
    "attention_file": ('[data-testid="stFileUploader"]', 0),
}
# The user's own text is always allowed: the walk types a Chinese sentence, so a leak of
# Chinese cannot hide behind the sentence's own words.
SENTENCE = "中和有一個永和路"
SETTINGS = {"tokenizer": "auto", "attention": "multi", "embed_dim": 8, "num_heads": 2}


def _check_page(page: Page, path: str, shot: str) -> list[str]:
    settle(page)
    # a traceback would be English whatever the language (error boxes are other tests' job:
    # here the offline model and a wrong quiz guess show one on purpose)
    exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    assert not exceptions, f"exception shown on {page.url}:\n" + "\n".join(exceptions)
    screenshot(page, shot)
    return foreign_text(page, "en", path, SENTENCE)


# --- what a student does on a page, to show the text that only appears afterwards -----------
def _click(page: Page, selector: str, *, nth: int = 0) -> None:
    with expect_rerun(page):
        page.locator(selector).nth(nth).click()


def _type(page: Page, selector: str, text: str) -> None:
    box = page.locator(selector)
    box.fill(text)
    with expect_rerun(page):
        box.press("Enter")


def _train(page: Page) -> None:
    _type(page, ".st-key-train_steps input", "60")
    _click(page, ".st-key-train_run button")
    page.locator(".st-key-train_send button").first.wait_for(timeout=APP_TIMEOUT_MS)


def _guess(page: Page) -> None:
    _click(page, '.st-key-quiz_guess [role="radiogroup"] label')  # the first key
    _click(page, ".st-key-quiz_submit button")


ACTIONS: dict[str, list[tuple[str, Any]]] = {
    "compare": [
        ("configs", lambda p: _click(p, ".st-key-compare_mode button", nth=1)),
        ("pretrained", lambda p: _click(p, ".st-key-compare_source button", nth=1)),
    ],
    "steps": [("all", lambda p: _click(p, ".st-key-steps_all label"))],
    "positions": [("shuffled", lambda p: _click(p, ".st-key-positions_shuffle button"))],
    "quiz": [("revealed", _guess)],
    "train": [("trained", _train)],
    "pretrained": [
        ("layer", lambda p: _click(p, ".st-key-pretrained_view button", nth=1)),
        ("contrast", lambda p: _click(p, ".st-key-pretrained_view button", nth=2)),
        # a Chinese model the offline server cannot download: the error must be translated
        ("offline", lambda p: _type(p, ".st-key-pretrained_model input", "bert-base-chinese")),
    ],
}


def _navigation(page: Page) -> list[str]:
    """The url_path of every page the sidebar's navigation links to ("" the landing page)."""
    return page.locator('[data-testid="stSidebarNav"] a').evaluate_all(
        "(els) => els.map((a) => new URL(a.href).pathname.replace(/^\\/+|\\/+$/g, ''))"
    )


def _go_to(page: Page, lang: str, path: str) -> None:
    """The page at `path`, through the sidebar's navigation as a reader moves (no reload of
    the front end); on the training page the pace is then set to Fast, as a teacher who
    does not want to wait clicks it (the default spreads a run over ~10 s)."""
    link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]')
    with expect_rerun(page):
        link.click()
    page.wait_for_url(re.compile(f"/{path}(\\?|$)"), timeout=APP_TIMEOUT_MS)
    if path == "train":
        fast = page.locator(".st-key-train_pace button", has_text=t("train_pace_fast", lang))
        with expect_rerun(page):
            fast.click()
        page.wait_for_url(re.compile(r"[?&]pace=fast(&|$)"), timeout=APP_TIMEOUT_MS)


def _check_painted(page: Page, lang: str, path: str) -> None:
    """The page ran and drew itself (the checks a lecturer's click through every page
    needs): its own title, the sidebar, its own element in the main area, at least its
    fewest charts painted, and no exception or error box before anyone acts on it."""
    main = page.locator('[data-testid="stMain"]')
    expect(main.locator("h1").first).to_be_visible()  # the page's own title, not only app.py
    expect(page.locator('[data-testid="stSidebar"] textarea')).to_have_count(1)  # app.py ran
    if path == "atlas":  # with an index its map, without one "no index yet": both load
        expect(main.locator("h1").first).to_have_text(t("atlas_title", lang))
        assert_no_exception(page)
        return
    if path not in PAINTS:
        return  # its error boxes (an offline model) are part of what it shows; see ACTIONS
    selector, fewest_charts = PAINTS[path]
    expect(main.locator(selector).first).to_be_visible()
    assert wait_for_charts(page) >= fewest_charts, path
    assert_no_exception(page)


def test_every_page_speaks_english(page: Page, app_server: str) -> None:
    """Every page in English, opened in one tab and moved between through the navigation,
    each page's actions too."""
    lang = "en"
    open_page(page, app_server, "", {"text": SENTENCE, **SETTINGS})
    # Streamlit's English that no app translates: the ⋮ menu, the "Running… Stop" widget
    expect(page.locator('[data-testid="stMainMenu"]')).to_have_count(0)
    # the app's CSS comes in an st.html element, drawn once its script lazily loads
    try:
        page.wait_for_function(STOP_HIDDEN, timeout=APP_TIMEOUT_MS, polling=200)
    except PlaywrightTimeout:
        pytest.fail("Streamlit's English 'Stop' button would show")
    # the walk's list is the navigation's: a page missing from either is a failure
    assert sorted(_navigation(page)) == sorted(PAGES)
    found: list[str] = []
    for path in PAGES:
        if path:
            _go_to(page, lang, path)
        _check_painted(page, lang, path)
        name = f"lang-{lang}-{path or 'heatmaps'}"
        found += _check_page(page, path, name)
        for step, act in ACTIONS.get(path, []):
            act(page)
            found += _check_page(page, path, f"{name}-{step}")
    assert not found, f"{lang} interface shows the other language:\n" + "\n".join(found)
