"""The landing page's long map in real Chromium at 4 096 tokens: the overview paints
for every head in colours relative to an even share (equal to attention_core.long.scale's),
a zoom fetches exact cells equal to the model's weights with token labels that never
overlap, find jumps to the row, the colour scale switches (bar and colours), the page never
scrolls sideways, and a 390 × 844 phone shows one head at a time, picked in a list."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Browser, Page

from attention_core.figures.layout import short_label
from attention_core.figures.text import literal
from attention_core.limits import EXACT, MAX_LONG_TOKENS, MAX_TEXT_CHARS
from attention_core.long.map import AttentionMap, Tile
from attention_core.long.run import find_rows
from attention_core.long.scale import relative_cells, relative_values
from attention_core.settings import ModelSettings
from attention_core.tokenize import tokenize
from tests.pages.test_page_heatmaps_long import SENTENCES, reference_rows

from .checks import assert_no_exception, screenshot
from .chromium import new_context
from .waits import expect_rerun, open_page
from .widgets import main_area

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser

PARAMS = {"text": SENTENCES, "tokenizer": "word", "embed_dim": 64, "num_heads": 8}
MODEL = ModelSettings(text=SENTENCES, tokenizer="word", embed_dim=64, num_heads=8)
HEADS = ".studio-long-head"
PAINT_MS = 120_000


def _painted(page: Page, heads: int = 8, *, shown: int | None = None) -> None:
    """`heads` heads on the page, every one painted (or only the `shown` one, on a phone)."""
    page.wait_for_function(
        f"""() => {{
          const plots = [...document.querySelectorAll('{HEADS}')];
          const want = {"null" if shown is None else shown};
          return plots.length === {heads} && plots.every((p, h) =>
            (want !== null && h !== want) || (p.dataset.painted
            && p._fullData && p._fullData[0].z.length > 0));
        }}""",
        timeout=PAINT_MS,
    )


def _colours(page: Page, head: int) -> dict[str, Any]:
    """What head `head`'s colours read: its trace's z (flattened) and colour limits."""
    return page.evaluate(
        f"""() => {{ const t = document.querySelectorAll('{HEADS}')[{head}].data[0];
             return {{z: t.z.flatMap((row) => Array.from(row, (v) => isNaN(v) ? null : v)),
                      zmin: t.zmin, zmax: t.zmax}}; }}"""
    )


def _labels_apart(page: Page, head: int) -> dict[str, int]:
    """Head `head`'s tick labels on both axes never overlap; returns how many each has."""
    boxes = page.evaluate(
        f"""() => {{ const p = document.querySelectorAll('{HEADS}')[{head}];
             const of = (axis) => [...p.querySelectorAll(`.${{axis}}tick text`)].map((t) => {{
               const b = t.getBoundingClientRect();
               return [b.left, b.top, b.right, b.bottom]; }});
             return {{x: of('x'), y: of('y')}}; }}"""
    )
    for axis, found in boxes.items():
        for a, b in itertools.combinations(found, 2):
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, f"{axis} labels overlap: {a} and {b}"
    return {axis: len(found) for axis, found in boxes.items()}


