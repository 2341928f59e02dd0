"""The head view's renderer (attention_core/figures/headview.py) in Chromium: the weight of
the k-th strongest line, which decides which lines are drawn at open, is the one a full
sort gives (`kthLargest` counts into bins and sorts only one), on random weights, on
weights with many ties and on weights crowded near 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from attention_core.figures.headview import HEAD_VIEW_JS

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

_AGAINST_SORT_JS = """() => {
  let seed = 7;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const wrong = [];
  for (let trial = 0; trial < 300; trial++) {
    const n = 1 + Math.floor(random() * 5000), kind = trial % 4;
    const v = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const r = random();
      v[i] = kind === 0 ? r : kind === 1 ? Math.round(r * 20) / 20 : kind === 2 ? r ** 8 : 0.25;
    }
    const k = 1 + Math.floor(random() * n);
    const want = v.slice().sort()[n - k];
    if (kthLargest(v, n, k) !== want) wrong.push([n, k, want, kthLargest(v, n, k)]);
  }
  return wrong.slice(0, 5);
}"""


def test_the_open_lines_floor_is_the_sorted_kth_weight(browser: Browser) -> None:
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(content=HEAD_VIEW_JS)
        assert page.evaluate(_AGAINST_SORT_JS) == []
    finally:
        page.close()
