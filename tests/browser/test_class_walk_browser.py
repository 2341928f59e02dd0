"""The classroom review's lecturer walk in real headless Chromium, at the two sizes it was
seen at (1920 × 1080 and a 390 × 844 phone): no two numbers written into heatmap cells run into
each other (the padded batch on Encoder vs decoder, the four positions maps), and the
titles of Step by step's steps 3 and 5 stay clear of their upright column labels.

Measured from what Chromium drew: `getBoundingClientRect` of every cell text
(`g.heatmap-label text`), chart title (`.gtitle`) and column label.
Screenshots: tests/artifacts/class-walk-*.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser

from .checks import assert_no_exception, screenshot
from .chromium import configure
from .waits import open_page, wait_for_charts

pytestmark = pytest.mark.browser

SIZES = {
    "desktop": {"viewport": {"width": 1920, "height": 1080}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
LONG_WORDS = (
    "students watched attention heads everywhere because teachers explained everything "
    "carefully yesterday afternoon"
)
VISITS = [  # (name, url path, URL parameters)
    ("masks", "masks", {}),  # the padded batch: the default second sentence, 11 tokens
    ("positions", "positions", {"text": LONG_WORDS}),
    ("step3", "steps", {"text": LONG_WORDS, "step": "3"}),
    ("step5", "steps", {"text": LONG_WORDS, "step": "5"}),
]
_DRAWN = """() => [...document.querySelectorAll('.studio-chart.js-plotly-plot')].map((plot) => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {text: el.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const shown = (b) => b.text && b.right - b.left > 0 && b.bottom - b.top > 0;
  const all = (selector) => [...plot.querySelectorAll(selector)].map(box).filter(shown);
  return {cells: all('g.heatmap-label text'), titles: all('.gtitle'),
          columns: all('g.xaxislayer-above text')};
})"""


def _meet(a: dict[str, Any], b: dict[str, Any], tolerance: float = 0.5) -> bool:
    """Whether two drawn boxes overlap by more than `tolerance` pixels both ways."""
    across = min(a["right"], b["right"]) - max(a["left"], b["left"])
    down = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return across > tolerance and down > tolerance


def _clashes(boxes: list[dict[str, Any]], others: list[dict[str, Any]] | None = None) -> list:
    """Pairs of boxes that overlap: within `boxes`, or between `boxes` and `others`."""
    if others is not None:
        return [(a["text"], b["text"]) for a in boxes for b in others if _meet(a, b)]
    return [
        (a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if _meet(a, b)
    ]


@pytest.mark.parametrize("size", list(SIZES))
def test_cell_numbers_and_step_titles_never_run_together(
    browser: Browser, app_server: str, size: str
) -> None:
    context = configure(browser.new_context(locale="en-US", **SIZES[size]))
    try:
        page = context.new_page()
        for name, path, params in VISITS:
            open_page(page, app_server, path, params)
            assert wait_for_charts(page) > 0, name
            assert_no_exception(page)
            charts = page.evaluate(_DRAWN)
            screenshot(page, f"class-walk-{size}-{name}")
            for number, chart in enumerate(charts):
                where = (size, name, number)
                assert not _clashes(chart["cells"]), (where, _clashes(chart["cells"])[:3])
                if name.startswith("step") and number == 0:  # the step's own matrix
                    assert chart["titles"] and chart["columns"], where
                    clash = _clashes(chart["titles"], chart["columns"])
                    assert not clash, (where, clash[:3])
    finally:
        context.close()
