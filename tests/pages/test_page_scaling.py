"""The "why divide by √d_k" page (pages/scaling.py) in AppTest.

References: theory for the experiment's charts (std of q·k = √d_k), and for the sentence
heatmaps softmax(QKᵀ / divisor) computed here with torch from the module's own nn.Linear
layers (divisor 1 without scaling, √d_k · T with it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.scaling import DEFAULT_DIMS
from tests.support.teaching import (
    LONG_TEXT,
    charts,
    decode,
    open_page,
    reference_from_params,
    texts,
)

EXAMPLE = {
    "text": "中和有一個永和路",
    "tokenizer": "jieba",
    "attention": "multi",
    "embed_dim": "16",
    "num_heads": "2",
    "seed": "4",
}
EXPERIMENT_CHARTS = {"scaling_chart_spread", "scaling_chart_entropy", "scaling_chart_max"}


def panels(at) -> list[np.ndarray]:
    return [decode(trace["z"]) for trace in charts(at)["scaling_chart_sentence"]["data"]]


def test_renders_every_chart():
    at = open_page("scaling", EXAMPLE)
    assert not at.exception
    assert set(charts(at)) == EXPERIMENT_CHARTS | {"scaling_chart_sentence"}
    assert at.title[0].value == t("scaling_title", "en")


def test_spread_chart_follows_sqrt_dk():
    at = open_page("scaling", EXAMPLE)
    reference_line, measured = charts(at)["scaling_chart_spread"]["data"]
    dims = decode(measured["x"])
    np.testing.assert_array_equal(dims, DEFAULT_DIMS)
    np.testing.assert_allclose(decode(reference_line["y"]), np.sqrt(dims), rtol=1e-6)
    np.testing.assert_allclose(decode(measured["y"]) / np.sqrt(dims), 1.0, rtol=0.1)
    layout = charts(at)["scaling_chart_spread"]["layout"]
    assert layout["xaxis"]["type"] == layout["yaxis"]["type"] == "log"


def test_softmax_charts_show_unscaled_collapse_and_scaled_staying_soft():
    at = open_page("scaling", EXAMPLE)
    unscaled, scaled = (decode(tr["y"]) for tr in charts(at)["scaling_chart_entropy"]["data"])
    assert unscaled[-1] < 0.2 < 0.5 < scaled.min()
    max_u, max_s = (decode(tr["y"]) for tr in charts(at)["scaling_chart_max"]["data"])
    assert max_u[-1] > 0.9 and max_s.max() < 0.5


@pytest.mark.parametrize(("head", "temperature"), [(0, 1.0), (1, 2.0), (1, 0.5)])
def test_sentence_heatmaps_divide_by_one_and_by_sqrt_dk_times_t(head, temperature):
    state = {"scaling_head": head, "scaling_temperature": temperature}
    at = open_page("scaling", EXAMPLE, state)
    assert not at.exception
    without, with_scaling = panels(at)
    d = 16 // 2
    ref_one = reference_from_params(EXAMPLE, divisor=1.0)
    ref_t = reference_from_params(EXAMPLE, divisor=math.sqrt(d) * temperature)
    np.testing.assert_allclose(without, ref_one["custom"][head], atol=EXACT)
    np.testing.assert_allclose(with_scaling, ref_t["custom"][head], atol=EXACT)
    if temperature == 1.0:  # the article's scaling is exactly what forward() does
        np.testing.assert_allclose(with_scaling, ref_one["weights"][head], atol=EXACT)


def test_temperature_and_seed_move_only_what_they_should():
    base = charts(open_page("scaling", EXAMPLE))
    hot = charts(open_page("scaling", EXAMPLE, {"scaling_temperature": 3.0}))
    entropy = [[decode(tr["y"]) for tr in c["scaling_chart_entropy"]["data"]] for c in (base, hot)]
    np.testing.assert_array_equal(entropy[0][0], entropy[1][0])  # unscaled: no T
    assert np.all(entropy[1][1] > entropy[0][1])  # hotter: flatter
    seeded = charts(open_page("scaling", EXAMPLE, {"scaling_seed": 7}))
    spread = [decode(c["scaling_chart_spread"]["data"][1]["y"]) for c in (base, seeded)]
    assert not np.array_equal(*spread)


def test_traditional_chinese():
    at = open_page("scaling", {**EXAMPLE, "lang": "zh-TW"})
    assert not at.exception
    assert at.title[0].value == t("scaling_title", "zh-TW")
    assert t("scaling_spread_header", "zh-TW") in texts(at)
    legend = [tr["name"] for tr in charts(at)["scaling_chart_entropy"]["data"]]
    assert legend == [t("scaling_unscaled_name", "zh-TW"), t("scaling_scaled_name", "zh-TW")]


def test_empty_text_keeps_the_experiment():
    at = open_page("scaling", {"text": " "})
    assert not at.exception
    assert set(charts(at)) == EXPERIMENT_CHARTS
    assert t("empty_text", "en") in texts(at)


@pytest.mark.parametrize(
    ("params", "n"),
    [({"text": "中", "attention": "single"}, 1), ({"text": LONG_TEXT, "tokenizer": "word"}, 120)],
    ids=["one-token", "120-tokens"],
)
def test_one_token_and_long_sentences(params, n):
    at = open_page("scaling", params)
    assert not at.exception
    for panel in panels(at):
        assert panel.shape == (n, n)
        np.testing.assert_allclose(panel.sum(1), 1.0, atol=1e-5)


def test_sentence_pair_takes_the_shared_colour_scale():
    """The shared colour scale: ?scale= and the widget set the pair's colour axes; the z
    values stay the weights (hover reads them). EXAMPLE has n = 4 jieba tokens."""
    at = open_page("scaling", {**EXAMPLE, "scale": "contrast"})
    assert not at.exception
    assert at.button_group(key="color_scale").value == "contrast"
    spec = charts(at)["scaling_chart_sentence"]
    unscaled, scaled = panels(at)
    tops = [spec["layout"][trace["coloraxis"]]["cmax"] for trace in spec["data"]]
    assert tops == pytest.approx([float(unscaled.max()), float(scaled.max())], rel=1e-6)
    assert tops[0] != pytest.approx(tops[1])  # each panel its own largest weight
    bar = spec["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    assert bar == t("scale_bar_contrast", "en")
    ref = reference_from_params(EXAMPLE, divisor=1.0)
    np.testing.assert_allclose(unscaled, ref["custom"][0], atol=EXACT)  # still the weights
    at.button_group(key="color_scale").set_value("relative").run()
    spec = charts(at)["scaling_chart_sentence"]
    axis = spec["layout"]["coloraxis"]
    assert {trace["coloraxis"] for trace in spec["data"]} == {"coloraxis"}  # one axis for both
    assert (axis["cmin"], axis["cmax"]) == (0, pytest.approx(2 / 4))
    assert axis["colorscale"][-1][1] == "rgb(103,0,31)"  # RdBu_r's red end
    assert axis["colorbar"]["title"]["text"] == t("scale_bar_relative", "en")
    at.button_group(key="color_scale").set_value("absolute").run()
    assert charts(at)["scaling_chart_sentence"]["layout"]["coloraxis"]["cmax"] == 1
    assert at.query_params["scale"] in ("absolute", ["absolute"])
