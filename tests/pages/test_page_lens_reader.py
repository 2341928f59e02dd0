"""AppTest of pages/lens.py with the trained reader as its model (ui/lens_sources.py), in
both languages: every view's numbers against the reader's own forward pass (ReaderLM) or
attention_core.lens.reader_lens, never against what the page drew; the reader's [UNK]s and its
context cut flagged as on its other pages. Needs no pretrained model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from attention_core.i18n import t
from attention_core.lens import reader_ablate, reader_head_effects, reader_norm_weighted
from attention_core.limits import EXACT
from attention_core.reader import load_shipped
from tests.support import teaching
from tests.support.apptest import catalog_line, chart, decode, md_unescape, texts
from tests.support.figures import assert_head_view_weights
from ui.headview import HEAD_VIEW_COMPONENT

ARTICLE = "中和有一個永和路"
WITH_UNKNOWN = "中和有一個永和路😀"  # 😀 is not in the reader's vocabulary
READER = {"lens_source": "reader"}


def own(text: str) -> np.ndarray:
    """The model's own forward pass: every layer's weights (L, H, n, n)."""
    reader = load_shipped()
    with torch.no_grad():
        _, weights = reader.model(torch.tensor([reader.vocab.encode(text).ids]))
    return torch.cat(weights).numpy()


def open_lens(text: str = ARTICLE, *, lang: str = "en", **state: object) -> AppTest:
    at = teaching.open_page("lens", {"text": text, "lang": lang}, {**READER, **state})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def warnings(at: AppTest) -> str:
    return md_unescape(" ".join(str(w.value) for w in at.warning))


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_reader_is_a_model_source_with_its_own_weights_in_both_languages(lang) -> None:
    at = open_lens(WITH_UNKNOWN, lang=lang)
    weights = own(WITH_UNKNOWN)  # (4, 4, 10, 10)
    L, H, n, _ = weights.shape
    control = at.segmented_control(key="lens_source")
    assert control.value == "reader"
    assert control.options == [t("lens_source_pretrained", lang), t("lens_source_reader", lang)]
    shown = md_unescape(texts(at))
    name = t("lens_source_reader", lang)
    assert t("lens_model_info", lang, model=name, layers=L, heads=H, n=n) in shown
    assert catalog_line("lens_reader_caption", lang).search(shown)
    # the [UNK] flagged as the reader's other pages flag it (ui.common.reader_unknown_warning)
    assert t("reader_unknown", lang, k=1, n=n, units="😀") in warnings(at)
    (grid,) = chart(at, "lens_map_chart")["data"]  # the model view: every layer × head
    z = decode(grid["z"])
    assert z.shape == (L * (n + 1) - 1, H * (n + 1) - 1)
    for layer in range(L):
        for head in range(H):
            panel = z[layer * (n + 1) : layer * (n + 1) + n, head * (n + 1) : head * (n + 1) + n]
            np.testing.assert_allclose(panel, weights[layer, head], atol=EXACT)
    assert grid["x"][0].endswith(" · 0:[BOS]") and grid["x"][9].endswith(" · 9:😀")


def test_rollout_panels_are_the_product_of_the_readers_layers() -> None:
    at = open_lens(lens_kind="rollout")
    weights = own(ARTICLE).astype(np.float64)
    spec = chart(at, "lens_map_chart")
    assert len(spec["data"]) == 4  # one panel per layer
    n = weights.shape[-1]
    product = np.eye(n)
    for layer in range(4):
        mixed = 0.5 * np.eye(n) + 0.5 * weights[layer].mean(0)
        mixed /= mixed.sum(-1, keepdims=True)
        product = mixed @ product
        np.testing.assert_allclose(decode(spec["data"][layer]["z"]), product, atol=EXACT)


def test_norm_weighted_layer_and_attention_flow_of_the_reader() -> None:
    at = open_lens(lens_kind="norm", lens_scope="layer", lens_layer=2)
    want = reader_norm_weighted(load_shipped(), ARTICLE)  # (L, H, n, n)
    spec = chart(at, "lens_map_chart")
    for head in range(4):
        np.testing.assert_allclose(decode(spec["data"][head]["z"]), want[2, head], atol=EXACT)
    assert f"({want.max():.2f})" in texts(at)  # the caption's top: all layers
    at.segmented_control(key="lens_kind").set_value("flow").run()
    assert not at.exception, at.exception
    from attention_core.lens import flow

    got = decode(chart(at, "lens_map_chart")["data"][0]["z"])
    np.testing.assert_allclose(got, flow(own(ARTICLE)), atol=EXACT)


def test_head_view_and_neuron_view_carry_the_readers_own_weights() -> None:
    weights = own(ARTICLE)
    at = open_lens(lens_view="head", lens_layer=3)
    (element,) = [
        e for e in at.get("bidi_component") if e.proto.component_name == HEAD_VIEW_COMPONENT
    ]
    spec = json.loads(json.loads(element.proto.json)["spec"])
    assert spec["tokens"] == ["[BOS]", *ARTICLE]
    assert_head_view_weights(spec, weights[3], atol=6e-5)  # 4 decimals
    assert len({h["color"] for h in spec["heads"]}) == 4

    at = open_lens(lens_view="neuron", lens_layer=1, lens_head=2, lens_query=7, lens_key=6)
    want = weights[1, 2, 7, 6]  # 和 (of 永和路) → 永
    caption = md_unescape(texts(at))
    assert f"(ReaderLM.forward) for this pair: {want:.6f}. Rebuilt from q and k: {want:.6f}" in (
        caption
    )
    z = decode(chart(at, "lens_neuron_chart")["data"][0]["z"])  # (3, D): q, k, q⊙k
    assert z.shape == (3, 32)
    np.testing.assert_allclose(z[2], z[0] * z[1], atol=EXACT)


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_ablation_measures_the_readers_predictions_in_both_languages(lang) -> None:
    reader = load_shipped()
    at = open_lens(lang=lang, lens_view="ablation", lens_knocked=["0-2", "3-1"])
    effects = reader_head_effects(reader, ARTICLE)
    grid = chart(at, "lens_effect_chart")
    np.testing.assert_allclose(decode(grid["data"][0]["z"]), effects.kl, atol=EXACT)
    assert len(grid["data"][1]["x"]) == 2 and grid["data"][1]["text"] == ["✕"] * 2
    outcome = reader_ablate(reader, ARTICLE, [(0, 2), (3, 1)])
    n = len(ARTICLE) + 1
    top = t("lens_reader_top_value", lang, k=outcome.top_changed, n=n)
    assert [m.value for m in at.metric] == [f"{outcome.loss:.3f}", f"{outcome.kl:.4f}", top]
    assert at.metric[0].delta == f"{outcome.loss_change:+.3f}" and outcome.loss_change != 0
    labels = [m.label for m in at.metric]
    assert labels == [t(k, lang) for k in ("lens_reader_loss", "lens_reader_kl", "lens_reader_top")]
    assert catalog_line("lens_reader_ablation_caption", lang).search(md_unescape(texts(at)))
    at.multiselect(key="lens_knocked").set_value([]).run()  # nothing knocked out: its own
    assert not at.exception, at.exception
    same = t("lens_reader_top_value", lang, k=0, n=n)
    assert [m.value for m in at.metric] == [f"{effects.original_loss:.3f}", "0.0000", same]
    assert catalog_line("lens_ablation_none", lang).search(md_unescape(texts(at)))


def test_sinks_language_switch_and_the_default_source() -> None:
    at = open_lens(lens_view="sinks", lens_sink="cls")
    z = decode(chart(at, "lens_sinks_chart")["data"][0]["z"])
    np.testing.assert_allclose(z, own(ARTICLE)[..., 0].mean(-1), atol=EXACT)  # [BOS]
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="lens_source").value == "reader"
    assert catalog_line("lens_reader_caption", "zh-TW").search(md_unescape(texts(at)))
    chart(at, "lens_sinks_chart")

    # the sidebar's trained weights choose the reader when the page opens
    params = {"text": ARTICLE, "weights": "trained"}
    at = teaching.open_page("lens", params, {})
    assert not at.exception, at.exception
    assert at.segmented_control(key="lens_source").value == "reader"


def test_a_long_text_is_cut_at_the_readers_context_with_a_message() -> None:
    at = open_lens("注意力" * 30)  # 90 units + [BOS]
    context = load_shipped().config.context
    assert catalog_line("reader_context_cut").search(warnings(at))
    assert t("reader_context_cut", "en", total=91, limit=context) in warnings(at)
    shown = md_unescape(texts(at))
    name = t("lens_source_reader", "en")
    assert t("lens_model_info", "en", model=name, layers=4, heads=4, n=context) in shown
