"""Presenter mode in real headless Chromium: what a lecturer sees on the projector.

One walk, as a lecturer does it: the Step-by-step page opened with `?present=1` hides the
sidebar and the header, enlarges the type, makes the chart as tall as the window, and shows
a QR code that decodes (zxing-cpp, an independent reader) to the view's share link; → and
← move the slides and the address bar; Esc leaves. Then the lecturer switches to 繁體中文,
enters presenter mode again with the sidebar's button, and the arrows still work; on the
quiz → moves to the next round. Screenshots: tests/artifacts/presenter-*.png.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
import segno
from playwright.sync_api import Page, expect

from attention_core.figures.scales import DEFAULT_SCALE
from attention_core.settings import Settings
from tests.support.qr import read_qr

from .checks import assert_no_exception, collect_page_errors, docs_picture, window_shot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .waits import expect_rerun, open_page, wait_for_charts
from .widgets import set_language, sidebar

pytestmark = pytest.mark.browser
VIEW = {"text": "the cat sat on the mat", "tokenizer": "word", "attention": "multi",
        "embed_dim": "8", "num_heads": "2"}  # fmt: skip


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def _decode_qr(page: Page) -> str:
    image = page.locator(".st-key-presenter_corner img").first
    expect(image).to_be_visible(timeout=WAIT_MS)
    found = read_qr(image.screenshot())
    assert len(found) == 1, found
    return found[0]


def _projector(page: Page, name: str) -> None:
    """What the projector shows: the window, not the whole scrolled page."""
    window_shot(page, name)


def _text_px(page: Page) -> float:
    """The font size of the page's first paragraph (not the QR code's caption)."""
    return float(
        page.evaluate(
            """() => parseFloat(getComputedStyle([...document.querySelectorAll(
                 '[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')]
                 .find((p) => !p.closest('.st-key-presenter_corner'))).fontSize)"""
        )
    )


# Each chart of the page, once presenter mode has scaled it: its box on the screen, the
# smallest of its texts as drawn (font size × the chart's scale), and the window's height.
_CHARTS_JS = """() => [...document.querySelectorAll('.studio-chart.js-plotly-plot')].map((p) => {
  const r = p.getBoundingClientRect();
  const scale = r.width / p.offsetWidth;
  const sizes = [...p.querySelectorAll('svg text')].filter((t) => t.textContent.trim())
    .map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  const cut = [...p.querySelectorAll('svg text')].filter((t) => {
    const b = t.getBoundingClientRect();
    return t.textContent.trim() && (b.width || b.height)
      && (b.bottom > r.bottom + 1 || b.top < r.top - 1 || b.right > r.right + 1);
  }).map((t) => t.textContent);
  return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, left: r.left,
          right: r.right, smallest: Math.min(...sizes), window: window.innerHeight,
          zoomed: !!p.__studioZoom, cut: cut};
})"""


# fitCharts (ui/presenter.py, every 400 ms) has nothing left to do: run once more now, it
# starts no relayout (one it starts marks its chart __studioFitting until it has settled)
_FITTED_JS = """(() => {
  if (typeof window.__studioFitCharts !== 'function') return false;
  window.__studioFitCharts();
  return [...document.querySelectorAll('.studio-chart.js-plotly-plot')]
    .every((p) => !p.__studioFitting);
})"""


def _charts_fill_the_projector(page: Page) -> list[dict]:
    """Presenter mode's promise for every chart on the page: its smallest text is 24 px at
    a 1080 px tall window (from the back row), it is no taller than the window, and it
    fits below its top when a third of the window is left there."""
    page.wait_for_function(
        f"() => {_FITTED_JS}() && ({_CHARTS_JS})().every((c) => c.zoomed && c.smallest >= "
        "24 * c.window / 1080 - 0.5)",
        timeout=WAIT_MS,
    )
    charts = page.evaluate(_CHARTS_JS)
    for chart in charts:
        assert chart["smallest"] >= 24 * chart["window"] / 1080 - 0.5, chart
        assert chart["bottom"] - chart["top"] <= chart["window"], chart
        assert chart["cut"] == [], chart  # no label cut at the chart's edges
    return charts


def _press(page: Page, key: str) -> None:
    page.locator("h1").first.click()  # focus on the page, not in an input
    with expect_rerun(page):
        page.keyboard.press(key)


def _presenting(page: Page) -> None:
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden(timeout=WAIT_MS)
    expect(page.locator('[data-testid="stHeader"]')).to_be_hidden()
    expect(page.locator(".st-key-presenter_leave button").first).to_be_visible()


def test_a_lecturer_presents_the_steps_and_the_quiz_in_both_languages(
    page: Page, app_server: str
) -> None:
    errors = collect_page_errors(page)
    open_page(page, app_server, "steps", {**VIEW, "step": 1, "present": 1})
    assert_no_exception(page)
    _presenting(page)
    wait_for_charts(page)

    # large type, and the chart scaled to fill the screen (ui/presenter.py's fitCharts)
    presenting_px = _text_px(page)
    assert presenting_px >= 20
    _charts_fill_the_projector(page)
    box = page.locator(".studio-chart.js-plotly-plot").first.bounding_box()
    assert box is not None and box["width"] >= 0.8 * page.viewport_size["width"] - 250
    _projector(page, "presenter-steps-en")

    # the QR code is this view's share link, without presenter mode
    link = _decode_qr(page)
    shown, here = urlsplit(link), urlsplit(page.url)
    assert (shown.scheme, shown.netloc, shown.path) == (here.scheme, here.netloc, here.path)
    # (settings at their defaults left out: the same view, a sparser code)
    defaults = {k: [v] for k, v in Settings().to_query_params().items() if k != "lang"}
    defaults["scale"] = [DEFAULT_SCALE]
    expected = {
        k: v for k, v in _query(page.url).items() if k != "present" and defaults.get(k) != v
    }
    assert _query(link) == expected and expected["text"] == [VIEW["text"]]

    # the arrows step through the slides, the address bar follows
    _press(page, "ArrowRight")
    assert _query(page.url)["step"] == ["2"]
    expect(page.get_by_role("heading", name="Step 2 of 8")).to_be_visible(timeout=WAIT_MS)
    _press(page, "ArrowLeft")
    assert _query(page.url)["step"] == ["1"]
    _press(page, "Escape")  # leaves presenter mode
    expect(sidebar(page)).to_be_visible(timeout=WAIT_MS)
    assert "present" not in _query(page.url)
    assert presenting_px >= 1.25 * _text_px(page)  # the view is restored

    # another language mid-session, then presenter mode from the sidebar's button
    set_language(page, "zh-TW")
    with expect_rerun(page):
        sidebar(page).get_by_role("button", name="簡報模式").click()
    _presenting(page)
    expect(page.get_by_role("button", name="離開簡報模式")).to_be_visible()
    assert _query(page.url)["present"] == ["1"]
    _press(page, "ArrowRight")
    assert _query(page.url)["step"] == ["2"]
    wait_for_charts(page)
    _projector(page, "presenter-steps-zh")
    assert _query(_decode_qr(page))["lang"] == ["zh-TW"]

    # the quiz: → is the next round
    open_page(page, app_server, "quiz", {**VIEW, "lang": "zh-TW", "present": 1})
    _presenting(page)
    round_metric = page.locator('[data-testid="stMetricValue"]').nth(1)
    expect(round_metric).to_have_text("1")
    _press(page, "ArrowRight")
    expect(round_metric).to_have_text("2", timeout=WAIT_MS)
    _press(page, "ArrowLeft")  # ← wherever → works: the previous round
    expect(round_metric).to_have_text("1", timeout=WAIT_MS)
    _press(page, "ArrowRight")
    expect(round_metric).to_have_text("2", timeout=WAIT_MS)
    _projector(page, "presenter-quiz-zh")
    assert_no_exception(page)
    assert not errors, errors


def test_on_a_1080p_projector_the_landing_chart_fills_the_screen_beside_the_qr_code(
    new_page: Callable[[], Page], app_server: str
) -> None:
    """The landing page at 1920 × 1080 in presenter mode, in both languages: chart text
    readable from the back row (≥ 24 px), the main chart whole on the first screen without
    scrolling, the QR code (and the address warning beside it) never over a chart. Then
    Compare, whose first chart has less room below its title: a whole screen, labels whole."""
    page = new_page()
    page.set_viewport_size({"width": 1920, "height": 1080})
    errors = collect_page_errors(page)
    for lang in ("zh-TW", "en"):
        open_page(page, app_server, "", {"present": 1, "lang": lang})
        _presenting(page)
        wait_for_charts(page)
        (chart,) = _charts_fill_the_projector(page)
        assert chart["bottom"] <= 1080, chart  # no scrolling to see it whole
        corner = page.locator(".st-key-presenter_corner").first.bounding_box()
        assert corner is not None
        assert corner["x"] >= chart["right"], (corner, chart)  # beside it, not over it
        _projector(page, f"presenter-landing-1080p-{lang}")
    open_page(page, app_server, "compare", {"present": 1, "lang": "en"})
    wait_for_charts(page)
    for chart in _charts_fill_the_projector(page):
        assert chart["right"] <= corner["x"], (corner, chart)
    assert_no_exception(page)
    assert not errors, errors


def test_a_phone_in_presenter_mode_keeps_the_phone_layout(browser, app_server: str) -> None:
    """?present=1 opened on a phone (390 × 844): nothing to project, so the charts keep the
    phone's layout, the page does not scroll sideways, the QR code (for a projector) is not
    drawn, and "Leave presenter mode" stays in the flow of the page."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        errors = collect_page_errors(page)
        open_page(page, app_server, "", {"present": 1})
        wait_for_charts(page)
        leave = page.get_by_role("button", name="Leave presenter mode")
        expect(leave).to_be_visible(timeout=WAIT_MS)
        expect(page.locator(".st-key-presenter_corner img")).to_be_hidden(timeout=WAIT_MS)
        page.wait_for_function(_FITTED_JS, timeout=WAIT_MS)  # fitCharts has run on the phone
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert not page.evaluate(
            "() => [...document.querySelectorAll('.studio-chart.js-plotly-plot')]"
            ".some((p) => p.__studioZoom)"
        )
        assert_no_exception(page)
        assert not errors, errors
    finally:
        context.close()


