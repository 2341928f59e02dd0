"""The head view as a widget in a real JupyterLab, driven in headless Chromium, network off:
a click on a query token reaches the kernel (`view.selected`, read by the next cell), and
`view.layer = 2` set in Python redraws the view. Also measured (printed, not asserted): a
cell → the widget painted, a Python-side layer change → redrawn, and the bytes a layer
change sends, at 128 tokens × 12 heads × 6 layers.

JupyterLab runs on a free loopback port with an empty token, a temporary root folder and
its own config folders (announcements and the extension manager off); every request that
is not to that server is refused. Skips locally without JupyterLab, anywidget or Chromium;
fails under CI.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.availability import unavailable

from .checks import collect_page_errors

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60

CELLS = [
    "import numpy as np\n"
    "from attention_core.notebook import head_view\n"
    "def weights(L, H, n, seed=0):\n"
    "    w = np.random.default_rng(seed).random((L, H, n, n)) ** 4\n"
    "    return (w / w.sum(-1, keepdims=True)).astype(np.float32)\n"
    "tokens = ['[CLS]', 'the', 'cat', 'sat', '<b>on</b>', 'the', 'mat', '[SEP]']\n"
    "view = head_view(weights(3, 4, 8), tokens)\n"
    "view",
    "print('SELECTED', view.selected, type(view).__name__)",
    "view.layer = 2",
    "big = head_view(weights(6, 12, 128, seed=1), [f't{i}' for i in range(128)])\nbig",
    "big.layer = 3\nprint('BYTES', len(big.weights))",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab serving a folder with walk.ipynb: its base URL."""
    try:
        import anywidget  # noqa: F401
        import jupyterlab  # noqa: F401
        import nbformat
    except ImportError as error:
        unavailable(f"JupyterLab cannot run: {error} (requirements-dev.txt)")
    folder = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, folder / "walk.ipynb")
    config = folder.parent / f"{folder.name}-config"
    (config / "labconfig").mkdir(parents=True)
    disabled = ["@jupyterlab/apputils-extension:announcements"]
    disabled += ["@jupyterlab/extensionmanager-extension"]
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": dict.fromkeys(disabled, True)})
    )
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "HF_HUB_OFFLINE": "1"}
    env["JUPYTER_RUNTIME_DIR"] = str(config / "runtime")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}"]
    command += ["--ip=127.0.0.1", "--IdentityProvider.token=", "--allow-root"]
    command += [f"--ServerApp.root_dir={folder}", "--LabApp.news_url=None"]
    command += ["--LabServerApp.extension_manager=readonly"]
    log = open(folder.parent / f"{folder.name}-lab.log", "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"jupyter lab exited: {Path(log.name).read_text()[-2000:]}")
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture
def lab_page(browser: Browser, lab: str) -> Iterator[tuple[Page, list[str]]]:
    """A tab that reaches only the JupyterLab server: (the page, every other URL asked)."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.set_default_timeout(30_000)
    asked: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith(lab) or url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            asked.append(url)
            request_route.abort()

    context.route("**/*", route)
    yield context.new_page(), asked
    context.close()


def _run_cell(page: Page, index: int) -> float:
    """Select cell `index`, run it (Shift+Enter); the time it was sent (monotonic)."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-prompt").click()  # command mode on that cell
    page.keyboard.press("Shift+Enter")
    return time.monotonic()


def _output(page: Page, index: int, text: str) -> str:
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    out = cell.locator(".jp-OutputArea-output", has_text=text)
    out.first.wait_for()
    return out.first.inner_text()


def test_click_reaches_python_and_python_redraws_the_view(
    lab: str, lab_page: tuple[Page, list[str]], artifacts_dir: Path
) -> None:
    page, asked = lab_page
    errors = collect_page_errors(page)
    page.goto(f"{lab}/lab/tree/walk.ipynb")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()  # the kernel connected

    _run_cell(page, 0)
    first = page.locator(".jp-Cell").nth(0).locator(".studio-widget")
    first.locator(".hv-lines line").first.wait_for(state="attached")
    assert first.locator("text.hv-q").count() == 8
    assert first.locator("text.hv-q").nth(4).text_content() == "<b>on</b>"  # text, not markup

    first.locator("text.hv-q").nth(2).click()  # "cat": view → kernel
    page.wait_for_timeout(300)  # the comm message on its way
    _run_cell(page, 1)
    assert "SELECTED 2 AttentionWidget" in _output(page, 1, "SELECTED")

    drawn = first.locator(".hv-lines line")
    before = [line.get_attribute("data-weight") for line in drawn.all()]
    _run_cell(page, 2)  # view.layer = 2: kernel → view
    page.locator(".jp-Cell").nth(0).locator(".studio-widget[data-layer='2']").wait_for()
    assert first.locator("select.hv-layer").input_value() == "2"
    assert [line.get_attribute("data-weight") for line in drawn.all()] != before  # layer 2's
    assert {line.get_attribute("data-query") for line in drawn.all()} == {"2"}  # "cat" pinned
    page.screenshot(path=str(artifacts_dir / "jupyterlab-widget.png"))

    sent = _run_cell(page, 3)  # 128 tokens × 12 heads × 6 layers
    big = page.locator(".jp-Cell").nth(3).locator(".studio-widget")
    big.locator(".hv-lines line").first.wait_for(state="attached")
    painted = time.monotonic() - sent
    sent = _run_cell(page, 4)
    page.locator(".jp-Cell").nth(3).locator(".studio-widget[data-layer='3']").wait_for()
    redrawn = time.monotonic() - sent
    sent_bytes = _output(page, 4, "BYTES")
    print(f"\nJupyterLab: cell → painted {painted:.2f} s, layer → redrawn {redrawn:.2f} s")
    print(f"JupyterLab: a layer change sent {sent_bytes}")
    assert not errors
    assert not asked, f"requests left the server: {asked[:5]}"