def _tile(page: Page, head: int) -> dict[str, Any]:
    """What head `head` shows now: its tile's edges, values and the axes' labels."""
    return page.evaluate(
        f"""() => {{
          const p = document.querySelectorAll('{HEADS}')[{head}];
          const t = p.__tile;
          const bytes = Uint8Array.from(atob(t.values), (c) => c.charCodeAt(0));
          return {{rows: t.rows, cols: t.cols, exact: t.exact, shape: t.shape,
                   values: Array.from(new Float32Array(bytes.buffer)),
                   yticks: p._fullLayout.yaxis.ticktext || [], found: p.__found ?? null}};
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
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_page(page, app_server, params=PARAMS)
    _painted(page)
    assert_no_exception(page)
    overview = _tile(page, 0)
    assert overview["rows"][0] == 0 and overview["rows"][-1] == MAX_LONG_TOKENS
    assert not overview["exact"] and overview["shape"] == [256, 256]
    # the default colours: relative to an even share, as the library defines a pooled cell
    bar = page.locator(".studio-long-bar-title").text_content()
    assert bar == "Colours: relative to even (× 1/n) · × even share"
    values = np.asarray(overview["values"], np.float32).reshape(overview["shape"])  # (R, C)
    edges = np.asarray(overview["rows"]), np.asarray(overview["cols"])
    sent = Tile(0, values, *edges, block=16, reduce="mass", exact=False)
    want_rel = relative_cells(sent, MAX_LONG_TOKENS, causal=False)
    drawn = _colours(page, 0)
    assert (drawn["zmin"], drawn["zmax"]) == (0, 2)
    np.testing.assert_allclose(np.asarray(drawn["z"], float), want_rel.ravel(), rtol=1e-5)
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
    drawn = _colours(page, 3)  # an exact cell's colour: its weight × n (no mask)
    np.testing.assert_allclose(drawn["z"], (want * MAX_LONG_TOKENS).ravel(), rtol=1e-5)
    tokens = tokenize(SENTENCES[:MAX_TEXT_CHARS], "word")
    labels = [literal(short_label(f"{i}:{tokens[i].label}")) for i in range(2000, 2040)]
    named = zoomed["yticks"]  # the rows name their tokens, as many as fit, evenly spaced
    assert 5 <= len(named) <= 40 and set(named) <= set(labels)
    steps = np.diff([labels.index(t) for t in named])
    assert len(set(steps)) == 1
    counts = _labels_apart(page, 3)
    assert counts["x"] >= 5 and counts["y"] == len(named)
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
    colour = re.search(r"colour: ([0-9.e+-]+) × the even share", tip)  # what the colour reads
    assert colour and float(colour.group(1)) == pytest.approx(want[5, 7] * 4096, rel=1e-2)
    screenshot(page, "long-map-zoomed")

    # find: every head jumps to the row, which is framed
    row = find_rows(tokens[:MAX_LONG_TOKENS], SENTENCES[:MAX_TEXT_CHARS], "Sentence 417 has")[0]
    box = page.get_by_role("textbox", name="Find a token or phrase")
    box.fill("Sentence 417 has")
    with expect_rerun(page):
        box.press("Enter")
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{HEADS}')].every((p) =>
              p.__found === {row} && p.__tile && p.__tile.exact && p.__tile.rows[0] <= {row}
              && p.__tile.rows.at(-1) > {row})""",
        timeout=30_000,
    )
    found = _tile(page, 0)
    assert literal(short_label(f"{row}:Sentence")) in found["yticks"]  # named, whatever the step
    strip = page.locator(".studio-long-strip").inner_text()
    assert f"{row}:Sentence {row + 1}:417" in strip  # the token strip follows the map
    _labels_apart(page, 0)
    _no_sideways_scroll(page)
    assert_no_exception(page)
    screenshot(page, "long-map-found")

    # the absolute scale: the bar says so, the colours are the values on 0 … 1
    with expect_rerun(page):
        main_area(page).get_by_role("radio", name="absolute (0…1)").click()
    page.wait_for_function(
        "() => document.querySelector('.studio-long-bar-title').textContent"
        ".startsWith('Colours: absolute')",
        timeout=30_000,
    )
    _painted(page)
    drawn, shown = _colours(page, 0), _tile(page, 0)
    assert (drawn["zmin"], drawn["zmax"]) == (0, 1)
    np.testing.assert_allclose(drawn["z"], shown["values"], rtol=1e-6)
    assert_no_exception(page)


