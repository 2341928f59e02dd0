"""The long map's chart: a sibling of ui/charts.py's chart element for texts above MAX_TOKENS.

A Streamlit components-v2 element (no iframe; its JavaScript is ui/long/chart.js, after
ui/long/chart_colours.js and ui/long/chart_axes.js) drawing one
Plotly heatmap per head from pooled overview tiles, then fetching the visible rectangle from
ui/long/tiles.py's HTTP route on every zoom or pan (no script rerun), down to exact cells with
their tokens on the axes (as many as fit, by figures.layout's rule). Colours follow the app's
colour scale (`colour_scale_choice`; relative to an even share as attention_core.long.scale
defines it for pooled cells), named by one colour bar above the heads. A screen with room for
one head a row shows one at a time, as wide as the screen, picked in a list. plotly.js loads
as for every chart (ui/charts.py: the page's <head> has started loading it; the same
component route serves it).

What the element gets (`show_long_map`): the overviews as one JSON string (a string, not a
dict: Streamlit would walk a dict's values looking for dataframes), the tokens twice (as
typed, for the token strip's textContent; cut to LABEL_CHARS_MAX and escaped by
`figures.text.literal` for the axes, with each one's width at 1 px, `figures.layout.text_px`),
the map id and the tile route, the catalog's strings, and a row to jump to (`focus`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from attention_core.figures.heads import MASKED_COLOUR
from attention_core.figures.layout import FONT_PX, LABEL_PITCH, short_label, text_px
from attention_core.figures.text import literal
from attention_core.figures.toolbar import chart_config
from attention_core.tokenize import token_labels
from ui.charts import PLOTLY_LOADER_JS, served_plotly_url
from ui.common import colour_bar_title
from ui.language import lang, tr
from ui.long.tiles import tile_url

__all__ = ["LONG_CHART_COMPONENT", "ZOOM_SIZE", "overview_json", "show_long_map"]

LONG_CHART_COMPONENT = "attention_studio_long_map"
ZOOM_SIZE = 256  # cells a side of a zoomed tile: exact once 256 tokens or fewer are in view
HEAD_PX = 360  # a head's square at most; narrower screens get one head a row

# plotly.js's loader is the charts' own (one promise per page); then the colours, the axes
# and the element itself
_JS = PLOTLY_LOADER_JS + "".join(
    Path(__file__).with_name(name).read_text(encoding="utf-8")
    for name in ("chart_colours.js", "chart_axes.js", "chart.js")
)
_chart = st.components.v2.component(LONG_CHART_COMPONENT, js=_JS, isolate_styles=False)


def show_long_map(
    *,
    map_id: str,
    layer: int = 0,
    overview_json: str,
    labels: list[str],
    reduce: str,
    scale: str,
    causal: bool,
    focus: int | None,
    focus_key: str,
    key: str = "long_map",
) -> None:
    """Draw layer `layer` of the long map `map_id` (published in ui/long/tiles' store) from its
    heads' overview tiles (`overview_json`: a JSON list of `tiles.tile_payload`s, head by
    head), coloured by `scale` (figures.scales.SCALES); `causal`: the map's rows see the keys
    up to themselves only (their even share is 1/(i + 1)). `focus`: a row every head jumps
    to, once per new `focus_key`."""
    ticks = [short_label(t) for t in token_labels(labels)]  # (n,) cut, raw
    from attention_core.long.scale import colour_key  # torch: with the first long text

    data: dict[str, Any] = {
        # a new map, layer, reduce, scale or language: drawn afresh
        "key": f"{map_id}:{layer}:{reduce}:{scale}:{lang()}",
        "map": map_id,
        "layer": int(layer),
        "url": tile_url(),
        "overview": overview_json,
        "n": len(labels),
        "labels": labels,
        "ticks": [literal(t) for t in ticks],
        "tickw": [round(text_px(t, 1.0), 3) for t in ticks],  # (n,) px at a 1 px font
        "axes": {"pitch": LABEL_PITCH, "fonts": list(FONT_PX)},
        "reduce": reduce,
        "size": ZOOM_SIZE,
        "side": HEAD_PX,
        "scale": colour_key(scale),
        "causal": bool(causal),
        "masked": MASKED_COLOUR,
        "plotly": served_plotly_url(),
        "config": {**chart_config(lang(), filename=None), "responsive": False},
        "focus": None if focus is None else {"row": int(focus), "nonce": focus_key},
        "strings": {
            "head": tr("head_title", i="{i}"),
            "hover_exact": tr("long_hover_exact"),
            "hover_pooled": tr(f"long_hover_{reduce}"),
            "hover_relative": tr("long_hover_relative"),
            "hover_masked": tr("long_hover_masked"),
            "bar": tr("long_scale_bar", scale=tr(f"scale_{scale}"), unit=colour_bar_title(scale)),
            "pick": tr("long_head_pick"),
            "title_exact": tr("long_title_exact"),
            "title_pooled": tr("long_title_pooled"),
            "strip": tr("long_strip"),
            "gone": tr("long_gone"),
            "failed": tr("long_failed"),
        },
    }
    _chart(key=key, data=[data], on_gone_change=_rerun)


def _rerun() -> None:
    """A tile asked of an evicted map: the rerun this callback comes with publishes it again
    (ui/long/view.py)."""


def overview_json(tiles: list[dict[str, Any]]) -> str:
    """The heads' overview tiles as the element's JSON."""
    return json.dumps(tiles, separators=(",", ":"))
