"""Section 6, pretrained: loading the packaged all-MiniLM-L6-v2 and running it.

cold = `load_model()` in a fresh Python process (importing transformers and torch
included, as the first visitor of a fresh server pays it); warm = a second `load_model()`
in a process that has already loaded it once (imports done, files in the page cache). The
app wraps `load_model` in st.cache_resource, so from then on a rerun pays nothing for it.
Skipped with a note when attention_core.pretrained lacks `load_model` / `run_model`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from bench.measure import REPO
from bench.section_core import mixed_text
from bench.tables import Table, fmt_ms, fmt_s, median

__all__ = ["run"]

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
    return [table], {"cold": cold, "warm": warm, "forward": forward}