def test_phone_shows_one_head_at_a_time(app_server: str, browser: Browser) -> None:
    context = new_context(browser)
    try:
        phone = context.new_page()
        phone.set_viewport_size({"width": 390, "height": 844})
        open_page(phone, app_server, params=PARAMS)  # the map the test above built
        _painted(phone, shown=0)
        pick = phone.get_by_role("combobox", name="Head shown")
        pick.select_option(label="head 5")
        _painted(phone, shown=5)
        widths = phone.evaluate(
            f"() => [...document.querySelectorAll('{HEADS}')].map((p) => p.offsetWidth)"
        )
        assert [w > 0 for w in widths] == [h == 5 for h in range(8)], widths
        assert 330 <= widths[5] <= 390  # one head, as wide as the screen
        _no_sideways_scroll(phone)
        assert phone.evaluate("() => document.querySelector('.studio-long-pick select')"
                              ".getBoundingClientRect().height") >= 44  # fmt: skip
        screenshot(phone, "long-map-phone")
        # find works on the head shown: it jumps to the row, exact cells, labels apart
        row = find_rows(
            tokenize(SENTENCES[:MAX_TEXT_CHARS], "word")[:MAX_LONG_TOKENS],
            SENTENCES[:MAX_TEXT_CHARS],
            "Sentence 417 has",
        )[0]
        box = phone.get_by_role("textbox", name="Find a token or phrase")
        box.fill("Sentence 417 has")
        with expect_rerun(phone):
            box.press("Enter")
        phone.wait_for_function(
            f"""() => {{ const p = document.querySelectorAll('{HEADS}')[5];
                 return p.__found === {row} && p.__tile && p.__tile.exact; }}""",
            timeout=30_000,
        )
        counts = _labels_apart(phone, 5)
        assert counts["x"] >= 3 and counts["y"] >= 3
        pick.select_option(label="head 2")  # another head: found there too, drawn when picked
        phone.wait_for_function(
            f"""() => {{ const p = document.querySelectorAll('{HEADS}')[2];
                 return p.offsetWidth > 0 && p.__tile && p.__tile.exact
                   && p.__tile.rows[0] <= {row} && p.__tile.rows.at(-1) > {row}; }}""",
            timeout=30_000,
        )
        _no_sideways_scroll(phone)
        assert_no_exception(phone)
        screenshot(phone, "long-map-phone-found")
        phone.set_viewport_size({"width": 1400, "height": 1000})  # wider: heads side by side
        phone.wait_for_function(
            "() => document.querySelector('.studio-long').dataset.narrow === '0'", timeout=30_000
        )
        _painted(phone)
        assert not phone.locator(".studio-long-pick").is_visible()
    finally:
        context.close()


def test_the_browsers_relative_colours_equal_the_librarys(browser: Browser) -> None:
    """ui/long/chart_colours.js's relative values, run in Chromium on tiles of a causal map
    and of one without a mask, against attention_core.long.scale."""
    from ui.long.tiles import tile_payload

    H, n = 1, 300
    rng = np.random.default_rng(4)
    q, k = (rng.normal(0, 2, size=(H, n, 8)).astype(np.float32) for _ in range(2))
    maps = [AttentionMap.from_qk(q, k, causal=causal) for causal in (True, False)]
    cases = [
        (m, tile)
        for m in maps
        for tile in [
            *(m.overview(0, size=32, reduce=reduce) for reduce in ("mass", "mean", "max")),
            m.region(0, slice(37, 201), slice(5, 290), size=40, reduce="mass"),
            m.region(0, slice(100, 140), slice(90, 150), size=64),  # exact
        ]
        if not (m.causal and tile.reduce == "max" and not tile.exact)  # the server's
    ]
    colours = (ROOT / "ui" / "long" / "chart_colours.js").read_text(encoding="utf-8")
    context = new_context(browser)
    try:
        blank = context.new_page()
        got = blank.evaluate(
            """([source, cases, n]) => {
                 const lib = new Function(source + `
                   function decode(tile) { return decodeF32(tile.values); }
                   return relativeOf;`)();
                 return cases.map(([tile, causal]) => Array.from(
                   lib(tile, {n: n, causal: causal}), (v) => isNaN(v) ? null : v));
               }""",
            [colours, [[tile_payload(t), m.causal] for m, t in cases], n],
        )
    finally:
        context.close()
    assert len(got) == 9
    for (m, tile), drawn in zip(cases, got, strict=True):
        want = relative_values(m, tile).ravel()
        assert [v is None for v in drawn] == list(np.isnan(want))
        np.testing.assert_allclose(np.asarray(drawn, dtype=float), want, rtol=1e-5, equal_nan=True)
