"""Section 5, bertviz: BertViz's head view against this app, same weights, same Chromium.

BertViz 1.4.1's `head_view(attention, tokens, html_action="return")` returns HTML that
loads require.js, d3 5 and jQuery from cdnjs. Offline, Playwright's request routing
answers those URLs with the npm packages in bench/node_modules (`npm install --prefix
bench`, see bench/package.json) and refuses every other request. The attention is this
project's module's (12 heads, n tokens, char tokenizer), in BertViz's format: a tuple of
layers, each a (1, H, n, n) torch tensor.

BertViz draws one SVG <line> per (head, query, key): H·n² elements, all in one synchronous
d3 callback. "Painted" = its `#attention` group holds H head groups (the callback has
finished) and two animation frames have passed. Each attempt runs in a child process with
its own Chromium and gets TIMEOUT_S; a page that has not painted by then is reported as
"failed (timeout)", and the child and everything it started are killed (a renderer busy
with millions of SVG elements takes minutes to close gracefully, or takes the browser down).

This app's side: page load → every panel painted (bench/section_browser.py) for the same n and 12
heads, against a warm server. BertViz's page is static HTML (the weights inlined as JSON),
so its time is pure browser work; the app's includes the server's analysis.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.app_server import streamlit_server
from bench.chromium import VIEWPORT, chromium
from bench.measure import REPO, sentence
from bench.section_browser import measure_page
from bench.tables import Table, fmt_s, median

__all__ = ["bertviz_html", "run"]

TOKENS = (32, 128, 256, 512)
HEADS = 12
EMBED_DIM = 192
TIMEOUT_S = 60.0
CHILD_SLACK_S = 60.0  # on top of TIMEOUT_S: Python and Chromium start, the HTML is built
NODE_MODULES = Path(__file__).resolve().parent / "node_modules"
PAGE_URL = "http://bertviz.bench.invalid/head_view.html"
# what bertviz's HTML asks for (head_view.py and head_view.js of bertviz 1.4.1) → local file
CDN_FILES = {
    "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js": (
        "requirejs/require.js"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min.js": "d3/dist/d3.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min.js": (
        "jquery/dist/jquery.min.js"
    ),
}
_DONE_JS = """(heads) => {
  const g = document.querySelector('#attention');
  return !!g && g.childElementCount === heads;
}"""
_FRAMES_JS = """() => { window.__benchFrames = false;
  requestAnimationFrame(() => requestAnimationFrame(() => { window.__benchFrames = true; })); }"""


def _missing_js() -> list[str]:
    return [rel for rel in CDN_FILES.values() if not (NODE_MODULES / rel).is_file()]


def bertviz_html(n: int) -> tuple[str, int]:
    """BertViz's head view of this project's 12-head attention for n tokens: (html, bytes)."""
    import torch
    from bertviz import head_view

    from attention_core.pipeline import analyze
    from attention_core.settings import Settings

    a = analyze(Settings(text=sentence(n), tokenizer="char", embed_dim=EMBED_DIM, num_heads=HEADS))
    attention = (torch.from_numpy(a.weights).unsqueeze(0),)  # 1 layer of (1, H, n, n)
    html = head_view(attention, [t.text for t in a.tokens], html_action="return").data
    return html, len(html.encode("utf-8"))


def _route(html: str):
    def handle(route: Any) -> None:
        url = route.request.url
        if url == PAGE_URL:
            route.fulfill(body=html, content_type="text/html; charset=utf-8")
        elif url in CDN_FILES:
            route.fulfill(path=str(NODE_MODULES / CDN_FILES[url]), content_type="text/javascript")
        else:
            route.abort()  # offline: nothing else may be fetched

    return handle


def _paint_bertviz(n: int) -> None:
    """The child process of `_attempt`: BertViz's view of n tokens in a fresh Chromium.

    Prints JSON lines (the HTML size first, then the status and the seconds from
    navigation to painted) and leaves at once with os._exit, without closing the browser:
    closing a renderer that is still busy can take minutes; the parent kills what is left.
    """
    html, size = bertviz_html(n)
    print(json.dumps({"html_bytes": size}), flush=True)  # known even if painting hangs
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", _route(html))
        start = time.perf_counter()
        deadline = start + TIMEOUT_S
        result: dict[str, Any] = {"status": "ok"}
        try:
            page.goto(PAGE_URL, wait_until="commit", timeout=TIMEOUT_S * 1000)
            left = max(1.0, deadline - time.perf_counter())
            page.wait_for_function(_DONE_JS, arg=HEADS, polling=100, timeout=left * 1000)
            page.evaluate(_FRAMES_JS)
            left = max(1.0, deadline - time.perf_counter())
            page.wait_for_function(
                "() => window.__benchFrames === true", polling=50, timeout=left * 1000
            )
            result["seconds"] = time.perf_counter() - start
        except Exception as error:  # Playwright's TimeoutError, or the renderer crashing
            timeout = "Timeout" in type(error).__name__ or "Timeout" in str(error)
            why = "timeout" if timeout else type(error).__name__
            result["status"] = (
                f"failed (page error: {errors[0][:80]})" if errors else f"failed ({why})"
            )
        print(json.dumps(result), flush=True)
        os._exit(0)


def _attempt(n: int) -> dict[str, Any]:
    """`_paint_bertviz(n)` in a child process with a hard deadline.

    A page of 12·512² SVG lines can hang or kill its renderer, and closing it gracefully
    then takes minutes. So the child leaves without closing its browser, or is killed at
    the deadline, and every process it started (Playwright's driver, Chromium, which runs
    detached in a process group of its own) is killed by process id: they are recorded
    while the child runs, with their start times so that a reused id is never touched.
    """
    import psutil

    child = subprocess.Popen(
        [sys.executable, "-m", "bench.section_bertviz", str(n)],
        cwd=REPO,
        stdout=subprocess.PIPE,  # a few short JSON lines: the pipe never fills
        stderr=subprocess.DEVNULL,
        text=True,
    )
    started: dict[int, float] = {}  # pid → create_time of every descendant seen

    def record() -> None:
        try:
            for proc in psutil.Process(child.pid).children(recursive=True):
                started.setdefault(proc.pid, proc.create_time())
        except psutil.Error:  # the child has just exited
            pass

    deadline = time.perf_counter() + TIMEOUT_S + CHILD_SLACK_S
    while child.poll() is None and time.perf_counter() < deadline:
        record()
        time.sleep(0.2)
    record()
    timed_out = child.poll() is None
    if timed_out:
        child.kill()
    for pid, created in started.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == created:
                proc.kill()
        except psutil.Error:  # already gone
            pass
    out = child.stdout.read() if child.stdout else ""
    child.wait()
    result: dict[str, Any] = {}
    for line in out.splitlines():
        if line.startswith("{"):
            result.update(json.loads(line))
    if timed_out:
        result["status"] = "failed (timeout)"
    result.setdefault("status", f"failed (exit {child.returncode})")
    return result


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    table = Table(
        f"BertViz head view vs this app (same {HEADS}-head weights, same Chromium)",
        ["tokens", "BertViz HTML MB", "BertViz painted s", "app load → painted s", "ratio"],
    )
    missing = _missing_js()
    if missing:
        table.notes.append(
            "skipped: BertViz's JavaScript is not installed (missing "
            + ", ".join(missing)
            + "); run `npm install --prefix bench`."
        )
        return [table], {"skipped": missing}
    tokens = (32, 128) if quick else TOKENS
    repeats = 1 if quick else 2
    raw: dict[str, Any] = {}
    failed_at: int | None = None
    with chromium() as browser, streamlit_server() as server:
        measure_page(browser, server.url, 8, 4)  # imports and jieba belong to no one here
        for n in tokens:
            ours = [
                measure_page(browser, server.url, n, HEADS, variant=200 + r)["painted"]
                for r in range(repeats)
            ]
            theirs: list[float] = []
            status = f"not tried (failed at {failed_at})" if failed_at else "ok"
            html_bytes = None
            for _ in range(0 if failed_at else (1 if n >= 256 else repeats)):
                result = _attempt(n)
                status = result["status"]
                html_bytes = result.get("html_bytes", html_bytes)
                if "seconds" not in result:
                    failed_at = n  # larger views would only fail slower
                    break
                theirs.append(result["seconds"])
            raw[str(n)] = {"bertviz": theirs, "status": status, "app": ours, "html": html_bytes}
            bv = median(theirs) if theirs else None
            app = median(ours)
            table.add(
                n,
                f"{html_bytes / 1e6:.1f}" if html_bytes else "—",
                fmt_s(bv) if bv is not None else status,
                fmt_s(app),
                f"{bv / app:.1f}" if bv is not None else "—",
            )
    table.notes += [
        f"medians of {repeats} page loads each (BertViz once from 256 tokens); BertViz gets "
        f"{TIMEOUT_S:.0f} s per attempt, each in a fresh Chromium, and larger views are not "
        "tried after a failure.",
        "ratio = BertViz time / app time (> 1: the app paints faster). BertViz draws one SVG "
        f"line per head, query and key ({HEADS}·n² elements); the app draws one image per head.",
    ]
    return [table], raw


if __name__ == "__main__":  # the child process of `_attempt`
    _paint_bertviz(int(sys.argv[1]))
