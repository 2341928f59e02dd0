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
    # 5..: the grids, the decoder and the attribution as widgets, state both ways
    "from attention_core.notebook import attribution_view, decode_view, heads_grid, model_view\n"
    "from attention_core.reader import load_shipped\n"
    "grid = heads_grid(weights(3, 4, 8), tokens, layer=1)\n"
    "tiles = model_view(weights(3, 4, 8), tokens)\n"
    "display(grid, tiles)",
    "grid.selected = 2\ntiles.selected = 5",
    "dec = decode_view('reader', '今天天氣很好，我們', steps=4)\n"
    "att = attribution_view(load_shipped(), '永和<b>路</b>', steps=4)\n"
    "display(dec, att)",
    "dec.step = 2\ndec.layer = 1\natt.method = 'occlusion'\natt.layer = 1\natt.head = 2",
    "print('STATE', dec.selected, att.selected, att.layer, att.head)",
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


# the y of each outline drawn for `selected` in a cell's figure widget number `i`
_SELECTED_SHAPES_JS = """([cell, i]) => {
  const box = document.querySelectorAll('.jp-Notebook .jp-Cell')[cell]
    .querySelectorAll('.studio-widget')[i];
  const plot = box.querySelector('.js-plotly-plot');
  const shapes = (plot.layout.shapes || []).filter((s) => s.name === 'selected');
  return [shapes.map((s) => s.y0 + 0.5), plot.querySelectorAll('.shapelayer path').length];
}"""


def test_grids_mark_python_selected_and_decoder_attribution_widgets_talk_both_ways(
    lab: str, lab_page: tuple[Page, list[str]], artifacts_dir: Path
) -> None:
    page, asked = lab_page
    errors = collect_page_errors(page)
    open_notebook(page, lab)
    cells = page.locator(".jp-Notebook .jp-Cell")
    run_cell(page, 0)  # the weights() of the first cells
    cells.nth(0).locator(".studio-widget .hv-lines line").first.wait_for(state="attached")

    run_cell(page, 5)
    cells.nth(5).locator(".studio-widget .js-plotly-plot").nth(1).wait_for()
    run_cell(page, 6)  # selected set in Python: query 2 outlined in every head's heatmap
    page.wait_for_function(
        "(c) => [...document.querySelectorAll('.jp-Notebook .jp-Cell')[c]"
        ".querySelectorAll('.studio-widget')].every((b) => b.dataset.selected !== 'null')",
        arg=5,
    )
    page.wait_for_timeout(500)  # Plotly draws the shapes after react resolves
    rows, drawn = page.evaluate(_SELECTED_SHAPES_JS, [5, 0])
    assert rows == [2, 2, 2, 2] and drawn >= 4  # heads_grid: 4 heads, row 2 each
    rows, drawn = page.evaluate(_SELECTED_SHAPES_JS, [5, 1])
    # model view: one heatmap, 3 layers of 8 rows and a gap row between them
    assert rows == [5, 5 + 9, 5 + 18] and drawn >= 3

    run_cell(page, 7)
    dec = cells.nth(7).locator(".studio-dec-w")
    att = cells.nth(7).locator(".studio-attr-w")
    dec.wait_for()
    att.wait_for()
    assert dec.get_attribute("data-rows") == "16"  # every layer × head at first
    run_cell(page, 8)  # Python → views
    cells.nth(7).locator(".studio-dec-w[data-step='2'][data-rows='4']").wait_for()
    cells.nth(7).locator(".studio-attr-w[data-method='occlusion'][data-head='2']").wait_for()
    assert att.locator("tr.row.on").get_attribute("data-layer") == "1"
    assert att.locator(".tokens.attn .tok").nth(3).text_content() == "<"  # text, not markup
    dec.locator("tr[data-head='0'] td").nth(3).click()  # views → Python
    att.locator(".tokens.scores .tok").nth(4).click()
    assert dec.locator("td.sel").count() == 4  # the column, in each head's row
    page.wait_for_timeout(300)
    run_cell(page, 9)
    assert "STATE 3 4 1 2" in _output(page, 9, "STATE")
    page.screenshot(path=str(artifacts_dir / "jupyterlab-widgets-more.png"))
    assert not errors
    assert not asked, f"requests left the server: {asked[:5]}"
