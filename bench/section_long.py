"""Section long: the landing page's long map at 1 024 / 2 048 / 4 096 tokens × 8
heads, and BertViz's head view of the same text on the same machine.

**The app.** A running server (`bench.app_server`), one Chromium tab. The tab loads a text of
n tokens (char tokenizer, embed_dim 64, 8 heads: the landing page's long map), then, timed:
- *typed → painted*: another text of n tokens typed into the sidebar's box, Ctrl+Enter, until
  every head's overview of the new map is drawn by Plotly (+ 2 animation frames). Includes
  the server's rerun: tokenizing, the module's q and k, the log-sum-exp pass, the overviews.
- *zoom → exact*: `Plotly.relayout` of head 0 to a 48 × 48 window, until its exact tile is
  painted: one request to /_studio/tile, its JSON, Plotly.react (+ 2 frames).
- *payload*: bytes the browser received over the websocket during the typed update (the
  overviews, tokens and the rest of the page's deltas).
- *server peak*: the server process's resident memory, highest sample (20 Hz) during the
  row, and the map the server keeps for the view (`LongAnalysis.nbytes`).

**BertViz.** bench/section_bertviz.py's child process with 8 heads × embed_dim 64: the same
text's weights (every one of them, from the same map), `head_view`, the page in one tab,
until its H·n² SVG lines are painted; its timeout or crash is recorded as a failure.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.app_server import streamlit_server
from bench.chromium import VIEWPORT, app_url, chromium, next_frames
from bench.measure import sentence
from bench.section_bertviz import TIMEOUT_S as BERTVIZ_TIMEOUT_S
from bench.tables import Table, fmt_s, median

__all__ = ["run"]

TOKENS = (1024, 2048, 4096)
HEADS = 8
EMBED_DIM = 64
REPEATS = 3
TIMEOUT_S = 120.0
BOX = '[data-testid="stSidebar"] textarea'
_PAINTED_JS = """([heads, old]) => {
  const root = document.querySelector('.studio-long');
  if (!root || root.__key === old) return false;
  const plots = [...root.querySelectorAll('.studio-long-head')];
  return plots.length === heads && plots.every((p) => p.dataset.painted === '1');
}"""
_KEY_JS = "() => { const r = document.querySelector('.studio-long'); return r ? r.__key : null; }"
_ZOOM_JS = """([a, b]) => Plotly.relayout(document.querySelector('.studio-long-head'),
  {'xaxis.range[0]': a, 'xaxis.range[1]': b, 'yaxis.range[0]': b, 'yaxis.range[1]': a})"""
_ZOOMED_JS = """([a, b]) => { const p = document.querySelector('.studio-long-head');
  return p.dataset.exact === '1' && p.dataset.rows === a + '-' + b; }"""


class _Peak:
    """The highest resident memory of a process (and its children), sampled at 20 Hz."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.proc = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def rss(self) -> int:
        import psutil

        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self.rss())

    def __enter__(self) -> _Peak:
        self.peak = self.rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _settings(n: int, variant: int) -> dict[str, object]:
    return {
        "text": sentence(n, variant=variant),
        "tokenizer": "char",
        "embed_dim": EMBED_DIM,
        "num_heads": HEADS,
    }


def _app(browser: Any, server: Any, n: int, repeats: int) -> dict[str, Any]:
    page = browser.new_page(viewport=VIEWPORT)
    received = [0]

    def on_socket(ws: Any) -> None:
        ws.on("framereceived", lambda frame: received.__setitem__(0, received[0] + len(frame)))

    page.on("websocket", on_socket)
    try:
        page.goto(app_url(server.url, _settings(n, 1)), wait_until="commit")
        page.wait_for_function(_PAINTED_JS, arg=[HEADS, None], timeout=TIMEOUT_S * 1000)
        typed, zooms, browser_ms, payloads = [], [], [], []
        box = page.locator(BOX)
        for r in range(repeats):
            old = page.evaluate(_KEY_JS)
            box.fill(sentence(n, variant=100 + r))
            received[0] = 0
            t0 = time.perf_counter()
            box.press("Control+Enter")
            page.wait_for_function(_PAINTED_JS, arg=[HEADS, old], timeout=TIMEOUT_S * 1000)
            next_frames(page)
            typed.append(time.perf_counter() - t0)
            payloads.append(received[0])
            a = 500 + 64 * r
            t0 = time.perf_counter()
            page.evaluate(_ZOOM_JS, [a, a + 48])
            page.wait_for_function(_ZOOMED_JS, arg=[a, a + 48], timeout=TIMEOUT_S * 1000)
            next_frames(page)
            zooms.append(time.perf_counter() - t0)
            browser_ms.append(
                float(
                    page.evaluate(
                        "() => document.querySelector('.studio-long-head').dataset.zoomMs"
                    )
                )
            )
        return {
            "typed": median(typed),
            "zoom": median(zooms),
            "zoom_fetch_ms": median(browser_ms),
            "payload": median(payloads),
        }
    finally:
        page.close()


