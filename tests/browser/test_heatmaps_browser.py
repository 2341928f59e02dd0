"""The landing page (pages/heatmaps.py) in real headless Chromium.

What AppTest cannot see: Plotly painting one heatmap per head, Chinese glyphs drawn from a
CJK font (not tofu), the sidebar's real widgets (text area, select slider) driving reruns,
the address bar reproducing a view in a fresh browser, and hostile text staying inert.
Screenshots of every test land in tests/artifacts/heatmaps-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Locator, Page

from attention_core.i18n import t as catalog_text
from tests.support.apptest import shown_labels

from .checks import (
    alerts,
    assert_no_exception,
    collect_dialogs,
    collect_page_errors,
    rendered_fonts,
    screenshot,
)
from .server import serve_app
from .waits import expect_rerun, open_page, wait_for_heatmaps
from .widgets import set_language

pytestmark = pytest.mark.browser

ARTICLE = "中和有一個永和路"  # the article's example, segmented by jieba into four words
ARTICLE_LABELS = ["0:中和", "1:有", "2:一個", "3:永和路"]
XSS = "<img src=x onerror=alert(1)>"
LINK = '<a href="javascript:alert(2)">click</a>'
CJK = re.compile(r"[\u4e00-\u9fff]")


def _query(page: Page) -> dict[str, str]:
    """The address bar's query parameters (as the app rewrote them)."""
    return {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query).items()}


def _sentence_box(page: Page) -> Locator:
    return page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")


def _markdown(page: Page) -> Locator:
    """Markdown in the main area (token chips, summaries), not the Plotly SVG."""
    return page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')


def _injected_images(page: Page) -> int:
    """<img> elements (HTML or SVG) whose src is the attacker's "x"."""
    return page.evaluate(
        """() => [...document.querySelectorAll('img, image')].filter((el) =>
             ['src', 'href', 'xlink:href'].some((a) => el.getAttribute(a) === 'x')).length"""
    )


def _javascript_links(page: Page) -> int:
    """Links (HTML or SVG) that would run script when followed."""
    return page.evaluate(
        """() => [...document.querySelectorAll('a')].filter((a) =>
             /^\\s*javascript:/i.test(a.getAttribute('href') || a.getAttribute('xlink:href') || '')
           ).length"""
    )


def test_article_sentence_paints_two_heads_with_cjk_glyphs(app_server: str, page: Page) -> None:
    errors = collect_page_errors(page)
    open_page(
        page,
        app_server,
        params={
            "text": ARTICLE,
            "tokenizer": "jieba",
            "attention": "multi",
            "embed_dim": 8,
            "num_heads": 2,
        },
    )
    traces = wait_for_heatmaps(page, 2)
    for t in traces:
        assert t["x"] == ARTICLE_LABELS
        assert t["y"] == ARTICLE_LABELS
        assert t["z_shape"] == (4, 4)
        # every row is a softmax: the page shows real attention weights, not placeholders
        assert all(abs(sum(row) - 1) < 1e-4 for row in t["z"])
    assert [t["name"] for t in traces] == ["head 0", "head 1"]

    # Chromium drew the Chinese with a CJK font: in the Plotly tick labels (SVG) ...
    tick = page.locator(".js-plotly-plot .xtick text", has_text="永和路").first
    fonts = rendered_fonts(page, tick)
    cjk_glyphs = sum(f["glyphs"] for f in fonts if "CJK" in f["family"])
    assert cjk_glyphs >= len(CJK.findall("永和路")), fonts
    # ... and in the token chips (HTML, where Streamlit's Latin font falls back to it)
    chip = _markdown(page).get_by_text("3:永和路", exact=True).first
    fonts = rendered_fonts(page, chip)
    assert sum(f["glyphs"] for f in fonts if "CJK" in f["family"]) >= 3, fonts
    assert page.locator(".js-plotly-plot .xtick text").first.bounding_box()["width"] > 0

    assert_no_exception(page)
    assert errors == []
    screenshot(page, "heatmaps-article")


