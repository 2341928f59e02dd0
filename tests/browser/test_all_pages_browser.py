"""A walk through every page of the navigation in real Chromium, as a lecturer would click
through it: each page paints, shows no exception box, and leaves a screenshot."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from .conftest import assert_no_exception, open_page, screenshot

# url path → something only that page shows once it has run
PAGES = {
    "": '[data-testid="stPlotlyChart"]',
    "compare": '[data-testid="stPlotlyChart"]',
    "handmade": '[data-testid="stDataFrame"], [data-testid="stDataEditor"]',
    "steps": '[data-testid="stPlotlyChart"]',
    "scaling": '[data-testid="stPlotlyChart"]',
    "masks": '[data-testid="stPlotlyChart"]',
    "positions": '[data-testid="stPlotlyChart"]',
    "quiz": '[data-testid="stRadio"], [data-testid="stSelectbox"]',
    "train": '[data-testid="stButton"]',
    "pretrained": '[data-testid="stPlotlyChart"]',
}


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_paints_without_an_exception(page: Page, app_server: str, path: str) -> None:
    open_page(page, app_server, path, {"text": "中和有一個永和路", "num_heads": 2})
    page.locator(PAGES[path]).first.wait_for(state="visible", timeout=120_000)
    assert page.locator('[data-testid="stSidebar"] textarea').count() == 1  # app.py ran
    assert_no_exception(page)
    screenshot(page, f"page-{path or 'heatmaps'}")
