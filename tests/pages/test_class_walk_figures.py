"""In front of the class, for real: defects found in the figures, in AppTest:
captions that name the colour scale in use (Pretrained), cell numbers only where a cell of
the chart's real width holds them and the shared colour scale on the positions maps (Masks,
Positions), titles above rotated column labels and Q chosen on the Q/K/V control (Step by
step), cell numbers that grow with the cell (Hand-made), Compare's y title written across,
round ticks on the lens colour bar.

The geometry is read back from the figure the page sent (its height, margins, domains and
the labels' text) against the width the page gives the chart; text widths are estimated
as `figures.layout.text_px` does (CJK 1 em, the rest 0.62 em).
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pytest

from attention_core.figures.layout import text_px
from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.i18n import t
from tests.support import teaching
from tests.support.apptest import catalog_line, chart, charts, decode, md_unescape, offline  # noqa: F401
from tests.support.availability import needs_minilm

COLORBAR_PX = 80  # a colour bar and its tick labels (less than Plotly takes: lenient)
# 12 words, long enough that their column labels stand upright (-90°) at 940 px
LONG_WORDS = (
    "students watched attention heads everywhere because teachers explained everything "
    "carefully yesterday afternoon"
)
FOURTEEN = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"


def open_page(page: str, params: dict[str, str], **state: Any):
    at = teaching.open_page(page, params, state)
    assert not at.exception, at.exception
    return at


def captions(at) -> list[str]:
    return [md_unescape(str(c.value)) for c in at.caption]


# --- 3. Pretrained: the captions say which colour scale is on ---------------------------------
@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_pretrained_captions_name_the_colour_scale_in_use(lang):
    zero_to_one = {"en": "0 to 1", "zh-TW": "0 到 1"}[lang]
    at = open_page("pretrained", {"text": "The cat sat on the mat.", "lang": lang})
    assert at.button_group(key="color_scale").value == "relative"
    bar = chart(at, "pretrained_model_chart")["data"][0]["colorbar"]["title"]["text"]
    assert bar == t("scale_bar_relative", lang)
    for view in ("model", "layer"):
        if view == "layer":
            at.button_group(key="pretrained_view").set_value("layer").run()
            assert not at.exception, at.exception
        shown = captions(at)
        assert not [c for c in shown if zero_to_one in c], shown  # the relative scale is on
        relative = catalog_line("scale_caption_relative", lang)
        assert any(relative.fullmatch(c) for c in shown), (view, shown)
    # the model view's contrast runs to the largest weight shown, its caption says so
    at.button_group(key="pretrained_view").set_value("model").run()
    at.button_group(key="color_scale").set_value("contrast").run()
    assert any(catalog_line("scale_caption_contrast_all", lang).fullmatch(c) for c in captions(at))


# --- 4. Masks and Positions: cell numbers only where they fit; the positions' colours ---------
def _tick_px(axis: dict[str, Any], categories: list[str]) -> float:
    """The widest tick label of `axis` in pixels (labels Plotly adds to the margin)."""
    texts = axis.get("ticktext") or categories
    font = (axis.get("tickfont") or {}).get("size", 12)
    return max((text_px(html.unescape(s), font) for s in texts), default=0.0)


def _cells(spec: dict[str, Any], width_px: float) -> list[tuple[dict[str, Any], float, float]]:
    """Each heatmap trace with the width and height of its cells in a chart `width_px` wide."""
    layout = spec["layout"]
    margin = layout.get("margin", {})
    found = []
    for trace in spec["data"]:
        if trace.get("type") != "heatmap":
            continue
        rows, cols = decode(trace["z"]).shape
        x = layout.get("xaxis" + trace.get("xaxis", "x")[1:], {})
        y = layout.get("yaxis" + trace.get("yaxis", "y")[1:], {})
        left = margin.get("l", 80)
        if y.get("automargin", True):  # Plotly widens the margin for the row labels
            left += _tick_px(y, trace["y"]) + 8
        bar = COLORBAR_PX if trace.get("showscale", True) else 0
        xd, yd = x.get("domain", [0, 1]), y.get("domain", [0, 1])
        cell_w = (width_px - left - margin.get("r", 80) - bar) * (xd[1] - xd[0]) / cols
        cell_h = (layout["height"] - margin.get("t", 100) - margin.get("b", 80)) * (yd[1] - yd[0])
        cell_h /= rows
        if y.get("scaleanchor"):
            cell_w = cell_h = min(cell_w, cell_h)
        found.append((trace, cell_w, cell_h))
    return found


def assert_cell_text_fits(spec: dict[str, Any], width_px: float, key: str) -> None:
    """Text is written into cells only where its widest entry fits, with room to spare."""
    for trace, cell_w, cell_h in _cells(spec, width_px):
        if not trace.get("texttemplate"):
            continue
        font = trace["textfont"]["size"]
        if trace["texttemplate"] == "%{text}":
            words = {html.unescape(w) for row in trace["text"] for w in row}
        else:
            words = {f"{v:.2f}" for v in decode(trace["z"]).ravel()}
        widest = max(text_px(w, font) for w in words)
        assert widest + 2 <= cell_w and 1.2 * font <= cell_h, (key, widest, cell_w, cell_h)


def test_masks_padded_batch_writes_numbers_only_where_they_fit_the_half_width_column():
    at = open_page("masks", {}, masks_second=FOURTEEN)
    found = charts(at)
    for key in ("masks_padded_weights", "masks_allowed"):  # side by side: half the width
        assert_cell_text_fits(found[key], HALF_WIDTH_PX, key)
    assert_cell_text_fits(found["masks_key_mask"], 940, "masks_key_mask")


@pytest.mark.parametrize("text", [LONG_WORDS, "中和有一個永和路"])
def test_positions_maps_use_the_shared_colour_scale_and_numbers_that_fit(text):
    at = open_page("positions", {"text": text})
    keys = [f"positions_{m}_{o}" for m in ("plain", "positional") for o in ("original", "shuffled")]
    found = charts(at)
    n = len(decode(found[keys[0]]["data"][0]["z"]))
    for key in keys:
        spec = found[key]
        assert_cell_text_fits(spec, HALF_WIDTH_PX, key)
        axis = spec["layout"]["coloraxis"]  # relative, the default: 0 … 2 × 1/n, white at 1/n
        assert (axis["cmin"], axis["cmax"]) == (0, pytest.approx(2 / n)), key
        assert axis["colorbar"]["title"]["text"] == t("scale_bar_relative", "en")
    assert any(catalog_line("scale_caption_relative").fullmatch(c) for c in captions(at))
    at.button_group(key="color_scale").set_value("absolute").run()
    assert charts(at)[keys[0]]["layout"]["coloraxis"]["cmax"] == 1


# --- 5. Step by step: the title above the upright labels; Q chosen on the Q/K/V control -------
def _title_bottom_px(layout: dict[str, Any]) -> float:
    """Where the title's text ends, in pixels from the top of the figure."""
    title = layout["title"]
    size = (title.get("font") or {}).get("size", 20)  # Plotly's default: 1.4 × the 14 px font
    at_top = title.get("yref") == "container" and title.get("yanchor") == "top"
    if at_top and title.get("y") == 1:
        return (title.get("pad") or {}).get("t", 0) + 1.3 * size
    return layout["margin"]["t"] / 2 + 0.3 * size  # Plotly: the baseline mid top margin


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_step_titles_sit_above_the_upright_column_labels(lang):
    at = open_page("steps", {"text": LONG_WORDS, "lang": lang, "step": "3"})
    for step, key in (("3", "steps_chart_scores"), ("5", "steps_chart_weights")):
        at.query_params["step"] = step
        at.run()
        assert not at.exception, at.exception
        layout = chart(at, key)["layout"]
        x = layout["xaxis"]
        assert x["side"] == "top" and x["tickangle"] == -90  # the case of the issue
        band = _tick_px(x, [])  # upright labels: as tall as the widest is wide
        assert _title_bottom_px(layout) <= layout["margin"]["t"] - band - 2, (step, key)


