"""The example notebook (examples/your_own_model.ipynb) executed for real, by nbclient on
an ipykernel, then what it displayed and saved opened in Chromium with the network off:
the head view draws every line at open, a token's own on hover, and follows its menus
(an encoder-decoder's too), every heatmap is painted, no page error, and not one request
leaves the file.

Skips locally without nbclient/ipykernel or the packaged model; fails under CI.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.availability import require_minilm, unavailable

from .checks import collect_page_errors

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "your_own_model.ipynb"
SAVED = ("head_view", "model_view", "heads_grid", "neuron_view", "head_view_pair")
SAVED += ("head_view_encdec", "model_view_encdec")  # BertViz's encoder-decoder call
SAVED += ("long_view", "long_window")  # a Llama's 4 096 tokens, pooled and a window exact
KERNEL_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """The notebook run top to bottom in a fresh kernel in a folder of its own: (the
    executed notebook as JSON, that folder with the HTML files it saved)."""
    require_minilm()
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError as error:
        unavailable(f"the notebook cannot be executed: {error} (requirements-dev.txt)")
    folder = tmp_path_factory.mktemp("notebook")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    with pytest.MonkeyPatch.context() as mp:
        # the kernel imports attention_core from this checkout, offline
        mp.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        mp.setenv("HF_HUB_OFFLINE", "1")
        client = NotebookClient(
            notebook,
            timeout=KERNEL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": str(folder)}},
        )
        client.execute()
    return json.loads(nbformat.writes(notebook)), folder


def test_every_cell_runs_and_every_view_displays_inline(executed: tuple[dict, Path]) -> None:
    notebook, folder = executed
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    outputs = [output for cell in code for output in cell["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    shown = ["".join(o["data"]["text/html"]) for o in outputs if "text/html" in o.get("data", {})]
    assert len(shown) == len(SAVED)  # every view cell displayed itself as HTML
    for html in shown:
        assert "<script>" in html and not re.search(r"<script[^>]*\bsrc=|<link\b", html)
    for name in SAVED:
        assert (folder / f"{name}.html").stat().st_size > 0


@pytest.fixture
def offline_page(browser: Browser) -> tuple[Page, list[str]]:
    """A tab with the network off: (the page, every non-file URL it asked for)."""
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    asked: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith("file:"):
            request_route.continue_()
        else:
            asked.append(url)
            request_route.abort()

    context.route("**/*", route)
    yield context.new_page(), asked
    context.close()


def _open(page: Page, path: Path) -> list[str]:
    errors = collect_page_errors(page)
    page.goto(path.as_uri())
    return errors


def test_the_saved_head_view_draws_offline(executed, offline_page, artifacts_dir: Path) -> None:
    _, folder = executed
    page, asked = offline_page
    errors = _open(page, folder / "head_view.html")
    queries = page.locator("text.hv-q")
    assert queries.count() == 15  # [CLS] … [SEP] of the animal sentence
    assert page.locator(".hv-head").count() == 12
    # every line at open, as BertViz: lines leave every query
    opened = {line.get_attribute("data-query") for line in page.locator(".hv-lines line").all()}
    assert opened == {str(i) for i in range(15)}
    queries.nth(10).hover()  # "it"
    lines = page.locator(".hv-lines line")
    assert lines.count() > 0
    assert {line.get_attribute("data-query") for line in lines.all()} == {"10"}
    drawn_in_layer_3 = lines.count()
    page.locator("select.hv-layer").select_option("0")
    queries.nth(10).click()  # pin "it" in layer 0
    assert page.locator(".hv-lines line").count() not in (0, drawn_in_layer_3)
    page.locator(".hv-head").first.click()  # head 0 off: its lines go
    heads = {line.get_attribute("data-head") for line in page.locator(".hv-lines line").all()}
    assert "0" not in heads and heads
    page.screenshot(path=str(artifacts_dir / "notebook-head-view.png"))
    assert errors == [] and asked == []


def test_the_sentence_menu_keeps_only_the_pair_asked_for(executed, offline_page) -> None:
    _, folder = executed
    page, asked = offline_page
    errors = _open(page, folder / "head_view_pair.html")
    page.locator("select.hv-filter").select_option("ab")  # sentence A → sentence B
    page.locator("text.hv-q").nth(1).click()  # "the", in sentence A
    keys = [int(line.get_attribute("data-key")) for line in page.locator(".hv-lines line").all()]
    assert keys and min(keys) >= 8  # [CLS] the cat sat on the mat . [SEP] | it …
    assert errors == [] and asked == []


def test_the_saved_encoder_decoder_head_view_switches_attention(executed, offline_page) -> None:
    """BertViz's menu: Encoder (source × source), Decoder (target × target, causal) and
    Cross (target tokens on the left, source tokens on the right), every line at open."""
    _, folder = executed
    page, asked = offline_page
    errors = _open(page, folder / "head_view_encdec.html")
    source, target, heads = 9, 12, 4  # [CLS] the cat sat on the mat . [SEP] | die katz##e …
    lines = page.locator(".hv-lines line")
    assert page.locator("text.hv-q").count() == page.locator("text.hv-k").count() == source
    assert lines.count() == heads * source * source  # a random model: no weight is 0
    page.locator("select.hv-kind").select_option("1")  # Decoder
    assert page.locator("text.hv-q").count() == target
    assert lines.count() == heads * target * (target + 1) // 2  # causal: none above
    page.locator("select.hv-kind").select_option("2")  # Cross
    assert page.locator("text.hv-q").count() == target
    assert page.locator("text.hv-k").count() == source
    assert lines.count() == heads * target * source
    page.locator("text.hv-q").nth(3).hover()
    assert {line.get_attribute("data-query") for line in lines.all()} == {"3"}
    assert {line.get_attribute("data-key") for line in lines.all()} == {str(j) for j in range(9)}
    assert errors == [] and asked == []


FIGURES = [("model_view", 1), ("heads_grid", 13), ("neuron_view", 1)]  # (file, heatmaps)
FIGURES += [("model_view_encdec", 3)]  # encoder, decoder, cross
FIGURES += [("long_view", 4), ("long_window", 4)]


@pytest.mark.parametrize(("name", "heatmaps"), FIGURES)
def test_the_saved_figures_paint_offline(executed, offline_page, name: str, heatmaps: int) -> None:
    _, folder = executed
    page, asked = offline_page
    errors = _open(page, folder / f"{name}.html")
    painted = page.locator("g.hm image, g.imagelayer image")
    painted.first.wait_for(state="attached", timeout=30_000)
    assert painted.count() == heatmaps
    assert errors == [] and asked == []


def test_every_output_in_one_document_draws(executed, offline_page, tmp_path: Path) -> None:
    """A notebook shows all its outputs in one page (JupyterLab, VS Code): two head views,
    three figures side by side, each drawing in its own box, no clash, no page error."""
    notebook, _ = executed
    shown = [
        "".join(output["data"]["text/html"])
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if "text/html" in output.get("data", {})
    ]
    page_file = tmp_path / "notebook.html"
    page_file.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        + "".join(f'<div class="output">{html}</div>' for html in shown)
        + "</body></html>",
        encoding="utf-8",
    )
    page, asked = offline_page
    errors = _open(page, page_file)
    views = page.locator(".studio-headview-box")
    assert views.count() == 3
    for index, tokens in enumerate((15, 14, 9)):  # the animal sentence; the pair; the source
        assert views.nth(index).locator("text.hv-q").count() == tokens
    at_open = views.nth(0).locator(".hv-lines line").count()
    views.nth(1).locator("text.hv-q").nth(2).hover()
    assert {
        ln.get_attribute("data-query") for ln in views.nth(1).locator(".hv-lines line").all()
    } == {"2"}
    assert views.nth(0).locator(".hv-lines line").count() == at_open  # the other is untouched
    painted = page.locator("g.hm image, g.imagelayer image")
    painted.first.wait_for(state="attached", timeout=30_000)
    assert painted.count() == sum(count for _, count in FIGURES)
    assert errors == [] and asked == []
