"""Section notebook: a notebook cell → its head view painted, attention_core.notebook
against BertViz, at 15, 128 and 512 tokens (12 heads, the same weights, same Chromium).

The cell is what a notebook user runs: `head_view(attention, tokens)` on one layer of
(1, H, n, n) weights (this project's module, as the bertviz section builds them), the
view's HTML written to a file, that file opened in a fresh tab. The clock starts when the
cell starts and stops when the view is painted plus two animation frames:
- ours: n query and n key labels, H head switches and the lines at open drawn
  (`figures.headview`: every line, the OPEN_LINES strongest past that); hover, timed
  separately: hover → only that token's lines left;
- BertViz: the bertviz section's own clock and definition of painted (all H·n² lines),
  run in its child process with its deadline (`section_bertviz._bertviz`).
Ours loads nothing from the network (requests other than file: are refused and counted).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench.chromium import VIEWPORT, chromium
from bench.measure import sentence
from bench.tables import Table, fmt_ms, fmt_s, median

__all__ = ["run"]

TOKENS = (15, 128, 512)
HEADS = 12
EMBED_DIM = 192
REPEATS = 3
_PAINTED_JS = """([heads, n]) => document.querySelectorAll('text.hv-q').length === n
  && document.querySelectorAll('text.hv-k').length === n
  && document.querySelectorAll('.hv-head').length === heads
  && document.querySelectorAll('.hv-lines line').length > 0"""
# after a hover, only the hovered query's lines remain
_HOVERED_JS = """(i) => {
  const lines = [...document.querySelectorAll('.hv-lines line')];
  return lines.length > 0 && lines.every((l) => l.dataset.query === String(i));
}"""
_FRAMES_JS = """() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"""


def _attention(n: int, variant: int) -> tuple[Any, list[str]]:
    """One layer of (1, H, n, n) weights of this project's module for sentence(n)."""
    import torch

    from attention_core.pipeline import analyze
    from attention_core.settings import Settings

    text = sentence(n, variant=variant)
    a = analyze(Settings(text=text, tokenizer="char", embed_dim=EMBED_DIM, num_heads=HEADS))
    return (torch.from_numpy(a.weights).unsqueeze(0),), [t.text for t in a.tokens]


def _ours(browser: Any, n: int, variant: int, scratch: Path) -> dict[str, float]:
    from attention_core.notebook import head_view

    context = browser.new_context(viewport=VIEWPORT, offline=True)
    asked: list[str] = []
    context.route(
        lambda url: not url.startswith("file:"),
        lambda route: (asked.append(route.request.url), route.abort()),
    )
    page = context.new_page()
    try:
        start = time.perf_counter()
        attention, tokens = _attention(n, variant)
        path = head_view(attention, tokens).save_html(scratch / f"ours_{variant}.html")
        python_s = time.perf_counter() - start
        page.goto(path.as_uri())
        page.wait_for_function(_PAINTED_JS, arg=[HEADS, n], polling="raf")
        page.evaluate(_FRAMES_JS)
        painted = time.perf_counter() - start
        hover = time.perf_counter()
        page.locator("text.hv-q").nth(n // 2).hover()
        page.wait_for_function(_HOVERED_JS, arg=n // 2)
        page.evaluate(_FRAMES_JS)
        return {
            "seconds": painted,
            "python_s": python_s,
            "hover_s": time.perf_counter() - hover,
            "bytes": path.stat().st_size,
            "requests": len(asked),
        }
    finally:
        context.close()


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    from bench.section_bertviz import WARM_VARIANT, _bertviz

    table = Table(
        f"A notebook cell → its head view painted: attention_core.notebook vs BertViz "
        f"({HEADS} heads, same weights, same Chromium)",
        [
            "tokens",
            "ours s",
            "of which Python s",
            "ours HTML MB",
            "hover → lines ms",
            "requests off the file",
            "BertViz s",
            "ratio",
        ],
    )
    repeats = 1 if quick else REPEATS
    raw: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-notebook-") as scratch, chromium() as browser:
        _ours(browser, TOKENS[0], 0, Path(scratch))  # imports and Chromium warm, not timed
        for n in TOKENS:
            ours = [_ours(browser, n, 100 + r, Path(scratch)) for r in range(repeats)]
            theirs = _bertviz(n, [WARM_VARIANT, *range(100, 100 + repeats)])
            ok = [v for v in theirs if v["status"] == "ok" and v["variant"] != WARM_VARIANT]
            failure = next((v["status"] for v in theirs if v["status"] != "ok"), None)
            mine = median(v["seconds"] for v in ours)
            bertviz = median(v["seconds"] for v in ok) if ok and not failure else float("nan")
            table.rows.append(
                [
                    str(n),
                    fmt_s(mine),
                    fmt_s(median(v["python_s"] for v in ours)),
                    f"{ours[0]['bytes'] / 1e6:.2f}",
                    fmt_ms(median(v["hover_s"] for v in ours)),
                    str(max(v["requests"] for v in ours)),
                    failure or fmt_s(bertviz),
                    "—" if bertviz != bertviz else f"{bertviz / mine:.1f}",
                ]
            )
            raw[str(n)] = {"ours": ours, "bertviz": theirs}
    table.notes += [
        f"Median of {repeats}; each view in a fresh tab (ours with the network off). BertViz's "
        "three CDN scripts are served from bench/node_modules (a warm cache), as in the "
        "bertviz section; its 'painted' includes every line (H·n²), ours draws lines on hover.",
    ]
    return [table], raw
