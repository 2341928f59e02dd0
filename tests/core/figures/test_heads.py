"""attention_core/figures/heads.py: the data behind the head grid, checked against its inputs.

References: the input weights themselves (z must equal them bit for bit), the pipeline's
`index:token` labels and Plotly's own validation. The picture panels of large grids are
tested in tests/core/figures/test_pictures.py.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core.figures.heads import (
    IMAGE_CELLS,
    RELATIVE_MAX,
    HeadGrid,
    colour_scale,
    head_grid,
    plot_heads,
    plot_matrix,
)
from attention_core.figures.layout import (
    CELL_NUMBER_PX,
    LABEL_PITCH,
    labelled,
    panel_layout,
    tick_plan,
)
from attention_core.pipeline import token_labels
from tests.support.figures import axes_by_panel as _axes
from tests.support.figures import decode_typed as _decode
from tests.support.figures import figure_spec as _spec
from tests.support.figures import repeated_labels as _labels
from tests.support.figures import softmax_weights as _softmax_weights

# --- head_grid ---------------------------------------------------------------------------------


def test_head_grid_picks_heads_and_appends_their_mean():
    w = _softmax_weights(4, 5)
    grid = head_grid(w, _labels(5), head_title="h{i}", mean_title="mean", heads=[1, 3])
    assert grid.titles == ["h1", "h3", "mean"]
    np.testing.assert_array_equal(grid.matrices[:2], w[[1, 3]])
    np.testing.assert_allclose(grid.matrices[2], (w[1] + w[3]) / 2, rtol=1e-6)
    assert grid.matrices.dtype == np.float32


def test_head_grid_accepts_one_matrix_and_skips_mean_of_one():
    w = _softmax_weights(1, 3)[0]
    grid = head_grid(w, _labels(3), mean_title="mean")
    assert grid.matrices.shape == (1, 3, 3) and grid.titles == ["head 0"]


# --- plot_heads: heatmap panels ------------------------------------------------------------------


@pytest.mark.parametrize(("heads", "n"), [(1, 1), (2, 4), (4, 12), (8, 13), (12, 32), (5, 49)])
def test_z_equals_weights_and_labels_are_index_token(heads, n):
    w = _softmax_weights(heads, n, seed=heads)
    labels = _labels(n)
    spec = _spec(plot_heads(head_grid(w, labels)))
    traces = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert len(traces) == heads
    for h, trace in enumerate(traces):
        z = _decode(trace["z"])
        assert z.dtype == np.float32
        np.testing.assert_array_equal(z, w[h])  # exact, not approximately
        assert trace["x"] == trace["y"] == labels
        assert trace["hovertemplate"].startswith("%{y} → %{x}: %{z:.3f}")
        assert trace["name"] == f"head {h}"


def test_one_shared_colour_axis_zero_to_one_and_one_colour_bar():
    spec = _spec(plot_heads(head_grid(_softmax_weights(6, 10), _labels(10))))
    assert all(t["coloraxis"] == "coloraxis" for t in spec["data"])
    assert not any("colorbar" in t or t.get("showscale") for t in spec["data"])
    coloraxes = [k for k in spec["layout"] if k.startswith("coloraxis")]
    assert coloraxes == ["coloraxis"]
    axis = spec["layout"]["coloraxis"]
    assert (axis["cmin"], axis["cmax"]) == (0, 1)
    assert "colorbar" in axis


def test_square_cells_every_y_axis_scaled_to_its_x_axis():
    P = 7
    spec = _spec(plot_heads(head_grid(_softmax_weights(P, 20), _labels(20))))
    xs, ys = _axes(spec["layout"], "x"), _axes(spec["layout"], "y")
    assert sorted(xs) == sorted(ys) == list(range(P))
    for p in range(P):
        suffix = "" if p == 0 else str(p + 1)
        assert ys[p]["scaleanchor"] == f"x{suffix}"
        assert spec["data"][p]["xaxis"] == f"x{suffix}" and spec["data"][p]["yaxis"] == f"y{suffix}"
        assert ys[p]["range"][0] > ys[p]["range"][1]  # reversed: query 0 on top
        assert xs[p]["automargin"] is False and ys[p]["automargin"] is False


@pytest.mark.parametrize("n", [1, 4, 8, 12, 30])
def test_cell_numbers_only_where_a_cell_holds_them(n):
    fig = plot_heads(head_grid(_softmax_weights(2, n), _labels(n)))
    spec = _spec(fig)
    plan = panel_layout(_labels(n), 2)
    wide = plan.panel_px / n >= CELL_NUMBER_PX
    if n <= 8:
        assert wide  # a few tokens: the numbers are the point
    if n >= 30:
        assert not wide  # ~12 px cells: "0.03" would run into its neighbours
    for trace in spec["data"]:
        assert ("texttemplate" in trace) == wide
        assert (trace["xgap"] > 0) == wide


def test_labels_on_outer_axes_only():
    P, n, cols = 6, 20, 4  # two rows: 4 panels, then 2
    spec = _spec(plot_heads(head_grid(_softmax_weights(P, n), _labels(n)), cols=cols))
    xs, ys = _axes(spec["layout"], "x"), _axes(spec["layout"], "y")
    # keys under the lowest panel of each column: 4, 5 (row 2) and 2, 3 (row 1, nothing below)
    assert {p for p in xs if xs[p]["showticklabels"]} == {2, 3, 4, 5}
    assert {p for p in ys if ys[p]["showticklabels"]} == {0, 4}  # queries left of column 0


@pytest.mark.parametrize("n", [2, 4, 12, 30, 35, 48, 128, 300, 512])
def test_panels_get_fewer_and_larger_as_n_grows_and_labels_keep_their_pitch(n):
    labels = _labels(n)
    plan = panel_layout(labels, 8)
    ticks = plan.ticks
    # labelled ticks are at least LABEL_PITCH font sizes apart along the axis
    spacing = ticks.step * plan.panel_px / n
    assert spacing >= LABEL_PITCH * ticks.font_px - 1e-9
    assert 9 <= ticks.font_px <= 12
    # at most 48 tokens every token is labelled on one axis at least (rows even, keys odd)
    shown = set(labelled(ticks, "x")) | set(labelled(ticks, "y"))
    if n <= 48:
        assert shown == set(range(n)), (n, ticks.step)
    if n <= 12:
        assert ticks.step == 1
    previous = panel_layout(_labels(max(2, n // 2)), 8)
    # (the panel's side shifts by a few pixels with the width of the row labels)
    assert plan.cols <= previous.cols and plan.panel_px >= previous.panel_px - 8


def test_tick_plan_thins_with_a_step_and_zooms_beyond_two():
    labels = _labels(128)
    plan = tick_plan(labels, 360)
    assert plan.step > 2
    categories = labels  # nothing to escape here
    x = _spec(plot_heads(head_grid(_softmax_weights(2, 128), labels)))["layout"]["xaxis"]
    assert x["tickmode"] == "auto" and x["nticks"] >= 10  # Plotly labels more on zoom
    # up to 48 tokens the rows name every token where the width allows (layout.NAMED_MAX)
    y = _spec(plot_heads(head_grid(_softmax_weights(2, 30), _labels(30))))["layout"]["yaxis"]
    assert y["tickmode"] == "array" and y["tickvals"] == _labels(30)
    # where they cannot (a step of 2): rows name the even tokens, columns the odd ones
    pair = tick_plan(_labels(30), 300)
    assert pair.step == 2 and labelled(pair, "y") == list(range(0, 30, 2))
    assert labelled(pair, "x") == list(range(1, 30, 2))
    assert categories


def test_long_labels_are_cut_on_the_axis_but_whole_in_hover():
    labels = token_labels(["supercalifragilistic", "短"])
    spec = _spec(plot_heads(head_grid(_softmax_weights(1, 2), labels)))
    x = spec["layout"]["xaxis"]
    assert x["tickvals"] == labels
    assert x["ticktext"] == ["0:supercali…", "1:短"]
    assert spec["data"][0]["x"] == labels


# --- colour scales ----------------------------------------------------------------------------


def _untrained_30() -> np.ndarray:
    """The project's untrained module on a 30-token sentence: (H, 30, 30)."""
    from attention_core.pipeline import analyze
    from attention_core.settings import ModelSettings

    text = "the quick brown fox jumps over the lazy dog while the teacher writes " * 3
    settings = ModelSettings(text=text, tokenizer="word", embed_dim=64, num_heads=8)
    w = analyze(settings, max_tokens=30).weights
    assert w.shape[-1] == 30
    return w


