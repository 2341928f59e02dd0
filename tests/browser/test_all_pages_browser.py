"""A walk through every page of the navigation in real Chromium, as a lecturer would click
through it: each page runs, paints every chart it draws, shows no exception or error box,
and leaves a screenshot (tests/artifacts/page-*.png).

Every locator is scoped to the main area: the sidebar has radios and selectboxes of its
own, so an unscoped "a radio is visible" would pass on a page that drew nothing. A page
counts as shown when its charts are painted (Plotly's heatmap images), not merely when a
chart container exists. Widgets on each page are driven in test_pages_widgets_browser.py.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .checks import assert_no_exception, screenshot
from .waits import open_page, wait_for_charts

MAIN = '[data-testid="stMain"]'

# url path → (what only that page shows in the main area once it has run, its fewest charts)
PAGES = {
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
}


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_paints_without_an_exception(page: Page, app_server: str, path: str) -> None:
    open_page(page, app_server, path, {"text": "中和有一個永和路", "num_heads": 2})
    selector, fewest_charts = PAGES[path]
    main = page.locator(MAIN)
    expect(main.locator(selector).first).to_be_visible(timeout=120_000)
    expect(main.locator("h1").first).to_be_visible()  # the page's own title, not only app.py
    expect(page.locator('[data-testid="stSidebar"] textarea')).to_have_count(1)  # app.py ran
    assert wait_for_charts(page, timeout_ms=120_000) >= fewest_charts
    assert_no_exception(page)
    screenshot(page, f"page-{path or 'heatmaps'}")
