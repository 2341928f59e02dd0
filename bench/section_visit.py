"""A visit on the user's clock: the teacher who starts the app, the student who opens it.

    python -m bench visit            # 3 cold starts, 5 new visitors, 20 typed updates
    python -m bench visit --quick    # 1, 2 and 6

Three measures, each in real headless Chromium against `streamlit run app.py` started the
one way the app is started (deploy/app_server.py):

1. **Process start → first heatmaps painted.** The clock starts just before the server
   process is launched; the browser asks for the page as soon as the port answers (a
   teacher who opens the link the terminal prints) and the clock stops when the landing
   page's heatmaps are painted (bench/chromium.py). Nothing is warmed up.
2. **A new visitor on a warm server** (a student's phone, 390 × 844 with a phone's
   User-Agent, while the teacher's tab is open): a fresh browser context each time (no
   cache, no cookies), URL opened →
   heatmaps painted; the bytes the
   page downloaded over HTTP as they travelled (compressed where the server compressed:
   CDP's encodedDataLength), the websocket's bytes, and the largest files.
3. **Server CPU per typed update with a browser attached**: one tab, a new sentence of 31
   tokens × 8 heads typed at a time, painted, then 0.5 s more for anything the browser
   sends back after the paint (component values, pings, reruns); the server's CPU
   (psutil, its process tree) per update and the script runs per update (the browser's
   rerun requests, counted from the websocket frames it sends).
"""

from __future__ import annotations

import argparse
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import psutil

import bench.app_server
from bench.app_server import streamlit_server
from bench.chromium import app_url, chromium, mark_chart, wait_painted
from bench.tables import Table, fmt_s, median

__all__ = ["cold_start", "new_visitor", "page_files", "run", "typed_cpu"]

PHONE = {"width": 390, "height": 844}
# what a student's phone says it is: the app folds its sidebar's settings on a phone
# (ui/phone.py), so a visit without it would measure a desktop in a narrow window
PHONE_UA = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Mobile Safari/537.36"
)
DESKTOP = {"width": 1400, "height": 1000}
TYPED = {"tokenizer": "word", "embed_dim": 64, "num_heads": 8}
TYPED_WORDS = 31
SETTLE_S = 0.5
TIMEOUT_S = 120.0


def _heads() -> int:
    from attention_core.settings import Settings

    return Settings().heads


def _server_cpu(pid: int) -> float:
    root = psutil.Process(pid)
    return sum(sum(p.cpu_times()[:2]) for p in [root, *root.children(recursive=True)])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0):
            return True
    except (urllib.error.URLError, OSError):
        return False


def cold_start(browser: Any) -> float:
    """Seconds from launching a fresh server to the landing page's heatmaps painted."""
    with streamlit_server(wait_healthy=False) as server:
        while not _answers(server.url + "/"):
            time.sleep(0.02)
        page = browser.new_page(viewport=DESKTOP)
        try:
            page.goto(server.url, wait_until="commit")
            painted = wait_painted(page, _heads(), timeout_s=TIMEOUT_S)
            return painted - server.launched
        finally:
            page.close()


def new_visitor(browser: Any, url: str, pid: int) -> dict[str, Any]:
    """A fresh context (a phone that never opened the app): URL → painted, its bytes, and
    the server's CPU for the whole visit (page, static files, script run)."""
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, user_agent=PHONE_UA
    )
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    sizes: dict[str, int] = {}
    urls: dict[str, str] = {}
    ws = {"received": 0, "sent": 0}
    cdp.on(
        "Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"])
    )
    cdp.on(
        "Network.loadingFinished",
        lambda e: sizes.__setitem__(e["requestId"], int(e["encodedDataLength"])),
    )
    cdp.on(
        "Network.webSocketFrameReceived",
        lambda e: ws.__setitem__("received", ws["received"] + len(e["response"]["payloadData"])),
    )
    cdp.on(
        "Network.webSocketFrameSent",
        lambda e: ws.__setitem__("sent", ws["sent"] + len(e["response"]["payloadData"])),
    )
    try:
        cpu = _server_cpu(pid)
        start = time.perf_counter()
        page.goto(url, wait_until="commit")
        painted = wait_painted(page, _heads(), timeout_s=TIMEOUT_S) - start
        page.wait_for_timeout(300)  # late requests (fonts, icons) finish
        cpu = _server_cpu(pid) - cpu
        files = Counter(
            {urls.get(r, r).split("?")[0].rsplit("/", 1)[-1]: n for r, n in sizes.items()}
        )
        return {
            "painted": painted,
            "server_cpu": cpu,
            "http_bytes": sum(sizes.values()),
            "requests": len(sizes),
            "ws_bytes": ws["received"],
            "largest": files.most_common(5),
        }
    finally:
        context.close()


def page_files(browser: Any, url: str) -> list[str]:
    """The paths a new visitor's browser GETs from the server before the heatmaps are
    painted (the page, Streamlit's files, plotly.js, health checks; not the websocket)."""
    context = browser.new_context(
        viewport=PHONE, is_mobile=True, has_touch=True, user_agent=PHONE_UA
    )
    page = context.new_page()
    paths: list[str] = []
    page.on(
        "request",
        lambda r: (
            paths.append(r.url[len(url) :]) if r.url.startswith(url) and r.method == "GET" else None
        ),
    )
    try:
        page.goto(url, wait_until="commit")
        wait_painted(page, _heads(), timeout_s=TIMEOUT_S)
        page.wait_for_timeout(300)
        return paths
    finally:
        context.close()


