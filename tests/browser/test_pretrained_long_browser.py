"""The pretrained page's long map in real Chromium, walked as an engineer with a
notebook's model does: type the folder of a Llama with an 8 192-token context (a tiny random
one, saved offline), read a 4 096-token text as a map, zoom to exact cells equal to
transformers' own weights, switch layer, switch to Chinese mid-session and keep working, and
on a 390 × 844 phone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Browser, Page

from attention_core.limits import EXACT

from .checks import assert_no_exception, screenshot
from .chromium import new_context
from .waits import expect_rerun, open_page, plotly_traces, wait_for_charts
from .widgets import pick_option, set_language

pytestmark = pytest.mark.browser

SENTENCE = "the cat sat on the mat and then it slept. "  # 11 tokens
TEXT = SENTENCE * 400  # 4 402 tokens: the map holds the first 4 096
HEADS = ".studio-long-head"
PAINT_MS = 120_000


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, np.ndarray]:
    """The folder of a tiny Llama (8 192-token context) and its own eager weights for TEXT's
    first 4 096 tokens, (L, H, n, n), from transformers directly."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from attention_core.pretrained import build_tiny_model
    from tests.support.availability import require_minilm

    require_minilm()  # its tokenizer is the packaged model's vocabulary
    folder = str(build_tiny_model("llama", tmp_path_factory.mktemp("llama"), context=8192))
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        folder, attn_implementation="eager", local_files_only=True
    ).eval()
    enc = tokenizer(TEXT, return_tensors="pt", truncation=True, max_length=4096)
    with torch.no_grad():
        own = torch.cat(model(**enc, output_attentions=True).attentions).numpy()
    return folder, own


def _painted(page: Page, layer: int, *, shown: int | None = None) -> None:
    """Every head of `layer` painted (or only the `shown` one: a phone shows one at a time)."""
    want = "null" if shown is None else shown
    page.wait_for_function(
        f"""() => {{
          const plots = [...document.querySelectorAll('{HEADS}')];
          return plots.length === 4 && plots.every((p, h) => p.__layer === {layer}
            && (({want} !== null && h !== {want})
                || (p.dataset.painted && p._fullData && p._fullData[0].z.length > 0)));
        }}""",
        timeout=PAINT_MS,
    )


def _zoom(page: Page, head: int, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    """Zoom head `head` to rows × cols; the exact weights it then shows, (r, c)."""
    page.evaluate(
        f"""() => Plotly.relayout(document.querySelectorAll('{HEADS}')[{head}],
             {{'xaxis.range[0]': {cols[0]}, 'xaxis.range[1]': {cols[1]},
               'yaxis.range[0]': {rows[1]}, 'yaxis.range[1]': {rows[0]}}})"""
    )
    page.wait_for_function(
        f"""() => document.querySelectorAll('{HEADS}')[{head}].dataset.rows
             === '{rows[0]}-{rows[1]}'""",
        timeout=30_000,
    )
    tile = page.evaluate(
        f"""() => {{
          const t = document.querySelectorAll('{HEADS}')[{head}].__tile;
          const bytes = Uint8Array.from(atob(t.values), (c) => c.charCodeAt(0));
          const values = Array.from(new Float32Array(bytes.buffer));
          return {{exact: t.exact, shape: t.shape, values}};
        }}"""
    )
    assert tile["exact"]
    return np.asarray(tile["values"], dtype=np.float32).reshape(tile["shape"])


def _no_sideways_scroll(page: Page) -> None:
    wide = page.evaluate(
        """() => [document.scrollingElement,
                  document.querySelector('[data-testid="stMain"]')]
             .filter(Boolean).map((e) => e.scrollWidth - e.clientWidth)"""
    )
    assert max(wide) <= 1, f"the page scrolls sideways by {wide} px"


def _use_model(page: Page, folder: str) -> None:
    box = page.get_by_role("textbox", name="Model: Hugging Face model id or local folder")
    box.fill(folder)
    with expect_rerun(page):
        box.press("Enter")


def test_a_llamas_4096_tokens_zoom_layer_and_language(
    app_server: str, page: Page, llama: tuple[str, np.ndarray]
) -> None:
    folder, own = llama
    page.set_viewport_size({"width": 1920, "height": 1080})  # the projector
    open_page(page, app_server, "pretrained", params={"text": TEXT, "lang": "en"})
    _use_model(page, folder)
    _painted(page, layer=0)
    assert_no_exception(page)
    assert page.get_by_text("its context: 8192 tokens").count() == 1
    got = _zoom(page, 2, (3000, 3040), (2980, 3040))
    np.testing.assert_allclose(got, own[0, 2, 3000:3040, 2980:3040], atol=EXACT, rtol=0)
    _no_sideways_scroll(page)
    screenshot(page, "pretrained-long-zoomed")

    pick_option(page, page.get_by_role("combobox", name="Layer of the pretrained model"), "layer 1")
    _painted(page, layer=1)
    got = _zoom(page, 0, (100, 140), (60, 140))
    np.testing.assert_allclose(got, own[1, 0, 100:140, 60:140], atol=EXACT, rtol=0)

    set_language(page, "zh-TW")  # mid-session: the same layer and model, in Chinese
    _painted(page, layer=1)
    assert page.get_by_text("上下文長度：8192 個詞元").count() == 1
    box = page.get_by_role("textbox", name="尋找詞元或片語")
    box.fill("slept")
    with expect_rerun(page):
        box.press("Enter")
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{HEADS}')].every((p) => p.__found === 10)",
        timeout=30_000,
    )
    assert_no_exception(page)
    screenshot(page, "pretrained-long-zh-TW")


