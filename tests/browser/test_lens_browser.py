"""The Attention lens and Minimal pairs pages in real headless Chromium, walked as a user does.

What AppTest cannot see: the head view's lines drawn on hover and click, one colour per
head, a head switched off by its square, the head view saved as SVG; a click on a cell of
the ablation grid knocking that head out (a Plotly click sent back to Python); every chart's
SVG download button, in English and after switching to 中文 mid-session; the neuron view,
sinks and minimal pairs painted. Screenshots: tests/artifacts/lens-*.png.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page

from .checks import assert_no_exception, collect_page_errors, screenshot
from .waits import expect_rerun, open_page, plotly_traces, wait_for_charts, wait_for_heatmaps
from .widgets import main_area, set_language

pytestmark = pytest.mark.browser

SENTENCE = "The animal didn't cross the street because it was too tired."
TOKENS = 16  # [CLS] the animal didn ' t cross the street because it was too tired . [SEP]


def _view(page: Page, name: str) -> None:
    with expect_rerun(page):
        main_area(page).get_by_role("radio", name=name, exact=True).click()


def _lines(page: Page) -> list[dict[str, float]]:
    return page.evaluate(
        """() => [...document.querySelectorAll('.studio-headview line')].map((l) => ({
            head: +l.dataset.head, query: +l.dataset.query, key: +l.dataset.key,
            weight: +l.dataset.weight, color: l.getAttribute('stroke')}))"""
    )


def _click_cell(page: Page, chart: int, row: int, col: int, rows: int, cols: int) -> None:
    """Click the centre of cell (row, col) of a heatmap drawn with row 0 at the top."""
    drag = page.locator(".studio-chart").nth(chart).locator(".nsewdrag").first
    box = drag.bounding_box()
    assert box is not None
    x = box["x"] + (col + 0.5) * box["width"] / cols
    y = box["y"] + (row + 0.5) * box["height"] / rows
    page.mouse.click(x, y)


def _svg_download(page: Page, chart: int, title: str) -> tuple[str, str]:
    """Press chart `chart`'s SVG button (tooltip `title`); return (file name, content)."""
    plot = page.locator(".studio-chart").nth(chart)
    plot.hover()
    button = plot.locator(f'.modebar-btn[data-title="{title}"]')
    with page.expect_download() as info:
        button.click(force=True)
    download = info.value
    return download.suggested_filename, open(download.path(), encoding="utf-8").read()


def test_lens_walk_head_view_ablation_clicks_svg_and_language(app_server: str, page: Page) -> None:
    errors = collect_page_errors(page)
    open_page(page, app_server, "lens", params={"text": SENTENCE})
    (grid,) = wait_for_heatmaps(page, 1)  # maps: all layers × heads as one tiled heatmap
    assert grid["z_shape"] == (6 * (TOKENS + 1) - 1, 12 * (TOKENS + 1) - 1)
    name, svg = _svg_download(page, 0, "Download plot as SVG (vector)")
    assert name == "lens-raw.svg" and svg.lstrip().startswith("<svg")

    # --- head view: hover a query, lines to its keys, one colour per head ----------------
    _view(page, "Head view")
    left = page.locator(".studio-headview text.hv-q")
    left.first.wait_for()
    assert left.count() == TOKENS
    it = left.nth(10)
    assert it.text_content() == "it"
    start = time.monotonic()
    it.hover()
    page.wait_for_selector(".studio-headview line")
    print(f"\nhead view: hover → lines drawn {time.monotonic() - start:.2f} s")
    lines = _lines(page)
    assert {ln["query"] for ln in lines} == {10}
    assert len({ln["color"] for ln in lines}) == 12  # every head draws, each its own colour
    for head in range(12):  # lines below 0.005 are not drawn: the rest is nearly the row
        assert 0.9 < sum(ln["weight"] for ln in lines if ln["head"] == head) <= 1.0001
    it.click()  # pin it: the lines stay when the mouse leaves
    page.mouse.move(5, 5)
    assert {ln["query"] for ln in _lines(page)} == {10}
    page.locator('.studio-headview .hv-head[data-head="0"]').click()  # head 0 off
    assert 0 not in {ln["head"] for ln in _lines(page)}
    page.locator(".studio-headview text.hv-k").nth(2).hover()  # who attends to "animal"
    assert {ln["key"] for ln in _lines(page)} == {2}
    with page.expect_download() as info:
        page.locator(".studio-headview .hv-save").click()
    assert info.value.suggested_filename == "head-view-layer0.svg"
    assert "<line" in open(info.value.path(), encoding="utf-8").read()
    screenshot(page, "lens-head-view")

    # --- neuron view and sinks paint ------------------------------------------------------
    _view(page, "Neuron view")
    (neuron,) = wait_for_heatmaps(page, 1)
    assert neuron["z_shape"] == (3, 32)  # q, k, q⊙k over the head's 32 dimensions
    _view(page, "Sinks")
    (sink,) = wait_for_heatmaps(page, 1)
    assert sink["z_shape"] == (6, 12)

    # --- ablation: click a head in the grid to knock it out ------------------------------
    _view(page, "Ablation")
    wait_for_heatmaps(page, 1)
    start = time.monotonic()
    with expect_rerun(page):
        _click_cell(page, 0, row=2, col=5, rows=6, cols=12)
    wait_for_charts(page)
    print(f"ablation: click a head → knocked out and redrawn {time.monotonic() - start:.2f} s")
    marks = [t for t in plotly_traces(page, 0) if t["type"] == "scatter"]
    assert marks and marks[0]["x"] == ["head 5"] and marks[0]["y"] == ["layer 2"]
    assert "layer 2, head 5" in main_area(page).inner_text()
    screenshot(page, "lens-ablation")

    # --- 中文 mid-session: the toolbar speaks it, clicks still knock heads out -------------
    set_language(page, "zh-TW")
    wait_for_charts(page)
    with expect_rerun(page):
        _click_cell(page, 0, row=5, col=0, rows=6, cols=12)
    wait_for_charts(page)
    marks = [t for t in plotly_traces(page, 0) if t["type"] == "scatter"]
    assert sorted(marks[0]["y"]) == ["第 2 層", "第 5 層"]
    name, _ = _svg_download(page, 0, "下載圖表為 SVG（向量圖）")
    assert name == "lens-ablation.svg"
    screenshot(page, "lens-ablation-zh")
    assert_no_exception(page)
    assert not errors, errors


