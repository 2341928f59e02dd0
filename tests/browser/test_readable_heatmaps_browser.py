"""Readable heatmaps in real headless Chromium: the landing page readable at every size.

Measured from what Chromium drew: the geometry of every tick label of the heads chart
(rotated ones included: `getBoundingClientRect` of a -90° label is its rotated box), which
tokens carry a label, the colour axis in use, and a lecturer's walk: colours, a language
switch mid-session, the one-click way to the pretrained model and back.

Screenshots: tests/artifacts/readable-*.png, and the landing page at n = 4, 30, 128, 512 in
both languages in docs/images/ (the docs show them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Page

from .checks import assert_no_exception, screenshot
from .waits import expect_rerun, open_page, wait_for_charts
from .widgets import main_area, set_language, sidebar

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "images"
WORDS = (
    "the quick brown fox jumps over the lazy dog while the teacher writes on a board and the "
    "students in the class watch every head of attention light up one by one as the lesson "
    "goes on"
).split()
# 35 jieba words of the article's kind (checked below: jieba cuts it into exactly 35)
CHINESE = (
    "中和有一個永和路，永和有一個中和路，老師在教室裡用投影機說明注意力機制，"
    "學生們看著每一個頭的熱圖慢慢變得清楚，下課後大家討論"
)
SIZES = {  # name → (URL parameters, n)
    "n4": ({"text": "the cat sat down", "tokenizer": "word"}, 4),
    "n30": ({"text": " ".join(WORDS[:30]), "tokenizer": "word"}, 30),
    "n35-zh": ({"text": CHINESE, "tokenizer": "jieba"}, 35),
    "n128": ({"text": " ".join((WORDS * 6)[:128]), "tokenizer": "word"}, 128),
    "n512": ({"text": " ".join((WORDS * 20)[:512]), "tokenizer": "word"}, 512),
}
MODEL = {"embed_dim": 64, "num_heads": 8}

# Every tick label of the first chart (the heads), as Chromium laid it out. (Plotly names a
# label's group after its axis: `.xtick` holds only the first panel's, `.x7tick` the 7th's.)
_LABELS = """() => {
  const plot = document.querySelector('.studio-chart.js-plotly-plot');
  if (!plot) return null;
  // one layer per axis; its tick labels are g.<axis id>tick > text (x, x2, …, y, y3, …)
  return [...plot.querySelectorAll('g.xaxislayer-above text, g.yaxislayer-above text')]
    .filter((el) => el.textContent && el.getAttribute('display') !== 'none')
    .map((el) => {
      const r = el.getBoundingClientRect();
      return {axis: el.closest('g.xaxislayer-above') ? 'x' : 'y', text: el.textContent,
              left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    })
    .filter((b) => b.right - b.left > 0 && b.bottom - b.top > 0);
}"""
_COLOURS = """() => {
  const plot = document.querySelector('.studio-chart.js-plotly-plot');
  const axis = plot._fullLayout.coloraxis;
  return {cmin: axis.cmin, cmax: axis.cmax, title: axis.colorbar.title.text,
          n: plot._fullData[0].x ? plot._fullData[0].x.length : null};
}"""


# What a drag-to-zoom on the first panel does: its axes to the first `k` tokens.
_ZOOM = """(k) => Plotly.relayout(document.querySelector('.studio-chart.js-plotly-plot'),
  {'xaxis.range': [-0.5, k - 0.5], 'yaxis.range': [k - 0.5, -0.5]})"""


def labels_drawn(page: Page) -> list[dict[str, Any]]:
    found = page.evaluate(_LABELS)
    assert found is not None, "no chart"
    return found


def overlaps(boxes: list[dict[str, Any]], tolerance: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes intersect by more than `tolerance` pixels both ways."""
    found = []
    ordered = sorted(boxes, key=lambda b: b["left"])
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b["left"] >= a["right"] - tolerance:
                break
            wide = min(a["right"], b["right"]) - max(a["left"], b["left"])
            tall = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if wide > tolerance and tall > tolerance:
                found.append((a["text"], b["text"]))
    return found


def labelled_tokens(boxes: list[dict[str, Any]]) -> set[int]:
    """Token indices named by a label (`index:token`, maybe cut; numbers on picture axes)."""
    found = set()
    for b in boxes:
        head = b["text"].split(":", 1)[0].replace(",", "")
        if head.isdigit():
            found.add(int(head))
    return found


def open_landing(page: Page, app_server: str, params: dict[str, Any]) -> None:
    open_page(page, app_server, params={**MODEL, **params})
    wait_for_charts(page)


@pytest.mark.parametrize("size", list(SIZES))
def test_no_two_labels_overlap_and_enough_tokens_are_labelled(
    app_server: str, page: Page, size: str
) -> None:
    params, n = SIZES[size]
    open_landing(page, app_server, params)
    screenshot(page, f"readable-{size}")
    colours = page.evaluate(_COLOURS)
    assert colours["n"] == n
    boxes = labels_drawn(page)
    assert overlaps(boxes) == [], size
    shown = labelled_tokens(boxes)
    if n <= 48:  # the rule: every token labelled on one axis at least (~30 tokens included)
        xs = [b["text"] for b in boxes if b["axis"] == "x"]
        assert shown == set(range(n)), (sorted(set(range(n)) - shown), xs)
    else:  # thinned: at least one label per 16 tokens; hover and zoom name the rest
        assert len(shown) >= n / 16, len(shown)
    # default colours: relative to 1/n, so the untrained heads are not white
    assert colours["cmin"] == 0 and colours["cmax"] == pytest.approx(2 / n)
    if size == "n128":  # thinned labels: zooming in names every token of the zoomed part
        page.evaluate(_ZOOM, 20)
        page.wait_for_timeout(300)
        zoomed = [b for b in labels_drawn(page) if b["axis"] == "y"]
        assert labelled_tokens(zoomed) >= set(range(20)), sorted(labelled_tokens(zoomed))
        assert overlaps(labels_drawn(page)) == []
        screenshot(page, f"readable-{size}-zoomed")
    assert_no_exception(page)


def _landing_shot(page: Page, name: str) -> None:
    """The landing page from its title to the end of the heads chart, for README (the whole
    page goes to tests/artifacts as usual)."""
    screenshot(page, f"readable-landing-{name}")
    size = page.viewport_size or {"width": 1400, "height": 1000}
    tall = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": min(int(tall), 6000)})
    page.wait_for_timeout(300)  # charts re-layout to the new viewport
    chart = ".studio-chart.js-plotly-plot"
    bottom = page.evaluate(
        f"() => document.querySelector('{chart}').getBoundingClientRect().bottom"
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(int(bottom) + 16, 6000)}
    path = SHOTS / f"landing-{name}.png"
    try:
        page.screenshot(path=str(path), clip=clip, full_page=True)
    finally:
        page.set_viewport_size(size)
    # 256 colours (no dithering): a third of the bytes, the same picture for README
    with Image.open(path) as shot:
        flat = shot.convert("RGB").quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    flat.save(path, optimize=True)


@pytest.mark.readme_shots  # writes tracked files: run on purpose, `pytest -m readme_shots`
@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_landing_page_screenshots_for_readme(app_server: str, page: Page, lang: str) -> None:
    """The landing page at n = 4, 30, 128, 512 in `lang`, as the docs show it."""
    for size in ("n4", "n30", "n128", "n512"):
        params, _ = SIZES[size]
        open_landing(page, app_server, {**params, "lang": lang})
        page.set_viewport_size({"width": 1400, "height": 1000})
        assert overlaps(labels_drawn(page)) == [], (lang, size)
        assert_no_exception(page)
        _landing_shot(page, f"{size}-{lang}")


def test_lecturer_walk_colours_language_and_the_way_to_meaning(app_server: str, page: Page) -> None:
    params, n = SIZES["n30"]
    open_landing(page, app_server, params)
    main = main_area(page)
    assert "1/n" in main.inner_text() and f"{1 / n:.3f}" in main.inner_text()
    assert main.get_by_text("Why is it so even?").count() == 1

    # absolute: today's 0…1 scale
    with expect_rerun(page):
        main.get_by_text("absolute (0…1)", exact=True).click()
    wait_for_charts(page)
    assert page.evaluate(_COLOURS)["cmax"] == 1
    assert "scale=absolute" in page.url

    # the class asks for Chinese mid-session; the choice stays, the widget keeps working
    set_language(page, "zh-TW")
    wait_for_charts(page)
    assert page.evaluate(_COLOURS)["cmax"] == 1
    with expect_rerun(page):
        main.get_by_text("每個頭各自對比", exact=True).click()
    wait_for_charts(page)
    colours = page.evaluate(_COLOURS)
    assert colours["title"] == "占該頭最大值 %"
    assert 1 / n < colours["cmax"] < 0.5  # the first head's own largest weight
    assert overlaps(labels_drawn(page)) == []
    screenshot(page, "readable-walk-zh-contrast")

    # one click to the same sentence in the pretrained model, and back
    from tests.support.availability import require_minilm

    require_minilm()
    with expect_rerun(page):
        main.get_by_role("button", name="這個句子在預訓練模型中").click()
    wait_for_charts(page)
    assert "/pretrained" in page.url
    assert sidebar(page).get_by_role("textbox").first.input_value() == params["text"]
    assert page.locator(".studio-chart.js-plotly-plot").count() >= 2  # real beside untrained
    screenshot(page, "readable-walk-pretrained")
    with expect_rerun(page):
        sidebar(page).get_by_role("link", name="注意力頭", exact=True).first.click()
    wait_for_charts(page)
    assert sidebar(page).get_by_role("textbox").first.input_value() == params["text"]
    assert page.evaluate(_COLOURS)["n"] == n
    assert page.evaluate(_COLOURS)["title"] == "占該頭最大值 %"  # the colours came back too
    assert_no_exception(page)


# Every chart's sideways scroll: what it is wider than its box by (0 = fits).
_SIDEWAYS = """() => [...document.querySelectorAll('.studio-chart.js-plotly-plot')]
  .map((el) => el.parentElement.scrollWidth - el.parentElement.clientWidth)"""


@pytest.mark.parametrize("path", ["", "masks"])
def test_desktop_charts_fit_their_box_without_scrolling(app_server: str, page: Page, path: str):
    """A heads chart keeps the width it was laid out for on a phone (it scrolls there); on a
    desktop, in the main column or one of two columns (masks: encoder | decoder), it fits."""
    open_page(page, app_server, path, {**MODEL, **SIZES["n30"][0]})
    assert wait_for_charts(page) >= 1
    sideways = page.evaluate(_SIDEWAYS)
    assert sideways and max(sideways) <= 1, sideways


def test_the_trained_reader_at_25_tokens_names_every_token_on_the_rows(
    app_server: str, page: Page
) -> None:
    """The trained reader on 24 characters ([BOS] + 24 = 25 tokens) at 1440 × 900, zh-TW:
    the rows name every token (figures/layout.py's NAMED_MAX), no two labels overlap, and
    the caption says what the chart does (every token named), not that labels were dropped."""
    page.set_viewport_size({"width": 1440, "height": 900})
    text = "捷運板南線今天早上因為號誌故障延誤了二十一分鐘。"
    open_page(page, app_server, params={"weights": "trained", "tokenizer": "char",
                                        "text": text, "lang": "zh-TW"})  # fmt: skip
    wait_for_charts(page)
    boxes = labels_drawn(page)
    rows = [b for b in boxes if b["axis"] == "y"]
    assert labelled_tokens(rows) == set(range(25)), sorted(labelled_tokens(rows))
    assert overlaps(boxes) == []
    captions = main_area(page).locator('[data-testid="stCaptionContainer"]').all_inner_texts()
    assert any("兩個座標軸都標出每個詞元" in c for c in captions), captions
    assert not any("不是每個詞元都標出" in c for c in captions), captions
    screenshot(page, "readable-trained-25-zh-TW")
    assert_no_exception(page)
