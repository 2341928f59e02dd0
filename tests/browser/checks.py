"""What the page shows, and the checks on it that the browser tests share.

Screenshots (scrolled-away parts included), JS dialogs and uncaught errors, the alert and
error boxes, `assert_no_exception`, the walks' invariants (`check_page`), and the fonts
Chromium actually drew a text with.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.qr import read_qr

from .chromium import APP_TIMEOUT_MS, VIEWPORT
from .server import ARTIFACTS_DIR, ServerLog
from .waits import plotly_traces, wait_for_charts
from .widgets import expect_settings

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


# --- what the page shows ----------------------------------------------------------------------
# A Plotly chart follows the window's size (ui/charts.py: `responsive`): its handler of the
# window's resize event calls Plotly.Plots.resize, which relayouts 100 ms later and until
# then keeps `_resolveResize` on the chart. So: the resize event seen, then no relayout
# pending, then two frames painted. A bound (RELAYOUT_BOUND_MS) for a page where no resize
# event or relayout ever comes: the shot is then taken as the page is.
RELAYOUT_BOUND_MS = 5_000
# The walks' screenshots are for a person to look at: under CI, whose clone is thrown away
# with its artifacts, they are not taken (a tall one costs ~0.3 s of both cores: the
# viewport grown, every chart re-laid out twice) unless TEST_SCREENSHOTS=on asks for them.
SCREENSHOTS = os.environ.get("TEST_SCREENSHOTS", "off" if os.environ.get("CI") else "on") == "on"
_NOTE_RESIZE = """() => { window.__shotResized = false;
  window.addEventListener('resize', () => { window.__shotResized = true; }, {once: true}); }"""
_RELAID_OUT = f"""
async () => {{
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const pause = () => new Promise((r) => setTimeout(r, 20));
  const end = performance.now() + {RELAYOUT_BOUND_MS};
  const pending = () => [...document.querySelectorAll('.js-plotly-plot')]
    .some((plot) => plot._resolveResize);
  while (!window.__shotResized && performance.now() < end) await pause();
  while (pending() && performance.now() < end) await pause();
  await frames();
}}
"""


def window_shot(page: Page, name: str) -> Path | None:
    """tests/artifacts/<name>.png of what the window shows (not the whole scrolled page: a
    phone's or a projector's screen); not under CI (`SCREENSHOTS`). The path, or None."""
    if not SCREENSHOTS:
        return None
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS_DIR / f"{name}.png"
    page.screenshot(path=str(path))
    return path


DOCS_IMAGES = ARTIFACTS_DIR.parents[1] / "docs" / "images"
# A walk in the default run that also takes a picture the docs show writes it to the
# artifacts like its other shots; TEST_DOCS_IMAGES=on writes it over docs/images/<name>.png
# (a test run leaves the tracked files as they were)
DOCS_PICTURES = os.environ.get("TEST_DOCS_IMAGES", "off") == "on"


def docs_picture(page: Page, name: str) -> Path | None:
    """The viewport as the docs' picture `name`: docs/images/<name>.png with
    TEST_DOCS_IMAGES=on, else tests/artifacts/<name>.png (not under CI: `SCREENSHOTS`);
    the path written, or None."""
    if not DOCS_PICTURES:
        return window_shot(page, name)
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    path = DOCS_IMAGES / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def screenshot(page: Page, name: str) -> Path:
    """Save tests/artifacts/<name>.png of the whole app, scrolled-away parts included (not
    under CI: `SCREENSHOTS`).

    Streamlit scrolls inside its main area and sidebar, not the document, so a plain
    full-page shot would stop at the viewport: the viewport grows to fit, then shrinks back.
    """
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS_DIR / f"{name}.png"
    if not SCREENSHOTS:
        return path
    size = page.viewport_size or VIEWPORT
    tall = page.evaluate(
        """() => Math.max(...['stMain', 'stSidebarContent'].map(
             (id) => document.querySelector(`[data-testid="${id}"]`)?.scrollHeight || 0))"""
    )
    height = min(max(int(tall), size["height"]), 6000)
    if height > size["height"]:
        page.evaluate(_NOTE_RESIZE)
        page.set_viewport_size({"width": size["width"], "height": height})
        page.evaluate(_RELAID_OUT)  # the charts re-laid out to the new viewport
    try:
        page.screenshot(path=str(path), full_page=True)
    finally:
        if height > size["height"]:
            page.set_viewport_size(size)
    return path


def collect_dialogs(page: Page) -> list[str]:
    """A list that fills with "type: message" for each JS dialog; each is dismissed."""
    seen: list[str] = []

    def on_dialog(dialog: Any) -> None:
        seen.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return seen


def collect_page_errors(page: Page) -> list[str]:
    """A list that fills with every uncaught JavaScript error of the page."""
    seen: list[str] = []
    page.on("pageerror", lambda error: seen.append(str(error)))
    return seen


# st.error renders an stAlert whose content is stAlertContentError (probed in Chromium with
# Streamlit 1.67); st.exception uses the same content id but its own stException wrapper.
_ERROR_BOX = '[data-testid="stAlert"]:has([data-testid="stAlertContentError"])'


def _catalog_pattern(key: str) -> re.Pattern[str]:
    """A catalog string in either language as a pattern, its {placeholders} as wildcards."""
    from attention_core.i18n import LANGS, catalog

    def one(text: str) -> str:
        parts = re.split(r"\{[^{}]*\}", text)
        return ".*".join(re.escape(part) for part in parts)

    return re.compile("|".join(f"(?:{one(catalog()[key][lang])})" for lang in LANGS), re.DOTALL)


def expected_errors(*keys: str) -> list[re.Pattern[str]]:
    """Patterns of catalog messages that are st.error boxes by design, for `allow_errors`."""
    return [_catalog_pattern(key) for key in keys]


def alerts(page: Page) -> list[str]:
    """Texts of the st.info / st.warning / st.error / st.success boxes in the main area."""
    return page.locator('[data-testid="stMain"] [data-testid="stAlert"]').all_inner_texts()


def error_boxes(page: Page) -> list[str]:
    """Texts of the st.error boxes on the page, main area and sidebar (not st.exception)."""
    return page.locator(_ERROR_BOX).all_inner_texts()


def assert_no_exception(page: Page, *, allow_errors: Iterable[str | re.Pattern[str]] = ()) -> None:
    """Fail if Streamlit shows an exception box (a traceback reached the page) or an
    st.error box: the pages show one when a view failed (`analysis_or_stop`) or a check
    that must hold did not (masks: padding leaked; positions: not permutation-equivariant).

    `allow_errors`: error boxes a test expects, as substrings or compiled patterns (e.g.
    the quiz's red "not this time" after a wrong guess: `expected_errors("quiz_wrong")`).
    """
    boxes = page.locator('[data-testid="stException"]')
    if boxes.count():
        raise AssertionError(
            f"exception shown on {page.url}:\n" + "\n".join(boxes.all_inner_texts())
        )
    allowed = list(allow_errors)

    def expected(text: str) -> bool:
        return any(
            (a.search(text) is not None) if isinstance(a, re.Pattern) else a in text
            for a in allowed
        )

    unexpected = [text for text in error_boxes(page) if not expected(text)]
    if unexpected:
        raise AssertionError(f"error box shown on {page.url}:\n" + "\n".join(unexpected))


# --- the walks' invariants --------------------------------------------------------------------
def check_page(
    page: Page,
    log: ServerLog,
    since: int,
    *,
    what: str,
    expected: dict[str, str] | None = None,
    allow_errors: Iterable[str | re.Pattern[str]] = (),
    charts: bool = True,
    quiet_ms: float = 300,
) -> None:
    """The walks' invariants after a step: no exception or error box, no traceback in the
    server log since byte `since`, every chart painted (and still for `quiet_ms`), the
    URL and the sidebar showing the same settings (and `expected` ones)."""
    log.assert_no_traceback(since, what=what)
    if charts:
        wait_for_charts(page, quiet_ms=quiet_ms)
    assert_no_exception(page, allow_errors=allow_errors)
    expect_settings(page, expected)
    log.assert_no_traceback(since, what=what)


# --- fonts ------------------------------------------------------------------------------------
def rendered_fonts(page: Page, locator: Locator) -> list[dict[str, Any]]:
    """Fonts Chromium actually used for the text directly inside `locator`'s element.

    Each: {"family", "postscript", "glyphs", "custom"} (CDP CSS.getPlatformFontsForNode).
    Proves glyphs came from a real font: with no CJK font installed, Chinese text is drawn
    by some fallback face as tofu boxes and no "CJK" family appears here.
    """
    mark = uuid.uuid4().hex
    locator.evaluate("(el, mark) => el.setAttribute('data-font-probe', mark)", mark)
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = cdp.send(
            "DOM.querySelector", {"nodeId": root, "selector": f'[data-font-probe="{mark}"]'}
        )["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    finally:
        cdp.detach()
    return [
        {
            "family": f["familyName"],
            "postscript": f.get("postScriptName", ""),
            "glyphs": f["glyphCount"],
            "custom": f["isCustomFont"],
        }
        for f in fonts
    ]


def decode_qr(image: Locator) -> str:
    """The one QR code an image on the page shows, read from its pixels by zxing-cpp."""
    found = read_qr(image.screenshot())
    assert len(found) == 1, found
    return found[0]


def wait_for_qr(image: Locator, want: str, *, timeout_ms: float = APP_TIMEOUT_MS) -> str:
    """Read the QR code `image` shows until it says `want` or `timeout_ms` has passed, and
    return the last reading: a QR code redrawn after a rerun first shows its previous link,
    and an image replaced while it is read cannot be read."""
    from playwright.sync_api import Error as PlaywrightError

    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            found = read_qr(image.screenshot())
            last = found[0] if len(found) == 1 else f"{len(found)} QR codes: {found}"
        except PlaywrightError as error:  # replaced under the screenshot
            last = f"unreadable: {error}"
        if last == want or time.monotonic() > deadline:
            return last
        image.page.wait_for_timeout(200)


def assert_atlas_heatmaps(page: Page, shapes: list[tuple[int, int]]) -> None:
    """The Atlas's first chart drawn, its heatmaps of these (layers, heads) shapes."""
    wait_for_charts(page)
    drawn = [tr["z_shape"] for tr in plotly_traces(page, 0) if tr["type"] == "heatmap"]
    assert drawn == shapes, drawn


def assert_atlas_points(page: Page, heads: int) -> None:
    """The Atlas's head map drawn with one point for each of `heads`."""
    wait_for_charts(page)
    assert len(plotly_traces(page, 0)[0]["x"]) == heads