def test_typing_a_sentence_updates_the_heatmaps(app_server: str, page: Page) -> None:
    open_page(page, app_server, params={"text": ARTICLE, "tokenizer": "char", "num_heads": 2})
    assert wait_for_heatmaps(page, 2)[0]["x"] == [f"{i}:{c}" for i, c in enumerate(ARTICLE)]

    box = _sentence_box(page)
    # commit with Ctrl+Enter, as the text area's hint says
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("我愛台灣")
    with expect_rerun(page):
        page.keyboard.press("Control+Enter")
    traces = wait_for_heatmaps(page, 2)
    assert traces[0]["x"] == ["0:我", "1:愛", "2:台", "3:灣"]
    assert traces[1]["y"] == ["0:我", "1:愛", "2:台", "3:灣"]
    assert _query(page)["text"] == "我愛台灣"

    # commit by leaving the box (blur)
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("注意力")
    with expect_rerun(page):
        page.keyboard.press("Tab")
    assert wait_for_heatmaps(page, 2)[0]["x"] == ["0:注", "1:意", "2:力"]
    assert _markdown(page).get_by_text("2:力", exact=True).count() == 1  # its chip
    assert_no_exception(page)
    screenshot(page, "heatmaps-typed")


_MARK_SVG = """() => { document.querySelector('.js-plotly-plot .main-svg').__studioMark = 1; }"""
_SAME_SVG = """() => !!document.querySelector('.js-plotly-plot .main-svg').__studioMark"""


def test_a_typed_sentence_updates_the_chart_in_place(app_server: str, page: Page) -> None:
    """Plotly.react only patches the chart when its config is unchanged; a config that
    differs (the SVG button's click function rebuilt on every run did) makes Plotly draw
    the whole chart from scratch and then again (ui/charts.py), a new <svg> each time."""
    open_page(page, app_server, params={"text": ARTICLE, "tokenizer": "char", "num_heads": 2})
    wait_for_heatmaps(page, 2)
    page.evaluate(_MARK_SVG)
    box = _sentence_box(page)
    box.fill("我愛台灣")
    with expect_rerun(page):
        box.press("Control+Enter")
    assert wait_for_heatmaps(page, 2)[0]["x"] == ["0:我", "1:愛", "2:台", "3:灣"]
    assert page.evaluate(_SAME_SVG), "the chart was drawn anew instead of updated"
    # the SVG button is still there and still named in the interface's language
    page.locator(".js-plotly-plot").first.hover()
    assert page.locator('.modebar-btn[data-title="Download plot as SVG (vector)"]').count() == 1
    assert_no_exception(page)


def test_each_heads_sentence_opens_from_the_summary_in_both_languages(
    app_server: str, page: Page
) -> None:
    """Beyond four heads the per-head sentences are folded: one click opens them, after a
    language switch too, and they name every head."""
    open_page(page, app_server, params={"text": "The cat sat on the mat.", "num_heads": 8})
    wait_for_heatmaps(page, 8)
    for lang, head in (("en", "head {i}"), ("zh-TW", "頭 {i}")):
        if lang != "en":
            set_language(page, lang)
            wait_for_heatmaps(page, 8)
        folded = page.locator(
            '[data-testid="stExpander"]', has_text=catalog_text("summary_expander", lang, heads=8)
        )
        assert folded.count() == 1
        folded.locator("summary").click()
        body = folded.locator(
            '[data-testid="stExpanderDetails"] [data-testid="stMarkdownContainer"]'
        )
        body.first.wait_for(state="visible")
        shown = body.first.inner_text()
        assert all(head.format(i=i) in shown for i in range(8)), shown
        assert_no_exception(page)
    screenshot(page, "heatmaps-summary-zh")


def test_num_heads_slider_and_url_change_the_head_count(app_server: str, page: Page) -> None:
    open_page(page, app_server, params={"text": ARTICLE, "embed_dim": 8, "num_heads": 1})
    assert len(wait_for_heatmaps(page, 1)) == 1

    open_page(page, app_server, params={"text": ARTICLE, "embed_dim": 8, "num_heads": 2})
    wait_for_heatmaps(page, 2)
    slider = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]')
    thumb = slider.locator('[data-testid="stSliderThumbValue"]')
    assert thumb.inner_text() == "2"
    # the real widget: click the thumb (focuses it), then step with the keyboard
    thumb.locator("..").click()
    with expect_rerun(page):
        page.keyboard.press("ArrowRight")  # options for embed_dim 8: 1, 2, 4, 8
    traces = wait_for_heatmaps(page, 4)
    assert [t["name"] for t in traces] == [f"head {i}" for i in range(4)]
    assert thumb.inner_text() == "4"
    assert _query(page)["num_heads"] == "4"
    with expect_rerun(page):
        page.keyboard.press("End")
    wait_for_heatmaps(page, 8)
    assert _query(page)["num_heads"] == "8"
    assert_no_exception(page)
    screenshot(page, "heatmaps-eight-heads")


