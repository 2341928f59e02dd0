"""The attention-file walk in Chromium, as an engineer with a phone and then a projector:
download the Pretrained page's attention, open it on the "Open an attention file" page
through the navigation, see every layer × head painted with the model's own numbers, switch
to 繁體中文 and keep working (one layer, compare), then a broken file refused in Chinese."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from attention_core.attention_file import read_attention

from .checks import alerts, assert_no_exception, collect_page_errors, error_boxes, screenshot
from .chromium import APP_TIMEOUT_MS
from .waits import expect_rerun, open_page, wait_for_heatmaps
from .widgets import main_area as _main

pytestmark = pytest.mark.browser

ARTICLE = "中和有一個永和路"


def _go_to(page: Page, path: str) -> None:
    """Through the sidebar's navigation, as a reader moves (the session is kept)."""
    if page.viewport_size and page.viewport_size["width"] < 640:  # a phone: open the sidebar
        page.get_by_test_id("stExpandSidebarButton").click()
    with expect_rerun(page):
        page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
    page.wait_for_url(re.compile(f"/{path}(\\?|$)"), timeout=APP_TIMEOUT_MS)


def test_a_downloaded_file_opens_on_every_view_in_both_languages(
    app_server: str, page: Page, tmp_path: Path
) -> None:
    errors = collect_page_errors(page)
    page.set_viewport_size({"width": 390, "height": 844})
    open_page(page, app_server, "pretrained", params={"text": ARTICLE})
    wait_for_heatmaps(page, 1)
    with page.expect_download() as download:
        _main(page).get_by_role("button", name="Download attention (.npz)").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    read = read_attention(saved.read_bytes(), saved.name)
    n = len(read.tokens)

    _go_to(page, "attention_file")
    expect(_main(page).get_by_text("No file is open yet")).to_be_visible()
    with expect_rerun(page):
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(saved)
    (grid,) = wait_for_heatmaps(page, 1)  # 6 × 12 panels in one tiled heatmap
    assert grid["z_shape"] == (6 * (n + 1) - 1, 12 * (n + 1) - 1)
    for i in (0, n - 1):
        assert grid["z"][i][:n] == pytest.approx(read.weights[0, 0, i].tolist(), abs=1e-6)
    screenshot(page, "attention-file-phone")

    page.set_viewport_size({"width": 1920, "height": 1080})  # the projector
    sidebar = page.locator('[data-testid="stSidebar"]')
    with expect_rerun(page):
        sidebar.get_by_text("繁體中文", exact=True).click()
    expect(_main(page).get_by_role("heading", name="開啟注意力檔案")).to_be_visible()
    expect(_main(page).get_by_text(f"{saved.name} · 6 層 × 12 個頭")).to_be_visible()
    with expect_rerun(page):
        _main(page).get_by_role("radio", name="單一層").click()
    traces = wait_for_heatmaps(page, 12)
    assert traces[0]["x"][0] == "0:[CLS]" and traces[0]["z_shape"] == (n, n)
    screenshot(page, "attention-file-projector-zh")
    with expect_rerun(page):
        _main(page).get_by_role("radio", name="注意力展開").click()
    assert len(wait_for_heatmaps(page, 6)) == 6  # after each of the 6 layers

    with expect_rerun(page):
        _main(page).get_by_role("button", name="比較這些頭").click()
    page.wait_for_url(re.compile("/compare(\\?|$)"), timeout=APP_TIMEOUT_MS)
    heads = wait_for_heatmaps(page, 4, chart=0)
    assert heads[1]["z"][0] == pytest.approx(read.weights[0, 1, 0].tolist(), abs=1e-6)
    screenshot(page, "attention-file-compare-zh")

    _go_to(page, "attention_file")  # the file is still open, on the view left; a broken
    assert len(wait_for_heatmaps(page, 6)) == 6  # file is then refused
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"<script>alert(1)</script>")
    with expect_rerun(page):
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(broken)
    assert any("無法顯示這個檔案（broken.npz）" in box for box in error_boxes(page))
    assert any(saved.name in a for a in [*alerts(page), _main(page).inner_text()])
    assert_no_exception(page, allow_errors=["無法顯示這個檔案"])
    screenshot(page, "attention-file-refused-zh")
    assert not errors, errors
