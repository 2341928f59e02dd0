"""The long map's chart: a sibling of ui/charts.py's chart element for texts above MAX_TOKENS.

A Streamlit components-v2 element (no iframe; its JavaScript is ui/longchart.js) drawing one
Plotly heatmap per head from pooled overview tiles, then fetching the visible rectangle from
ui/tiles.py's HTTP route on every zoom or pan (no script rerun), down to exact cells with
their tokens on the axes. plotly.js loads as for every chart (ui/charts.py: the page's
<head> has started loading it; the same component route serves it).

What the element gets (`show_long_map`): the overviews as one JSON string (a string, not a
dict: Streamlit would walk a dict's values looking for dataframes), the tokens twice (as
typed, for the token strip's textContent; escaped by `figures.text.literal` for Plotly),
the map id and the tile route, the catalog's strings, and a row to jump to (`focus`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from attention_core.figures.scales import COLORSCALE
from attention_core.figures.text import literals
from attention_core.figures.toolbar import chart_config
from ui.charts import PLOTLY_LOADER_JS, _plotly_url
from ui.common import lang, tr
from ui.tiles import tile_url

__all__ = ["LONG_CHART_COMPONENT", "ZOOM_SIZE", "overview_json", "show_long_map"]

LONG_CHART_COMPONENT = "attention_studio_long_map"
ZOOM_SIZE = 256  # cells a side of a zoomed tile: exact once 256 tokens or fewer are in view
HEAD_PX = 360  # a head's square at most; narrower screens get one head a row

# plotly.js's loader is the charts' own (one promise per page); the rest is longchart.js
_JS = PLOTLY_LOADER_JS + Path(__file__).with_name("longchart.js").read_text(encoding="utf-8")
_chart = st.components.v2.component(LONG_CHART_COMPONENT, js=_JS, isolate_styles=False)


def show_long_map(
    *,
    map_id: str,
    layer: int = 0,
    overview_json: str,
    labels: list[str],
    reduce: str,
    focus: int | None,
    focus_key: str,
    key: str = "long_map",
) -> None:
    """Draw layer `layer` of the long map `map_id` (published in ui/tiles' store) from its heads'
    overview tiles (`overview_json`: a JSON list of `tiles.tile_payload`s, head by head).
    `focus`: a row every head jumps to, once per new `focus_key`."""
    data: dict[str, Any] = {
        # a new map, layer, reduce or language: drawn afresh
        "key": f"{map_id}:{layer}:{reduce}:{lang()}",
        "map": map_id,
        "layer": int(layer),
        "url": tile_url(),
        "overview": overview_json,
        "n": len(labels),
        "labels": labels,
        "ticks": literals(f"{i}:{t}" for i, t in enumerate(labels)),
        "reduce": reduce,
        "size": ZOOM_SIZE,
        "side": HEAD_PX,
        "colorscale": COLORSCALE,
        "plotly": _plotly_url(),
        "config": {**chart_config(lang(), filename=None), "responsive": False},
        "focus": None if focus is None else {"row": int(focus), "nonce": focus_key},
        "strings": {
            "head": tr("head_title", i="{i}"),
            "hover_exact": tr("long_hover_exact"),
            "hover_pooled": tr(f"long_hover_{reduce}"),
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
    (ui/longview.py)."""


def overview_json(tiles: list[dict[str, Any]]) -> str:
    """The heads' overview tiles as the element's JSON."""
    return json.dumps(tiles, separators=(",", ":"))
