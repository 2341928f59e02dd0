"""The head view as a widget in a real JupyterLab, driven in headless Chromium, network off:
a click on a query token reaches the kernel (`view.selected`, read by the next cell), and
`view.layer = 2` set in Python redraws the view. At 128 tokens × 12 heads × 6 layers the
bytes the kernel sends are asserted (a layer change sends one layer, the first display no
static page); the times (page clock: a cell → the widget painted, a Python-side layer
change → redrawn) are printed, not asserted: `python -m bench widgets` reports them.

JupyterLab (bench/jupyterlab.py) runs on a free loopback port with an empty token and a
temporary root folder; every request that is not to that server is refused. Skips locally
without JupyterLab, anywidget or Chromium; fails under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bench.jupyterlab import (
    HEAD_LAYER_JS,
    HEAD_PAINTED_JS,
    count_frames,
    jupyter_lab,
    lab_tab,
    open_notebook,
    run_cell,
    run_cell_timed,
)
from tests.support.availability import unavailable

from .checks import collect_page_errors

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
H, N, L = 12, 128, 6
LAYER_BYTES = H * N * N * 4  # one layer, float32
OVERHEAD_BYTES = 64_000  # the comm messages' own JSON around a layer

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
    f"big = head_view(weights({L}, {H}, {N}, seed=1), [f't{{i}}' for i in range({N})])\nbig",
    "big.layer = 3\nprint('BYTES', len(big.weights))",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab serving a folder with walk.ipynb: its base URL."""
    try:
        import anywidget  # noqa: F401
        import jupyterlab  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError as error:
        unavailable(f"JupyterLab cannot run: {error} (requirements-dev.txt)")
    with jupyter_lab(tmp_path_factory.mktemp("lab"), CELLS) as url:
        yield url


@pytest.fixture
def lab_page(browser: Browser, lab: str) -> Iterator[tuple[Page, list[str]]]:
    """A tab that reaches only the JupyterLab server: (the page, every other URL asked)."""
    asked: list[str] = []
    page = lab_tab(browser, lab, asked)
    yield page, asked
    page.context.close()


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
    received = count_frames(page)
    open_notebook(page, lab)

    run_cell(page, 0)
    first = page.locator(".jp-Cell").nth(0).locator(".studio-widget")
    first.locator(".hv-lines line").first.wait_for(state="attached")
    assert first.locator("text.hv-q").count() == 8
    assert first.locator("text.hv-q").nth(4).text_content() == "<b>on</b>"  # text, not markup

    first.locator("text.hv-q").nth(2).click()  # "cat": view → kernel
    page.wait_for_timeout(300)  # the comm message on its way
    run_cell(page, 1)
    assert "SELECTED 2 AttentionWidget" in _output(page, 1, "SELECTED")

    drawn = first.locator(".hv-lines line")
    before = [line.get_attribute("data-weight") for line in drawn.all()]
    run_cell(page, 2)  # view.layer = 2: kernel → view
    page.locator(".jp-Cell").nth(0).locator(".studio-widget[data-layer='2']").wait_for()
    assert first.locator("select.hv-layer").input_value() == "2"
    assert [line.get_attribute("data-weight") for line in drawn.all()] != before  # layer 2's
    assert {line.get_attribute("data-query") for line in drawn.all()} == {"2"}  # "cat" pinned
    page.screenshot(path=str(artifacts_dir / "jupyterlab-widget.png"))

    received.reset()
    painted = run_cell_timed(page, 3, HEAD_PAINTED_JS, 3)  # 128 tokens × 12 heads × 6 layers
    page.wait_for_timeout(300)  # the cell's last messages (idle, execute_reply)
    shown_bytes = received.received
    received.reset()
    redrawn = run_cell_timed(page, 4, HEAD_LAYER_JS, [3, 3])
    page.wait_for_timeout(300)
    layer_bytes = received.received
    big = page.locator(".jp-Cell").nth(3).locator(".studio-widget")
    note = big.locator(".hv-note").inner_text()
    assert "1,000 strongest of 196,608 lines" in note, note  # the lines left out, said
    assert big.locator(".hv-lines line").count() == 1_000
    big.locator("button.hv-more").click()  # the rest on demand, up to OPEN_LINES
    assert big.locator(".hv-lines line").count() == 20_000
    assert "20,000 strongest" in big.locator(".hv-note").inner_text()
    assert f"BYTES {LAYER_BYTES}" in _output(page, 4, "BYTES")
    print(f"\nJupyterLab (page clock): cell → painted {painted:.2f} s, ", end="")
    print(f"layer → redrawn {redrawn:.2f} s")
    print(f"JupyterLab: the cell sent {shown_bytes:,} bytes, a layer change {layer_bytes:,}")
    # one layer per change (the buffer travels as a binary frame), never the model's L layers
    assert LAYER_BYTES <= layer_bytes <= LAYER_BYTES + OVERHEAD_BYTES
    # the first display: one layer, the script, no static page (3.8 MB at this size)
    assert shown_bytes <= LAYER_BYTES + 2 * OVERHEAD_BYTES
    assert not errors
    assert not asked, f"requests left the server: {asked[:5]}"
