"""The encoder-vs-decoder page, through AppTest: its heatmaps are checked against attention
recomputed here from the module's nn.Linear layers (bidirectional and causal; the reference of
tests/support/teaching.py, not the pipeline under test), and the padded batch against the
sentences run alone."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.settings import DEFAULT_TEXT
from tests.support.apptest import away_and_back, charts, decode, open_after_first_run
from tests.support.teaching import reference, reference_weights

PAGE = "pages/masks.py"
SECOND = t("masks_second_default", "en")  # the page's default second sentence (11 tokens)


def open_page(params: dict[str, str] | None = None, **state: object) -> AppTest:
    """The page after its first render (`params` in the URL, `state` set before it runs)."""
    return open_after_first_run(PAGE, params, **state)


def z(spec: dict[str, Any], trace: int = 0) -> np.ndarray:
    return decode([d for d in spec["data"] if d["type"] == "heatmap"][trace]["z"])


def test_encoder_and_decoder_match_the_reference() -> None:
    at = open_page()
    figs = charts(at)
    encoder = reference_weights(DEFAULT_TEXT, causal=False)  # the default sentence, head 0
    decoder = reference_weights(DEFAULT_TEXT, causal=True)
    np.testing.assert_allclose(z(figs["masks_encoder"]), encoder[0], atol=EXACT)
    np.testing.assert_allclose(z(figs["masks_decoder"]), decoder[0], atol=EXACT)
    upper = np.triu(np.ones((4, 4), dtype=bool), k=1)
    assert np.all(z(figs["masks_decoder"])[upper] == 0.0)
    assert z(figs["masks_encoder"])[upper].sum() > 0.1
    assert "0%: it cannot see the future" in at.info[0].value


def test_all_heads_and_sidebar_causal_is_ignored() -> None:
    at = open_page({"causal": "true"}, masks_head=-1)
    figs = charts(at)
    assert len([d for d in figs["masks_encoder"]["data"] if d["type"] == "heatmap"]) == 4
    encoder = reference_weights(DEFAULT_TEXT, causal=False)
    for h in range(4):
        np.testing.assert_allclose(z(figs["masks_encoder"], h), encoder[h], atol=EXACT)
    encoder_share = re.search(r"(\d+)%", at.info[0].value)
    assert encoder_share and int(encoder_share.group(1)) > 0  # the encoder still sees the future


def test_padding_gives_pad_keys_zero_weight() -> None:
    at = open_page()
    figs = charts(at)
    alone = reference_weights(DEFAULT_TEXT)[0]  # (4, 4): 中和 / 有 / 一個 / 永和路, head 0
    n = len(reference(SECOND)["labels"])
    assert n > 4
    mask = z(figs["masks_key_mask"])
    np.testing.assert_array_equal(mask, [[1] * 4 + [0] * (n - 4), [1] * n])
    padded = z(figs["masks_padded_weights"])  # sentence 1, head 0, padded to n
    assert padded.shape == (n, n)
    assert np.all(padded[:, 4:] == 0.0)
    np.testing.assert_allclose(padded[:4, :4], alone, atol=EXACT)
    np.testing.assert_allclose(padded.sum(1), 1.0, atol=EXACT)
    grey = [s for s in figs["masks_padded_weights"]["layout"].get("shapes", [])]
    assert len(grey) == n - 4  # one grey band per [PAD] query row
    assert len(at.success) == 2 and "[PAD]" in at.success[0].value


def test_second_sentence_and_causal_padding() -> None:
    at = open_page(masks_sentence_pick=1, masks_padding_causal=True)
    figs = charts(at)
    padded = z(figs["masks_padded_weights"])  # the second sentence: no padding at all
    alone = reference_weights(SECOND, causal=True)[0]
    np.testing.assert_allclose(padded, alone, atol=EXACT)
    assert not figs["masks_padded_weights"]["layout"].get("shapes")
    allowed = z(figs["masks_allowed"])
    np.testing.assert_array_equal(allowed, np.tril(np.ones_like(allowed)))


@pytest.mark.parametrize(
    ("second", "key"),
    [
        ("", "masks_second_empty"),
        ("\x01", "masks_second_no_tokens"),
        ("永和有一個中和路", "masks_same_length"),
    ],
)
def test_second_sentence_messages(second: str, key: str) -> None:
    at = open_page(masks_second=second)
    expected = t(key, "en", n=4)
    assert any(expected == i.value for i in at.info)


@pytest.mark.parametrize(
    "params",
    [
        {"text": ""},
        {"text": "貓"},
        {"text": " ".join(f"w{i}" for i in range(120)), "attention": "single"},
    ],
)
def test_odd_sentences_do_not_fail(params: dict[str, str]) -> None:
    at = open_page(params)
    assert not at.exception
    if params["text"]:
        assert "masks_encoder" in charts(at)
    else:
        assert at.info


def test_traditional_chinese() -> None:
    at = open_page(lang="zh-TW")
    assert at.title[0].value == t("masks_title", "zh-TW")
    assert "它看不到未來" in at.info[0].value
    assert len(at.success) == 2


def test_padding_weights_equal_running_alone_for_a_longer_first_sentence() -> None:
    text = "The animal didn't cross the street because it was too wide."
    at = open_page({"text": text, "embed_dim": "12", "num_heads": "3"}, masks_head=2)
    figs = charts(at)
    size = {"embed_dim": 12, "num_heads": 3}
    alone = reference_weights(text, **size)[2]
    np.testing.assert_allclose(z(figs["masks_encoder"]), alone, atol=EXACT)
    np.testing.assert_allclose(z(figs["masks_padded_weights"]), alone, atol=EXACT)
    second = reference_weights(SECOND, **size)[2]
    at.segmented_control(key="masks_sentence_pick").set_value(1).run()
    assert not at.exception
    padded = z(charts(at)["masks_padded_weights"])
    k = second.shape[-1]
    np.testing.assert_allclose(padded[:k, :k], second, atol=EXACT)
    assert np.all(padded[:, k:] == 0.0)


def test_second_sentence_survives_a_visit_to_another_page() -> None:
    at = open_page(masks_second="短句")
    away_and_back(at, PAGE)
    assert at.text_input(key="masks_second").value == "短句"


def _colour_axes(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The colour axis of each heatmap panel, in panel order."""
    traces = [d for d in spec["data"] if d["type"] == "heatmap"]
    return [spec["layout"][trace["coloraxis"]] for trace in traces]