def test_minimal_pairs_paint_ranking_rows_and_difference(app_server: str, page: Page) -> None:
    errors = collect_page_errors(page)
    open_page(page, app_server, "minimal_pairs", params={"text": SENTENCE})
    assert wait_for_charts(page) == 3
    ranking, top = wait_for_heatmaps(page, 1, chart=0)  # the heads, and ✕ on the top one
    assert ranking["z_shape"] == (6, 12) and top["text"] == ["✕"]
    wait_for_heatmaps(page, 1, chart=2)  # the top head's difference map B − A
    screenshot(page, "lens-minimal-pairs")
    assert_no_exception(page)
    assert not errors, errors


def test_an_encoder_decoder_typed_as_a_folder_shows_cross_attention(
    app_server: str, page: Page, tmp_path
) -> None:
    from attention_core.pretrained import build_tiny_model
    from tests.support.availability import require_minilm

    require_minilm()  # the tiny model's tokenizer is the packaged vocabulary
    folder = build_tiny_model("encoder-decoder", tmp_path / "bart")
    errors = collect_page_errors(page)
    open_page(page, app_server, "pretrained", params={"text": SENTENCE})
    box = main_area(page).get_by_role(
        "textbox", name="Model: Hugging Face model id or local folder"
    )
    with expect_rerun(page):
        box.fill(str(folder))
        box.press("Enter")
    wait_for_charts(page)
    _view(page, "Decoder and cross-attention")
    (decoder,) = wait_for_heatmaps(page, 1, chart=0)
    (cross,) = wait_for_heatmaps(page, 1, chart=1)
    m = decoder["z_shape"][0]
    assert decoder["z_shape"] == (m, m) and cross["z_shape"] == (m, TOKENS)
    assert all(abs(sum(row) - 1) < 1e-4 for row in cross["z"])  # softmax over the text
    assert "encoder-decoder" in main_area(page).inner_text()
    screenshot(page, "lens-cross-attention")
    assert_no_exception(page)
    assert not errors, errors


def test_knocking_out_every_head_of_a_long_text_shows_a_bar_and_cancels(
    app_server: str, page: Page
) -> None:
    """512 tokens through MiniLM: every head knocked out alone takes ~11 s on one core.
    The page shows a bar and Cancel; Cancel stops it (the page says so, no effect grid);
    one click starts it again, and Cancel stops that too."""
    errors = collect_page_errors(page)
    text = " ".join([SENTENCE] * 40)  # ~640 tokens: cut to the model's 512
    open_page(page, app_server, "lens", params={"text": text})
    wait_for_heatmaps(page, 1)

    # the head view of 512 tokens scrolls inside itself: the page stays a page tall
    _view(page, "Head view")
    left = page.locator(".studio-headview text.hv-q")
    left.first.wait_for()
    assert left.count() == 512
    box = page.locator(".studio-headview .hv-scroll").bounding_box()
    assert box is not None and box["height"] <= 0.75 * page.viewport_size["height"] + 1
    assert page.evaluate("document.scrollingElement.scrollHeight") < 4000  # not 11 000 px
    left.nth(500).hover()  # scrolled into view inside the box
    page.wait_for_selector(".studio-headview line")
    assert {line["query"] for line in _lines(page)} == {500}

    main_area(page).get_by_role("radio", name="Ablation", exact=True).click()
    bar = main_area(page).get_by_role("progressbar")
    bar.wait_for(timeout=60_000)
    cancel = main_area(page).get_by_role("button", name="Cancel")
    cancel.click()
    cancelled = main_area(page).get_by_text("Cancelled: no head's effect was measured.")
    start = time.monotonic()
    cancelled.wait_for(timeout=30_000)
    print(f"\nablation at 512 tokens: Cancel → stopped {time.monotonic() - start:.2f} s")
    assert bar.count() == 0 and page.locator(".studio-chart").count() == 0
    screenshot(page, "lens-ablation-cancelled")

    main_area(page).get_by_role("button", name="Knock out every head again").click()
    bar.wait_for(timeout=60_000)  # running again (its end: tests/pages/test_page_lens.py)
    cancel.click()
    cancelled.wait_for(timeout=30_000)
    assert cancel.count() == 0 and bar.count() == 0
    assert_no_exception(page)
    assert not errors