def _range_used(weights: np.ndarray, lo: float, hi: float) -> float:
    shown = np.clip(weights, lo, hi)
    return float((shown.max() - shown.min()) / (hi - lo))


def test_relative_scale_uses_most_of_its_range_on_untrained_heads():
    w = _untrained_30()
    absolute = colour_scale("absolute", w)
    relative = colour_scale("relative", w)
    lo, hi = absolute.limits[0]
    assert _range_used(w, lo, hi) < 0.25  # the almost-white picture
    lo, hi = relative.limits[0]
    assert (lo, hi) == (0.0, pytest.approx(RELATIVE_MAX / 30))
    assert _range_used(w, lo, hi) >= 0.5  # the default uses at least half of its colours
    assert relative.tickvals[2] == pytest.approx(1 / 30)  # "1×" is the even share 1/n
    assert relative.ticktext[2] == "1×"


def test_contrast_scale_runs_each_panel_to_its_own_maximum_and_hover_stays_absolute():
    w = _softmax_weights(3, 6)
    spec = _spec(plot_heads(head_grid(w, _labels(6)), scale="contrast"))
    for p in range(3):
        axis = spec["layout"]["coloraxis" if p == 0 else f"coloraxis{p + 1}"]
        assert axis["cmin"] == 0 and axis["cmax"] == pytest.approx(float(w[p].max()))
        assert axis["showscale"] == (p == 0)
        np.testing.assert_array_equal(_decode(spec["data"][p]["z"]), w[p])  # absolute weights
        assert "%{z:.3f}" in spec["data"][p]["hovertemplate"]


