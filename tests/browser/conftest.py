"""End-to-end fixtures: the real app in a Streamlit server, driven by headless Chromium.

AppTest (tests/test_page_*.py) runs the scripts without a browser; these tests check what
only a browser shows: Plotly actually painting the heatmaps, CJK glyphs, typed input, the
address bar reproducing a view, user text staying inert.

Fixtures
    browser      session: Playwright Chromium (/usr/bin/chromium, fixed flags). Skips when
                 Chromium or playwright is missing, but FAILS when the CI variable is set.
    app_server   session: base URL of `streamlit run app.py` on a free port (offline env),
                 visited once before the tests (warm); output in tests/artifacts/server.log
                 (server-<pid>.log while another pytest session holds server.log).
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
    error_boxes(page) -> list[str]   texts of the st.error boxes anywhere on the page
    assert_no_exception(page, allow_errors=())   no exception box and no st.error box
    maybe_rerun(page) -> Settled  context manager: wait for the run an action may trigger
    wait_for_charts(page)         every Plotly chart on the page drawn, heatmaps painted
    url_params(page) -> dict      the address bar's query string
    sidebar_settings(page) -> dict   the settings as the sidebar's widgets display them
    check_page(page, log, since, ...)   the walks' invariants after each step
    main_area(page), sidebar(page) -> Locator    where a test's locators should start
    pick_option(page, combobox, option)   open a selectbox, click an option in its list
    set_language(page, lang)      click English / 繁體中文 in the sidebar, wait for the run
    edit_cell(page, grid, row, column, value)   type a value into a data editor's cell
    rendered_fonts(page, locator) -> list[dict]   fonts Chromium used for an element's text
    serve_app(log_name="server")  context manager → (url, ServerLog): a cold server of your own
    require_browser_tools()       the skip-locally / fail-under-CI decision, for own fixtures
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from bench.chromium import CHROMIUM as CHROMIUM_PATH
from bench.chromium import FLAGS
from deploy.app_server import HEALTH_PATH, free_port, start_app, stop, wait_healthy

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Locator, Page

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "tests" / "artifacts"  # the same folder as the artifacts_dir fixture
CHROMIUM = Path(CHROMIUM_PATH)
CHROMIUM_ARGS = FLAGS  # Debian's Chromium, offline, the same flags as the benchmarks
VIEWPORT = {"width": 1400, "height": 1000}  # wide enough for four heatmaps in a row
SERVER_START_S = 60.0
# The first run of a cold server imports torch and loads jieba's dictionary (~20 s here).
APP_TIMEOUT_MS = 90_000
_APP = '[data-testid="stApp"]'
_CHART = ".studio-chart.js-plotly-plot"


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


_free_port = free_port  # tests/browser/test_load.py and test_replicas.py import this name


@contextmanager
def serve_app(log_name: str = "server") -> Iterator[tuple[str, ServerLog]]:
    """Run `streamlit run app.py` from the repo root on a free port until the block ends.

    Yields (base URL, its log at tests/artifacts/<log_name>.log). The `app_server` fixture
    is one shared instance; use this directly only for a cold server of your own (e.g. to
    test what the first visitor after a restart sees). The process group is always ended.
    """
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    log = ServerLog(ARTIFACTS_DIR / f"{log_name}.log")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # deploy/app_server.py: the one way the app's server is started (offline environment,
    # fixed flags, its own process group, output to the log)
    process = start_app(port, log=log.path, app_dir=REPO_ROOT)
    try:
        try:
            wait_healthy(url + HEALTH_PATH, timeout=SERVER_START_S, proc=process)
        except (RuntimeError, TimeoutError) as error:
            pytest.fail(f"streamlit did not start: {error}\n{log.text()}")
        yield url, log
    finally:
        stop(process)


@contextmanager
def _own_log_name(name: str) -> Iterator[str]:
    """`name`, or `name-<pid>` while another test session (another pytest process) holds
    `name`: two servers writing one log would truncate each other's output, and one
    session's traceback would fail the other's tests."""
    import fcntl

    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS_DIR / f".{name}.lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield f"{name}-{os.getpid()}"
            return
        yield name  # the lock ends with the file's closing


@pytest.fixture(scope="session")
def _server(browser: Browser) -> Iterator[tuple[str, ServerLog]]:
    with _own_log_name("server") as log_name, serve_app(log_name) as (url, log):
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
# A finished script run is seen two ways, either one counts:
# - in the page: data-test-script-state on stApp goes running → notRunning (an observer
#   installed before the page's own scripts, so no run can finish unseen). A very short run
#   can be missed: when the browser is busy, React may apply "running" and "notRunning" in
#   one render, and the attribute never changes (seen on the 2-core machine);
# - on the wire: the server's ForwardMsg script_finished on the app's websocket, parsed
#   with Streamlit's own protobuf classes. The page may not have drawn that run yet when
#   the message is seen, so this count also waits for the page to show itself idle.
_RUN_WATCH = """
(() => {
  if (window.__stRuns !== undefined) return;
  window.__stRuns = 0;
  window.__stDoc = Math.random().toString(36).slice(2);  // a new document counts from 0
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
_RUN_STATE = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return {
    doc: window.__stDoc || null,
    runs: window.__stRuns || 0,
    script: app ? app.getAttribute('data-test-script-state') : null,
    connection: app ? app.getAttribute('data-test-connection-state') : null,
  };
}
"""
_TWO_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
_watched: weakref.WeakKeyDictionary[Page, list[int]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _Runs:
    """Runs finished so far: seen in the document `doc`, and on the page's websockets."""

    doc: str | None
    dom: int
    wire: int


def _watch(page: Page) -> None:
    """Count runs of `page` from now on (both ways above); idempotent."""
    if page in _watched:
        return
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    finished = [0]
    early = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN

    def on_frame(payload: bytes | str) -> None:
        if isinstance(payload, str):
            return
        try:
            message = ForwardMsg.FromString(payload)
        except Exception:  # not a ForwardMsg: ignore it
            return
        if message.WhichOneof("type") == "script_finished" and message.script_finished != early:
            finished[0] += 1

    def on_websocket(ws: Any) -> None:
        if ws.url.endswith("/_stcore/stream"):
            ws.on("framereceived", on_frame)

    page.add_init_script(_RUN_WATCH)
    page.on("websocket", on_websocket)
    _watched[page] = finished


def _run_state(page: Page) -> dict[str, Any]:
    return page.evaluate(_RUN_STATE)


def _runs(page: Page) -> _Runs:
    state = _run_state(page)
    return _Runs(state["doc"], int(state["runs"]), _watched.get(page, [0])[0])


def _is_idle(state: dict[str, Any]) -> bool:
    return state["script"] == "notRunning" and state["connection"] == "CONNECTED"


def _ran_since(page: Page, before: _Runs, state: dict[str, Any]) -> bool:
    """Has a run finished since `before`? (In the page's eyes, or on the wire and the page
    has since had two frames to draw it and still shows itself idle.)"""
    dom_before = before.dom if state["doc"] == before.doc else 0
    if state["runs"] > dom_before:
        return True
    if _watched.get(page, [0])[0] > before.wire:
        page.evaluate(_TWO_FRAMES)
        return _is_idle(_run_state(page))
    return False


def _wait_idle(page: Page, after: _Runs, timeout_ms: float) -> None:
    """Wait until a run finished after `after` and the page shows the app idle."""
    deadline = time.monotonic() + timeout_ms / 1000
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            state = _run_state(page)
        except Exception:  # the document is being replaced (a navigation): look again
            page.wait_for_timeout(100)
            continue
        if _is_idle(state) and _ran_since(page, after, state):
            return
        page.wait_for_timeout(50)
    raise AssertionError(
        f"no finished run of the app within {timeout_ms / 1000:.0f} s on {page.url}: "
        f"{state}, before {after}, {_watched.get(page, [0])[0]} finished on the wire"
    )


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
    _watch(page)
    url = base_url  # as given, when it is a whole address (e.g. a copied link with a query)
    if path or params:
        url = f"{base_url.rstrip('/')}/{path.lstrip('/')}"
    if params:
        url += "?" + urlencode({k: str(v) for k, v in params.items()})
    wire = _watched[page][0]
    page.goto(url)
    _wait_idle(page, after=_Runs(None, 0, wire), timeout_ms=timeout_ms)
    return url


@contextmanager
def expect_rerun(page: Page, *, timeout_ms: float = APP_TIMEOUT_MS) -> Iterator[None]:
    """`with expect_rerun(page): <interact>`: waits until the run it triggers has finished.

    Times out if the interaction triggers no rerun (e.g. a text area not yet committed).
    """
    before = _runs(page)
    yield
    _wait_idle(page, after=before, timeout_ms=timeout_ms)


@dataclass
class Settled:
    """What `maybe_rerun` saw: whether the action made the app run its script again."""

    reran: bool = False


@contextmanager
def maybe_rerun(
    page: Page,
    *,
    start_ms: float = 800,
    quiet_ms: float = 250,
    timeout_ms: float = APP_TIMEOUT_MS,
) -> Iterator[Settled]:
    """`with maybe_rerun(page) as settled: <interact>`: the app is idle again afterwards.

    For actions that may or may not rerun the script (a click on an already selected
    option, a download, a cell edit that changes nothing): waits for a run that finished
    after the action, or, if none has within `start_ms`, for the app to be connected and
    not running. Either way the app must then stay idle for `quiet_ms` with no further
    run (a run can queue the next one: st.rerun, st.switch_page). A reload or a move to
    another document (browser back to another page) counts its page-side runs from 0.
    """
    _watch(page)
    before = _runs(page)
    settled = Settled()
    yield settled
    deadline = time.monotonic() + timeout_ms / 1000
    started = time.monotonic()
    quiet_since: float | None = None
    last: tuple[Any, ...] = ()
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            state = _run_state(page)
        except Exception:  # the document is being replaced (a navigation): look again
            page.wait_for_timeout(100)
            continue
        now = (state["doc"], state["runs"], _watched[page][0])
        if not _is_idle(state) or now != last:
            quiet_since = None  # something is still happening
        elif quiet_since is None:
            quiet_since = time.monotonic()
        last = now
        if quiet_since is not None and (time.monotonic() - quiet_since) * 1000 >= quiet_ms:
            ran = _ran_since(page, before, state)
            if ran or state["doc"] != before.doc or (time.monotonic() - started) * 1000 >= start_ms:
                settled.reran = ran
                return
        page.wait_for_timeout(50)
    raise AssertionError(f"the app did not become idle within {timeout_ms / 1000:.0f} s: {state}")


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


_ALL_PAINTED = """
(selector) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = !!app && app.getAttribute('data-test-script-state') === 'notRunning';
  const boxes = document.querySelectorAll('.studio-chart').length;  // drawn or not yet
  const plots = [...document.querySelectorAll(selector)];
  const waiting = plots.map((plot, i) => {
    if (!plot._fullData) return `chart ${i}: not drawn`;
    const heatmaps = plot._fullData.filter((t) => t.type === 'heatmap' && t.visible === true);
    const painted = [...plot.querySelectorAll('g.hm image')].filter((img) =>
      (img.getAttribute('href') || img.getAttribute('xlink:href') || '').startsWith('data:image')
    ).length;
    return painted >= heatmaps.length ? null : `chart ${i}: ${painted}/${heatmaps.length} painted`;
  }).filter((w) => w !== null);
  if (plots.length < boxes) waiting.push(`${boxes - plots.length} chart(s) not mounted`);
  // a chart's code loads lazily: until it has, the page shows a skeleton in its place
  const skeletons = document.querySelectorAll('[data-testid="stSkeleton"]').length;
  if (skeletons) waiting.push(`${skeletons} skeleton(s) still shown`);
  return {idle, charts: plots.length, waiting};
}
"""


# The app's charts (ui/charts.py) stay mounted and take each new figure with Plotly.react,
# queued on the element (`__studioQueue`): a chart can show the previous run's figure for a
# moment after the run. So every look waits two frames (the component receives the run's
# data) and for the queued updates, and a chart's state counts once it holds still.
_SETTLE = """
async () => {
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  await Promise.all([...document.querySelectorAll('.studio-chart')]
    .map((plot) => plot.__studioQueue));
}
"""


def _settle_charts(page: Page) -> None:
    page.evaluate(_SETTLE)


def wait_for_charts(
    page: Page, *, quiet_ms: float = 300, timeout_ms: float = APP_TIMEOUT_MS
) -> int:
    """Wait until every Plotly chart on the page is drawn, its visible heatmaps painted
    (whatever their number), no skeleton stands in for an element still loading, the app
    is idle, and all that has held still for `quiet_ms`; return how many charts there are."""
    deadline = time.monotonic() + timeout_ms / 1000
    state: dict[str, Any] | None = None
    since: float | None = None
    while time.monotonic() < deadline:
        _settle_charts(page)
        now = page.evaluate(_ALL_PAINTED, _CHART)
        ready = now["idle"] and not now["waiting"]
        if not ready or now != state:
            since = time.monotonic() if ready else None
        state = now
        if since is not None and (time.monotonic() - since) * 1000 >= quiet_ms:
            return int(now["charts"])
        page.wait_for_timeout(100)
    raise AssertionError(f"charts not painted on {page.url}: {state}")


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
    """Wait until chart `chart` holds exactly `count` heatmaps, all painted, the same on two
    looks in a row (an updated chart first shows its previous figure); return its traces."""
    deadline = time.monotonic() + timeout_ms / 1000
    state: dict[str, Any] | None = None
    last: str | None = None
    while time.monotonic() < deadline:
        _settle_charts(page)
        state = page.evaluate(_PAINTED, [_CHART, chart])
        if state and state["idle"] and state["traces"] == count == state["painted"]:
            traces = plotly_traces(page, chart)
            seen = json.dumps(traces, sort_keys=True)  # NaN-safe: NaN != NaN, "NaN" == "NaN"
            if seen == last:
                return traces
            last = seen
        else:
            last = None
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


# --- helpers: operating widgets --------------------------------------------------------------
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
    `open_timeout_ms`.
    """
    # mid-screen: near the top, the app's header (transparent) would take the click
    grid.evaluate("(el) => el.scrollIntoView({block: 'center'})")
    box = grid.bounding_box()
    assert box is not None, "the data editor is not on screen"
    y = box["y"] + _GRID_HEADER_PX * (row + 1) + _GRID_HEADER_PX / 2
    page.mouse.click(box["x"] + 10, y)
    grid.locator("canvas").first.evaluate(
        "(canvas) => new Promise((done) => { const t = Date.now(); (function poll() {"
        " if (document.activeElement === canvas || Date.now() - t > 5000) done();"
        " else setTimeout(poll, 20); })(); })"
    )  # the grid has the keyboard before the arrows go to it
    for _ in range(column + 1):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    editor = page.locator("input.gdg-input, textarea.gdg-input").first
    editor.wait_for(state="visible", timeout=open_timeout_ms)
    editor.fill(value)
    editor.press("Enter")


# --- helpers: the settings, as the address bar and the sidebar show them --------------------
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
