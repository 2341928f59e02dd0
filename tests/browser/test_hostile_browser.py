"""Hostile input in real Chromium: user text may never run, inject elements or render markup.

Each hostile string goes in twice, as a student would: in a shared link, then typed into
the sidebar's text area. After each, the page must have fired no dialog, set no flag from
an injected handler, created no element from the text (no <img src=x>, no on* attribute,
no javascript: link, no inline script with the payload, no KaTeX, no <strong>), and show
the text literally in its token chip. Also: a student who sends the largest possible view
does not stop a classmate's updates, and the CSV download holds exactly the chart's numbers.
Screenshots: tests/artifacts/hostile-*.png.
"""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Locator, Page, expect

from attention_core.export import spreadsheet_text
from attention_core.pipeline import token_labels
from attention_core.tokenize import tokenize
from tests.support.apptest import shown_labels

from .checks import alerts, assert_no_exception, collect_dialogs, collect_page_errors, screenshot
from .waits import expect_rerun, open_page, wait_for_heatmaps

pytestmark = pytest.mark.browser

# Payloads set window.__pwned as well as calling alert, so a run that swallowed dialogs
# would still be caught.
HOSTILE = {
    "script": "<script>window.__pwned=1;alert(1)</script>",
    "img-onerror": "<img src=x onerror=window.__pwned=1;alert(1)>",
    "javascript-link": "[click](javascript:window.__pwned=1)",
    "markdown": "**bold** _it_ # head",
    "latex": "$$\\frac{1}{0}$$ $x^2$",
    "directive": ":red[red] :material/home:",
}
SMALL = {"tokenizer": "manual", "embed_dim": 8, "num_heads": 2}

# Every trace user text could leave in the DOM if it were rendered instead of shown.
_INJECTED = """
() => {
  const all = [...document.querySelectorAll('*')];
  const bad = [];
  for (const el of all) {
    for (const a of el.attributes) {
      if (/^on/i.test(a.name)) bad.push(`${el.tagName}[${a.name}]`);
      if (/^(href|xlink:href|src|action|formaction)$/i.test(a.name)
          && /^\\s*javascript:/i.test(a.value)) bad.push(`${el.tagName}[${a.name}=js]`);
      if (/^(src|href|xlink:href)$/i.test(a.name) && a.value === 'x') bad.push(`${el.tagName}[x]`);
    }
    if (el.tagName === 'SCRIPT' && /__pwned|alert\\(/.test(el.textContent)) bad.push('SCRIPT');
  }
  if (window.__pwned !== undefined) bad.push('window.__pwned');
  return bad;
}
"""
# Markup user text would have produced inside the markdown that shows it (chips, summary).
# The summary's own markup is allowed: each head's plain sentence, in bold, opens its
# paragraph ("head 0 looks at ..."), and holds no user text.
_RENDERED = """
(text) => [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stMarkdownContainer"]')]
  .filter((box) => box.textContent.includes(text))
  .flatMap((box) => [...box.querySelectorAll(
    'a, img, svg, script, iframe, strong, em, del, code, blockquote, h1, h2, h3, h4, h5, h6, .katex'
  )].filter((el) => !(el.tagName === 'STRONG' && el.parentElement.tagName === 'P'
      && el === el.parentElement.firstElementChild && /^head \\d+\\b/.test(el.textContent)
      && !el.textContent.includes(text)))
    .map((el) => el.tagName + '.' + el.className))
"""


def _sentence_box(page: Page) -> Locator:
    return page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")


def _chip(page: Page, text: str) -> Locator:
    main = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')
    return main.get_by_text(text, exact=True)


def _assert_inert(page: Page, index: int, text: str, dialogs: list[str], name: str) -> None:
    assert page.evaluate(_INJECTED) == [], name
    assert page.evaluate(_RENDERED, text) == [], name
    assert dialogs == [], name
    chip = _chip(page, f"{index}:{text}")
    assert chip.count() == 1 and chip.is_visible(), f"{name}: the chip shows the text literally"
    assert_no_exception(page)


def test_hostile_strings_in_a_link_stay_inert(app_server: str, page: Page):
    """All of them at once, one manual token each: chips, axes and summary lines."""
    dialogs = collect_dialogs(page)
    errors = collect_page_errors(page)
    texts = list(HOSTILE.values())
    open_page(page, app_server, params={"text": " | ".join(texts), **SMALL})
    assert shown_labels(wait_for_heatmaps(page, 2)[0]) == [f"{i}:{t}" for i, t in enumerate(texts)]
    page.wait_for_timeout(500)  # an injected handler would have fired by now
    for i, (name, text) in enumerate(HOSTILE.items()):
        _assert_inert(page, i, text, dialogs, name)
    assert errors == []
    screenshot(page, "hostile-link")