def test_relative_scale_is_diverging_around_the_even_share():
    w = _softmax_weights(2, 10)
    spec = _spec(plot_heads(head_grid(w, _labels(10)), scale="relative", colorbar_title="× 1/n"))
    axis = spec["layout"]["coloraxis"]
    assert axis["cmin"] == 0 and axis["cmax"] == pytest.approx(0.2)
    assert (axis["cmin"] + axis["cmax"]) / 2 == pytest.approx(1 / 10)  # white in the middle
    assert axis["colorbar"]["title"]["text"] == "× 1/n"
    with pytest.raises(ValueError, match="choose one of"):
        colour_scale("rainbow", w)


def test_titles_are_one_annotation_per_panel():
    grid = head_grid(_softmax_weights(3, 4), _labels(4), mean_title="all heads")
    spec = _spec(plot_heads(grid))
    assert [a["text"] for a in spec["layout"]["annotations"]] == [
        "head 0",
        "head 1",
        "head 2",
        "all heads",
    ]


@pytest.mark.parametrize(
    "grid",
    [
        HeadGrid(np.zeros((0, 3, 3), np.float32), [], ["0:a", "1:b", "2:c"]),
        HeadGrid(np.zeros((2, 0, 0), np.float32), ["head 0", "head 1"], []),
        head_grid(np.zeros((0, 0, 0), np.float32), []),
    ],
)
def test_empty_input_gives_an_empty_figure(grid):
    fig = plot_heads(grid)
    assert isinstance(fig, go.Figure)
    assert not fig.data


def test_heatmap_payload_is_float32_base64_not_json_numbers():
    H, n = 2, 512  # the largest all-heatmap grid at 512 tokens (n² × H = IMAGE_CELLS)
    assert n * n * H <= IMAGE_CELLS
    w = _softmax_weights(H, n)
    text = plot_heads(head_grid(w, _labels(n))).to_json()
    raw = w.nbytes
    spec = json.loads(text)
    bdata = sum(len(t["z"]["bdata"]) for t in spec["data"])
    assert bdata == 4 * ((raw // H + 2) // 3) * H  # exactly base64 of the float32 bytes
    # Plotly's to_json escapes "/" as "\u002f" (about 1.2 % of base64 characters), so the
    # floor is ≈ 1.41 x raw; JSON numbers would be ≈ 2.8 x (10+ characters per weight).
    escapes = text.count("\\u002f")
    assert len(text) - 5 * escapes <= 1.4 * raw
    assert len(text) <= 1.45 * raw


# --- plot_matrix ---------------------------------------------------------------------------------


def test_plot_matrix_keeps_values_and_labels():
    m = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    spec = _spec(plot_matrix(m, ["q0", "q1"], ["k0", "k1", "k2"], title="scores"))
    (trace,) = spec["data"]
    np.testing.assert_array_equal(_decode(trace["z"]), m)
    assert trace["y"] == ["q0", "q1"] and trace["x"] == ["k0", "k1", "k2"]
    assert trace["zmid"] == 0 and "texttemplate" in trace
    assert not plot_matrix(np.zeros((0, 3)), [], []).data


@pytest.mark.parametrize(
    ("heads", "n", "scale", "mean"),
    [(2, 4, "absolute", False), (8, 32, "relative", True), (12, 512, "contrast", False)],
)
def test_the_unvalidated_figure_is_what_plotly_would_validate(heads, n, scale, mean):
    """plot_heads skips Plotly's per-property validation for speed: built again through
    it (which raises on any unknown property or bad value), the figure is the same."""
    grid = head_grid(
        _softmax_weights(heads, n, seed=6), _labels(n), mean_title="mean" if mean else None
    )
    fig = plot_heads(grid, scale=scale)
    validated = go.Figure(fig.to_plotly_json())
    assert json.loads(validated.to_json()) == json.loads(fig.to_json())