def test_a_phone_reads_a_llamas_long_map(
    app_server: str, browser: Browser, llama: tuple[str, np.ndarray]
) -> None:
    folder, _ = llama
    context = new_context(browser)
    try:
        phone = context.new_page()
        phone.set_viewport_size({"width": 390, "height": 844})
        open_page(phone, app_server, "pretrained", params={"text": TEXT, "lang": "en"})
        _use_model(phone, folder)
        _painted(phone, layer=0, shown=0)  # one head at a time, picked in a list
        widths = phone.evaluate(
            f"() => [...document.querySelectorAll('{HEADS}')].map((p) => p.offsetWidth)"
        )
        assert 0 < widths[0] <= 390 and widths[1:] == [0, 0, 0], widths
        assert phone.get_by_role("combobox", name="Head shown").is_visible()
        _no_sideways_scroll(phone)
        assert_no_exception(phone)
        screenshot(phone, "pretrained-long-phone")
    finally:
        context.close()


def test_the_lens_on_a_llamas_4096_tokens(
    app_server: str, page: Page, llama: tuple[str, np.ndarray]
) -> None:
    """From the pretrained page to the Lens, as a user goes: where attention pools (its lines
    equal to the model's received attention), then one token's rollout."""
    folder, own = llama
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_page(page, app_server, "pretrained", params={"text": TEXT, "lang": "en"})
    _use_model(page, folder)
    _painted(page, layer=0)
    with expect_rerun(page):
        page.get_by_role("link", name="Attention lens").click()
    assert wait_for_charts(page) == 2  # the received lines and the sinks grid
    lines = plotly_traces(page, 0)
    assert [t["name"] for t in lines] == [f"head {h}" for h in range(4)]
    np.testing.assert_allclose(lines[3]["y"], own[0, 3].mean(axis=0), atol=1e-6)
    assert_no_exception(page)
    screenshot(page, "lens-long-received")
    with expect_rerun(page):
        page.get_by_role("radio", name="Rollout of one token").click()
    assert wait_for_charts(page) == 1
    rolled = plotly_traces(page, 0)[0]["y"]
    assert len(rolled) == 4096 and abs(sum(rolled) - 1) < 1e-4
    box = page.get_by_role("spinbutton", name="Query token (row)")
    box.fill("10")
    with expect_rerun(page):
        box.press("Enter")
    wait_for_charts(page)
    rolled = plotly_traces(page, 0)[0]["y"]
    assert all(v == 0 for v in rolled[11:])  # a causal row 10 reaches no later token
    _no_sideways_scroll(page)
    assert_no_exception(page)
    screenshot(page, "lens-long-rollout")
    set_language(page, "zh-TW")  # mid-session: the same row, in Chinese, and keep working
    wait_for_charts(page)
    assert plotly_traces(page, 0)[0]["name"] == "注意力展開"
    with expect_rerun(page):
        page.get_by_role("radio", name="注意力集中在哪裡").click()
    assert wait_for_charts(page) == 2
    assert_no_exception(page)
    screenshot(page, "lens-long-received-zh-TW")


