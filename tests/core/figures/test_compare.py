"""Tests for attention_core/figures/compare.py: the data behind each figure, as the browser
receives it (JSON with base64 typed arrays), equals the input or a hand-computed reference."""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core.compare import head_difference
from attention_core.figures.compare import (
    THUMB_CELLS,
    model_view,
    plot_difference,
    plot_model_view,
    plot_similarity,
    plot_stat_bars,
    without_cramped_text,
)
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.stats import head_similarity, similarity_order

RNG = np.random.default_rng(11)


def _rows(shape: tuple[int, ...]) -> np.ndarray:
    w = RNG.random(shape).astype(np.float32)
    return w / w.sum(-1, keepdims=True)


def _sent(fig: go.Figure) -> dict:
    """The figure as Streamlit sends it: JSON, numpy arrays as base64 typed arrays."""
    return json.loads(fig.to_json())


def _array(value: object) -> np.ndarray:
    if isinstance(value, dict) and "bdata" in value:
        dtype = np.dtype(value["dtype"])
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=dtype)
        shape = [int(s) for s in str(value.get("shape", flat.size)).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=np.float64)


def _labels(n: int) -> list[str]:
    return [f"{i}:t{i}" for i in range(n)]


# --- the model view --------------------------------------------------------------------------


def test_model_view_panels_equal_the_input_weights():
    w = _rows((3, 4, 5, 5))  # (L, H, n, n)
    view = model_view(w, _labels(5))
    assert (view.cells, view.block, view.num_layers, view.num_heads) == (5, 1, 3, 4)
    assert view.tiles.shape == (3 * 6 - 1, 4 * 6 - 1) and view.tiles.dtype == np.float32
    sent = _sent(plot_model_view(view))
    assert len(sent["data"]) == 1  # one trace for all 12 panels
    z = _array(sent["data"][0]["z"])
    for layer in range(3):
        for head in range(4):
            r, c = layer * 6, head * 6
            np.testing.assert_array_equal(z[r : r + 5, c : c + 5], w[layer, head])
            np.testing.assert_array_equal(view.panel(layer, head), w[layer, head])
    # the gaps between panels are NaN (drawn transparent), and nothing else is
    assert np.isnan(z).sum() == z.size - w.size
    assert np.isnan(z[5]).all() and np.isnan(z[:, 5]).all()


def test_model_view_labels_are_unique_and_ticks_name_heads_and_layers():
    view = model_view(_rows((2, 3, 4, 4)), _labels(4), layer_title="L{l}", head_title="H{i}")
    assert len(set(view.x)) == len(view.x) == view.tiles.shape[1]
    assert len(set(view.y)) == len(view.y) == view.tiles.shape[0]
    assert view.x[0] == "H0 · 0:t0" and view.y[5] == "L1 · 0:t0"
    layout = _sent(plot_model_view(view))["layout"]
    assert layout["xaxis"]["ticktext"] == ["H0", "H1", "H2"]
    assert layout["yaxis"]["ticktext"] == ["L0", "L1"]
    assert all(v in view.x for v in layout["xaxis"]["tickvals"])
    assert layout["yaxis"]["scaleanchor"] == "x"  # square cells


def test_long_inputs_become_max_pooled_thumbnails():
    n = 2 * THUMB_CELLS + 3  # 131 tokens → blocks of 3, 44 cells a side
    w = _rows((1, 2, n, n))
    view = model_view(w, _labels(n))
    assert view.block == 3 and view.cells == 44
    panel = view.panel(0, 1)
    for i, j in [(0, 0), (5, 17), (43, 43), (43, 0)]:  # the last block holds 131 − 129 = 2
        block = w[0, 1, 3 * i : 3 * i + 3, 3 * j : 3 * j + 3]
        assert panel[i, j] == block.max()
    assert view.x[43] == "head 0 · 129–130"


def test_model_view_rejects_bad_shapes_and_draws_nothing_for_no_tokens():
    with pytest.raises(ValueError, match=r"\(L, H, n, n\)"):
        model_view(np.ones((2, 3, 3)), _labels(3))
    with pytest.raises(ValueError, match="one label per token"):
        model_view(np.ones((1, 1, 3, 3)), _labels(2))
    fig = plot_model_view(model_view(np.zeros((2, 3, 0, 0)), []))
    assert len(fig.data) == 0


