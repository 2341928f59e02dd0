"""The "Train attention live" page in real headless Chromium.

What AppTest cannot show: the live loop drawing into the page while it trains, the Stop
button cutting a running script off (Streamlit interrupts the run; the next one must
finish the training as stopped), Plotly painting the trained heads, and st.switch_page to
the Compare page in a real server. Screenshot: tests/artifacts/train.png.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from .conftest import (
    assert_no_exception,
    expect_rerun,
    open_page,
    screenshot,
    wait_for_heatmaps,
)

pytestmark = pytest.mark.browser
WAIT_MS = 90_000  # a cold server's first run imports torch
HEADS_CHART = 2  # charts on the page: the target pattern, the curves, the heads


def _main(page: Page):
    return page.locator('[data-testid="stMain"]')


def _open_train(page: Page, base_url: str, params: dict | None = None) -> None:
    """Open the page and wait until its target pattern is painted: open_page can return
    after a first, empty run of a fresh session, and typing into widgets that are still
    being drawn can send them odd values."""
    open_page(page, base_url, "train", params)
    wait_for_heatmaps(page, 1, chart=0)
    assert_no_exception(page)


def test_default_reverse_trains_to_a_sharp_anti_diagonal(page, app_server):
    _open_train(page, app_server)
    main = _main(page)
    expect(main.get_by_role("heading", name="Train attention live")).to_be_visible()
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 300 steps")).to_be_visible(timeout=WAIT_MS)
    assert_no_exception(page)
    traces = wait_for_heatmaps(page, 2, chart=HEADS_CHART)
    assert [t["z_shape"] for t in traces] == [(6, 6), (6, 6)]
    # a head reads the mirror position in every row, as painted in the browser
    best = [np.argmax(np.array(t["z"]), axis=1).tolist() for t in traces]
    assert [5, 4, 3, 2, 1, 0] in best
    accuracy = main.locator('[data-testid="stMetricValue"]').first.inner_text()
    assert float(accuracy.rstrip("%")) >= 95.0
    expect(main.get_by_role("slider")).to_have_count(3)  # lr, num_heads, replay
    screenshot(page, "train")


def test_stop_ends_a_long_training_and_keeps_the_steps_so_far(page, app_server):
    _open_train(page, app_server)
    main = _main(page)
    steps = main.get_by_role("spinbutton", name="Training steps")
    with expect_rerun(page):
        steps.fill("5000")
        steps.press("Enter")
    main.get_by_role("button", name="▶ Train").click()
    # the live view: progress and the heads are drawn while the script still runs
    expect(main.get_by_text(re.compile(r"Step [1-9]\d* of 5000"))).to_be_visible(timeout=WAIT_MS)
    expect(main.locator(".studio-chart")).to_have_count(3)
    main.get_by_role("button", name="■ Stop").click()
    stopped = main.get_by_text(re.compile(r"Stopped at step \d+ of 5000"))
    expect(stopped).to_be_visible(timeout=WAIT_MS)
    step = int(re.search(r"step (\d+)", stopped.inner_text()).group(1))
    assert 0 < step < 5000
    assert_no_exception(page)
    expect(main.get_by_role("button", name="▶ Train")).to_be_enabled()
    expect(main.get_by_role("button", name="■ Stop")).to_be_disabled()
    wait_for_heatmaps(page, 2, chart=HEADS_CHART)
    screenshot(page, "train-stopped")


def test_send_to_compare_opens_compare_with_the_settings_kept(page, app_server):
    _open_train(page, app_server, {"text": "中和有一個永和路", "seed": 5})
    main = _main(page)
    steps = main.get_by_role("spinbutton", name="Training steps")
    with expect_rerun(page):
        steps.fill("20")
        steps.press("Enter")
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 20 steps")).to_be_visible(timeout=WAIT_MS)
    main.get_by_role("button", name="Compare these trained heads →").click()
    expect(main.get_by_role("heading", name="Compare attention heads")).to_be_visible(
        timeout=WAIT_MS
    )
    page.wait_for_url(re.compile(r"/compare\?"), timeout=WAIT_MS)
    assert_no_exception(page)
    query = parse_qs(urlsplit(page.url).query)
    assert query["text"] == ["中和有一個永和路"] and query["seed"] == ["5"]