def test_copied_url_reproduces_the_view_in_a_fresh_browser(
    app_server: str, page: Page, new_page: Callable[[], Page]
) -> None:
    open_page(page, app_server, params={"text": ARTICLE, "embed_dim": 8, "num_heads": 2})
    before = wait_for_heatmaps(page, 2)

    # change the view through widgets only, so the address bar is the app's doing
    seed = page.locator('[data-testid="stSidebar"]').get_by_role(
        "spinbutton", name="Seed (random weights)"
    )
    seed.fill("7")
    with expect_rerun(page):
        seed.press("Enter")
    with expect_rerun(page):
        page.locator('[data-testid="stSidebar"]').get_by_text("Causal mask").click()
    shown = wait_for_heatmaps(page, 2)
    assert _query(page)["seed"] == "7"
    assert _query(page)["causal"] == "true"
    assert shown[0]["z"] != before[0]["z"]  # the comparison below has something to catch
    # causal: the first token sees only itself (its later keys masked: no colour, NaN)
    assert all(v != v or v == 0 for v in shown[0]["z"][0][1:])

    other = new_page()
    open_page(other, page.url)
    again = wait_for_heatmaps(other, 2)
    assert _query(other) == _query(page)  # the whole link, every setting, as copied
    for a, b in zip(shown, again, strict=True):
        assert (b["x"], b["y"], b["name"]) == (a["x"], a["y"], a["name"])
        assert b["z"] == a["z"]  # same seed, same float32 weights, bit for bit
    assert_no_exception(other)
    screenshot(other, "heatmaps-shared-link")


def test_hostile_text_from_the_url_stays_inert(app_server: str, page: Page) -> None:
    dialogs = collect_dialogs(page)
    # manual tokenizer: each piece is one token, so it reaches chips, axes and summary
    tokens = [XSS, LINK]
    open_page(
        page, app_server, params={"text": "|".join(tokens), "tokenizer": "manual", "num_heads": 2}
    )
    traces = wait_for_heatmaps(page, 2)
    labels = [f"{i}:{t}" for i, t in enumerate(tokens)]
    assert shown_labels(traces[0]) == labels
    for label in labels:
        assert _markdown(page).get_by_text(label, exact=True).count() == 1  # the chip
    # the axes show the text (cut to 12 characters), so Plotly made no <img> and no SVG link
    ticks = page.locator(".js-plotly-plot").first.locator(".xtick text").all_text_contents()
    assert ticks[:2] == ["0:<img src=…", '1:<a href="…']
    assert page.locator(".js-plotly-plot svg a").count() == 0
    page.wait_for_timeout(300)  # an injected <img src=x> would have fired onerror by now
    assert _injected_images(page) == 0
    assert _javascript_links(page) == 0
    assert dialogs == []
    assert_no_exception(page)
    screenshot(page, "heatmaps-hostile-url")


def test_hostile_text_typed_stays_inert(app_server: str, page: Page) -> None:
    dialogs = collect_dialogs(page)
    open_page(page, app_server, params={"text": ARTICLE, "tokenizer": "manual", "num_heads": 2})
    wait_for_heatmaps(page, 2)
    box = _sentence_box(page)
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(XSS)
    with expect_rerun(page):
        page.keyboard.press("Control+Enter")
    assert shown_labels(wait_for_heatmaps(page, 2)[1], "y") == [f"0:{XSS}"]
    assert _markdown(page).get_by_text(f"0:{XSS}", exact=True).count() == 1  # the chip
    page.wait_for_timeout(300)  # an injected <img src=x> would have fired onerror by now
    assert _injected_images(page) == 0
    assert dialogs == []
    assert _query(page)["text"] == XSS
    assert_no_exception(page)
    screenshot(page, "heatmaps-hostile-typed")


