"""attention_core/figures/lens.py and the SVG button of figures/toolbar.py: the data behind
each figure, hand-checked; every string drawn literally; bad shapes are clear errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attention_core import lens
from attention_core.figures.lens import (
    HEAD_COLORS,
    head_view_data,
    plot_effect_grid,
    plot_effect_vs,
    plot_neuron_view,
    plot_row_pair,
    plot_sinks,
)
from attention_core.figures.toolbar import svg_button
from attention_core.i18n import catalog
from attention_core.pretrained.parts import this_thread_only
from tests.support.apptest import assert_drawn_literally

HOSTILE = "<b>x</b>&amp;"


def test_svg_button_speaks_both_languages_and_names_the_file() -> None:
    en, zh = svg_button("en", filename="heads"), svg_button("zh-TW")
    assert en == {"title": "Download plot as SVG (vector)", "filename": "heads"}
    assert zh["title"] == catalog()["chart_download_svg"]["zh-TW"] and "SVG" in zh["title"]
    assert zh["filename"] == "attention-studio-chart"
    assert svg_button("xx")["title"] == en["title"]  # unknown language: English


def test_head_view_data_sends_the_weights_a_line_is_drawn_for_and_colours_each_head() -> None:
    w = np.array([[[0.123456, 0.876544], [1.0, 0.0]]] * 3)  # (3, 2, 2)
    data = head_view_data(w, ["a", HOSTILE], ["h0", "h1", "h2"])
    assert data["tokens"] == ["a", HOSTILE]  # drawn as text nodes by the component
    # sparse: the weights a line is drawn for, as integers of 1/100 000 (0 is left out)
    assert data["sparse"]["counts"] == [2, 1] * 3 and data["scale"] == 100_000
    assert data["sparse"]["keys"][:3] == [0, 1, 0] and data["sparse"]["vals"][:3] == [
        12346,
        87654,
        100_000,
    ]
    assert [h["color"] for h in data["heads"]] == list(HEAD_COLORS[:3])
    with pytest.raises(ValueError, match="labels"):
        head_view_data(w, ["a"], ["h0", "h1", "h2"])


def test_neuron_view_rows_are_q_k_and_their_product() -> None:
    q, k = np.array([1.0, -2.0, 0.5]), np.array([2.0, 1.0, -4.0])
    fig = plot_neuron_view(q, k, rows=["q: " + HOSTILE, "k", "q⊙k"], title=HOSTILE)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, [q, k, [2.0, -2.0, -2.0]])
    assert fig.data[0].zmin == -4.0 and fig.data[0].zmax == 4.0  # symmetric around 0
    assert_drawn_literally(fig.to_plotly_json())
    with pytest.raises(ValueError, match="vectors of one length"):
        plot_neuron_view(q, k[:2], rows=["q", "k", "q⊙k"], title="")


def test_effect_grid_marks_knocked_out_heads() -> None:
    e = np.arange(6.0).reshape(2, 3) / 10
    fig = plot_effect_grid(e, [(1, 2)], layer_title="L{l}", head_title="H{i}")
    np.testing.assert_allclose(fig.data[0].z, e)
    assert list(fig.data[0].x) == ["H0", "H1", "H2"] and list(fig.data[0].y) == ["L0", "L1"]
    assert list(fig.data[1].x) == ["H2"] and list(fig.data[1].y) == ["L1"]
    assert list(fig.data[1].text) == ["✕"]
    assert len(plot_effect_grid(e).data) == 1


def test_effect_vs_and_sinks_and_row_pair_carry_their_data() -> None:
    e = np.array([[0.1, 0.2]])
    s = np.array([[0.9, 0.3]])
    fig = plot_effect_vs(e, s, x_title="x", y_title=HOSTILE, names=["a", "b"])
    np.testing.assert_allclose(fig.data[0].x, [0.9, 0.3])
    np.testing.assert_allclose(fig.data[0].y, [0.1, 0.2])
    assert_drawn_literally(fig.to_plotly_json())
    sinks = plot_sinks(s, custom=e)
    np.testing.assert_allclose(sinks.data[0].z, s)
    np.testing.assert_allclose(sinks.data[0].customdata, e)
    pair = plot_row_pair(np.array([0.5, 0.5]), np.array([0.25, 0.75]), [HOSTILE, "b"])
    np.testing.assert_allclose(pair.data[2].y, [-0.25, 0.25])
    assert_drawn_literally(pair.to_plotly_json())


def test_a_hook_registered_by_one_thread_leaves_other_threads_alone() -> None:
    calls: list[str] = []
    guarded = this_thread_only(lambda: calls.append("hooked") or "changed")
    assert guarded() == "changed"
    seen = []
    other = threading.Thread(target=lambda: seen.append(guarded()))
    other.start()
    other.join()
    assert seen == [None] and calls == ["hooked"]


def test_row_change_matches_tokens_in_order_and_measures_total_variation() -> None:
    a_tokens = ["[CLS]", "it", "was", "tired", "[SEP]"]
    b_tokens = ["[CLS]", "it", "was", "very", "wide", "[SEP]"]
    assert lens.shared_tokens(a_tokens, b_tokens) == [(0, 0), (1, 1), (2, 2), (4, 5)]
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 5, 5))
    b = rng.random((2, 3, 6, 6))
    change = lens.row_change(a, a_tokens, b, b_tokens, 1)
    assert change is not None and change.query == (1, 1)
    want = 0.5 * np.abs(a[1, 2, 1, [0, 1, 2, 4]] - b[1, 2, 1, [0, 1, 2, 5]]).sum()
    assert change.change[1, 2] == pytest.approx(want)
    assert change.ranking()[0] == tuple(np.unravel_index(change.change.argmax(), (2, 3)))
    assert lens.row_change(a, a_tokens, b, b_tokens, 3) is None  # "tired" is not in B
