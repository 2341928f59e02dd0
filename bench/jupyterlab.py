"""A real JupyterLab driven in headless Chromium, network off: the notebook widgets' clock.

Shared by the `widgets` bench section and tests/browser/test_jupyterlab_widget_browser.py.

    with jupyter_lab(folder, cells) as url:          # walk.ipynb holding `cells`
        page = lab_tab(browser, url, asked)          # a tab that reaches only the server
        open_notebook(page, url)
        seconds = run_cell_timed(page, 0, HEAD_PAINTED_JS, 0)

JupyterLab runs on a free loopback port with an empty token, a temporary root folder and
its own config folders (announcements and the extension manager off); a tab from
`lab_tab` has every request that is not to that server refused (and listed in `asked`).
Times are the page's own clock (`performance.now()`): from the key press that runs the cell
to the first frame in which the condition holds, plus that frame painted.
`count_frames` adds up the bytes the kernel's websocket delivers to the page.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "FIGURE_PAINTED_JS",
    "HEAD_LAYER_JS",
    "HEAD_PAINTED_JS",
    "START_TIMEOUT_S",
    "FrameBytes",
    "count_frames",
    "free_port",
    "jupyter_lab",
    "lab_tab",
    "open_notebook",
    "run_cell",
    "run_cell_timed",
]

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 60

# `arg` = cell index: its head-view widget shows lines
HEAD_PAINTED_JS = """(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const view = cell && cell.querySelector('.studio-widget');
  return !!(view && view.querySelector('.hv-lines line'));
}"""
# `arg` = [cell index, layer]: its widget redrawn for that layer, lines drawn
HEAD_LAYER_JS = """([i, layer]) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const view = cell && cell.querySelector(`.studio-widget[data-layer="${layer}"]`);
  return !!(view && view.querySelector('.hv-lines line'));
}"""
# `arg` = cell index: its figure widget has a Plotly heatmap painted
FIGURE_PAINTED_JS = """(i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const view = cell && cell.querySelector('.studio-widget');
  return !!(view && view.querySelector('g.hm image, g.imagelayer image'));
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyter_lab(folder: Path, cells: list[str], *, log: Path | None = None) -> Iterator[str]:
    """JupyterLab serving `folder`, which gets walk.ipynb holding `cells`: its base URL.
    Raises RuntimeError when the server exits or does not listen within START_TIMEOUT_S."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, folder / "walk.ipynb")
    config = folder.parent / f"{folder.name}-config"
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    disabled = ["@jupyterlab/apputils-extension:announcements"]
    disabled += ["@jupyterlab/extensionmanager-extension"]
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": dict.fromkeys(disabled, True)})
    )
    port = free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "HF_HUB_OFFLINE": "1"}
    env["JUPYTER_RUNTIME_DIR"] = str(config / "runtime")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}"]
    command += ["--ip=127.0.0.1", "--IdentityProvider.token=", "--allow-root"]
    command += [f"--ServerApp.root_dir={folder}", "--LabApp.news_url=None"]
    command += ["--LabServerApp.extension_manager=readonly"]
    log_path = log or folder.parent / f"{folder.name}-lab.log"
    with open(log_path, "w") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        tail = log_path.read_text()[-2000:]
                        raise RuntimeError(f"jupyter lab did not start: {tail}") from None
                    time.sleep(0.3)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


def lab_tab(browser: Any, url: str, asked: list[str]) -> Any:
    """A new tab (in a context of its own) that reaches only `url`; every other URL asked
    is refused and appended to `asked`. Close it with `page.context.close()`."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.set_default_timeout(30_000)

    def route(request_route: Any) -> None:
        target = request_route.request.url
        if target.startswith(url) or target.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            asked.append(target)
            request_route.abort()

    context.route("**/*", route)
    return context.new_page()


def open_notebook(page: Any, url: str) -> None:
    """walk.ipynb open, its kernel connected and idle."""
    page.goto(f"{url}/lab/tree/walk.ipynb")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()


def run_cell(page: Any, index: int) -> None:
    """Select cell `index` (command mode) and run it (Shift+Enter)."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-prompt").click()
    page.evaluate("() => { window.__cellStart = performance.now(); }")
    page.keyboard.press("Shift+Enter")


# wraps a condition: the first time it holds, the next frame (so this one is painted)
# stamps window.__cellPainted
_WATCH_JS = """([test, arg]) => {
  if (!(new Function("return " + test)())(arg)) return false;
  if (window.__cellPainted === undefined) {
    window.__cellPainted = null;
    requestAnimationFrame(() => setTimeout(() => { window.__cellPainted = performance.now(); }));
  }
  return true;
}"""
_PAINTED_AT_JS = """() => new Promise((done) => (function poll() {
  if (window.__cellPainted) done((window.__cellPainted - window.__cellStart) / 1000);
  else requestAnimationFrame(poll);
})())"""


def run_cell_timed(page: Any, index: int, done_js: str, arg: Any, timeout_s: float = 60) -> float:
    """Run cell `index`; seconds by the page's clock from the key press to the frame in
    which `done_js(arg)` (a JS function's source) first holds, painted."""
    page.evaluate("() => { window.__cellPainted = undefined; }")
    run_cell(page, index)
    page.wait_for_function(_WATCH_JS, arg=[done_js, arg], polling="raf", timeout=timeout_s * 1000)
    return float(page.evaluate(_PAINTED_AT_JS))


class FrameBytes:
    """Bytes the page received over its websockets (the kernel's channel) since `reset`."""

    def __init__(self) -> None:
        self.received = 0

    def reset(self) -> None:
        self.received = 0

    def add(self, payload: str | bytes) -> None:
        self.received += len(payload.encode() if isinstance(payload, str) else payload)


def count_frames(page: Any) -> FrameBytes:
    """A FrameBytes fed by every websocket `page` opens from now on (call before goto)."""
    counter = FrameBytes()
    page.on("websocket", lambda ws: ws.on("framereceived", counter.add))
    return counter