def _words(variant: int) -> str:
    return " ".join(f"w{variant}x{j}" for j in range(TYPED_WORDS))


def typed_cpu(browser: Any, server: Any, repeats: int) -> dict[str, Any]:
    """Server CPU and script runs per typed update, one Chromium tab attached."""
    page = browser.new_page(viewport=DESKTOP)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    sent: list[float] = []
    cdp.on("Network.webSocketFrameSent", lambda e: sent.append(time.perf_counter()))
    try:
        page.goto(app_url(server.url, {**TYPED, "text": _words(0)}), wait_until="commit")
        wait_painted(page, TYPED["num_heads"], timeout_s=TIMEOUT_S)
        page.wait_for_timeout(1000)
        box = page.locator('[data-testid="stSidebar"] textarea')
        cpus, frames, walls = [], [], []
        for r in range(repeats):
            mark_chart(page)
            box.fill(_words(r + 1))
            before, count = _server_cpu(server.process.pid), len(sent)
            t0 = time.perf_counter()
            box.press("Control+Enter")
            walls.append(wait_painted(page, TYPED["num_heads"], timeout_s=TIMEOUT_S) - t0)
            page.wait_for_timeout(SETTLE_S * 1000)
            cpus.append(_server_cpu(server.process.pid) - before)
            frames.append(len(sent) - count)
        return {"cpu": cpus, "frames_sent": frames, "wall": walls}
    finally:
        page.close()


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    cold_n, visitors, repeats = (1, 2, 6) if quick else (3, 5, 20)
    raw: dict[str, Any] = {}
    with chromium() as browser:
        raw["cold"] = [cold_start(browser) for _ in range(cold_n)]
        with streamlit_server() as server:
            # the teacher's tab stays open, as in class: Streamlit drops its compiled scripts
            # when the last session leaves, and the next visitor would pay for compiling them
            teacher = browser.new_page(viewport=DESKTOP)
            teacher.goto(server.url, wait_until="commit")
            wait_painted(teacher, _heads(), timeout_s=TIMEOUT_S)
            server.wait_warm()  # its deferred warm-up too (pandas, jieba: ui/server.py)
            raw["visitors"] = [
                new_visitor(browser, server.url, server.process.pid) for _ in range(visitors)
            ]
            raw["typed"] = typed_cpu(browser, server, repeats)
            teacher.close()
    v, t = raw["visitors"], raw["typed"]
    table = Table(
        "On the user's clock (Chromium, one `streamlit run app.py`)",
        ["measure", "median", "target"],
    )
    table.add("process start → first heatmaps painted", fmt_s(median(raw["cold"])), "≤ 3 s")
    table.add(
        "new visitor (fresh profile, 390 × 844), warm server → painted",
        fmt_s(median(x["painted"] for x in v)),
        "≤ 1.5 s",
    )
    visit_cpu = sum(x["server_cpu"] for x in v) / len(v)
    table.add(
        "server CPU of that visit (page, files, script), mean",
        f"{visit_cpu * 1000:.0f} ms",
        "≤ 80 ms",
    )
    table.add(
        "its HTTP bytes (as sent) / requests",
        f"{median(x['http_bytes'] for x in v) / 1e6:.2f} MB"
        f" / {median(x['requests'] for x in v):.0f}",
        "",
    )
    table.add(
        "its websocket bytes received", f"{median(x['ws_bytes'] for x in v) / 1e3:.0f} kB", ""
    )
    per_update = sum(t["cpu"]) / len(t["cpu"])  # psutil counts in 10 ms ticks: a mean, not a median
    table.add(
        f"server CPU per typed update, {TYPED_WORDS} words × 8 heads, browser attached",
        f"{per_update * 1000:.0f} ms",
        "≤ 40 ms",
    )
    table.add(
        "websocket frames the browser sends per update", f"{median(t['frames_sent']):.0f}", ""
    )
    table.add("typed → painted", fmt_s(median(t["wall"])), "")
    table.notes.append(
        "largest files of a new visit (bytes as sent): "
        + ", ".join(f"{name} {size / 1e3:.0f} kB" for name, size in v[-1]["largest"])
    )
    table.notes.append(
        f"cold starts {', '.join(fmt_s(s) for s in raw['cold'])}; "
        f"visitors {', '.join(fmt_s(x['painted']) for x in v)}"
    )
    return [table], raw


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.section_visit")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--app-repo", type=Path, help="serve this checkout's app.py (before/after)")
    parser.add_argument("--files", metavar="URL", help="print the paths a new visit GETs, as JSON")
    args = parser.parse_args(argv)
    if args.files:
        import json

        with chromium() as browser:
            print(json.dumps(page_files(browser, args.files.rstrip("/"))))
        return
    if args.app_repo:
        bench.app_server.APP_REPO = args.app_repo.resolve()
        print(f"app: {bench.app_server.APP_REPO}")
    tables, _ = run(quick=args.quick)
    print("\n".join(t.markdown() for t in tables))


if __name__ == "__main__":
    main()