def _hover_text(page: Page, row: int, col: int, n: int) -> list[str]:
    """Point at cell (row, col) of the first chart's first (n × n) panel; the hover label's
    lines as drawn (a <br> that Plotly read would split a line, a <b> would vanish)."""
    chart = page.locator(".js-plotly-plot").first
    box = chart.locator(".nsewdrag").first.bounding_box()  # the panel's plot area
    assert box is not None
    page.mouse.move(
        box["x"] + (col + 0.5) / n * box["width"], box["y"] + (row + 0.5) / n * box["height"]
    )
    label = chart.locator(".hoverlayer .hovertext").first
    label.wait_for()
    return label.locator("text").all_text_contents()


def test_markup_like_tokens_are_shown_literally_on_the_axes(app_server: str, page: Page) -> None:
    text = "<b>b</b>|x<br>y"  # short enough that no tick label is cut
    open_page(page, app_server, params={"text": text, "tokenizer": "manual", "num_heads": 2})
    wait_for_heatmaps(page, 2)
    ticks = page.locator(".js-plotly-plot").first.locator(".xtick text").all_text_contents()
    assert ticks[:2] == ["0:<b>b</b>", "1:x<br>y"]
    # the hover label names query → key from the same categories: literal too
    lines = _hover_text(page, row=0, col=1, n=2)
    assert sorted(lines)[0].startswith("0:<b>b</b> → 1:x<br>y: "), lines
    assert sorted(lines)[1] == "head 0" and len(lines) == 2, lines


def test_bad_url_values_warn_and_still_paint(app_server: str, page: Page) -> None:
    open_page(page, app_server, params={"embed_dim": -3, "num_heads": 5, "seed": "abc"})
    # fallbacks: embed_dim 16 (default), seed 0, num_heads 5 → nearest divisor of 16 → 4
    assert len(wait_for_heatmaps(page, 4)) == 4
    messages = alerts(page)
    assert len(messages) == 3, messages
    for key, value in (("embed_dim", "-3"), ("num_heads", "5"), ("seed", "abc")):
        assert any(key in m and value in m for m in messages), (key, messages)
    assert page.locator('[data-testid="stException"]').count() == 0
    query = _query(page)
    assert (query["embed_dim"], query["num_heads"], query["seed"]) == ("16", "4", "0")
    assert_no_exception(page)
    screenshot(page, "heatmaps-bad-url")


def test_traditional_chinese_interface(app_server: str, page: Page) -> None:
    open_page(page, app_server, params={"lang": "zh-TW", "text": ARTICLE, "num_heads": 2})
    wait_for_heatmaps(page, 2)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_role("textbox", name="句子").count() == 1
    assert sidebar.get_by_role("textbox", name="Sentence").count() == 0
    assert sidebar.get_by_role("radio", name="繁體中文").is_checked()
    assert _query(page)["lang"] == "zh-TW"
    assert CJK.search(page.locator('[data-testid="stMain"] h1').inner_text())
    assert_no_exception(page)
    screenshot(page, "heatmaps-zh-TW")


def test_first_visitor_after_a_restart_keeps_the_settings(page: Page) -> None:
    """A fresh server starts in Streamlit's legacy pages/ mode; without the app's guard
    (ui.common.entry_guard) the first session's first click reset every setting."""
    with serve_app("server-cold") as (url, log):
        open_page(page, url, params={"text": ARTICLE, "embed_dim": 8, "num_heads": 2})
        wait_for_heatmaps(page, 2)
        seed = page.locator('[data-testid="stSidebar"]').get_by_role(
            "spinbutton", name="Seed (random weights)"
        )
        seed.fill("7")
        with expect_rerun(page):
            seed.press("Enter")
        screenshot(page, "heatmaps-cold-server-first-change")
        query = _query(page)
        assert (query.get("text"), query["embed_dim"], query["num_heads"], query["seed"]) == (
            ARTICLE,
            "8",
            "2",
            "7",
        )
        wait_for_heatmaps(page, 2)
        log.assert_no_traceback(what="the cold server")