# --- difference, similarity, bars --------------------------------------------------------------


def test_difference_figure_of_a_head_with_itself_is_zero_on_a_neutral_scale():
    w = _rows((4, 4))
    trace = _sent(plot_difference(head_difference(w, w), _labels(4)))["data"][0]
    z = _array(trace["z"])
    assert z.shape == (4, 4) and not z.any()
    assert (trace["zmin"], trace["zmid"], trace["zmax"]) == (-1.0, 0.0, 1.0)


def test_difference_figure_is_centred_on_zero_on_the_whole_range_unless_zoomed():
    a, b = _rows((6, 6)), _rows((6, 6))
    diff = head_difference(a, b)
    trace = _sent(plot_difference(diff, _labels(6)))["data"][0]
    np.testing.assert_array_equal(_array(trace["z"]), a - b)
    # ±1: two weights differ by at most 1, so noise does not get the strongest colours
    assert (trace["zmin"], trace["zmax"]) == (-1.0, 1.0)
    peak = float(np.abs(a - b).max())
    zoomed = _sent(plot_difference(diff, _labels(6), zoom=True))["data"][0]
    assert zoomed["zmax"] == pytest.approx(peak) and zoomed["zmin"] == pytest.approx(-peak)
    assert trace["zmid"] == 0.0
    assert trace["colorscale"][0][1] != trace["colorscale"][-1][1]  # a diverging scale


def test_similarity_figure_reorders_and_keeps_symmetry():
    w = _rows((5, 6, 6))
    sim = head_similarity(w)
    order = similarity_order(sim)
    names = [f"head {i}" for i in range(5)]
    trace = _sent(plot_similarity(sim, names, order=order))["data"][0]
    z = _array(trace["z"])
    np.testing.assert_allclose(z, sim[np.ix_(order, order)], rtol=1e-6)
    np.testing.assert_allclose(z, z.T)
    np.testing.assert_array_equal(np.diag(z), 1.0)
    assert trace["x"] == [names[i] for i in order] == trace["y"]
    # 0…1: where the similarity's meaning starts, so near-identical heads look alike
    assert (trace["zmin"], trace["zmax"]) == (0.0, 1.0)
    assert _sent(plot_similarity(sim, names, zmin=0.9))["data"][0]["zmin"] == 0.9
    with pytest.raises(ValueError, match="permutation"):
        plot_similarity(sim, names, order=[0, 0, 1, 2, 3])


def test_stat_bars_follow_the_given_order():
    values = [0.2, 0.9, 0.5]
    trace = _sent(plot_stat_bars(values, ["a", "b", "c"], order=[1, 2, 0]))["data"][0]
    assert trace["x"] == ["b", "c", "a"]
    np.testing.assert_allclose(_array(trace["y"]), [0.9, 0.5, 0.2], rtol=1e-6)
    with pytest.raises(ValueError, match="one name per value"):
        plot_stat_bars([1.0], ["a", "b"])
    entropy = _sent(plot_stat_bars([0.97, 0.99], ["a", "b"], y_range=(0.0, 1.0)))
    assert entropy["layout"]["yaxis"]["range"] == [0.0, 1.0]  # not zoomed onto 0.97…0.99


def test_cell_numbers_are_dropped_only_where_they_would_overlap():
    w = _rows((12, 10, 10))
    wide = plot_heads(head_grid(w[:1], _labels(10)))  # one panel over 1100 px: 110 px a cell
    assert without_cramped_text(wide).data[0].texttemplate == "%{z:.2f}"
    layer = without_cramped_text(plot_heads(head_grid(w, _labels(10))))  # 4 columns: 27 px
    assert all(t.texttemplate is None for t in layer.data)
    np.testing.assert_array_equal(_array(_sent(layer)["data"][5]["z"]), w[5])  # data intact
    half = plot_heads(head_grid(w[:4], _labels(10)), cols=2)
    assert without_cramped_text(half, width_px=520).data[0].texttemplate is None


