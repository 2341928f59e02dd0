"""The relative colour scale on the pages beyond the landing page, in real Chromium.

On each page that draws attention heatmaps (encoder vs decoder, train, √d_k scaling, the
lens and the pretrained model view) a student clicks another colour scale in the segmented
control; the first heatmap chart's colour bar must name the new scale as Plotly drew it.
Then the interface switches to 中文 and another scale is clicked: the page keeps working
(no exception or error box), the colour bar speaks Chinese. Screenshots:
tests/artifacts/scale-<page>-zh.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Locator, Page

from attention_core.i18n import t

from .checks import assert_no_exception, screenshot
from .waits import expect_rerun, open_page, wait_for_charts
from .widgets import main_area, set_language

pytestmark = pytest.mark.browser
SMALL = {"text": "中和有一個永和路", "tokenizer": "jieba", "embed_dim": 8, "num_heads": 2}
ENGLISH = {"text": "The cat sat on the mat."}
PAGES = {  # url path → (URL parameters, draws a model view: one colour axis for all panels)
    "masks": (SMALL, False),
    "train": ({"pace": "fast"}, False),
    "scaling": (SMALL, False),
    "lens": (ENGLISH, True),
    "pretrained": (ENGLISH, True),
}

# The colour bar of the first chart holding a heatmap, as Plotly laid it out: a head grid
# (plot_heads) colours through a shared colour axis, the model view through its own trace.
_COLOUR_BAR = """() => {
  for (const plot of document.querySelectorAll('.studio-chart.js-plotly-plot')) {
    const trace = (plot._fullData || []).find((d) => d.type === 'heatmap');
    if (!trace) continue;
    const axis = trace.coloraxis ? plot._fullLayout[trace.coloraxis] : null;
    const bar = axis ? axis.colorbar : trace.colorbar;
    const drawn = plot.querySelector('.colorbar');
    return {title: bar.title.text, cmin: axis ? axis.cmin : trace.zmin,
            cmax: axis ? axis.cmax : trace.zmax, drawn: drawn ? drawn.textContent : ''};
  }
  return null;
}"""


def _scale_button(page: Page, lang: str, scale: str) -> Locator:
    group = main_area(page).get_by_role("radiogroup", name=t("scale_label", lang))
    return group.get_by_role("radio", name=t(f"scale_{scale}", lang), exact=True)


def _colour_bar(page: Page) -> dict[str, Any]:
    wait_for_charts(page)
    bar = page.evaluate(_COLOUR_BAR)
    assert bar is not None, f"no heatmap on {page.url}"
    return bar


def _click_scale(page: Page, lang: str, scale: str) -> dict[str, Any]:
    with expect_rerun(page):
        _scale_button(page, lang, scale).click()
    bar = _colour_bar(page)
    assert f"scale={scale}" in page.url
    assert_no_exception(page)
    return bar


@pytest.mark.parametrize("path", list(PAGES))
def test_clicking_a_colour_scale_changes_the_colour_bar_in_both_languages(
    app_server: str, page: Page, path: str
) -> None:
    params, one_axis = PAGES[path]
    if path in ("lens", "pretrained"):
        from tests.support.availability import require_minilm

        require_minilm()
    open_page(page, app_server, path, {**params, "lang": "en"})
    before = _colour_bar(page)
    assert before["title"] == t("scale_bar_relative", "en")  # the default
    assert_no_exception(page)

    bar = _click_scale(page, "en", "absolute")
    assert bar["title"] == t("scale_bar_absolute", "en") != before["title"]
    assert (bar["cmin"], bar["cmax"]) == (0, 1)
    assert bar["title"] in bar["drawn"]  # the colour bar as drawn names it

    set_language(page, "zh-TW")
    bar = _colour_bar(page)
    assert bar["title"] == t("scale_bar_absolute", "zh-TW")  # the choice survives
    bar = _click_scale(page, "zh-TW", "contrast")
    title = t("scale_bar_contrast_all" if one_axis else "scale_bar_contrast", "zh-TW")
    assert bar["title"] == title and title in bar["drawn"]
    assert 0 < bar["cmax"] <= 1 and bar["cmin"] == 0
    screenshot(page, f"scale-{path}-zh")
    assert_no_exception(page)