def test_hostile_strings_typed_stay_inert(app_server: str, page: Page):
    """Each typed into the sidebar's text area, key by key, and committed with Ctrl+Enter."""
    dialogs = collect_dialogs(page)
    errors = collect_page_errors(page)
    open_page(page, app_server, params={"text": "start", **SMALL})
    wait_for_heatmaps(page, 2)
    box = _sentence_box(page)
    for name, text in HOSTILE.items():
        box.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(text)
        with expect_rerun(page):
            page.keyboard.press("Control+Enter")
        assert shown_labels(wait_for_heatmaps(page, 2)[1], "y") == [f"0:{text}"], name
        page.wait_for_timeout(300)  # an injected handler would have fired by now
        _assert_inert(page, 0, text, dialogs, name)
        screenshot(page, f"hostile-typed-{name}")
    assert errors == []


def test_odd_bytes_in_the_link_still_give_a_page(app_server: str, page: Page):
    """Invalid UTF-8, NUL and a bidi override in the raw query string."""
    dialogs = collect_dialogs(page)
    page.goto(f"{app_server}/?text=%FF%FE%00a%E2%80%AEb%0Ac&tokenizer=char&seed=%00&lang=%C0")
    wait_for_heatmaps(page, 4)
    assert_no_exception(page)
    messages = alerts(page)
    assert any("seed" in m for m in messages) and any("lang" in m for m in messages), messages
    assert page.evaluate(_INJECTED) == [] and dialogs == []
    screenshot(page, "hostile-odd-bytes")


def test_one_students_huge_view_does_not_block_a_classmate(app_server: str, new_page):
    """The largest view anyone can ask for (a long map of 4 096 tokens, embed_dim 1024,
    64 heads: a long map) in one tab; meanwhile a classmate's edits keep coming back."""
    hog, classmate = new_page(), new_page()
    open_page(classmate, app_server, params={"text": "the cat sat", **SMALL, "tokenizer": "word"})
    wait_for_heatmaps(classmate, 2)

    huge = {"text": "ab " * 5000, "tokenizer": "word", "embed_dim": 1024, "num_heads": 64}
    hog.goto(f"{app_server}/?{urlencode(huge)}")  # not waited for: its run goes on meanwhile
    box = _sentence_box(classmate)
    for sentence in ("a dog ran", "one more sentence here", "done now"):
        box.click()
        classmate.keyboard.press("Control+A")
        classmate.keyboard.type(sentence)
        with expect_rerun(classmate):
            classmate.keyboard.press("Control+Enter")
        expected = token_labels(tokenize(sentence, "word"))
        assert wait_for_heatmaps(classmate, 2)[0]["x"] == expected
    assert_no_exception(classmate)
    screenshot(classmate, "hostile-classmate-during-huge-view")

    # The hog is told its text was cut, and sees no error (its 64 heads' overviews may
    # still be painting: the test does not wait for that).
    truncated = hog.locator('[data-testid="stMain"] [data-testid="stAlert"]', has_text="4096")
    expect(truncated).to_be_visible(timeout=240_000)
    assert_no_exception(hog)


def test_csv_download_holds_exactly_the_chart(app_server: str, page: Page):
    text = '<b>中和</b> | =1+1 | 有, "一個" | 永和路'
    open_page(page, app_server, params={"text": text, **SMALL, "seed": 3})
    traces = wait_for_heatmaps(page, 2)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV").click()
    download = info.value
    assert re.fullmatch(r"attention(-[A-Za-z0-9_-]+)?\.csv", download.suggested_filename)
    rows = list(csv.DictReader(io.StringIO(download.path().read_text(encoding="utf-8"))))
    labels = shown_labels(traces[0])
    assert len(rows) == len(traces) * len(labels) ** 2
    for row in rows:
        head = next(t for t in traces if t["name"] == row["head"])
        i, j = int(row["query_index"]), int(row["key_index"])
        # a cell that would start a spreadsheet formula (=1+1) is apostrophe-quoted
        assert f"{i}:{spreadsheet_text(row['query_token'])}" == labels[i]
        # Plotly holds the float32 weights (as JS numbers); the CSV holds repr(float(w)).
        assert float(row["weight"]) == head["z"][i][j]
    screenshot(page, "hostile-download")
