"""attention_core/figures/write.py and attention_core/decode/branch.py: the Watch it write
page's data and figures, checked on the shipped reader's own run.

References: the run itself (`decode`'s rows, which tests/core/test_decode.py checks against
ReaderLM.forward), invariants (a causal row sums to 1 over the positions it met and is
empty past them), and for the branch, the reader's rows computed on the branch's tokens by
a second `decode` that forces all of them, step by step.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.io
import pytest

from attention_core.decode import decode, parting, step_differences, written_text
from attention_core.figures.poll import class_shares, plot_class_vs_model
from attention_core.figures.write import (
    lens_grid,
    plot_alternatives,
    plot_cache,
    plot_lens,
    plot_step_differences,
    plot_strip,
    plot_triangles,
    prefix_strip,
    triangle,
)
from tests.support.apptest import assert_drawn_literally

PROMPT = "這個程式"
STEPS = 8


@pytest.fixture(scope="module")
def run():
    return decode("reader", PROMPT, STEPS)


def _spec(figure) -> dict:
    """The figure as the browser receives it: Plotly JSON, parsed."""
    return json.loads(plotly.io.to_json(figure, validate=False))


def test_triangle_rows_are_the_steps_rows_and_grow_by_one_position(run) -> None:
    tri = triangle(run, 5, layer=1)
    assert len(tri.heads) == run.steps[0].attention.shape[1]
    for h, matrix in enumerate(tri.heads):
        assert matrix.shape == (5, run.prompt_length + 4)  # (S, T)
        for i in range(5):
            t = run.prompt_length + i  # positions step i's query met
            np.testing.assert_array_equal(matrix[i, :t], run.steps[i].attention[1, h])
            assert np.isnan(matrix[i, t:]).all()
            assert matrix[i, :t].sum() == pytest.approx(1.0, abs=1e-5)
    assert tri.rows[0] == f"1→{run.steps[0].token}"
    assert tri.columns[0] == "0:[BOS]"


def test_low_weights_are_light_and_high_ones_dark(run) -> None:
    """Plotly Python's sequential Blues (white at 0): plotly.js alone reads the name
    "Blues" the other way round, so the plain-dict figures carry the stops themselves."""
    import plotly.colors

    tri = plot_triangles(triangle(run, 2, 0), title="", head_titles=[], colorbar_title="",
                         hover="")  # fmt: skip
    stops = _spec(tri)["data"][0]["colorscale"]
    assert [stops[0][1], stops[-1][1]] == [plotly.colors.sequential.Blues[0],
                                           plotly.colors.sequential.Blues[-1]]  # fmt: skip


def test_strip_is_the_newest_row_and_lens_grid_is_each_layers_top_token(run) -> None:
    strip = prefix_strip(run, 3, layer=0)
    np.testing.assert_allclose(strip.weights, run.steps[2].attention[0].mean(axis=0))
    assert strip.chosen == run.steps[2].token and len(strip.labels) == run.prompt_length + 2
    one = prefix_strip(run, 3, layer=0, head=2)
    np.testing.assert_array_equal(one.weights, run.steps[2].attention[0, 2])
    grid = lens_grid(run, 4)
    layers = run.steps[0].lens_probs.shape[0]
    assert grid.probs.shape == (layers, 4)
    assert grid.tokens[-1] == [s.top_tokens[0] for s in run.steps[:4]]  # the model's own


def test_no_step_gives_empty_figures_not_errors(run) -> None:
    assert triangle(run, 0, 0).heads == [] and prefix_strip(run, 0, 0) is None
    for figure in (
        plot_triangles(triangle(run, 0, 0), title="", head_titles=[], colorbar_title="",
                       hover="", empty="none"),
        plot_strip(None, title="", empty="none"),
        plot_lens(lens_grid(run, 0), title="", layer_name="{layer}", empty="none"),
    ):  # fmt: skip
        assert _spec(figure)["data"] == []


def test_markup_in_tokens_and_titles_is_drawn_literally() -> None:
    hostile = decode("reader", "<b>x</b><script>", 3)
    tri = triangle(hostile, 3, 0)
    figures = [
        plot_triangles(tri, title="<i>t</i>", head_titles=["<b>h</b>"] * 4,
                       colorbar_title="&", hover="{step} <br> {key}: {weight}"),
        plot_strip(prefix_strip(hostile, 3, 0), title="<u>s</u>"),
        plot_alternatives(["<b>", "&amp;"], [0.5, 0.2], written=0, title="<", x_title=">"),
        plot_lens(lens_grid(hostile, 3), title="<a>", layer_name="<b>{layer}</b>"),
        plot_cache(10, 20, most_bytes=40, title="<", keys_name="<k>", values_name="<v>"),
        plot_step_differences([0.1, 0.9], ["<1>", "<2>"], tol=0.05, parted=0, title="<",
                              y_title="<y>"),
        plot_class_vs_model({0: 2}, ["<b>", "x"], [0.6, 0.4], answers=(0,), title="<",
                            class_name="<c>", model_name="<m>", y_title="<y>"),
    ]  # fmt: skip
    for figure in figures:
        assert_drawn_literally(_spec(figure), own=r"</?(extra|b)>")


def test_a_branch_parts_the_step_after_it_and_the_rows_are_its_own() -> None:
    main = decode("reader", PROMPT, STEPS)
    alternative = int(main.steps[2].top_ids[1])
    branch = decode("reader", PROMPT, STEPS, force={2: alternative})
    differences = step_differences(main, branch)
    assert (differences[:3] == 0).all()  # the forced step's own row read the same prefix
    found = parting(main, branch)
    assert found is not None and found.step == 3
    diff = np.abs(main.steps[3].attention - branch.steps[3].attention)
    assert found.difference == pytest.approx(float(diff.max()))
    assert diff[found.layer, found.head, found.position] == pytest.approx(found.difference)
    # reference: the branch's tokens all forced give the branch's rows, step by step
    forced = {i: t for i, t in enumerate(branch.written)}
    again = decode("reader", PROMPT, STEPS, force=forced)
    assert step_differences(branch, again).max() == 0
    assert parting(main, main) is None


def test_branches_of_different_prompts_are_refused() -> None:
    with pytest.raises(ValueError, match="different prompts"):
        step_differences(decode("reader", "今天", 2), decode("reader", "明天", 2))


def test_written_text_spaces_words_not_characters() -> None:
    assert written_text(["[BOS]", "the", "cat", "今", "天", "，", "ok"]) == "[BOS]the cat今天，ok"


def test_class_shares_and_the_model_bars() -> None:
    assert class_shares({0: 3, 2: 1}, 3) == [0.75, 0.0, 0.25]
    assert class_shares({}, 2) == [0.0, 0.0]
    spec = _spec(plot_class_vs_model({0: 3, 2: 1}, ["a", "b", "c"], [0.5, 0.3, 0.2],
                                     answers=(0,)))  # fmt: skip
    class_bars, model_bars = spec["data"]
    assert class_bars["y"] == [0.75, 0.0, 0.25] and model_bars["y"] == [0.5, 0.3, 0.2]
    assert spec["layout"]["xaxis"]["ticktext"][0] == "<b>a</b>"
