"""End-to-end fixtures: the real app in a Streamlit server, driven by headless Chromium.

AppTest (tests/test_page_*.py) runs the scripts without a browser; these tests check what
only a browser shows: Plotly actually painting the heatmaps, CJK glyphs, typed input, the
address bar reproducing a view, user text staying inert.

Fixtures
    browser      session: Playwright Chromium (/usr/bin/chromium, fixed flags). Skips when
                 Chromium or playwright is missing, but FAILS when the CI variable is set.
    app_server   session: base URL of `streamlit run app.py` on a free port (offline env),
                 visited once before the tests (warm); output in tests/artifacts/server.log.
    server_log   session: that log (`ServerLog`); every test using app_server fails at
                 teardown if the server printed a "Traceback" while it ran.
    context      a fresh browser context (no cookies, no storage), 1400×1000, en-US.
    page         a new tab in `context`; on failure a screenshot FAILED-<test>.png is kept.
    new_page     factory: `new_page()` opens a tab in yet another fresh context.

Helpers (import them in a test module of this folder with `from .conftest import ...`)
    open_page(page, base_url, path="", params=None)   load a page, wait for its first run
    expect_rerun(page)            context manager: the action inside must trigger a rerun
    wait_for_heatmaps(page, count, chart=0) -> traces   wait until painted, return traces
    plotly_traces(page, chart=0) -> list[dict]   the traces Plotly drew (x, y, z, shape)
    screenshot(page, name) -> Path    full page, also the parts in Streamlit's scrollers
    collect_dialogs(page) -> list[str]    every alert/confirm/prompt (dismissed)
    collect_page_errors(page) -> list[str]   uncaught JavaScript errors
    alerts(page) -> list[str]     texts of st.info/warning/error boxes in the main area
    assert_no_exception(page)     no st.exception box (a traceback) on the page
    rendered_fonts(page, locator) -> list[dict]   fonts Chromium used for an element's text
    serve_app(log_name="server")  context manager → (url, ServerLog): a cold server of your own
    require_browser_tools()       the skip-locally / fail-under-CI decision, for own fixtures
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Locator, Page

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "tests" / "artifacts"  # the same folder as the artifacts_dir fixture
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 1000}  # wide enough for four heatmaps in a row
SERVER_START_S = 60.0
# The first run of a cold server imports torch and loads jieba's dictionary (~20 s here).
APP_TIMEOUT_MS = 90_000
_APP = '[data-testid="stApp"]'
_CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'


# --- marking and reporting -------------------------------------------------------------------
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder is a browser test, even if its module forgets the mark."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the item, so the page fixture knows a test failed."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# --- availability: skip locally, fail under CI ----------------------------------------------
def _missing_browser_tools() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


def require_browser_tools() -> None:
    """Skip the test when Chromium or playwright is missing; under CI, fail instead.

    The one place that decides: a CI run must never pass by skipping its browser tests.
    """
    problem = _missing_browser_tools()
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run: {problem} (CI is set, so this is a failure)")
    pytest.skip(f"browser tests skipped: {problem}")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless Chromium from Debian (never a Playwright-downloaded build)."""
    require_browser_tools()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# --- the Streamlit server --------------------------------------------------------------------
@dataclass
class ServerLog:
    """The server's combined stdout/stderr, checked for Python tracebacks."""

    path: Path
    reported: bool = False  # a traceback already failed some test: do not repeat it

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def text(self, since: int = 0) -> str:
        with self.path.open("rb") as f:
            f.seek(since)
            return f.read().decode("utf-8", errors="replace")

    def assert_no_traceback(self, since: int = 0, *, what: str = "the app") -> None:
        """Fail if the server printed a traceback after byte `since`."""
        new = self.text(since)
        if "Traceback" in new:
            self.reported = True
            start = new.index("Traceback")
            excerpt = new[max(0, start - 200) : start + 3000]
            pytest.fail(f"server-side exception while running {what} (see {self.path}):\n{excerpt}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the server and its children: the whole process group it leads, by its id."""
    if process.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def serve_app(log_name: str = "server") -> Iterator[tuple[str, ServerLog]]:
    """Run `streamlit run app.py` from the repo root on a free port until the block ends.

    Yields (base URL, its log at tests/artifacts/<log_name>.log). The `app_server` fixture
    is one shared instance; use this directly only for a cold server of your own (e.g. to
    test what the first visitor after a restart sees). The process group is always ended.
    """
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    log = ServerLog(ARTIFACTS_DIR / f"{log_name}.log")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",  # the log is complete when a test looks at it
    }
    with log.path.open("wb") as out:
        # its own session (process group), so teardown can end the server and its children
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + SERVER_START_S
            while not _healthy(url):
                if process.poll() is not None:
                    pytest.fail(f"streamlit exited with {process.returncode}:\n{log.text()}")
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"streamlit not healthy after {SERVER_START_S:.0f} s:\n{log.text()}"
                    )
                time.sleep(0.25)
            yield url, log
        finally:
            _stop(process)