# Every tick label of each axis of each chart (its box on the screen), the charts' boxes,
# their colour bars', and the head titles drawn.
_LABELS_JS = """() => [...document.querySelectorAll('.studio-chart.js-plotly-plot')].map((p) => {
  const box = (el) => { const b = el.getBoundingClientRect();
    return [b.left, b.top + scrollY, b.right, b.bottom + scrollY]; };
  const scale = p.getBoundingClientRect().width / p.offsetWidth;
  const ticks = [...p.querySelectorAll('g[class$="tick"] > text')]
    .filter((t) => t.textContent.trim())
    .map((t) => ({axis: t.parentNode.getAttribute('class'), text: t.textContent, box: box(t),
                  px: parseFloat(getComputedStyle(t).fontSize) * scale}));
  const bar = p.querySelector('.colorbar');
  return {box: box(p), ticks: ticks, bar: bar ? box(bar) : null,
          titles: [...p.querySelectorAll('.annotation-text')].map((t) => t.textContent)};
})"""
SENTENCES = {  # (language, tokens) → the sentence, its tokenizer (a token a word or character)
    ("en", 4): ("the cat sat down", "word"),
    ("en", 12): ("the cat sat on the mat because the mat was very warm", "word"),
    ("en", 24): (" ".join(["the cat sat on the warm mat"] * 3 + ["and then slept"]), "word"),
    ("en", 40): (" ".join(["the cat sat on the warm mat and"] * 5), "word"),
    ("zh-TW", 4): ("中和有路", "char"),
    ("zh-TW", 12): ("捷運板南線今天早上延誤了", "char"),
    ("zh-TW", 24): ("捷運板南線今天早上因為號誌故障延誤了二十一分鐘。", "char"),
    ("zh-TW", 40): (
        "捷運板南線今天早上因為號誌故障延誤了二十分鐘，很多上班的人都遲到了。真是太糟糕！",
        "char",
    ),
}