def test_difference_and_similarity_labels_follow_the_one_layout_rule():
    from attention_core.figures.layout import LABEL_PITCH

    n = 80  # 80 tokens in a ≤ 700 px matrix: not room for every label on each axis
    diff = head_difference(_rows((n, n)), _rows((n, n)))
    layout = _sent(plot_difference(diff, _labels(n)))["layout"]
    for axis in ("xaxis", "yaxis"):
        ticks = layout[axis]
        assert ticks["tickmode"] == "array" and len(ticks["tickvals"]) < n  # thinned
        font = ticks["tickfont"]["size"]
        # the labelled ticks are LABEL_PITCH font sizes apart on the ≤ 700 px matrix
        shown = len(ticks["tickvals"])
        assert 700 / shown >= LABEL_PITCH * font * 0.99
    # rows label the even tokens, columns the odd ones: every token is named once
    named = set(layout["yaxis"]["tickvals"]) | set(layout["xaxis"]["tickvals"])
    assert named == set(_labels(n))


def test_model_view_colour_scales_against_numbers_by_hand():
    """The shared colour scale: one colour axis for the whole tiled view. By hand, n = 4
    tokens, 1 layer, 2 heads: head 0 attends evenly (every weight 1/4), head 1's largest
    weight is 0.7."""
    even = np.full((4, 4), 0.25, dtype=np.float32)
    sharp = np.array(
        [[0.7, 0.1, 0.1, 0.1], [0.1, 0.6, 0.2, 0.1], [0.0, 0.5, 0.5, 0.0], [0.4, 0.3, 0.2, 0.1]],
        dtype=np.float32,
    )
    w = np.stack([even, sharp])[None]  # (1, 2, 4, 4)
    view = model_view(w, _labels(4))

    def trace(scale: str) -> dict:
        (sent,) = _sent(plot_model_view(view, scale=scale, colorbar_title=scale))["data"]
        return sent

    absolute, relative, contrast = trace("absolute"), trace("relative"), trace("contrast")
    assert (absolute["zmin"], absolute["zmax"]) == (0.0, 1.0)
    assert absolute["colorbar"]["tickvals"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    # relative: 0 … 2 × 1/4, white (the middle of RdBu_r) at the even share 1/4 = 0.25
    assert (relative["zmin"], relative["zmax"]) == (0.0, 0.5)
    assert relative["colorbar"]["tickvals"][2] == 0.25
    assert relative["colorbar"]["ticktext"][2] == "1×"
    stops = relative["colorscale"]
    assert [s[0] for s in stops] == pytest.approx(np.linspace(0, 1, len(stops)).tolist())
    assert stops[0][1] == "rgb(5,48,97)" and stops[-1][1] == "rgb(103,0,31)"  # blue … red
    assert absolute["colorscale"][-1][1] == "rgb(8,48,107)"  # Blues
    # contrast: 0 … the largest weight of ALL panels (0.7, head 1), one axis for both heads
    assert (contrast["zmin"], contrast["zmax"]) == (0.0, pytest.approx(0.7))
    assert contrast["colorbar"]["ticktext"] == ["0", "50 %", "100 %"]
    assert contrast["colorbar"]["title"]["text"] == "contrast"
    for sent in (absolute, relative, contrast):  # the weights themselves, NaN gaps kept
        z = _array(sent["z"])
        np.testing.assert_array_equal(z[:, :4], even)
        np.testing.assert_array_equal(z[:, 5:], sharp)
        assert np.isnan(z[:, 4]).all() and sent["hoverongaps"] is False
        assert "%{z:.3f}" in sent["hovertemplate"]  # hover reads the absolute weight
    # thumbnails: n is the tokens (131), not the pooled cells (44)
    n = 2 * THUMB_CELLS + 3
    thumbs = model_view(_rows((1, 2, n, n)), _labels(n))
    assert thumbs.cells == 44
    (sent,) = _sent(plot_model_view(thumbs, scale="relative"))["data"]
    assert sent["zmax"] == pytest.approx(2 / n)
    with pytest.raises(ValueError, match="unknown colour scale"):
        plot_model_view(view, scale="rainbow")
