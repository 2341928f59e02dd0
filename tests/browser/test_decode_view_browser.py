"""decode_view's saved HTML in Chromium with the network off: the first step draws at open,
one line of cells per layer × head over the positions its query met, and the slider
redraws another step with its own token, rows and alternatives; no page error, no request.

Skips locally without Chromium or playwright; fails under CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from attention_core.notebook import decode_view

from .checks import collect_page_errors

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser


def test_the_slider_draws_each_step_offline(browser: Browser, tmp_path: Path) -> None:
    view = decode_view("reader", "今天天氣很好，我們", steps=4, force={2: "貓"})
    path = view.save_html(tmp_path / "decode.html")
    L, H, _ = view.attention[0].shape  # (L, H, t)
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    asked: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith("file:"):
            request_route.continue_()
        else:
            asked.append(url)
            request_route.abort()

    context.route("**/*", route)
    try:
        page = context.new_page()
        errors = collect_page_errors(page)
        page.goto(path.as_uri())
        grid = page.locator(".studio-dec .grid tr")
        assert grid.count() == L * H
        t0 = view.attention[0].shape[-1]
        assert grid.first.locator("td").count() == t0
        assert page.locator(".studio-dec h4").inner_text().endswith(view.result.steps[0].token)
        page.locator(".studio-dec input").fill("2")
        assert "貓" in page.locator(".studio-dec h4").inner_text()
        assert grid.first.locator("td").count() == t0 + 2
        first = page.locator(".studio-dec ol li").first.inner_text()
        assert first.startswith(view.result.steps[2].top_tokens[0])
        assert page.locator(".studio-dec .strip .new").last.inner_text() == "貓"
        assert not errors and not asked
    finally:
        context.close()