def _overlapping(ticks: list[dict]) -> list[tuple[str, str]]:
    """Pairs of labels of one axis whose boxes overlap."""
    pairs = []
    for i, a in enumerate(ticks):
        for b in ticks[i + 1 :]:
            (l1, t1, r1, b1), (l2, t2, r2, b2) = a["box"], b["box"]
            if (
                a["axis"] == b["axis"]
                and l1 < r2 - 1
                and l2 < r1 - 1
                and t1 < b2 - 1
                and t2 < b1 - 1
            ):
                pairs.append((a["text"], b["text"]))
    return pairs


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_every_head_of_an_ordinary_sentence_reads_on_a_1080p_projector(
    new_page: Callable[[], Page], app_server: str, lang: str
) -> None:
    """Sentences of 4, 12, 24 and 40 tokens on the landing page at 1920 × 1080 in presenter
    mode: every tick label at least 24 px and none overlapping another of its axis, the
    chart and its colour bar whole on the first screen, and every head shown there or one
    → away (the pager, ui/presenter_heads.py)."""
    page = new_page()
    page.set_viewport_size({"width": 1920, "height": 1080})
    errors = collect_page_errors(page)
    for n in (4, 12, 24, 40):
        text, tokenizer = SENTENCES[(lang, n)]
        view = {"present": 1, "lang": lang, "text": text, "tokenizer": tokenizer}
        open_page(page, app_server, "", {**view, "num_heads": 4})
        _presenting(page)
        header = {"en": f"Tokens ({n})", "zh-TW": f"詞元（{n} 個）"}[lang]
        expect(page.get_by_role("heading", name=header)).to_have_count(1)  # n tokens, exactly
        wait_for_charts(page)
        _charts_fill_the_projector(page)
        seen: set[str] = set()
        for _turn in range(4):
            (chart,) = page.evaluate(_LABELS_JS)
            _, top, _, bottom = chart["box"]
            assert bottom <= 1080 and top >= 0, (n, chart["box"])  # no scrolling to see it
            assert chart["bar"] and chart["bar"][1] >= top and chart["bar"][3] <= bottom, chart
            assert chart["ticks"], (n, "no labels")
            assert min(t["px"] for t in chart["ticks"]) >= 24 - 0.5, (n, chart["ticks"][:3])
            assert _overlapping(chart["ticks"]) == [], (n, lang, _overlapping(chart["ticks"]))
            seen |= set(chart["titles"])
            if len(seen) >= 4:
                break
            _press(page, "ArrowRight")  # one key: the next heads
            wait_for_charts(page)
            _charts_fill_the_projector(page)
        assert len(seen) == 4, (n, seen)  # every head, on this screen or one key away
        _projector(page, f"presenter-heads-{n}-{lang}")
        if n == 24 and lang == "zh-TW":  # docs/guide/presenter.md's picture: the first screen
            _press(page, "ArrowLeft")
            wait_for_charts(page)
            _charts_fill_the_projector(page)
            # the key's click on the title scrolled a little and left a focus ring
            page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
            page.wait_for_function("() => window.scrollY === 0")
            docs_picture(page, "presenter-24-tokens-zh-TW")
    assert_no_exception(page)
    assert not errors, errors


