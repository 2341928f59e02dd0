"""Step by step, readable: the ·V step shows A and V side by side with their
product, n × n matrices are drawn square, and no matrix writes numbers into cells too
narrow for them at the default settings.

References: forward()'s weights and V recomputed from the module's nn.Linear layers
(tests/support/teaching.py: reference), and NumPy's matmul for the product.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.figures.heads import plot_matrix
from attention_core.figures.layout import CELL_NUMBER_PX
from attention_core.figures.style import HALF_WIDTH_PX, THIRD_WIDTH_PX
from attention_core.limits import EXACT
from tests.support.teaching import EXAMPLE_LINK, charts, decode, open_page, reference_from_params

STEPS_MULTI = 8
STEPS_SINGLE = 5


@pytest.mark.parametrize("attention", ["multi", "single"])
def test_mix_step_shows_a_and_v_side_by_side_with_their_product(attention):
    params = {**EXAMPLE_LINK, "attention": attention, "seed": "2"}
    step = 6 if attention == "multi" else 5
    at = open_page("steps", {**params, "step": str(step)})
    assert not at.exception
    shown = charts(at)
    a = decode(shown["steps_chart_mix_a"]["data"][0]["z"]).astype(np.float64)
    v = decode(shown["steps_chart_mix_v"]["data"][0]["z"]).astype(np.float64)
    product = shown["steps_chart_mix" if attention == "multi" else "steps_chart_output"]
    out = decode(product["data"][0]["z"]).astype(np.float64)
    ref = reference_from_params(params)
    np.testing.assert_allclose(a, ref["weights"][0], atol=EXACT)  # head 0: the page's default
    np.testing.assert_allclose(a @ v, out, atol=1e-5)  # the product of what is shown
    n = a.shape[0]
    assert v.shape[0] == n and out.shape == (n, v.shape[1])
    assert shown["steps_chart_mix_a"]["layout"]["yaxis"]["scaleanchor"] == "x"  # square


def _cell_numbers_fit(spec: dict, width_px: float) -> bool:
    """A chart writes numbers into its cells only where a cell is CELL_NUMBER_PX wide."""
    for trace in spec["data"]:
        if trace.get("type") != "heatmap" or not trace.get("texttemplate"):
            continue
        cols = np.asarray(decode(trace["z"])).shape[1]
        if (width_px - 150) / cols < CELL_NUMBER_PX:  # label margin and colour bar off
            return False
    return True


@pytest.mark.parametrize(
    "params", [{}, {"attention": "single"}, {**EXAMPLE_LINK, "attention": "single"}]
)
def test_no_cramped_numbers_and_square_token_matrices_on_every_step(params):
    """At the app's default settings (16 dimensions, 4 heads) and the issue's example."""
    attention = params.get("attention", "multi")
    count = STEPS_MULTI if attention == "multi" else STEPS_SINGLE
    at = open_page("steps", params)
    for step in range(1, count + 1):
        at.query_params["step"] = str(step)
        at.run()
        assert not at.exception
        for key, spec in charts(at).items():
            half = key in {"steps_chart_x", "steps_chart_proj", "steps_chart_mix_a"}
            third = key.endswith("_head")
            width = THIRD_WIDTH_PX if third else HALF_WIDTH_PX if half or "mix_v" in key else 940
            assert _cell_numbers_fit(spec, width), (step, key)
            heat = [t for t in spec["data"] if t.get("type") == "heatmap"]
            if heat and heat[0]["x"] == heat[0]["y"]:  # tokens against tokens
                assert spec["layout"]["yaxis"]["scaleanchor"] == "x", (step, key)


def test_plot_matrix_hides_numbers_where_cells_are_narrow_and_keeps_them_in_hover():
    m = np.arange(64, dtype=np.float32).reshape(4, 16) / 64
    rows, cols = [f"{i}:t" for i in range(4)], [str(j) for j in range(16)]
    wide = plot_matrix(m, rows, cols)  # 16 columns in ~750 px: 46 px a cell
    narrow = plot_matrix(m, rows, cols, width_px=HALF_WIDTH_PX)  # ~20 px a cell
    assert wide.data[0].texttemplate == "%{z:.2f}"
    assert narrow.data[0].texttemplate is None
    assert "%{z:.4f}" in narrow.data[0].hovertemplate
    square = plot_matrix(np.eye(5, dtype=np.float32), [*rows, "4:t"], [*rows, "4:t"])
    assert square.layout.yaxis.scaleanchor == "x"
