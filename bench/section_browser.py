"""Section 4, browser: what a student waits for in real headless Chromium.

Timed from the browser's side against a real `streamlit run app.py` (bench/app_server.py):

* cold start: server process launched → sentence box visible; on that fresh server, page
  load → sentence box visible and → first heatmaps painted (the first session pays for
  importing torch and loading jieba's dictionary);
* per (tokens, heads): page load → box visible and → every heatmap painted, then typed
  sentence (fill the box, Ctrl+Enter) → every heatmap repainted, median of several new
  sentences (each a cache miss, as when typing).

"Painted" is defined in bench/chromium.py. Sentences of exactly n tokens use the `char`
tokenizer; embed_dim 192 lets every head count in the grid divide it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import deploy.app_server
from bench.app_server import streamlit_server
from bench.chromium import VIEWPORT, app_url, chromium, mark_chart, wait_painted
from bench.measure import cpu_seconds, sentence
from bench.tables import Table, fmt_s, median

__all__ = ["measure_page", "run", "typed_update"]

TOKENS = (8, 32, 128, 512)
HEADS = (4, 8, 12)
EMBED_DIM = 192
TYPED_REPEATS = 3
COLD_REPEATS = 2
BOX = '[data-testid="stSidebar"] textarea'
TIMEOUT_S = 120.0


def _settings(n: int, heads: int, variant: int = 0) -> dict[str, object]:
    return {
        "text": sentence(n, variant=variant),
        "tokenizer": "char",
        "attention": "multi",
        "embed_dim": EMBED_DIM,
        "num_heads": heads,
    }


def measure_page(browser: Any, base: str, n: int, heads: int, *, variant: int = 0) -> dict:
    """One fresh page: load → box visible, load → painted (seconds)."""
    page = browser.new_page(viewport=VIEWPORT)
    try:
        start = time.perf_counter()
        page.goto(app_url(base, _settings(n, heads, variant)), wait_until="commit")
        page.wait_for_selector(BOX, state="visible", timeout=TIMEOUT_S * 1000)
        visible = time.perf_counter()
        painted = wait_painted(page, heads, timeout_s=TIMEOUT_S)
        return {"input": visible - start, "painted": painted - start}
    finally:
        page.close()


def typed_update(
    browser: Any,
    server: Any,
    n: int,
    heads: int,
    repeats: int,
    *,
    params: dict[str, object] | None = None,
    text: Callable[..., str] = sentence,
) -> dict:
    """Page load, then `repeats` typed sentences; medians of wall and CPU seconds.
    `params` change the view's settings (e.g. the trained reader); `text(n, variant=)`
    makes the sentences."""
    page = browser.new_page(viewport=VIEWPORT)
    settings = {**_settings(n, heads, variant=1), "text": text(n, variant=1), **(params or {})}
    try:
        start = time.perf_counter()
        page.goto(app_url(server.url, settings), wait_until="commit")
        page.wait_for_selector(BOX, state="visible", timeout=TIMEOUT_S * 1000)
        visible = time.perf_counter()
        painted = wait_painted(page, heads, timeout_s=TIMEOUT_S)
        box = page.locator(BOX)
        walls, cpus = [], []
        for r in range(repeats):
            mark_chart(page)
            box.fill(text(n, variant=100 + r))
            cpu0 = cpu_seconds()
            t0 = time.perf_counter()
            box.press("Control+Enter")
            t1 = wait_painted(page, heads, timeout_s=TIMEOUT_S)
            cpus.append(cpu_seconds() - cpu0)
            walls.append(t1 - t0)
        return {
            "load_input": visible - start,
            "load_painted": painted - start,
            "typed": median(walls),
            "typed_cpu": median(cpus),
            "typed_all": walls,
        }
    finally:
        page.close()


def _cold(browser: Any, repeats: int, *, warm_up: bool = False) -> list[dict]:
    """Fresh server each time: start → box; page load of the bare URL (the default
    sentence and settings) → box and → first heatmaps. With `warm_up`, the server first
    runs the app script once (Streamlit's script health check), as deploy/run_replicas.py
    does before it lets students in."""
    from attention_core.settings import Settings

    results = []
    for _ in range(repeats):
        with streamlit_server(wait_healthy=True) as server:
            if warm_up:
                assert deploy.app_server.warm_up(server.url, timeout=TIMEOUT_S) == "ok"
            page = browser.new_page(viewport=VIEWPORT)
            try:
                start = time.perf_counter()
                page.goto(server.url, wait_until="commit")
                page.wait_for_selector(BOX, state="visible", timeout=TIMEOUT_S * 1000)
                visible = time.perf_counter()
                painted = wait_painted(page, Settings().heads, timeout_s=TIMEOUT_S)
                results.append(
                    {
                        "healthy": server.healthy - server.launched,
                        "start_input": visible - server.launched,
                        "load_input": visible - start,
                        "load_painted": painted - start,
                    }
                )
            finally:
                page.close()
    return results


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    """Both tables of section 4 and the raw numbers."""
    tokens = (8, 32) if quick else TOKENS
    heads_grid = (4, 8) if quick else HEADS
    repeats = 2 if quick else TYPED_REPEATS
    raw: dict[str, Any] = {}
    with chromium() as browser:
        cold = _cold(browser, 1 if quick else COLD_REPEATS)
        warmed = _cold(browser, 1 if quick else COLD_REPEATS, warm_up=True)
        raw["cold"], raw["warmed"] = cold, warmed
        grid = {}
        with streamlit_server() as server:
            # one throwaway view: imports and jieba's dictionary belong to the cold numbers
            measure_page(browser, server.url, 8, 4)
            for n in tokens:
                for h in heads_grid:
                    try:
                        grid[(n, h)] = typed_update(browser, server, n, h, repeats)
                    except Exception as error:  # one view failing must not hide the others
                        grid[(n, h)] = {"error": f"{type(error).__name__}: {error}"}
        raw["grid"] = {f"{n}x{h}": v for (n, h), v in grid.items()}

    cold_table = Table(
        "Browser: cold start (fresh server, the bare URL: default sentence and settings)",
        ["measure", "median s", "target"],
    )
    rows = [  # (measure, runs, key, target)
        ("server launched → /_stcore/health ok", cold, "healthy", ""),
        ("server launched → sentence box visible", cold, "start_input", ""),
        ("cold page load → sentence box visible", cold, "load_input", "<= 1.5"),
        ("cold page load → first heatmaps painted", cold, "load_painted", "<= 3"),
        ("warmed-up server: first page load → box visible", warmed, "load_input", "<= 1.5"),
        ("warmed-up server: first page load → first heatmaps", warmed, "load_painted", "<= 3"),
    ]
    for measure, runs, key, target in rows:
        cold_table.add(measure, fmt_s(median(r[key] for r in runs)), target)
    cold_table.notes += [
        f"{len(cold)} fresh server(s) each; on a cold one the first session imports torch "
        "and loads jieba; a warmed-up one has run the app script once (script health check, "
        "what deploy/run_replicas.py and the Dockerfile's HEALTHCHECK do) before the visitor.",
    ]

    table = Table(
        "Browser: page load and typing (warm server, char tokenizer, embed_dim 192)",
        ["tokens", "heads", "load → box s", "load → painted s", "typed → painted s", "typed CPU s"],
    )
    for (n, h), v in grid.items():
        if "error" in v:
            table.add(n, h, "failed", "—", "—", "—")
            table.notes.append(f"{n} × {h} failed: {v['error'][:300]}")
            continue
        table.add(
            n,
            h,
            fmt_s(v["load_input"]),
            fmt_s(v["load_painted"]),
            fmt_s(v["typed"]),
            fmt_s(v["typed_cpu"]),
        )
    table.notes += [
        f"typed: median of {repeats} new sentences (cache misses); CPU = server + Chromium "
        "processes, user+system, during the typed update (less sensitive to machine load).",
        "targets: 32 tokens × 8 heads typed → painted <= 0.3 s; 512 × 12 typed → painted <= 2 s.",
    ]
    return [cold_table, table], raw