def test_colour_scale_on_both_layouts_with_the_causal_note() -> None:
    """The shared colour scale on the encoder and decoder grids, one head side by
    side and all heads; relative notes that a causal row's even share is 1/(i+1)."""
    note = t("masks_relative_causal", "en", n=4)
    at = open_page()  # one head side by side; relative, the default
    assert at.button_group(key="color_scale").value == "relative"
    for key in ("masks_encoder", "masks_decoder"):
        (axis,) = _colour_axes(charts(at)[key])
        assert (axis["cmin"], axis["cmax"]) == (0, pytest.approx(2 / 4))  # 0 … 2 × 1/n
        assert axis["colorscale"][0][1] == "rgb(5,48,97)"  # RdBu_r: blue … white … red
        assert axis["colorbar"]["title"]["text"] == t("scale_bar_relative", "en")
        assert "%{z:.3f}" in charts(at)[key]["data"][0]["hovertemplate"]  # the weight
    assert note in [c.value for c in at.caption]

    at.button_group(key="color_scale").set_value("contrast").run()  # each head its own max
    assert not at.exception and note not in [c.value for c in at.caption]
    decoder = reference_weights(DEFAULT_TEXT, causal=True)
    (axis,) = _colour_axes(charts(at)["masks_decoder"])
    assert axis["cmax"] == pytest.approx(float(decoder[0].max()), rel=1e-6)
    assert at.query_params["scale"] in ("contrast", ["contrast"])

    at = open_page({"scale": "absolute"}, masks_head=-1)  # all heads, from the URL
    for key, causal in (("masks_encoder", False), ("masks_decoder", True)):
        spec = charts(at)[key]
        axes = _colour_axes(spec)
        assert len(axes) == 4 and all(a["cmax"] == 1 for a in axes)
        assert axes[0]["colorbar"]["title"]["text"] == t("scale_bar_absolute", "en")
        weights = reference_weights(DEFAULT_TEXT, causal=causal)
        np.testing.assert_allclose(z(spec, 3), weights[3], atol=EXACT)  # hover: the weights
    at.button_group(key="color_scale").set_value("contrast").run()
    spec = charts(at)["masks_encoder"]
    tops = [a["cmax"] for a in _colour_axes(spec)]
    assert tops == pytest.approx([float(z(spec, h).max()) for h in range(4)], rel=1e-6)
    at.button_group(key="color_scale").set_value("relative").run()
    assert note in [c.value for c in at.caption]
    assert all(a["cmax"] == pytest.approx(0.5) for a in _colour_axes(charts(at)["masks_decoder"]))
