"""Operating the app's widgets in the browser, and reading the settings they show.

Where a test's locators start (`main_area`, `sidebar`), selectboxes, the language switch,
data editor cells; the settings as the address bar and the sidebar show them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from .chromium import APP_TIMEOUT_MS
from .waits import expect_rerun

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


# --- operating widgets ------------------------------------------------------------------------
LANG_LABELS = {"en": "English", "zh-TW": "繁體中文"}
_GRID_HEADER_PX = 35  # a data editor's header and every row are 35 px high (Streamlit 1.67)


def main_area(page: Page) -> Locator:
    """The page's own area: the sidebar has radios and selectboxes of its own."""
    return page.locator('[data-testid="stMain"]')


def sidebar(page: Page) -> Locator:
    return page.locator('[data-testid="stSidebar"]')


def pick_option(page: Page, combobox: Locator, option: str) -> None:
    """Open a selectbox (its combobox input) and click `option` in the list it opens.

    The list is rendered outside the widget (a popover), hence looked up on the page.
    The popover closes when the page scrolls, so the box is scrolled into view first, and
    a click that opened nothing (the scroll came after it) is followed by ArrowDown, which
    opens the list too. Use inside `expect_rerun` / `maybe_rerun`: picking another option
    reruns the app.
    """
    listbox = page.get_by_role("listbox").first
    combobox.scroll_into_view_if_needed()
    combobox.click()
    try:
        listbox.wait_for(state="visible", timeout=2_000)
    except Exception:
        combobox.press("ArrowDown")
        listbox.wait_for(state="visible", timeout=10_000)
    listbox.get_by_role("option", name=option, exact=True).click()
    listbox.wait_for(state="hidden")


def set_language(page: Page, lang: str) -> None:
    """Click the language's option in the sidebar and wait for the run it triggers."""
    option = sidebar(page).locator('[data-testid="stRadioOption"]', has_text=LANG_LABELS[lang])
    with expect_rerun(page):
        option.click()


def edit_cell(
    page: Page,
    grid: Locator,
    row: int,
    column: int,
    value: str,
    *,
    open_timeout_ms: float = APP_TIMEOUT_MS,
) -> None:
    """Type `value` into cell (row, column) of a data editor (`grid`: its stDataFrame);
    both count from 0, column 0 being the first column right of the index.

    Glide's grid is a canvas: click the row's index cell, move right to the cell, open its
    editor with Enter, replace its text and commit with Enter (a rerun, if it changed).
    A read-only table (st.dataframe) opens no editor: Playwright's TimeoutError after
    `open_timeout_ms`; so does a grid that is gone (a rerun the click set off replaced it),
    instead of each step waiting the context's whole default for it.
    """
    wait = open_timeout_ms
    # mid-screen: near the top, the app's header (transparent) would take the click
    grid.evaluate("(el) => el.scrollIntoView({block: 'center'})", timeout=wait)
    box = grid.bounding_box(timeout=wait)
    assert box is not None, "the data editor is not on screen"
    y = box["y"] + _GRID_HEADER_PX * (row + 1) + _GRID_HEADER_PX / 2
    page.mouse.click(box["x"] + 10, y)
    grid.locator("canvas").first.evaluate(
        "(canvas) => new Promise((done) => { const t = Date.now(); (function poll() {"
        " if (document.activeElement === canvas || Date.now() - t > 5000) done();"
        " else setTimeout(poll, 20); })(); })",
        timeout=wait,
    )  # the grid has the keyboard before the arrows go to it
    for _ in range(column + 1):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    editor = page.locator("input.gdg-input, textarea.gdg-input").first
    editor.wait_for(state="visible", timeout=wait)
    editor.fill(value, timeout=wait)
    editor.press("Enter", timeout=wait)


# --- the settings, as the address bar and the sidebar show them -------------------------------
SETTINGS_KEYS = (
    "lang",
    "text",
    "tokenizer",
    "attention",
    "embed_dim",
    "num_heads",
    "seed",
    "causal",
    "positional",
)
_SIDEBAR_VALUES = """
() => {
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  if (!sidebar) return null;
  const out = {};
  const label = (w) => (w.querySelector('[data-testid="stWidgetLabel"]')?.innerText || '').trim();
  const each = (id, read) => sidebar.querySelectorAll(`[data-testid="${id}"]`)
    .forEach((w) => { out[label(w)] = read(w); });
  each('stRadio', (w) => {
    const on = w.querySelector('input[type="radio"]:checked');
    return on ? on.closest('label').innerText.trim() : null;
  });
  each('stTextArea', (w) => w.querySelector('textarea').value);
  each('stSelectbox', (w) => w.querySelector('input').value);
  each('stNumberInput', (w) => w.querySelector('input').value);
  each('stSlider', (w) => w.querySelector('input[type="range"]').getAttribute('aria-valuetext'));
  sidebar.querySelectorAll('[data-testid="stCheckbox"] input').forEach((i) => {
    out[i.getAttribute('aria-label')] = i.checked;
  });
  return out;
}
"""


def url_params(page: Page) -> dict[str, str]:
    """The address bar's query parameters (the last value of each)."""
    query = parse_qs(urlsplit(page.url).query, keep_blank_values=True)  # "text=" is ""
    return {k: v[-1] for k, v in query.items()}


def sidebar_settings(page: Page) -> dict[str, str | None]:
    """The settings as the sidebar's widgets display them, in the URL's form.

    Widgets are found by their label in either language; a displayed option label is
    mapped back to its value ("繁體中文" → "zh-TW", "逐字" → "char"). A key whose widget
    is missing, or whose label is no option, maps to None.
    """
    from attention_core.i18n import LANGS, t
    from attention_core.settings import ATTENTION_KINDS, TOKENIZERS

    shown = page.evaluate(_SIDEBAR_VALUES) or {}
    options = {
        "lang": {"English": "en", "繁體中文": "zh-TW"},
        "tokenizer": {t(f"tokenizer_{o}", lang): o for o in TOKENIZERS for lang in LANGS},
        "attention": {t(f"attention_{o}", lang): o for o in ATTENTION_KINDS for lang in LANGS},
    }
    values: dict[str, str | None] = {}
    for key in SETTINGS_KEYS:
        labels = {t(f"{key}_label", lang) for lang in LANGS}
        raw = next((shown[label] for label in labels if label in shown), None)
        if isinstance(raw, bool):
            values[key] = str(raw).lower()
        elif raw is not None and key in options:
            values[key] = options[key].get(raw)
        else:
            values[key] = raw
    return values


def expect_settings(
    page: Page, expected: dict[str, str] | None = None, *, timeout_ms: float = 10_000
) -> dict[str, str]:
    """Wait until the address bar and the sidebar agree on every setting (and, given
    `expected`, hold those values); return the URL's settings. Fails with both views."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        url = {k: v for k, v in url_params(page).items() if k in SETTINGS_KEYS}
        shown = sidebar_settings(page)
        want = expected or {}
        wrong = {
            k: {"url": url.get(k), "sidebar": shown.get(k)}
            for k in SETTINGS_KEYS
            if url.get(k) != shown.get(k) or (k in want and url.get(k) != want[k])
        }
        if not wrong:
            return url
        if time.monotonic() > deadline:
            wanted = {k: want[k] for k in wrong if k in want}
            raise AssertionError(
                f"settings differ on {page.url}: {wrong}"
                + (f"; expected {wanted}" if wanted else "")
            )
        page.wait_for_timeout(100)