def test_the_article_softmax_keeps_its_numbers_and_labels_apart_on_a_projector(
    new_page: Callable[[], Page], app_server: str
) -> None:
    """Step 5 (softmax) of the article's sentence at 1920 × 1080 in presenter mode: the
    chart is never laid out smaller than its labels and numbers need (figures/layout.py's
    `studio_min_size`), so every cell keeps its weight and no column label lies on another."""
    page = new_page()
    page.set_viewport_size({"width": 1920, "height": 1080})
    errors = collect_page_errors(page)
    open_page(page, app_server, "steps", {"step": 5, "present": 1, "lang": "zh-TW"})
    _presenting(page)
    wait_for_charts(page)
    _charts_fill_the_projector(page)
    chart = page.locator(".studio-chart.js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    cells = chart.locator(".heatmaplayer text")
    expect(cells).to_have_count(16)  # 4 × 4 weights, each written in its cell
    (softmax, *_) = page.evaluate(_LABELS_JS)
    assert _overlapping(softmax["ticks"]) == [], _overlapping(softmax["ticks"])
    assert min(t["px"] for t in softmax["ticks"]) >= 24 - 0.5
    _projector(page, "presenter-steps-softmax-zh-TW")
    assert_no_exception(page)
    assert not errors, errors


def test_a_long_sentences_qr_code_is_shown_large_on_demand(
    new_page: Callable[[], Page], app_server: str
) -> None:
    """At 1920 × 1080 with a 24-character sentence: "Larger QR code" shows the view's link
    at least 8 px a module (the corner's is under 2), it still decodes to that link, and
    closing it gives the screen back."""
    page = new_page()
    page.set_viewport_size({"width": 1920, "height": 1080})
    text, tokenizer = SENTENCES[("zh-TW", 24)]
    open_page(page, app_server, "", {"present": 1, "lang": "zh-TW", "text": text,
                                     "tokenizer": tokenizer})  # fmt: skip
    _presenting(page)
    small = _decode_qr(page)
    with expect_rerun(page):
        page.get_by_role("button", name="放大 QR 碼").click()
    large = page.locator(".st-key-presenter_qr_large img").first
    expect(large).to_be_visible(timeout=WAIT_MS)
    found = read_qr(large.screenshot())
    assert found == [small], found
    modules = segno.make(small, error="m", micro=False).symbol_size(border=2)[0]
    box = large.bounding_box()
    assert box is not None and box["width"] / modules >= 8, (box, modules)
    _projector(page, "presenter-qr-large")
    with expect_rerun(page):
        page.get_by_role("button", name="關閉放大的 QR 碼").click()
    expect(page.locator(".st-key-presenter_qr_large")).to_have_count(0)
