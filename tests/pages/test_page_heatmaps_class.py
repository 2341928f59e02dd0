"""From the lecturer walk, on the landing page: causal rows coloured by their own even share,
and thinned labels said the same way in both languages, hover naming both tokens."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.figures.heads import head_grid, heads_spec, plot_heads
from attention_core.figures.layout import labelled, panel_layout
from attention_core.figures.scales import causal_rows, colour_scale, even_shares
from attention_core.i18n import t
from tests.support.apptest import decode, drawn_charts, heatmaps, run_app

WORDS = (
    "the quick brown fox jumps over the lazy dog while the teacher writes on a board "
    "and the students in the class watch the heads of attention light up one by one"
).split()
CAUSAL_20 = {"text": " ".join(WORDS[:20]), "tokenizer": "whitespace", "causal": "true"}
ENGLISH_25 = {"text": " ".join(WORDS[:25]), "tokenizer": "whitespace"}


def test_even_shares_follow_the_mask_the_weights_show():
    causal = np.tril(np.ones((3, 4, 4), dtype=np.float32))
    causal /= causal.sum(-1, keepdims=True)  # row i: 1/(i+1) on keys 0..i
    assert causal_rows(causal)
    np.testing.assert_allclose(even_shares(causal), [1, 1 / 2, 1 / 3, 1 / 4])
    full = np.full((2, 4, 4), 0.25, dtype=np.float32)
    assert not causal_rows(full)
    np.testing.assert_allclose(even_shares(full), [0.25] * 4)
    colours = colour_scale("relative", causal, rows=True)
    np.testing.assert_allclose(np.diag(colours.values(causal[0])), 1.0)  # every row: even
    assert np.isnan(colours.values(causal[0])[0, 1])  # masked: no colour
    assert colour_scale("relative", causal).rows is None  # the model view keeps 1/n
    assert colour_scale("relative", full, rows=True).rows is None


def test_a_causal_grid_colours_rows_by_their_share_and_hover_reads_the_weight():
    rng = np.random.default_rng(0)
    w = np.tril(rng.random((2, 6, 6)).astype(np.float32) + 0.1)
    w /= w.sum(-1, keepdims=True)  # (2, 6, 6) causal rows
    spec = heads_spec(
        head_grid(w, [f"{i}:t" for i in range(6)]), scale="relative"
    )  # row_shares: on
    (trace, _) = spec["data"]
    assert spec["layout"]["coloraxis"]["cmax"] == pytest.approx(2.0)
    z = np.asarray(trace["z"], dtype=np.float64)
    rows = np.arange(1, 7)[:, None]
    lower = np.tril(np.ones((6, 6), dtype=bool))
    np.testing.assert_allclose(z[lower], (w[0] * rows)[lower], rtol=1e-5)
    assert np.isnan(z[~lower]).all()
    np.testing.assert_allclose(np.asarray(trace["customdata"]), w[0])
    assert "%{customdata:.3f}" in trace["hovertemplate"]
    assert trace["text"][0][0] == "1.00" and trace["texttemplate"] == "%{text}"


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_causal_landing_page_colours_each_row_by_its_even_share_and_says_so(lang):
    at = run_app({**CAUSAL_20, "lang": lang})
    assert not at.exception
    traces = heatmaps(at)
    n = len(traces[0]["x"])
    assert n == 20
    (chart,) = [c for c in drawn_charts(at) if c.key == "heads_chart"]
    axis = chart.spec["layout"]["coloraxis"]
    assert axis["cmin"] == 0 and axis["cmax"] == pytest.approx(2.0)  # multiples of a share
    for trace in traces:
        colour, weight = decode(trace["z"]), decode(trace["customdata"])
        lower = np.tril(np.ones((n, n), dtype=bool))
        assert np.isnan(colour[~lower]).all()  # masked keys: no colour (grey), not blue
        shares = 1 / np.arange(1, n + 1)[:, None]
        np.testing.assert_allclose(colour[lower], (weight / shares)[lower], rtol=1e-4)
        assert colour[0, 0] == pytest.approx(1.0)  # row 0: all on itself = its even share
    caption = " ".join(c.value for c in at.caption)
    assert "1/(i+1)" in caption and f"1/{n}" in caption


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_labels_at_25_tokens_are_said_as_drawn_and_hover_names_both_tokens(lang):
    at = run_app({**ENGLISH_25, "lang": lang})
    assert not at.exception
    traces = heatmaps(at)
    labels = traces[0]["x"]
    n = len(labels)
    plan = panel_layout(labels, len(traces)).ticks
    # up to 48 tokens the rows name every token (layout.NAMED_MAX), here the columns too
    assert plan.step == 1 and labelled(plan, "y") == list(range(n))
    caption = " ".join(c.value for c in at.caption)
    assert t("large_view_note_named", lang, n=n) in caption, caption
    for other in ("large_view_note", "large_view_note_alternate"):
        assert t(other, lang, n=n) not in caption  # no caption of labels the chart has not
    for trace in traces:  # hover: both tokens, as index:token, on every cell
        assert trace["hovertemplate"].startswith("%{y} → %{x}")
        assert trace["x"] == trace["y"] and [x.split(":")[0] for x in trace["x"]] == [
            str(i) for i in range(n)
        ]


def test_other_pages_grids_keep_one_even_share_unless_they_ask():
    w = np.tril(np.ones((1, 4, 4), dtype=np.float32))
    w /= w.sum(-1, keepdims=True)
    grid = head_grid(w, list("abcd"))
    assert plot_heads(grid, scale="relative").layout.coloraxis.cmax == pytest.approx(0.5)
    assert plot_heads(grid, scale="relative", row_shares=True).layout.coloraxis.cmax == 2.0
