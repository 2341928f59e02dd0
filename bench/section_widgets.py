"""Section widgets: the notebook widgets in a real JupyterLab (headless Chromium, network
off), at 128 tokens × 12 heads × 6 layers, by the page's clock (bench/jupyterlab.py).

Measured, each in cells of their own (a cell is run once):
- a cell → the head-view widget painted (`head_view(...)` as the cell's result);
- a Python-side layer change (`view.layer = 3`) → the widget redrawn for that layer;
- references on the same page in the same run: a `print` cell → its output shown (the
  kernel's round trip, what no widget can beat) and a cell → the static head view
  (`widget=False`) painted; the figures' ratios to them say what the machine does not;
- the bytes the kernel's websocket delivered for the widget's cell and for a layer change
  (one layer: H·n·k float32 and the messages around it).
Targets (docs/performance.md): painted ≤ 0.5 s, redrawn ≤ 0.2 s.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench.chromium import chromium
from bench.jupyterlab import (
    HEAD_LAYER_JS,
    HEAD_PAINTED_JS,
    count_frames,
    jupyter_lab,
    lab_tab,
    open_notebook,
    run_cell_timed,
)
from bench.tables import Table, fmt_s, median

__all__ = ["run"]

L, H, N = 6, 12, 128
REPEATS = 3
TARGETS = {"painted": 0.5, "redrawn": 0.2}
_SETUP = (
    "import numpy as np\n"
    "from attention_core.notebook import head_view\n"
    "def weights(L, H, n, seed=0):\n"
    "    w = np.random.default_rng(seed).random((L, H, n, n)) ** 4\n"
    "    return (w / w.sum(-1, keepdims=True)).astype(np.float32)\n"
    f"tokens = [f't{{i}}' for i in range({N})]\n"
    "head_view(weights(2, 2, 4), tokens[:4])"  # imports and the widget's script warm
)
# `arg` = cell index: its output shows "pong"
_PONG_JS = """(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const out = cell && cell.querySelector('.jp-OutputArea-output');
  return !!(out && out.textContent.includes('pong'));
}"""
# `arg` = cell index: the static head view (no widget) shows lines
_STATIC_JS = """(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  return !!(cell && cell.querySelector('.studio-headview .hv-lines line'));
}"""


def _cells(repeats: int) -> list[tuple[str, str, str, Any]]:
    """(what, code, condition, its argument) per cell, in order; cell 0 is the setup."""
    cells: list[tuple[str, str, str, Any]] = [("setup", _SETUP, HEAD_PAINTED_JS, 0)]
    for r in range(repeats):
        at = len(cells)
        view = f"big{r}"
        cells += [
            ("ping", "print('pong')", _PONG_JS, at),
            ("painted", f"{view} = head_view(weights({L}, {H}, {N}, seed={r + 1}), tokens)\n{view}",
             HEAD_PAINTED_JS, at + 1),
            ("redrawn", f"{view}.layer = 3", HEAD_LAYER_JS, [at + 1, 3]),
            ("static", f"head_view(weights({L}, {H}, {N}, seed={r + 1}), tokens, widget=False)",
             _STATIC_JS, at + 3),
        ]  # fmt: skip
    return cells


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    repeats = 1 if quick else REPEATS
    cells = _cells(repeats)
    seconds: dict[str, list[float]] = {w: [] for w in ("ping", "painted", "redrawn", "static")}
    sent: dict[str, list[int]] = {"painted": [], "redrawn": []}
    asked: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-widgets-") as scratch, chromium() as browser:
        folder = Path(scratch) / "lab"
        folder.mkdir()
        with jupyter_lab(folder, [code for _, code, _, _ in cells]) as url:
            page = lab_tab(browser, url, asked)
            received = count_frames(page)
            open_notebook(page, url)
            for index, (what, _, done, arg) in enumerate(cells):
                received.reset()
                took = run_cell_timed(page, index, done, arg, timeout_s=120)
                page.wait_for_timeout(300)  # the cell's last messages
                if what in seconds:
                    seconds[what].append(took)
                if what in sent:
                    sent[what].append(received.received)
            page.context.close()
    ping = median(seconds["ping"])
    static = median(seconds["static"])
    table = Table(
        f"Notebook widgets in JupyterLab: {N} tokens × {H} heads × {L} layers, page clock",
        ["measure", "median s", "÷ print round trip", "÷ static view painted", "target s", "bytes"],
    )
    names = {
        "painted": "a cell → the widget painted",
        "redrawn": "view.layer = 3 in Python → redrawn",
        "ping": "reference: print('pong') → shown",
        "static": "reference: widget=False → static view painted",
    }
    for what, name in names.items():
        value = median(seconds[what])
        table.rows.append(
            [
                name,
                fmt_s(value),
                f"{value / ping:.1f}",
                f"{value / static:.2f}",
                str(TARGETS.get(what, "—")),
                f"{max(sent[what]):,}" if what in sent else "—",
            ]
        )
    table.notes += [
        f"Median of {repeats}, each in a cell of its own, run once; the clock is the page's "
        "(performance.now()), from the key press to the first frame that shows the result, "
        "painted. bytes: what the kernel's websocket delivered for that cell (the most of "
        f"the runs); one layer is {H * N * N * 4:,} bytes of float32. Requests off the "
        f"server: {len(asked)}.",
    ]
    return [table], {"seconds": seconds, "bytes": sent, "asked": asked}