def test_the_projection_control_shows_q_selected_while_q_is_shown():
    at = open_page("steps", {"step": "1"})
    assert at.button_group(key="steps_proj").value == "q"
    title = chart(at, "steps_chart_proj")["layout"]["title"]["text"]
    assert title == html.escape(t("steps_q_title", "en"), quote=False)


# --- 11. Hand-made numbers, Compare's y title, the lens colour bar ----------------------------
def test_handmade_cell_numbers_grow_with_their_cells():
    at = open_page("handmade", {})
    spec = chart(at, "handmade_chart")
    ((trace, cell_w, _),) = _cells(spec, 940)
    assert cell_w >= 100  # the article's 4 × 4 matrix, full width
    assert trace["textfont"]["size"] >= 16  # not 9-10 px in a 150 px cell
    assert_cell_text_fits(spec, 940, "handmade_chart")


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_compare_names_the_statistic_across_not_sideways(lang):
    at = open_page("compare", {"lang": lang})
    layout = chart(at, "compare_stats_chart")["layout"]
    assert not (layout.get("yaxis", {}).get("title") or {}).get("text")  # no sideways title
    (note,) = layout["annotations"]
    assert note["text"] == t("compare_stat_entropy", lang) and note.get("textangle", 0) == 0


@needs_minilm
def test_lens_colour_bar_ticks_are_round_numbers():
    at = open_page("lens", {"text": "The cat sat on the mat."}, lens_kind="norm")
    bar = chart(at, "lens_map_chart")["data"][0]["colorbar"]
    assert len(bar["ticktext"]) >= 3
    for text, value in zip(bar["ticktext"], bar["tickvals"], strict=True):
        assert float(text) == pytest.approx(value) and len(text) <= 5, bar["ticktext"]
        assert np.isclose(float(text), round(float(text), 3))
