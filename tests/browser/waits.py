"""Waiting for the app in the browser: its script runs, its Plotly charts painted.

A test acts, then waits with these before it looks: `open_page` (a page's first run),
`expect_rerun` / `maybe_rerun` (the run an action does or may trigger), `wait_for_charts`
(every chart drawn), `wait_for_heatmaps` (one chart's heatmaps painted, with their traces).
"""

from __future__ import annotations

import json
import time
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from .chromium import APP_TIMEOUT_MS

if TYPE_CHECKING:
    from playwright.sync_api import Page

_CHART = ".studio-chart.js-plotly-plot"


# --- watching the app's script runs -----------------------------------------------------------
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
# What went wrong under the page, for a wait's failure message: a crash, failed requests,
# console errors (the last few of each).
_trouble: weakref.WeakKeyDictionary[Page, list[str]] = weakref.WeakKeyDictionary()


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

    trouble: list[str] = []

    def note(what: str) -> bool:
        trouble.append(what)
        del trouble[:-8]
        return True

    page.add_init_script(_RUN_WATCH)
    page.on("websocket", on_websocket)
    page.on("crash", lambda _page: note("the page crashed"))
    page.on("requestfailed", lambda r: note(f"request failed: {r.url} ({r.failure})"))
    page.on("console", lambda m: m.type == "error" and note(f"console error: {m.text[:200]}"))
    _watched[page] = finished
    _trouble[page] = trouble


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


def _run_states(page: Page, timeout_ms: float) -> Iterator[dict[str, Any]]:
    """The page's run state, looked at every 50 ms until `timeout_ms` have passed."""
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        try:
            state = _run_state(page)
        except Exception as error:  # the document is being replaced (a navigation): look again
            state = {"doc": None, "runs": 0, "script": None, "connection": None}
            state["unreadable"] = str(error).splitlines()[0][:200]
            page.wait_for_timeout(100)
            yield state
            continue
        yield state
        page.wait_for_timeout(50)


def _wait_idle(page: Page, after: _Runs, timeout_ms: float) -> None:
    """Wait until a run finished after `after` and the page shows the app idle."""
    state: dict[str, Any] = {}
    for state in _run_states(page, timeout_ms):
        if _is_idle(state) and _ran_since(page, after, state):
            return
    raise AssertionError(
        f"no finished run of the app within {timeout_ms / 1000:.0f} s on {page.url}: "
        f"{state}, before {after}, {_watched.get(page, [0])[0]} finished on the wire; "
        f"seen under the page: {_trouble.get(page) or 'nothing'}"
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
    if not _mounted(page, min(MOUNT_MS, timeout_ms)):
        warnings.warn(
            f"Streamlit's page did not mount within {MOUNT_MS / 1000:.0f} s on {page.url} "
            f"(seen under the page: {_trouble.get(page) or 'nothing'}); reloaded once",
            stacklevel=2,
        )
        page.reload()
    _wait_idle(page, after=_Runs(None, 0, wire), timeout_ms=timeout_ms)
    return url


# Streamlit's frontend draws its stApp element within a second or two of a page's load,
# whatever the server is doing, unless the scripts it loads lazily failed: Chromium aborts
# every request in flight when the machine's network changes (net::ERR_NETWORK_CHANGED, seen
# when another test made a network interface), and the page stays blank. `open_page` then
# reloads once, as a user would, and warns with what it saw under the page.
MOUNT_MS = 30_000


def _mounted(page: Page, timeout_ms: float) -> bool:
    """Has the page's stApp element appeared within `timeout_ms`?"""
    return any(state["script"] is not None for state in _run_states(page, timeout_ms))


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
    started = time.monotonic()
    quiet_since: float | None = None
    last: tuple[Any, ...] = ()
    state: dict[str, Any] = {}
    for state in _run_states(page, timeout_ms):
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
    raise AssertionError(f"the app did not become idle within {timeout_ms / 1000:.0f} s: {state}")


# --- reading Plotly ---------------------------------------------------------------------------
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
    weights: list(t.customdata ?? t.z),
  }));
}
"""


# The state of every chart: {idle, charts, waiting} (what still waits to be painted).
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

# `[selector, quietMs, seen]`: true if the charts' state stays `seen` for `quietMs`, looked
# at in the page after every settle (two frames and the queued updates, as above): one call
# instead of a look from Python every 100 ms, so a change between two of those looks cannot
# slip through, and the wait ends when the time is up, not at the next look after it.
_HOLDS_STILL = f"""
async ([selector, quietMs, seen]) => {{
  const settle = {_SETTLE.strip()};
  const state = {_ALL_PAINTED.strip()};
  const key = (s) => JSON.stringify([s.idle, s.charts, s.waiting]);
  const want = key(seen);
  const start = performance.now();
  for (;;) {{
    await settle();
    if (key(state(selector)) !== want) return false;
    if (performance.now() - start >= quietMs) return true;
  }}
}}
"""


def settle_charts(page: Page) -> None:
    """Two frames, then every chart's queued Plotly updates done (see _SETTLE)."""
    page.evaluate(_SETTLE)


def _holds_still(page: Page, quiet_ms: float, state: dict[str, Any]) -> bool:
    """_HOLDS_STILL; a document replaced while it watched (a navigation) has not held still."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        return bool(page.evaluate(_HOLDS_STILL, [_CHART, quiet_ms, state]))
    except PlaywrightError as error:
        if "context was destroyed" in str(error) or "navigat" in str(error):
            return False
        raise


def wait_for_charts(
    page: Page, *, quiet_ms: float = 300, timeout_ms: float = APP_TIMEOUT_MS
) -> int:
    """Wait until every Plotly chart on the page is drawn, its visible heatmaps painted
    (whatever their number), no skeleton stands in for an element still loading, the app
    is idle, and all that has held still for `quiet_ms`; return how many charts there are."""
    deadline = time.monotonic() + timeout_ms / 1000
    state: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        settle_charts(page)
        state = page.evaluate(_ALL_PAINTED, _CHART)
        if state["idle"] and not state["waiting"]:
            if _holds_still(page, quiet_ms, state):
                return int(state["charts"])
            continue  # it changed while it was watched: look again at once
        page.wait_for_timeout(100)
    raise AssertionError(f"charts not painted on {page.url}: {state}")


def plotly_traces(page: Page, chart: int = 0) -> list[dict[str, Any]]:
    """The traces of the `chart`-th Plotly chart as drawn (Plotly's `_fullData`).

    Each: {"type", "name", "visible", "x", "y", "z", "text", "weights", "z_shape"}; heatmap
    z is a list of rows of floats (decoded from the base64 typed array Streamlit sent);
    "weights" are the numbers a reader hovers: `customdata` where the colours follow a
    scale of their own (causal rows relative to their even share), else z.
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
        settle_charts(page)
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
