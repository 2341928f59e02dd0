"""The "Pretrained attention" and "Compare heads" pages in real headless Chromium.

What AppTest cannot see: the tiled 6 × 12 model view actually painted by Plotly (one heatmap,
NaN gaps transparent, layer/head tick labels), the view switch driving a rerun, the [UNK]
report on screen, and the compare page's charts painted side by side. Screenshots land in
tests/artifacts/pretrained*.png and compare*.png; timings are printed (pytest -s shows them).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Page

from attention_core.attention_file import read_attention
from tests.support.files import independent_reads

from .checks import alerts, assert_no_exception, collect_page_errors, screenshot
from .waits import expect_rerun, open_page, wait_for_heatmaps
from .widgets import main_area as _main

pytestmark = pytest.mark.browser

ARTICLE = "中和有一個永和路"
ENGLISH = "The cat sat on the mat because it was tired."


def test_pretrained_model_view_paints_every_layer_and_head(
    app_server: str, page: Page, tmp_path: Path
) -> None:
    errors = collect_page_errors(page)
    start = time.monotonic()
    open_page(page, app_server, "pretrained", params={"text": ARTICLE})
    (grid,) = wait_for_heatmaps(page, 1)  # all 6 × 12 panels are ONE tiled heatmap
    print(
        f"\npretrained page, model not yet loaded: open → painted {time.monotonic() - start:.1f} s"
    )
    n = 10  # [CLS] 中 和 有 一 [UNK] 永 和 [UNK] [SEP]
    assert grid["z_shape"] == (6 * (n + 1) - 1, 12 * (n + 1) - 1)
    first_panel = [row[:n] for row in grid["z"][:n]]
    assert all(abs(sum(row) - 1) < 1e-4 for row in first_panel)  # softmax rows
    assert math.isnan(grid["z"][n][0])  # the gap between layer 0 and layer 1
    ticks = _main(page).locator(".xtick text").all_text_contents()
    assert ticks[:2] == ["head 0", "head 1"] and len(ticks) == 12
    unknown = [a for a in alerts(page) if "[UNK]" in a]
    assert unknown and "個 路" in unknown[0]
    assert_no_exception(page)
    screenshot(page, "pretrained")

    # one layer large: 12 heatmaps, with every token labelled
    switched = time.monotonic()
    with expect_rerun(page):
        _main(page).get_by_role("radio", name="One layer").click()
    traces = wait_for_heatmaps(page, 12)
    print(f"pretrained one layer: click → 12 heads painted {time.monotonic() - switched:.2f} s")
    assert traces[0]["x"][0] == "0:[CLS]" and traces[0]["z_shape"] == (n, n)
    screenshot(page, "pretrained-layer")

    switched = time.monotonic()
    with expect_rerun(page):
        _main(page).get_by_role("radio", name="All layers × heads").click()
    wait_for_heatmaps(page, 1)
    print(f"pretrained model view, warm: click → painted {time.monotonic() - switched:.2f} s")

    with expect_rerun(page):
        _main(page).get_by_role("radio", name="Trained vs untrained").click()
    wait_for_heatmaps(page, 1, chart=0)
    wait_for_heatmaps(page, 1, chart=1)
    assert any("沒有意義" in a for a in alerts(page))
    screenshot(page, "pretrained-contrast")

    # every layer and head as a file: made on the click, read back as the model returned it
    for fmt in ("npz", "safetensors"):
        with page.expect_download() as download:
            _main(page).get_by_role("button", name=f"Download attention (.{fmt})").click()
        saved = download.value
        assert saved.suggested_filename.endswith(f".{fmt}")
        read = read_attention(Path(saved.path()).read_bytes(), saved.suggested_filename)
        assert read.tokens[:3] == ["[CLS]", "中", "和"] and read.weights.shape == (6, 12, n, n)
        saved.save_as(tmp_path / saved.suggested_filename)
        for reader, (weights, tokens) in independent_reads(
            tmp_path / saved.suggested_filename
        ).items():
            assert tokens == read.tokens, reader  # numpy's and safetensors' own readers
            np.testing.assert_array_equal(weights, read.weights, err_msg=reader)
    assert_no_exception(page)
    assert not errors, errors


def test_compare_page_paints_heads_difference_and_similarity(app_server: str, page: Page) -> None:
    errors = collect_page_errors(page)
    start = time.monotonic()
    open_page(page, app_server, "compare", params={"text": ARTICLE, "tokenizer": "jieba"})
    heads = wait_for_heatmaps(page, 4, chart=0)
    print(f"\ncompare page: run + paint {time.monotonic() - start:.1f} s")
    assert heads[0]["x"] == ["0:中和", "1:有", "2:一個", "3:永和路"]
    (diff,) = wait_for_heatmaps(page, 1, chart=1)
    for row in diff["z"]:
        assert abs(sum(row)) < 1e-5  # A − B rows: both sum to 1, so the difference sums to 0
    (sim,) = wait_for_heatmaps(page, 1, chart=3)  # chart 2 is the statistics bar chart
    assert all(sim["z"][i][i] == 1 for i in range(4))
    assert_no_exception(page)
    screenshot(page, "compare")

    # two configurations: B with another seed, both grids and their difference painted
    with expect_rerun(page):
        _main(page).get_by_role("radio", name="two configurations (A vs B)").click()
    wait_for_heatmaps(page, 4, chart=0)
    wait_for_heatmaps(page, 4, chart=1)
    (diff,) = wait_for_heatmaps(page, 1, chart=2)
    assert max(abs(v) for row in diff["z"] for v in row) > 0  # seed 0 vs seed 1
    screenshot(page, "compare-configs")

    # the pretrained model as the source, one layer's heads
    with expect_rerun(page):
        _main(page).get_by_role("radio", name="pretrained model (one layer)").click()
    heads = wait_for_heatmaps(page, 4, chart=0)
    assert heads[0]["x"][0] == "0:[CLS]"
    screenshot(page, "compare-pretrained")
    assert_no_exception(page)
    assert not errors, errors
