"""The head view's widget in marimo: `mo.ui.anywidget(head_view(..., widget=True))` in a
marimo notebook run headless (`marimo export html` executes every cell), the widget's
`layer` set from Python and read back through marimo's own value. Offline.

Skips locally without marimo or anywidget; fails under CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.availability import unavailable

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = """import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo
    import numpy as np

    from attention_core.notebook import head_view

    w = np.random.default_rng(0).random((3, 2, 5, 5))
    w = (w / w.sum(-1, keepdims=True)).astype(np.float32)
    view = head_view(w, ["a", "b", "<c>", "d", "e"], widget=True)
    ui = mo.ui.anywidget(view)
    ui
    return mo, ui, view


@app.cell
def _(mo, ui, view):
    view.layer = 1
    mo.md(f"MARIMO layer {ui.value['layer']} of {type(view).__name__}, {len(view.weights)} bytes")
    return
"""


def test_the_widget_runs_in_marimo(tmp_path: Path) -> None:
    try:
        import anywidget  # noqa: F401
        import marimo  # noqa: F401
    except ImportError as error:
        unavailable(f"marimo cannot run the widget: {error} (requirements-dev.txt)")
    (tmp_path / "walk.py").write_text(NOTEBOOK, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env["HF_HUB_OFFLINE"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "marimo", "export", "html", "walk.py", "-o", "walk.html"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    page = (tmp_path / "walk.html").read_text(encoding="utf-8")
    # the second cell ran after the first: marimo's value of the widget follows Python
    assert "MARIMO layer 1 of AttentionWidget, 200 bytes" in page  # 2 heads × 5 × 5 float32
