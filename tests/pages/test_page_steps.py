"""The "step by step" page (pages/steps.py) and its figures (attention_core/figures/steps.py).

Reference: `MultiHeadAttention.forward` / `SingleHeadAttention.forward` run here on the
same tokens and embeddings, and the projections recomputed from their nn.Linear layers;
the numbers decoded from the page's charts must equal them.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from attention_core.figures.steps import (
    HIGHLIGHT,
    QueryRow,
    display_matrix,
    head_columns,
    merge_heads,
    outline_cells,
    plot_query_row,
    query_row,
)
from attention_core.i18n import t
from attention_core.limits import EXACT
from tests.support.apptest import charts, decode, drawn_charts, texts
from tests.support.teaching import EXAMPLE_LINK, LONG_TEXT, open_page, reference_from_params

EXAMPLE = {**EXAMPLE_LINK, "seed": "3"}
SINGLE = {**EXAMPLE, "attention": "single"}
MULTI_CHARTS = {
    1: {"steps_chart_x", "steps_chart_proj"},
    2: {"steps_chart_q_full", "steps_chart_q_head", "steps_chart_k_head", "steps_chart_v_head"},
    3: {"steps_chart_scores", "steps_chart_row"},
    4: {"steps_chart_scaled", "steps_chart_row"},
    5: {"steps_chart_weights", "steps_chart_row"},
    6: {"steps_chart_mix_a", "steps_chart_mix_v", "steps_chart_mix"},  # A and V, then A·V
    7: {"steps_chart_concat"},
    8: {"steps_chart_output"},
}
SINGLE_CHARTS = {
    1: MULTI_CHARTS[1],
    2: MULTI_CHARTS[3],
    3: MULTI_CHARTS[4],
    4: MULTI_CHARTS[5],
    5: {"steps_chart_mix_a", "steps_chart_mix_v", "steps_chart_output"},
}


STEP_TITLES_ZH = [
    t(key, "zh-TW")
    for key in (
        "steps_project_title",
        "steps_split_title",
        "steps_scores_step_title",
        "steps_scale_title",
        "steps_softmax_title",
        "steps_mix_title",
        "steps_concat_step_title",
        "steps_out_title",
    )
]


def z(spec: dict, trace: int = 0) -> np.ndarray:
    return decode(spec["data"][trace]["z"])


# --- the page shows forward()'s numbers -----------------------------------------------------
@pytest.mark.parametrize(
    ("params", "head", "query"),
    [
        (EXAMPLE, 1, 2),
        (SINGLE, 0, 3),
        (
            {
                **EXAMPLE,
                "causal": "true",
                "positional": "true",
                "embed_dim": "12",
                "num_heads": "3",
            },
            2,
            1,
        ),
    ],
    ids=["multi", "single", "multi-causal-positional"],
)
def test_charts_equal_forward(params, head, query):
    state = {"steps_all": True, "steps_query": query}
    if params["attention"] == "multi":
        state["steps_head"] = head
    at = open_page("steps", params, state)
    assert not at.exception
    ref = reference_from_params(params)
    shown = charts(at)
    weights = shown["steps_chart_weights"]
    np.testing.assert_allclose(z(weights), ref["weights"][head], atol=EXACT)
    assert weights["data"][0]["y"] == ref["labels"] == weights["data"][0]["x"]
    np.testing.assert_allclose(z(shown["steps_chart_output"]), ref["output"], atol=EXACT)
    np.testing.assert_allclose(z(shown["steps_chart_scores"]), ref["scores"][head], atol=1e-5)
    np.testing.assert_allclose(z(shown["steps_chart_proj"]), ref["q_full"], atol=EXACT)
    # the followed query: raw scores and softmax weights as bars
    bars = shown["steps_chart_row"]["data"]
    assert [b["type"] for b in bars] == ["bar"] * 3
    np.testing.assert_allclose(decode(bars[0]["y"]), ref["scores"][head, query], atol=1e-5)
    np.testing.assert_allclose(decode(bars[2]["y"]), ref["weights"][head, query], atol=EXACT)
    if params.get("causal") == "true":  # masked keys: blank (NaN) scaled scores
        scaled = z(shown["steps_chart_scaled"])
        assert np.isnan(scaled[np.triu_indices(scaled.shape[0], 1)]).all()


def test_head_slice_and_other_projection_match_the_linear_layers():
    at = open_page("steps", {**EXAMPLE, "step": "2"}, {"steps_head": 1})
    ref = reference_from_params(EXAMPLE)
    D = ref["head_dim"]
    q_head = charts(at)["steps_chart_q_head"]
    np.testing.assert_allclose(z(q_head), ref["q_full"][:, D : 2 * D], atol=EXACT)
    assert q_head["data"][0]["x"] == [str(c) for c in range(D, 2 * D)]
    rect = charts(at)["steps_chart_q_full"]["layout"]["shapes"][0]
    assert (rect["x0"], rect["x1"]) == (D - 0.5, 2 * D - 0.5)
    at.query_params["step"] = "1"
    at.run()
    at.segmented_control(key="steps_proj").set_value("k").run()
    np.testing.assert_allclose(z(charts(at)["steps_chart_proj"]), ref["k_full"], atol=EXACT)


# --- navigation: the URL's step, prev/next, invalid values --------------------------------
@pytest.mark.parametrize(("params", "expected"), [(EXAMPLE, MULTI_CHARTS), (SINGLE, SINGLE_CHARTS)])
def test_every_step_renders_from_the_url(params, expected):
    at = open_page("steps", params)
    count = len(expected)
    for step, keys in expected.items():
        at.query_params["step"] = str(step)
        at.run()
        assert not at.exception, step
        assert at.subheader[0].value.startswith(f"Step {step} of {count}:")
        assert set(charts(at)) == keys
        assert at.query_params["step"] == str(step)
        assert not at.warning


def test_prev_and_next_buttons_move_the_step_in_the_url():
    at = open_page("steps", EXAMPLE)
    assert at.query_params["step"] == "1"
    assert at.button(key="steps_prev").disabled
    at.button(key="steps_next").click().run()
    at.button(key="steps_next").click().run()
    assert at.query_params["step"] == "3"
    assert at.subheader[0].value.startswith("Step 3 of 8")
    at.button(key="steps_prev").click().run()
    assert at.query_params["step"] == "2"
    at.query_params["step"] = "8"
    at.run()
    assert at.button(key="steps_next").disabled


@pytest.mark.parametrize("bad", ["99", "abc", "0", "-1", "3.5", "", "９"])
def test_invalid_step_falls_back_to_the_first_with_a_message(bad):
    at = open_page("steps", {**EXAMPLE, "step": bad})
    assert not at.exception
    assert len(at.warning) == 1 and "1 to 8" in at.warning[0].value
    assert at.subheader[0].value.startswith("Step 1 of 8")
    assert at.query_params["step"] == "1"


def test_a_step_beyond_single_head_count_falls_back():
    at = open_page("steps", {**SINGLE, "step": "7"})
    assert not at.exception
    assert "1 to 5" in at.warning[0].value


# --- language and odd sentences -----------------------------------------------------------
def test_traditional_chinese():
    at = open_page("steps", {**EXAMPLE, "lang": "zh-TW"}, {"steps_all": True})
    assert not at.exception
    assert at.title[0].value == t("steps_title", "zh-TW")
    assert at.subheader[0].value.startswith("第 1 步（共 8 步）")
    steps = [h.value for h in at.subheader if h.value.startswith("第 ")]
    assert steps == [f"第 {i} 步（共 8 步）：{h}" for i, h in enumerate(STEP_TITLES_ZH, 1)]


@pytest.mark.parametrize(
    ("params", "n"),
    [
        ({"text": "中", "attention": "single"}, 1),
        ({"text": "中", "attention": "multi"}, 1),
        ({"text": LONG_TEXT, "tokenizer": "word", "causal": "true"}, 120),
    ],
    ids=["one-token-single", "one-token-multi", "120-tokens"],
)
def test_one_token_and_long_sentences_render_every_step(params, n):
    at = open_page("steps", params, {"steps_all": True})
    assert not at.exception
    weights = z(charts(at)["steps_chart_weights"])
    assert weights.shape == (n, n)
    np.testing.assert_allclose(weights.sum(1), 1.0, atol=1e-5)


def test_empty_text_shows_a_message():
    at = open_page("steps", {"text": "   "})
    assert not at.exception
    assert t("empty_text", "en") in texts(at)
    assert not drawn_charts(at)


# --- attention_core/figures/steps.py ------------------------------------------------------
def test_merge_heads_inverts_the_split_of_the_module():
    x = torch.randn(5, 12)  # (n, C)
    split = x.view(5, 3, 4).transpose(0, 1).numpy()  # (H, n, D), as attention.py splits
    np.testing.assert_array_equal(merge_heads(split), x.numpy())
    with pytest.raises(ValueError, match="shape"):
        merge_heads(np.zeros((4, 4)))


def test_head_columns_and_display_matrix():
    assert head_columns(2, 4) == range(8, 12)
    with pytest.raises(ValueError):
        head_columns(-1, 4)
    m = np.array([[1.0, -np.inf], [np.inf, 2.0]])
    shown = display_matrix(m)
    assert shown.dtype == np.float32 and np.isnan(shown[0, 1]) and np.isnan(shown[1, 0])
    assert shown[0, 0] == 1.0 and m[0, 1] == -np.inf  # the input is not changed


def test_query_row_reads_one_row_of_a_trace():
    scores = np.array([[[2.0, 0.0], [1.0, 3.0]]])  # (1, 2, 2)
    scaled = scores / 2
    weights = np.exp(scaled) / np.exp(scaled).sum(-1, keepdims=True)
    row = query_row({"scores": scores, "scaled": scaled, "weights": weights}, head=0, query=1)
    np.testing.assert_allclose(row.raw, [1.0, 3.0])
    np.testing.assert_allclose(row.weights, [1 / (1 + np.e), np.e / (1 + np.e)], rtol=1e-6)
    assert row.top == 1 and row.total == pytest.approx(1.0)
    with pytest.raises(ValueError, match="query"):
        query_row({"scores": scores, "scaled": scaled, "weights": weights}, head=0, query=2)


def _row(n: int, top: int) -> QueryRow:
    w = np.full(n, 1 / n)
    w[top] += 0.1
    return QueryRow(0, 0, np.arange(n, dtype=float), np.arange(n) / 2, w, top, float(w.sum()))


def test_plot_query_row_layout():
    labels = [f"{i}:t" for i in range(20)]
    fig = plot_query_row(_row(20, 7), labels, titles=("a", "b", "c"))
    assert [bar.type for bar in fig.data] == ["bar"] * 3
    assert fig.data[2].marker.color[7] == HIGHLIGHT != fig.data[2].marker.color[6]
    assert fig.layout.yaxis.domain != fig.layout.yaxis2.domain  # stacked: n > 16
    short = plot_query_row(_row(3, 1), labels[:3], titles=("a", "b", "c"))
    assert short.layout.xaxis.domain != short.layout.xaxis2.domain  # side by side
    assert not plot_query_row(_row(3, 1), [], titles=("a", "b", "c")).data


def test_outline_cells_boxes_category_cells():
    fig = outline_cells(go.Figure(), rows=(2, 3), cols=(0, 5))
    rect = fig.layout.shapes[0]
    assert (rect.x0, rect.x1, rect.y0, rect.y1) == (-0.5, 4.5, 1.5, 2.5)