def _map_bytes(n: int) -> int:
    from attention_core.long.run import analyze_long
    from attention_core.settings import Settings

    return analyze_long(Settings(**_settings(n, 1))).nbytes  # type: ignore[arg-type]


def _bertviz(n: int) -> dict[str, Any]:
    from bench.section_bertviz import _bertviz as child
    from bench.section_bertviz import _missing_js

    env = {"BENCH_BERTVIZ_HEADS": str(HEADS), "BENCH_BERTVIZ_EMBED_DIM": str(EMBED_DIM)}
    views = child(n, [100], env=env)
    view = views[-1] if views else {"status": "failed (no result)"}
    missing = _missing_js()
    if missing and view["status"] != "ok":  # it could not have painted: say why too
        view["status"] += f"; its JavaScript is not installed here ({', '.join(missing)})"
    return view


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    tokens = TOKENS[:1] if quick else TOKENS
    repeats = 1 if quick else REPEATS
    table = Table(
        f"Long prompts: the landing page's long map ({HEADS} heads, embed_dim {EMBED_DIM}) "
        "vs BertViz's head view of the same text",
        [
            "tokens",
            "typed → painted s",
            "zoom → exact painted s",
            "of which fetch → drawn ms",
            "payload MB",
            "server peak RSS MB",
            "map MB",
            "BertViz head view",
        ],
    )
    raw: dict[str, Any] = {}
    bertviz_failed = False
    with streamlit_server() as server, chromium() as browser:
        server.wait_warm()
        for n in tokens:
            with _Peak(server.process.pid) as peak:
                app = _app(browser, server, n, repeats)
            if bertviz_failed:
                viz = {"status": "not tried (failed at fewer tokens)"}
            else:
                viz = _bertviz(n)
                bertviz_failed = viz["status"] != "ok"
            raw[str(n)] = {"app": app, "peak_rss": peak.peak, "bertviz": viz}
            cell = f"{viz['seconds']:.2f} s" if viz["status"] == "ok" else viz["status"]
            if viz.get("html_bytes"):
                cell += f" ({viz['html_bytes'] / 1e6:.0f} MB HTML)"
            table.add(
                n,
                fmt_s(app["typed"]),
                fmt_s(app["zoom"]),
                f"{app['zoom_fetch_ms']:.0f}",
                f"{app['payload'] / 1e6:.2f}",
                f"{peak.peak / 1e6:.0f}",
                f"{_map_bytes(n) / 1e6:.1f}",
                cell,
            )
    table.notes += [
        f"medians of {repeats} typed texts (CJK characters, one token each) and zooms per row.",
        "typed → painted: Ctrl+Enter → every head's overview painted + 2 frames (the server's "
        "rerun: tokens, q and k, log-sum-exp pass, overviews). zoom: Plotly.relayout to a "
        "48 × 48 window → its exact tile painted + 2 frames; 'fetch → drawn' is the page's "
        "own clock (request to /_studio/tile → Plotly.newPlot done).",
        "payload: websocket bytes received during a typed update. server peak: resident "
        "memory of the server process during the row (the app, torch, Streamlit, every view "
        "in its caches); map: what the view itself keeps (q̂ and k̂ of every head).",
        "BertViz: bench/section_bertviz.py's child (its head view page in one Chromium tab, "
        f"{BERTVIZ_TIMEOUT_S:.0f} s budget there); a failure is recorded as it happened.",
    ]
    return [table], raw