@pytest.fixture(scope="session")
def _server(browser: Browser) -> Iterator[tuple[str, ServerLog]]:
    with serve_app() as (url, log):
        # One visit before the tests, so no test pays for (or times out on) the first run's
        # torch import and jieba load. What a first visitor sees is tested on a cold server
        # of its own (test_heatmaps_browser.py::test_first_visitor_after_a_restart_...).
        ctx = _configure(browser.new_context(viewport=VIEWPORT, locale="en-US"))
        try:
            open_page(ctx.new_page(), url)
        finally:
            ctx.close()
        yield url, log
    if not log.reported:
        log.assert_no_traceback(what="the browser tests")


@pytest.fixture(scope="session")
def app_server(_server: tuple[str, ServerLog]) -> str:
    """Base URL (no trailing slash) of the app, served from the repo root."""
    return _server[0]


@pytest.fixture(scope="session")
def server_log(_server: tuple[str, ServerLog]) -> ServerLog:
    """The server's output (tests/artifacts/server.log)."""
    return _server[1]


@pytest.fixture(autouse=True)
def _no_server_traceback(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that made the server print a traceback fails, even if the page looked fine."""
    if "app_server" not in request.fixturenames:
        yield
        return
    log: ServerLog = request.getfixturevalue("server_log")
    start = log.size()
    yield
    log.assert_no_traceback(start, what=request.node.nodeid)


# --- browser contexts and pages --------------------------------------------------------------
def _configure(context: BrowserContext) -> BrowserContext:
    context.set_default_timeout(APP_TIMEOUT_MS)
    return context


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh context: its own empty profile (cookies, storage), like a new visitor."""
    ctx = _configure(browser.new_context(viewport=VIEWPORT, locale="en-US"))
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A tab in `context`; if the test fails, its last view is saved for the report."""
    tab = context.new_page()
    yield tab
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and not tab.is_closed():
        try:
            screenshot(tab, f"FAILED-{request.node.name}")
        except Exception as error:
            print(f"could not save the failure screenshot: {error}")


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[], Page]]:
    """Factory for tabs in further fresh contexts (e.g. to open a shared link elsewhere)."""
    contexts: list[BrowserContext] = []

    def make() -> Page:
        ctx = _configure(browser.new_context(viewport=VIEWPORT, locale="en-US"))
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()


# --- helpers: waiting for the app ------------------------------------------------------------
# Counts finished script runs: data-test-script-state on stApp goes running → notRunning.
# Installed before the page's own scripts, so no run can finish unseen.
_RUN_WATCH = """
(() => {
  if (window.__stRuns !== undefined) return;
  window.__stRuns = 0;
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      const now = m.target.getAttribute('data-test-script-state');
      if (now === 'notRunning' && m.oldValue !== 'notRunning') window.__stRuns += 1;
    }
  }).observe(document, {
    subtree: true, attributes: true, attributeOldValue: true,
    attributeFilter: ['data-test-script-state'],
  });
})();
"""
_IDLE = """
(after) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return window.__stRuns > after && !!app
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED';
}
"""
_watched: weakref.WeakSet[Page] = weakref.WeakSet()


def _runs(page: Page) -> int:
    return int(page.evaluate("() => window.__stRuns || 0"))


def _wait_idle(page: Page, after: int, timeout_ms: float) -> None:
    page.wait_for_function(_IDLE, arg=after, timeout=timeout_ms, polling=100)


def open_page(
    page: Page,
    base_url: str,
    path: str = "",
    params: dict[str, Any] | None = None,
    *,
    timeout_ms: float = APP_TIMEOUT_MS,
) -> str:
    """Go to `base_url/path?params` and wait until the app's first script run has finished.

    `path` is a page's url_path (the file stem for `st.Page("pages/masks.py")`: "masks").
    Without `path` and `params`, `base_url` is opened exactly as given (a copied link).
    Returns the URL opened. Elements drawn after the run (Plotly charts) need their own
    wait: `wait_for_heatmaps`, or Playwright's `expect(locator)`.
    """
    if page not in _watched:
        page.add_init_script(_RUN_WATCH)
        _watched.add(page)
    url = base_url  # as given, when it is a whole address (e.g. a copied link with a query)
    if path or params:
        url = f"{base_url.rstrip('/')}/{path.lstrip('/')}"
    if params:
        url += "?" + urlencode({k: str(v) for k, v in params.items()})
    page.goto(url)
    _wait_idle(page, after=0, timeout_ms=timeout_ms)
    return url


@contextmanager
def expect_rerun(page: Page, *, timeout_ms: float = APP_TIMEOUT_MS) -> Iterator[None]:
    """`with expect_rerun(page): <interact>`: waits until the run it triggers has finished.

    Times out if the interaction triggers no rerun (e.g. a text area not yet committed).
    """
    before = _runs(page)
    yield
    _wait_idle(page, after=before, timeout_ms=timeout_ms)


# --- helpers: reading Plotly -----------------------------------------------------------------
_PAINTED = """
([selector, chart]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const plot = document.querySelectorAll(selector)[chart];
  if (!app || !plot || !plot._fullData) return null;
  const idle = app.getAttribute('data-test-script-state') === 'notRunning';
  const traces = plot._fullData.filter((t) => t.type === 'heatmap').length;
  // each heatmap is painted as an <image> with a data: URL inside its g.hm group
  const painted = [...plot.querySelectorAll('g.hm image')].filter((img) =>
    (img.getAttribute('href') || img.getAttribute('xlink:href') || '').startsWith('data:image')
  ).length;
  return {idle, traces, painted};
}
"""
_TRACES = """
([selector, chart]) => {
  const plot = document.querySelectorAll(selector)[chart];
  if (!plot) return null;
  const list = (a) => (a == null ? null : Array.from(a, (v) =>
    (v != null && typeof v === 'object' && 'length' in v) ? Array.from(v, Number) : v));
  return (plot._fullData || []).map((t) => ({
    type: t.type, name: t.name ?? null, visible: t.visible,
    x: list(t.x), y: list(t.y), z: list(t.z), text: list(t.text),
  }));
}
"""


def plotly_traces(page: Page, chart: int = 0) -> list[dict[str, Any]]:
    """The traces of the `chart`-th Plotly chart as drawn (Plotly's `_fullData`).

    Each: {"type", "name", "visible", "x", "y", "z", "text", "z_shape"}; heatmap z is a
    list of rows of floats (decoded from the base64 typed array Streamlit sent).
    """
    traces = page.evaluate(_TRACES, [_CHART, chart])
    if traces is None:
        raise AssertionError(f"no Plotly chart number {chart} on {page.url}")
    for t in traces:
        z = t["z"]
        if isinstance(z, list) and z and isinstance(z[0], list):
            t["z_shape"] = (len(z), len(z[0]))
        else:
            t["z_shape"] = (len(z),) if isinstance(z, list) else None
    return traces


def wait_for_heatmaps(
    page: Page, count: int, chart: int = 0, *, timeout_ms: float = APP_TIMEOUT_MS
) -> list[dict[str, Any]]:
    """Wait until chart `chart` holds exactly `count` heatmaps, all painted; return its traces."""
    deadline = time.monotonic() + timeout_ms / 1000
    state: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        state = page.evaluate(_PAINTED, [_CHART, chart])
        if state and state["idle"] and state["traces"] == count == state["painted"]:
            return plotly_traces(page, chart)
        page.wait_for_timeout(100)
    raise AssertionError(f"expected {count} painted heatmaps in chart {chart}, last saw {state}")


# --- helpers: what the page shows ------------------------------------------------------------
def screenshot(page: Page, name: str) -> Path:
    """Save tests/artifacts/<name>.png of the whole app, scrolled-away parts included.

    Streamlit scrolls inside its main area and sidebar, not the document, so a plain
    full-page shot would stop at the viewport: the viewport grows to fit, then shrinks back.
    """
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS_DIR / f"{name}.png"
    size = page.viewport_size or VIEWPORT
    tall = page.evaluate(
        """() => Math.max(...['stMain', 'stSidebarContent'].map(
             (id) => document.querySelector(`[data-testid="${id}"]`)?.scrollHeight || 0))"""
    )
    height = min(max(int(tall), size["height"]), 6000)
    if height > size["height"]:
        page.set_viewport_size({"width": size["width"], "height": height})
        page.wait_for_timeout(300)  # let charts re-layout to the new viewport
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


def alerts(page: Page) -> list[str]:
    """Texts of the st.info / st.warning / st.error / st.success boxes in the main area."""
    return page.locator('[data-testid="stMain"] [data-testid="stAlert"]').all_inner_texts()


def assert_no_exception(page: Page) -> None:
    """Fail if Streamlit shows an exception box (a traceback reached the page)."""
    boxes = page.locator('[data-testid="stException"]')
    if boxes.count():
        raise AssertionError(
            f"exception shown on {page.url}:\n" + "\n".join(boxes.all_inner_texts())
        )


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
