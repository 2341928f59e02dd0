"""Section 6, pretrained: loading the packaged all-MiniLM-L6-v2 and running it.

cold = `load_model()` in a fresh Python process (importing transformers and torch
included, as the first visitor of a fresh server pays it); warm = a second `load_model()`
in a process that has already loaded it once (imports done, files in the page cache). The
app wraps `load_model` in st.cache_resource, so from then on a rerun pays nothing for it.
Skipped with a note when attention_core.pretrained lacks `load_model` / `run_model`.

`run_lens` (also run by `run`) times the engineer's lens (attention_core.lens) at 32 and
128 tokens: rollout, value norms (norm-weighted attention), every head knocked out
(ablation ranking), the neuron view, attention flow at 16/32/48 tokens; and in headless
Chromium against a real server, the head view: click "Head view" → drawn, and hover a
token → its lines drawn (timed inside the page, two animation frames included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from bench.measure import REPO
from bench.section_core import mixed_text
from bench.tables import Table, fmt_ms, fmt_s, median

__all__ = ["run", "run_lens"]

TOKENS = (32, 128)
REPEATS = 5
_COLD_SCRIPT = """
import json, time
t0 = time.perf_counter()
from attention_core.pretrained import load_model
t1 = time.perf_counter()
load_model()
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1}))
"""


def _available() -> str | None:
    """None if the section can run, else why not."""
    try:
        import attention_core.pretrained as pretrained
    except Exception as error:  # any import failure means "skip", with the reason
        return f"attention_core.pretrained does not import ({type(error).__name__}: {error})"
    missing = [name for name in ("load_model", "run_model") if not hasattr(pretrained, name)]
    return f"attention_core.pretrained has no {', '.join(missing)}" if missing else None


def _cold(repeats: int) -> list[dict[str, float]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    results = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _COLD_SCRIPT],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        total = time.perf_counter() - t0
        results.append({**json.loads(done.stdout.strip().splitlines()[-1]), "process": total})
    return results


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    table = Table("Pretrained: all-MiniLM-L6-v2 (packaged, offline)", ["measure", "median", "runs"])
    why_not = _available()
    if why_not:
        table.notes.append(f"skipped: {why_not}.")
        return [table], {"skipped": why_not}
    from attention_core.pretrained import load_model, run_model

    try:  # the weight-loading progress bar would interleave with the tables
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    cold = _cold(1 if quick else 2)
    table.add(
        "cold: fresh process, import attention_core.pretrained s",
        fmt_s(median(c["import"] for c in cold)),
        len(cold),
    )
    table.add(
        "cold: fresh process, load_model() s", fmt_s(median(c["load"] for c in cold)), len(cold)
    )
    table.add(
        "cold: whole process (python start → model ready) s",
        fmt_s(median(c["process"] for c in cold)),
        len(cold),
    )
    loaded = load_model()  # this process's first load: imports, files into the page cache
    warm = []
    for _ in range(1 if quick else 3):
        t0 = time.perf_counter()
        loaded = load_model()
        warm.append(time.perf_counter() - t0)
    table.add("warm: load_model() again in the same process s", fmt_s(median(warm)), len(warm))
    text = mixed_text()
    forward = {}
    for n in TOKENS:
        times = []
        for _ in range(2 if quick else REPEATS):
            t0 = time.perf_counter()
            result = run_model(loaded, text, max_tokens=n)
            times.append(time.perf_counter() - t0)
        forward[n] = times
        L, H = result.attentions.shape[:2]
        table.add(
            f"run_model: {len(result.tokens)} tokens ({L} layers × {H} heads) ms",
            fmt_ms(median(times)),
            len(times),
        )
    table.notes.append(
        "run_model includes tokenizing and copying every layer's attentions to NumPy; "
        "st.cache_resource makes the load a one-time cost per server process."
    )
    lens_tables, lens_raw = run_lens(quick=quick, loaded=loaded)
    return [table, *lens_tables], {"cold": cold, "warm": warm, "forward": forward, **lens_raw}


def _timed(fn: Any, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


_HOVER_JS = """(index) => new Promise((resolve) => {
  const token = document.querySelectorAll('.studio-headview text.hv-q')[index];
  const t0 = performance.now();
  token.dispatchEvent(new MouseEvent('mouseenter'));
  requestAnimationFrame(() => requestAnimationFrame(() => resolve({
    ms: performance.now() - t0,
    lines: document.querySelectorAll('.studio-headview line').length,
  })));
})"""


def _head_view_paint(n: int, repeats: int) -> dict[str, Any]:
    """Chromium: lens page of an n-token sentence, click "Head view" → its tokens drawn,
    then hover tokens → lines drawn (ms, in the page)."""
    from urllib.parse import urlencode

    from bench.app_server import streamlit_server
    from bench.chromium import VIEWPORT, chromium

    text = " ".join(["word"] * (n - 2))  # WordPiece: one token each, plus [CLS] [SEP]
    with streamlit_server() as server, chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{server.url}/lens?{urlencode({'text': text})}")
        page.get_by_role("radio", name="Head view", exact=True).wait_for(timeout=120_000)
        t0 = time.perf_counter()
        page.get_by_role("radio", name="Head view", exact=True).click()
        page.wait_for_function(
            f"document.querySelectorAll('.studio-headview text.hv-q').length === {n}",
            timeout=120_000,
        )
        click = time.perf_counter() - t0
        hovers = [page.evaluate(_HOVER_JS, i % n) for i in range(repeats)]
        page.close()
    return {"click_s": click, "hover_ms": [h["ms"] for h in hovers], "lines": hovers[-1]["lines"]}


def run_lens(*, quick: bool = False, loaded: Any = None) -> tuple[list[Table], dict]:
    """The lens's costs on the packaged model (see the module docstring)."""
    table = Table("Lens: all-MiniLM-L6-v2 (6 layers × 12 heads)", ["measure", "median", "runs"])
    why_not = _available()
    if why_not:
        table.notes.append(f"skipped: {why_not}.")
        return [table], {"skipped": why_not}
    from attention_core import lens
    from attention_core.pretrained import load_model, run_model

    loaded = loaded or load_model()
    text = mixed_text()
    repeats = 2 if quick else 3
    raw: dict[str, Any] = {}
    for n in TOKENS:
        attentions = run_model(loaded, text, max_tokens=n).attentions  # (L, H, n, n)
        size = attentions.shape[-1]
        cases = {
            "rollout (all layers)": lambda a=attentions: lens.rollout(a),
            "value norms → norm-weighted": lambda n=n, a=attentions: lens.norm_weighted(
                loaded, text, attentions=a, max_tokens=n
            ),
            "ablation: all 72 heads knocked out one by one, ranked": lambda n=n: lens.head_effects(
                loaded, text, max_tokens=n
            ),
            "neuron view (q, k of one head)": lambda n=n: lens.neuron_view(
                loaded, text, 3, 5, max_tokens=n
            ),
        }
        for name, fn in cases.items():
            times = _timed(fn, repeats)
            raw[f"{name} @{size}"] = times
            table.add(f"{name}, {size} tokens ms", fmt_ms(median(times)), len(times))
    for n in (16, 32, 48):
        attentions = run_model(loaded, text, max_tokens=n).attentions
        times = _timed(lambda a=attentions: lens.flow(a), 1 if n == 48 else repeats)
        raw[f"flow @{n}"] = times
        table.add(
            f"attention flow ({n}² max-flow problems), {n} tokens ms",
            fmt_ms(median(times)),
            len(times),
        )
    try:
        for n in TOKENS:
            paint = _head_view_paint(n, 5 if quick else 15)
            raw[f"head view @{n}"] = paint
            table.add(
                f"head view, {n} tokens: click → drawn (rerun included) s",
                fmt_s(paint["click_s"]),
                1,
            )
            table.add(
                f"head view, {n} tokens: hover → {paint['lines']} lines drawn ms",
                fmt_ms(median(t / 1000 for t in paint["hover_ms"])),
                len(paint["hover_ms"]),
            )
    except Exception as error:  # no Chromium here: the library numbers still stand
        table.notes.append(f"head view not measured: {type(error).__name__}: {error}")
    table.notes.append(
        "flow is refused above lens.FLOW_MAX_TOKENS (48) tokens; the ablation runs the "
        "heads of each layer from a cached pass of the layers below it (lens.ablation.branched)."
    )
    return [table], raw
