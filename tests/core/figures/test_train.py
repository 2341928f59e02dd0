"""Tests for attention_core/figures/train.py: the data behind the curves, as the browser
receives it (JSON with base64 typed arrays), equals the input arrays."""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core.figures.train import plot_curves, plot_detector, plot_knockout

STEPS = np.array([0, 10, 20, 30], dtype=np.int64)
LOSSES = np.array([2.31, 1.7, 0.42, 0.051])
ACCURACIES = np.array([0.1, 0.35, 0.9, 1.0])


def _sent(fig: go.Figure) -> dict:
    """The figure as Streamlit sends it: JSON, numpy arrays as base64 typed arrays."""
    return json.loads(fig.to_json())


def _array(value: object) -> np.ndarray:
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(s) for s in str(value.get("shape", flat.size)).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=np.float64)


def test_curve_data_equals_the_input_arrays():
    spec = _sent(plot_curves(STEPS, LOSSES, ACCURACIES, loss_title="L", accuracy_title="A"))
    loss, accuracy = spec["data"]
    assert loss["name"] == "L" and accuracy["name"] == "A"
    np.testing.assert_array_equal(_array(loss["x"]), STEPS)
    np.testing.assert_array_equal(_array(accuracy["x"]), STEPS)
    np.testing.assert_allclose(_array(loss["y"]), LOSSES, rtol=1e-6)
    np.testing.assert_allclose(_array(accuracy["y"]), ACCURACIES, rtol=1e-6)
    # loss on the left panel, accuracy on the right one, which shows percent up to 100 %
    assert (loss["xaxis"], loss["yaxis"]) == ("x", "y")
    assert (accuracy["xaxis"], accuracy["yaxis"]) == ("x2", "y2")
    layout = spec["layout"]
    assert layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0]
    assert layout["yaxis2"]["tickformat"] == ".0%" and layout["yaxis2"]["range"][1] >= 1


def test_plain_lists_work_like_arrays():
    spec = _sent(plot_curves([0, 5], [1.0, 0.5], [0.2, 0.8]))
    np.testing.assert_array_equal(_array(spec["data"][0]["x"]), [0, 5])
    np.testing.assert_allclose(_array(spec["data"][1]["y"]), [0.2, 0.8], rtol=1e-6)


def test_empty_input_gives_an_empty_figure():
    fig = plot_curves([], [], [])
    assert len(fig.data) == 0
    assert not fig.layout.shapes


def test_lengths_must_agree():
    with pytest.raises(ValueError, match="same length, got 4, 3 and 4"):
        plot_curves(STEPS, LOSSES[:3], ACCURACIES)


def test_total_steps_fixes_the_x_range_while_training():
    layout = _sent(plot_curves(STEPS, LOSSES, ACCURACIES, total_steps=300))["layout"]
    assert layout["xaxis"]["range"] == [0, 300] == layout["xaxis2"]["range"]
    # without it the range ends at the last snapshot
    layout = _sent(plot_curves(STEPS, LOSSES, ACCURACIES))["layout"]
    assert layout["xaxis"]["range"] == [0, 30]


def test_marker_is_a_vertical_line_on_both_panels():
    shapes = _sent(plot_curves(STEPS, LOSSES, ACCURACIES, marker_step=20))["layout"]["shapes"]
    lines = [s for s in shapes if s["x0"] == s["x1"] == 20]
    assert sorted(s["xref"] for s in lines) == ["x", "x2"]
    assert all(s["y0"] == 0 and s["y1"] == 1 and s["yref"].endswith("domain") for s in lines)
    assert not _sent(plot_curves(STEPS, LOSSES, ACCURACIES))["layout"].get("shapes")


def test_chance_is_a_horizontal_line_on_the_accuracy_panel():
    layout = _sent(plot_curves(STEPS, LOSSES, ACCURACIES, chance=0.1, chance_title="guess"))[
        "layout"
    ]
    (line,) = layout["shapes"]
    assert line["yref"] == "y2" and line["y0"] == line["y1"] == 0.1
    assert any(a["text"] == "guess" and a["y"] == 0.1 for a in layout["annotations"])


def test_detector_figure_carries_every_heads_scores_and_the_thresholds():
    rng = np.random.default_rng(0)
    scores = rng.random((4, 2, 3))  # (S, 2, H)
    names = ["layer 0 · head 0", "layer 0 · head 1", "<b>layer 1</b>"]
    fig = _sent(plot_detector(STEPS, scores, names, thresholds=(0.4, 0.5), marker_step=20))
    lines = fig["data"]
    assert len(lines) == 6  # 2 panels x 3 heads
    for panel in range(2):
        for head in range(3):
            trace = lines[panel * 3 + head]
            np.testing.assert_allclose(_array(trace["y"]), scores[:, panel, head], rtol=1e-6)
            np.testing.assert_array_equal(_array(trace["x"]), STEPS)
    assert lines[2]["name"] == "&lt;b&gt;layer 1&lt;/b&gt;"  # drawn literally, never markup
    dotted = [sh for sh in fig["layout"]["shapes"] if sh["line"].get("dash") == "dot"]
    assert sorted(sh["y0"] for sh in dotted) == [0.4, 0.5]
    markers = [sh for sh in fig["layout"]["shapes"] if sh.get("x0") == 20]
    assert len(markers) == 2


def test_detector_figure_of_nothing_is_empty_and_a_wrong_shape_is_refused():
    assert plot_detector([], np.zeros((0, 2, 1)), ["h"], thresholds=(0.4, 0.5)).data == ()
    with pytest.raises(ValueError, match=r"\(S=4, 2, H=2\)"):
        plot_detector(STEPS, np.zeros((4, 2, 3)), ["a", "b"], thresholds=(0.4, 0.5))


def test_knockout_bars_lines_and_the_heads_it_needs():
    fig = plot_knockout(["h0", "h1", "<b>h2</b>"], [0.97, 0.12, 0.9], accuracy=0.98, chance=0.0625)
    bars = fig.data[0]
    assert list(bars.x) == ["h0", "h1", "&lt;b&gt;h2&lt;/b&gt;"]  # names drawn literally
    np.testing.assert_allclose(np.asarray(bars.y, dtype=float), [0.97, 0.12, 0.9], atol=1e-6)
    # red: a head whose removal costs at least half of what the model gained over guessing
    assert list(bars.marker.color) == ["#1f77b4", "#d62728", "#1f77b4"]
    lines = sorted(shape.y0 for shape in fig.layout.shapes)
    assert lines == pytest.approx([0.0625, 0.98])
    with pytest.raises(ValueError):
        plot_knockout(["a"], [0.1, 0.2], accuracy=1.0, chance=0.5)
