"""End-to-end fixtures: the real app in a Streamlit server, driven by headless Chromium.

AppTest (tests/pages/) runs the scripts without a browser; these tests check what
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

Helpers, one module each job (import them in a test module of this folder, e.g.
`from .waits import open_page`)
  waits.py: waiting for the app
    open_page(page, base_url, path="", params=None)   load a page, wait for its first run
    expect_rerun(page)            context manager: the action inside must trigger a rerun
    maybe_rerun(page) -> Settled  context manager: wait for the run an action may trigger
    wait_for_charts(page)         every Plotly chart on the page drawn, heatmaps painted
    settle_charts(page)           two frames, then every chart's queued Plotly update drawn
    wait_for_heatmaps(page, count, chart=0) -> traces   wait until painted, return traces
    plotly_traces(page, chart=0) -> list[dict]   the traces Plotly drew (x, y, z, shape)
  checks.py: what the page shows
    screenshot(page, name) -> Path    full page, also the parts in Streamlit's scrollers
    collect_dialogs(page) -> list[str]    every alert/confirm/prompt (dismissed)
    collect_page_errors(page) -> list[str]   uncaught JavaScript errors
    alerts(page) -> list[str]     texts of st.info/warning/error boxes in the main area
    error_boxes(page) -> list[str]   texts of the st.error boxes anywhere on the page
    assert_no_exception(page, allow_errors=())   no exception box and no st.error box
    expected_errors(*keys)        catalog messages that are error boxes by design
    check_page(page, log, since, ...)   the walks' invariants after each step
    rendered_fonts(page, locator) -> list[dict]   fonts Chromium used for an element's text
    decode_qr(image) -> str          the QR code an image shows (zxing-cpp)
  widgets.py: operating widgets, the settings they show
    main_area(page), sidebar(page) -> Locator    where a test's locators should start
    pick_option(page, combobox, option)   open a selectbox, click an option in its list
    set_language(page, lang)      click English / 繁體中文 in the sidebar, wait for the run
    edit_cell(page, grid, row, column, value)   type a value into a data editor's cell
    url_params(page) -> dict      the address bar's query string
    sidebar_settings(page) -> dict   the settings as the sidebar's widgets display them
    expect_settings(page, expected=None)   wait until the URL and the sidebar agree
  server.py: the app's server
    serve_app(log_name="server")  context manager → (url, ServerLog): a cold server of your own
    ServerLog                     the server's output, checked for tracebacks
  chromium.py: the browser
    require_browser_tools()       the skip-locally / fail-under-CI decision, for own fixtures
    configure(context), new_context(browser)   contexts with the app's timeout (APP_TIMEOUT_MS)
    CHROMIUM, CHROMIUM_ARGS, VIEWPORT
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .checks import screenshot
from .chromium import CHROMIUM, CHROMIUM_ARGS, new_context, require_browser_tools
from .server import ServerLog, own_log_name, serve_app
from .waits import open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page


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


# --- the browser (availability: chromium.require_browser_tools) -----------------------------
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


# --- the Streamlit server ------------------------------------------------------------------
@pytest.fixture(scope="session")
def _server(browser: Browser) -> Iterator[tuple[str, ServerLog]]:
    with own_log_name("server") as log_name, serve_app(log_name) as (url, log):
        # One visit before the tests, so no test pays for (or times out on) the first run's
        # torch import and jieba load. What a first visitor sees is tested on a cold server
        # of its own (test_heatmaps_browser.py::test_first_visitor_after_a_restart_...).
        ctx = new_context(browser)
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
@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh context: its own empty profile (cookies, storage), like a new visitor."""
    ctx = new_context(browser)
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
        ctx = new_context(browser)
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()
