"""The landing page's long map (issue 26) in real Chromium at 4 096 tokens: the overview paints
for every head, a zoom fetches exact cells equal to the model's weights, find jumps to the
row, the page never scrolls sideways, and a 390 × 844 phone works."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Browser, Page

from attention_core.figures.text import literal
from attention_core.limits import EXACT, MAX_LONG_TOKENS, MAX_TEXT_CHARS
from attention_core.longrun import find_rows
from attention_core.settings import ModelSettings
from attention_core.tokenize import tokenize

from .checks import assert_no_exception, screenshot
from .chromium import new_context
from .waits import expect_rerun, open_page

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from test_page_heatmaps_long import SENTENCES, reference_rows

pytestmark = pytest.mark.browser

PARAMS = {"text": SENTENCES, "tokenizer": "word", "embed_dim": 64, "num_heads": 8}
MODEL = ModelSettings(text=SENTENCES, tokenizer="word", embed_dim=64, num_heads=8)
HEADS = ".studio-long-head"
PAINT_MS = 120_000


def _painted(page: Page, heads: int = 8) -> None:
    page.wait_for_function(
        f"""() => {{
          const plots = [...document.querySelectorAll('{HEADS}')];
          return plots.length === {heads} && plots.every((p) => p.dataset.painted
            && p._fullData && p._fullData[0].z.length > 0);
        }}""",
        timeout=PAINT_MS,
    )


def _tile(page: Page, head: int) -> dict[str, Any]:
    """What head `head` shows now: its tile's edges, values and the axes' labels."""
    return page.evaluate(
        f"""() => {{
          const p = document.querySelectorAll('{HEADS}')[{head}];
          const t = p.__tile;
          const bytes = Uint8Array.from(atob(t.values), (c) => c.charCodeAt(0));
          return {{rows: t.rows, cols: t.cols, exact: t.exact, shape: t.shape,
                   values: Array.from(new Float32Array(bytes.buffer)),
                   yticks: p._fullLayout.yaxis.ticktext || [], found: p.__found ?? null,
                   zoomMs: Number(p.dataset.zoomMs || -1)}};
        }}"""
    )


def _no_sideways_scroll(page: Page) -> None:
    wide = page.evaluate(
        """() => [document.scrollingElement,
                  document.querySelector('[data-testid="stMain"]')]
             .filter(Boolean).map((e) => e.scrollWidth - e.clientWidth)"""
    )
    assert max(wide) <= 1, f"the page scrolls sideways by {wide} px"


def test_overview_zoom_and_find_at_4096_tokens(app_server: str, page: Page) -> None:
    open_page(page, app_server, params=PARAMS)
    _painted(page)
    assert_no_exception(page)
    overview = _tile(page, 0)
    assert overview["rows"][0] == 0 and overview["rows"][-1] == MAX_LONG_TOKENS
    assert not overview["exact"] and overview["shape"] == [256, 256]
    _no_sideways_scroll(page)
    screenshot(page, "long-map-overview")

    # zoom head 3 into 40 × 60 tokens: exact cells, equal to the module's weights
    page.evaluate(
        f"""() => Plotly.relayout(document.querySelectorAll('{HEADS}')[3],
             {{'xaxis.range[0]': 1990, 'xaxis.range[1]': 2050,
               'yaxis.range[0]': 2040, 'yaxis.range[1]': 2000}})"""
    )
    page.wait_for_function(
        f"() => document.querySelectorAll('{HEADS}')[3].dataset.rows === '2000-2040'",
        timeout=30_000,
    )
    zoomed = _tile(page, 3)
    assert zoomed["exact"] and zoomed["cols"][0] == 1990 and zoomed["cols"][-1] == 2050
    got = np.asarray(zoomed["values"], dtype=np.float32).reshape(zoomed["shape"])
    want = reference_rows(MODEL, 3, slice(2000, 2040))[:, 1990:2050]
    np.testing.assert_allclose(got, want, atol=EXACT, rtol=0)
    tokens = tokenize(SENTENCES[:MAX_TEXT_CHARS], "word")
    labels = [f"{i}:{tokens[i].label}" for i in range(2000, 2040)]
    assert zoomed["yticks"] == [literal(s) for s in labels]  # the rows name their tokens
    assert 0 < zoomed["zoomMs"] < 2000  # fetch → painted (figures: bench long)
    at = page.evaluate(  # the pointer on cell (row 2005, key 1997): where it is drawn
        f"""() => {{ const p = document.querySelectorAll('{HEADS}')[3];
             p.scrollIntoView({{block: 'center'}});
             const xa = p._fullLayout.xaxis, ya = p._fullLayout.yaxis;
             const box = p.getBoundingClientRect();
             return [box.left + xa._offset + xa.l2p(1997.5),
                     box.top + ya._offset + ya.l2p(2005.5)]; }}"""
    )
    page.mouse.move(*at)
    page.wait_for_function(
        "() => document.querySelector('.studio-long-tip').textContent", timeout=10_000
    )
    tip = page.locator(".studio-long-tip").text_content() or ""
    row, col = tokens[2005].label, tokens[1997].label  # the hover names both, as typed
    assert tip.startswith(f"query 2005:{row} → key 1997:{col}\n")
    shown = re.search(r"attention weight ([0-9.e+-]+) \(exact\)", tip)
    assert shown and float(shown.group(1)) == pytest.approx(want[5, 7], rel=1e-5, abs=EXACT)
    screenshot(page, "long-map-zoomed")

    # find: every head jumps to the row, which is framed
    row = find_rows(tokens[:MAX_LONG_TOKENS], SENTENCES[:MAX_TEXT_CHARS], "Sentence 417 has")[0]
    box = page.get_by_role("textbox", name="Find a token or phrase")
    box.fill("Sentence 417 has")
    with expect_rerun(page):
        box.press("Enter")
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{HEADS}')].every((p) =>
              p.__found === {row} && p.__tile.exact && p.__tile.rows[0] <= {row}
              && p.__tile.rows.at(-1) > {row})""",
        timeout=30_000,
    )
    found = _tile(page, 0)
    assert f"{row}:Sentence" in found["yticks"]
    strip = page.locator(".studio-long-strip").inner_text()
    assert f"{row}:Sentence {row + 1}:417" in strip  # the token strip follows the map
    _no_sideways_scroll(page)
    assert_no_exception(page)
    screenshot(page, "long-map-found")


def test_phone_viewport_shows_the_long_map(app_server: str, browser: Browser) -> None:
    context = new_context(browser)
    try:
        phone = context.new_page()
        phone.set_viewport_size({"width": 390, "height": 844})
        open_page(phone, app_server, params={**PARAMS, "num_heads": 2})
        _painted(phone, heads=2)
        widths = phone.evaluate(
            f"() => [...document.querySelectorAll('{HEADS}')].map((p) => p.offsetWidth)"
        )
        assert all(0 < w <= 390 for w in widths), widths
        _no_sideways_scroll(phone)
        assert_no_exception(phone)
        screenshot(phone, "long-map-phone")
    finally:
        context.close()
