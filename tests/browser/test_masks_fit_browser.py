"""The Encoder-vs-decoder page's full mask (query × key) in its half-width column, in real
Chromium: the chart is no wider than its column (no sideways scroll hiding the last keys)
and its column labels never lie on each other, in zh-TW at 1440 and 1920 px and in English
at 1440 px. Screenshots: tests/artifacts/masks-fit-*.png.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page

from .checks import assert_no_exception, collect_page_errors, window_shot
from .waits import open_page, wait_for_charts

pytestmark = pytest.mark.browser

_FIT_JS = """(key) => {
  const plot = document.querySelector('.st-key-' + key + ' .studio-chart.js-plotly-plot');
  const column = plot.parentElement.getBoundingClientRect();
  const ticks = [...plot.querySelectorAll('g[class$="tick"] > text')]
    .filter((t) => t.textContent.trim()).map((t) => {
      const b = t.getBoundingClientRect();
      return {axis: t.parentNode.getAttribute('class'), text: t.textContent,
              box: [b.left, b.top, b.right, b.bottom]};
    });
  const overlaps = [];
  ticks.forEach((a, i) => ticks.slice(i + 1).forEach((b) => {
    if (a.axis === b.axis && a.box[0] < b.box[2] - 1 && b.box[0] < a.box[2] - 1
        && a.box[1] < b.box[3] - 1 && b.box[1] < a.box[3] - 1) overlaps.push([a.text, b.text]);
  }));
  return {chart: plot.getBoundingClientRect().width, column: column.width,
          scroll: plot.parentElement.scrollWidth, labels: ticks.length, overlaps: overlaps};
}"""


@pytest.mark.parametrize(
    ("lang", "width"), [("zh-TW", 1440), ("zh-TW", 1920), ("en", 1440)], ids=str
)
def test_the_full_mask_fits_its_column_with_its_labels_apart(
    new_page: Callable[[], Page], app_server: str, lang: str, width: int
) -> None:
    page = new_page()
    page.set_viewport_size({"width": width, "height": 900})
    errors = collect_page_errors(page)
    open_page(page, app_server, "masks", {"lang": lang})
    wait_for_charts(page)
    page.locator(".st-key-masks_allowed").first.scroll_into_view_if_needed()
    fit = page.evaluate(_FIT_JS, "masks_allowed")
    assert fit["chart"] <= fit["column"] + 1, fit  # not wider than its column
    assert fit["scroll"] <= fit["column"] + 1, fit  # nothing hidden behind a sideways scroll
    assert fit["labels"] >= 2 * 10, fit  # every query and key named (10 positions at least)
    assert fit["overlaps"] == [], fit
    window_shot(page, f"masks-fit-{lang}-{width}")
    assert_no_exception(page)
    assert not errors, errors