SHOTS = Path(__file__).resolve().parents[2] / "docs" / "images"


def _readme_shot(page: Page, name: str, bottom_of: str) -> None:
    """The page from the top down to the bottom of `bottom_of` (a CSS selector), 256
    colours, as docs/images/<name>.png."""
    from PIL import Image

    bottom = page.evaluate(
        "(s) => Math.max(...[...document.querySelectorAll(s)]"
        ".map((c) => c.getBoundingClientRect().bottom))",
        bottom_of,
    )
    path = SHOTS / f"{name}.png"
    width = page.viewport_size["width"] if page.viewport_size else 1400
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": width, "height": bottom + 40})
    with Image.open(path) as shot:
        flat = shot.convert("RGB").quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    flat.save(path, optimize=True)


@pytest.mark.readme_shots  # writes tracked files: README's pictures of a real model's long text
def test_long_model_screenshots_for_readme(
    app_server: str, page: Page, llama: tuple[str, np.ndarray]
) -> None:
    folder, _ = llama
    page.set_viewport_size({"width": 1400, "height": 2400})
    open_page(page, app_server, "pretrained", params={"text": TEXT, "lang": "en"})
    _use_model(page, folder)
    _painted(page, layer=0)
    _zoom(page, 1, (4000, 4040), (3990, 4050))
    _readme_shot(page, "pretrained-long", ".studio-long")
    with expect_rerun(page):
        page.get_by_role("link", name="Attention lens").click()
    wait_for_charts(page)
    with expect_rerun(page):
        page.get_by_role("radio", name="Rollout of one token").click()
    wait_for_charts(page)
    _readme_shot(page, "lens-long-rollout", ".studio-chart, [data-testid='stDataFrame']")
    assert_no_exception(page)


def test_compare_and_minimal_pairs_of_a_llamas_long_texts(
    app_server: str, page: Page, llama: tuple[str, np.ndarray]
) -> None:
    """As an engineer goes from page to page with one model: Compare heads (the pretrained
    source: statistics and similarity of every weight), then Minimal pairs with two long
    prompts typed in, a head picked, and the language switched mid-way."""
    folder, _ = llama
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_page(page, app_server, "pretrained", params={"text": TEXT, "lang": "en"})
    _use_model(page, folder)
    _painted(page, layer=0)
    with expect_rerun(page):
        page.get_by_role("link", name="Compare heads").click()
    with expect_rerun(page):
        page.get_by_role("radio", name="pretrained model (one layer)").click()
    assert wait_for_charts(page) >= 2  # the statistics' bars and the similarity
    assert page.get_by_text("an A − B difference map is drawn").count() == 1
    _no_sideways_scroll(page)
    screenshot(page, "compare-long")

    with expect_rerun(page):
        page.get_by_role("link", name="Minimal pairs").click()
    long_b = SENTENCE * 300 + SENTENCE.replace("cat", "dog") + SENTENCE * 99
    for name, text in (("Sentence A", TEXT), ("Sentence B", long_b)):
        box = page.get_by_role("textbox", name=name)
        box.fill(text)
        with expect_rerun(page):
            box.press("Enter")
    assert wait_for_charts(page) == 2  # the ranking and one head's two rows
    pick_option(page, page.get_by_role("combobox", name="Head"), "2")
    wait_for_charts(page)
    rows = plotly_traces(page, 1)
    assert [len(t["y"]) for t in rows] == [4095, 4095]  # every shared token but one
    set_language(page, "zh-TW")
    assert wait_for_charts(page) == 2
    _no_sideways_scroll(page)
    assert_no_exception(page)
    screenshot(page, "pairs-long-zh-TW")
