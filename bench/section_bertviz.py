"""Section 5, bertviz: a new sentence → painted, BertViz's head view against this app.

Same sentences, same 12-head weights, same Chromium, at n ∈ {32, 128, 256, 512} tokens.

**BertViz.** BertViz 1.4.1's `head_view(attention, tokens, html_action="return")` returns a
page that inlines the weights as JSON and loads require.js, d3 5 and jQuery from cdnjs; a
new sentence is a new page. Its clock starts when Python is asked for the new sentence's
view: the analysis (this project's module: 12 heads, char tokenizer, embed_dim 192 — the
(12, n, n) float32 weights the app shows, in BertViz's format: one layer of (1, H, n, n)),
`head_view`, the page written to a file; then that file:// URL is loaded into an open tab
that already shows BertViz's view of another sentence of n tokens, and the clock stops when
the view is painted. Offline, Playwright's request routing answers the three cdnjs URLs
with the npm packages in bench/node_modules (`npm install --prefix bench`, see
bench/package.json), as a warm HTTP cache would, and refuses every other request.

BertViz draws everything in one synchronous d3 callback: the tokens, one SVG <line> per
(head, query, key) — H·n² elements — and last the H head boxes. "Painted" = `#attention`
holds H head groups of n query groups, the last query group holds its n lines, both token
columns hold n tokens and the head boxes are there; then two animation frames (the frame
that lays out and paints them), as for the app's heatmaps (bench/chromium.py).

Each n runs in a child process with its own Chromium and tab: one warm view (also n tokens),
then the timed new sentences. An attempt gets TIMEOUT_S from its clock start; one that has
not painted by then is "failed (timeout)", the child and everything it started are killed
(a renderer busy with millions of SVG elements takes minutes to close gracefully, or takes
the browser down), and larger views are not tried.

**The app.** Typed → painted in an open tab of a running server, exactly as the browser
section measures it (bench/section_browser.py `typed_update`): the page loads one sentence of n
tokens and paints it, then the sidebar's box gets a new sentence of n tokens, Ctrl+Enter,
and the clock stops when all 12 panels of the new figure are painted (`wait_painted`).
The timed sentences are the same texts as BertViz's (`sentence(n, variant=100 + r)`).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.app_server import streamlit_server
from bench.chromium import VIEWPORT, chromium
from bench.measure import REPO, cpu_seconds, sentence
from bench.section_browser import (
    measure_page,
    typed_update,  # the browser section's typed → painted clock, reused so both measure the same
)
from bench.tables import Table, fmt_s, median

__all__ = ["bertviz_html", "run"]

TOKENS = (32, 128, 256, 512)
# the view's heads and model width; bench/section_long.py runs its child with 8 heads × 64
HEADS = int(os.environ.get("BENCH_BERTVIZ_HEADS", "12"))
EMBED_DIM = int(os.environ.get("BENCH_BERTVIZ_EMBED_DIM", "192"))
REPEATS = 3
TIMEOUT_S = 60.0  # per BertViz attempt, from its clock start
CHILD_SLACK_S = 60.0  # on top of TIMEOUT_S, for the child's next line: Python, Chromium start
WARM_VARIANT = 1  # the sentence both tabs show before the clock (section_browser's page load)
NODE_MODULES = Path(__file__).resolve().parent / "node_modules"
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
# `arg` = [H, n]: BertViz's synchronous render callback has finished for H heads, n tokens
_PAINTED_JS = """([heads, n]) => {
  const att = document.querySelector('#vis svg #attention');
  if (!att || att.childElementCount !== heads) return false;
  for (const head of att.children) if (head.childElementCount !== n) return false;
  if (att.lastElementChild.lastElementChild.childElementCount !== n) return false;
  const svg = att.ownerSVGElement;
  if (svg.querySelectorAll('#left text').length !== n) return false;
  if (svg.querySelectorAll('#right text').length !== n) return false;
  return svg.lastElementChild.querySelectorAll('rect').length === heads;
}"""
_FRAMES_JS = """() => { window.__benchFrames = false;
  requestAnimationFrame(() => requestAnimationFrame(() => { window.__benchFrames = true; })); }"""


def _missing_js() -> list[str]:
    return [rel for rel in CDN_FILES.values() if not (NODE_MODULES / rel).is_file()]


def bertviz_html(n: int, variant: int = 0) -> str:
    """BertViz's head view of this project's HEADS-head attention for `sentence(n, variant)`
    (above MAX_TOKENS: every weight of the long map, as BertViz needs them all)."""
    import numpy as np
    import torch
    from bertviz import head_view

    from attention_core.limits import MAX_TOKENS
    from attention_core.long.run import analyze_long
    from attention_core.pipeline import analyze
    from attention_core.settings import Settings

    text = sentence(n, variant=variant)
    settings = Settings(text=text, tokenizer="char", embed_dim=EMBED_DIM, num_heads=HEADS)
    if n <= MAX_TOKENS:
        a = analyze(settings)
        weights, tokens = a.weights, a.tokens  # (H, n, n)
    else:
        m = analyze_long(settings)
        layer, tokens = m.maps[0], m.tokens
        weights = np.stack([layer.exact(h, slice(None), slice(None)) for h in range(HEADS)])
    attention = (torch.from_numpy(weights).unsqueeze(0),)  # 1 layer of (1, H, n, n)
    return head_view(attention, [t.text for t in tokens], html_action="return").data


def _route_cdn(route: Any) -> None:
    rel = CDN_FILES.get(route.request.url)
    if rel is None:
        route.abort()  # offline: nothing else may be fetched
    else:
        route.fulfill(path=str(NODE_MODULES / rel), content_type="text/javascript")


def _own_cpu() -> float:
    """User + system CPU seconds of this process and everything it started (Chromium)."""
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system + cpu_seconds()


def _emit(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def _new_view(page: Any, n: int, variant: int, scratch: Path, errors: list[str]) -> dict:
    """One new sentence → painted in the open tab `page`; the timed attempt of `_views`."""
    result: dict[str, Any] = {"variant": variant, "status": "ok"}
    errors.clear()  # only this view's page errors explain its failure
    cpu0 = _own_cpu()
    start = time.perf_counter()
    deadline = start + TIMEOUT_S

    def left_ms() -> float:
        return max(1.0, deadline - time.perf_counter()) * 1000

    try:
        html = bertviz_html(n, variant)
        path = scratch / f"head_view_{variant}.html"
        path.write_text(html, encoding="utf-8")
        built = time.perf_counter()
        result["python_s"] = built - start
        result["html_bytes"] = path.stat().st_size
        page.goto(path.as_uri(), wait_until="commit", timeout=left_ms())
        result["commit_s"] = time.perf_counter() - start  # the old view gone, the new one in
        page.wait_for_function(_PAINTED_JS, arg=[HEADS, n], polling="raf", timeout=left_ms())
        result["drawn_s"] = time.perf_counter() - start  # BertViz's d3 callback has finished
        page.evaluate(_FRAMES_JS)
        page.wait_for_function("() => window.__benchFrames === true", timeout=left_ms())
        result["seconds"] = time.perf_counter() - start
        result["cpu_s"] = _own_cpu() - cpu0
    except Exception as error:  # Playwright's TimeoutError, or the renderer crashing
        timeout = "Timeout" in type(error).__name__ or "Timeout" in str(error)
        why = "timeout" if timeout else f"{type(error).__name__}: {str(error)[:80]}"
        result["status"] = f"failed (page error: {errors[0][:80]})" if errors else f"failed ({why})"
    return result


def _views(n: int, scratch: Path, variants: list[int]) -> None:
    """The child process of `_bertviz`: one tab, one view per variant, in that order.

    Prints JSON lines: "ready", then per view {"start": variant} and its result. Stops at
    the first failure and leaves at once with os._exit, without closing the browser:
    closing a renderer that is still busy can take minutes; the parent kills what is left.
    """
    import bertviz  # noqa: F401  (imported before the clock, as in a notebook)
    import torch  # noqa: F401

    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route(lambda url: not url.startswith("file:"), _route_cdn)
        _emit({"ready": True})
        for variant in variants:
            _emit({"start": variant})
            result = _new_view(page, n, variant, scratch, errors)
            _emit(result)
            for old in scratch.glob("head_view_*.html"):  # up to 60 MB each; the tab has it
                if old.name != f"head_view_{variant}.html":
                    old.unlink()
            if result["status"] != "ok":
                break
        os._exit(0)


def _bertviz(n: int, variants: list[int], *, env: dict[str, str] | None = None) -> list[dict]:
    """`_views(n, ...)` in a child process; each of its views gets a hard deadline.

    A page of 12·512² SVG lines can hang or kill its renderer, and closing it gracefully
    then takes minutes. So the child leaves without closing its browser, or is killed when
    a view has not answered within TIMEOUT_S + CHILD_SLACK_S, and every process it started
    (Playwright's driver, Chromium, which runs detached in a process group of its own) is
    killed by process id: they are recorded while the child runs, with their start times so
    that a reused id is never touched. One result per view that started.
    """
    import psutil

    with tempfile.TemporaryDirectory(prefix="bench-bertviz-") as scratch:
        log = Path(scratch) / "child.log"
        with log.open("w") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-m", "bench.section_bertviz", str(n), scratch]
                + [str(v) for v in variants],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, **(env or {})},
            )
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert child.stdout is not None
            for line in child.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        started: dict[int, float] = {}  # pid → create_time of every descendant seen

        def record() -> None:
            try:
                for proc in psutil.Process(child.pid).children(recursive=True):
                    started.setdefault(proc.pid, proc.create_time())
            except psutil.Error:  # the child has just exited
                pass

        results: list[dict] = []
        current: int | None = None  # the variant whose view is on the clock
        deadline = time.perf_counter() + TIMEOUT_S + CHILD_SLACK_S
        timed_out = False
        while True:
            record()
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if time.perf_counter() > deadline:
                    timed_out = True
                    break
                continue
            if line is None:  # the child has left
                break
            if not line.startswith("{"):
                continue
            message = json.loads(line)
            deadline = time.perf_counter() + TIMEOUT_S + CHILD_SLACK_S
            if "start" in message:
                current = message["start"]
            elif "status" in message:
                results.append(message)
                current = None
        if child.poll() is None:
            child.kill()
        for pid, created in started.items():
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == created:
                    proc.kill()
            except psutil.Error:  # already gone
                pass
        child.wait()
        if timed_out:
            results.append({"variant": current, "status": "failed (timeout)"})
        elif current is not None or not results:  # left during a view, or before any
            error = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            status = f"failed (exit {child.returncode}: {error[0][:120]})"
            results.append({"variant": current, "status": status})
    return results


def _cells(views: list[dict], app: dict) -> list[str]:
    """The cells of one row after tokens and load: BertViz's, the app's, ratio, faster."""
    ok = [v for v in views if v["status"] == "ok" and v["variant"] != WARM_VARIANT]
    failure = next((v["status"] for v in views if v["status"] != "ok"), None)
    size = next((v["html_bytes"] for v in views if "html_bytes" in v), None)
    ours = app.get("typed")
    cells = [
        f"{size / 1e6:.1f}" if size else "—",
        failure or fmt_s(median(v["seconds"] for v in ok)),
        fmt_s(median(v["python_s"] for v in ok)) if ok and not failure else "—",
        fmt_s(median(v["cpu_s"] for v in ok)) if ok and not failure else "—",
        fmt_s(ours) if ours is not None else "failed",
        fmt_s(app["typed_cpu"]) if ours is not None else "—",
    ]
    if ours is None or (failure and "timeout" not in failure):
        return [*cells, "—", "—"]
    if failure:  # BertViz did not paint within TIMEOUT_S
        return [*cells, f"> {TIMEOUT_S / ours:.0f}", "app"]
    ratio = median(v["seconds"] for v in ok) / ours
    return [*cells, f"{ratio:.1f}", "app" if ratio > 1 else "BertViz"]


def _failure_note(n: int, failure: dict, *, last: bool) -> str:
    """What failed at n tokens, and how far it got."""
    if failure.get("variant") == WARM_VARIANT:
        what = "BertViz's warm view (the first in its tab, nothing to replace) already"
    else:
        what = f"BertViz's new sentence (variant {failure.get('variant')})"
    note = f"{n} tokens: {what} {failure['status']}"
    if "drawn_s" in failure:
        note += (
            f"; its d3 callback had built the SVG at {failure['drawn_s']:.1f} s, layout and "
            "paint had not finished"
        )
    elif "commit_s" in failure:
        note += f"; the page had committed at {failure['commit_s']:.1f} s, not drawn"
    return note + ("." if last else "; larger views were not tried.")


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    table = Table(
        f"BertViz head view vs this app: a new sentence → painted ({HEADS} heads, same "
        "weights, same Chromium)",
        [
            "tokens",
            "load 1 min",
            "BertViz HTML MB",
            "BertViz s",
            "of which Python s",
            "BertViz CPU s",
            "app s",
            "app CPU s",
            "ratio",
            "faster",
        ],
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
    repeats = 2 if quick else REPEATS
    timed = [100 + r for r in range(repeats)]  # section_browser's typed sentences
    raw: dict[str, Any] = {}
    failed_at: int | None = None
    with chromium() as browser, streamlit_server() as server:
        measure_page(browser, server.url, 8, 4)  # imports and jieba belong to no one here
        for n in tokens:
            load = os.getloadavg()[0]
            try:
                app = typed_update(browser, server, n, HEADS, repeats)  # warm page, then `timed`
            except Exception as error:  # the app failing must not hide BertViz's numbers
                app = {"error": f"{type(error).__name__}: {error}"[:300]}
                table.notes.append(f"app at {n} tokens failed: {app['error']}")
            if failed_at:
                views = [{"status": f"not tried (failed at {failed_at})"}]
            else:
                views = _bertviz(n, [WARM_VARIANT, *timed])
            raw[str(n)] = {"load": load, "bertviz": views, "app": app}
            table.add(n, f"{load:.1f}", *_cells(views, app))
            failure = next((v for v in views if v["status"] != "ok"), None)
            if failure is not None and not failed_at:
                failed_at = n  # larger views would only fail slower
                table.notes.append(_failure_note(n, failure, last=n == tokens[-1]))
    table.notes += [
        f"medians of {repeats} new sentences each, the same {repeats} texts for both; before "
        "them each side shows another sentence of n tokens (warm Python, warm tab, warm "
        "server). load 1 min = the machine's load average when the row started (2 cores).",
        "BertViz s: Python asked for the new sentence's view (analysis, `head_view` HTML, "
        "page written to a file = 'of which Python s') → page loaded into the open tab → its "
        f"{HEADS}·n² SVG lines, tokens and head boxes drawn + 2 animation frames. "
        f"{TIMEOUT_S:.0f} s per attempt; after a failure larger views are not tried.",
        "app s: Ctrl+Enter in the sidebar's box (new sentence typed in) → the server's rerun "
        f"(analysis, figure) → Plotly.react in the open tab → all {HEADS} panels painted + 2 "
        "animation frames (bench/section_browser.py's typed → painted).",
        "CPU s: user + system seconds during one new sentence, median — BertViz: its Python "
        "process and its Chromium; app: the Streamlit server, Playwright's driver and Chromium. "
        "Less sensitive to the machine's load than the wall clock.",
        "ratio = BertViz s / app s (> 1: the app paints a new sentence faster); '> r' when "
        f"BertViz did not paint within {TIMEOUT_S:.0f} s. This replaces "
        "the old static-page-load comparison: a new BertViz view *is* a page load (its browser "
        "part is BertViz s − Python s), and the app's page load → painted is in the browser "
        "section.",
    ]
    return [table], raw


if __name__ == "__main__":  # the child process of `_bertviz`: n, scratch dir, variants
    _views(int(sys.argv[1]), Path(sys.argv[2]), [int(v) for v in sys.argv[3:]])
