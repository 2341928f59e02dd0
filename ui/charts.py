"""Charts: every Plotly figure of the app is drawn here, updated in place.

`st.plotly_chart` gives a chart a new element id whenever its figure changes, so every
typed sentence unmounted the chart and built it again (Streamlit parses and re-themes the
whole spec, then Plotly.newPlot): measured in Chromium, about 0.45 s from Ctrl+Enter to a
32-token, 8-head grid painted. Here a small custom component (Streamlit components v2, no
iframe) keeps one chart per key mounted and hands each new figure to `Plotly.react`, which
changes only what changed: 0.22-0.31 s on the same machine and load.

Offline: plotly.js is its cartesian bundle in data/plotly (the version the `plotly`
Python package ships, a third of the full bundle's bytes for a phone), served by
Streamlit's own component file route (a v1 component declared only to serve that folder)
and loaded once per page. Hover, the toolbar, zoom and PNG export are Plotly's own; SVG
export is a button added here (its tooltip from the catalog). The toolbar speaks the
interface's language (`attention_core.figures.toolbar.chart_config`).

The figure travels as Plotly JSON, numpy arrays as base64 typed arrays (plotly.js's
`{dtype, bdata, shape}`, as `plotly.io.to_json` writes them). A figure may come as a
`go.Figure` or as its plain dict (`figures.heads.heads_spec`): building a `go.Figure` and
`to_json`'s deep copy were a third of the landing page's server CPU per rerun (py-spy),
so `figure_json` encodes the dicts in place with the standard library's JSON encoder.
Tests read it back from the component's data (tests/support/apptest.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from contextlib import nullcontext
from functools import cache
from typing import TYPE_CHECKING, Any

import plotly
import plotly.io
import streamlit as st
import streamlit.components.v1 as components_v1

from attention_core.figures.style import TEMPLATE
from attention_core.figures.toolbar import chart_config, svg_button
from ui.language import lang
from ui.web import PLOTLY_DIR, PLOTLY_ROUTE, plotly_url

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["CHART_COMPONENT", "PLOTLY_LOADER_JS", "figure_json", "show_chart"]

CHART_COMPONENT = "attention_studio_chart"
_ASSETS = "plotly_js"  # the v1 component that only serves PLOTLY_DIR, at PLOTLY_ROUTE
assert PLOTLY_ROUTE == f"/component/{__name__}.{_ASSETS}/", "ui/server.py answers this route"
_served = threading.Event()

# Loads plotly.js once per page (a <script> from Streamlit's component route, so nothing
# leaves the machine), or takes the page's head script's promise (ui/server.py); shared with
# the long map's element (ui/long/chart.py)
PLOTLY_LOADER_JS = r"""
function plotlyLoaded(src) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__studioPlotly) {
    window.__studioPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        window.__studioPlotly = undefined;
        reject(new Error("plotly.js did not load from " + src));
      };
      document.head.appendChild(script);
    });
  }
  return window.__studioPlotly;
}
"""

# Draws or updates the figure with Plotly.react once plotly.js is there. Updates of one chart
# run one after another, so a fast typist's figures cannot arrive out of order.
_JS = (
    PLOTLY_LOADER_JS
    + r"""
// The SVG download button beside Plotly's PNG camera: a button's click is a function, which
// JSON cannot carry, so it is built here from its tooltip and file name. Built once per
// chart and kept: Plotly.react compares the new config with the old one and, when they
// differ (a new click function would), draws the chart again from scratch and then once
// more (measured: +80 ms for a 32-token, 8-head grid, +150 ms at 512 tokens).
function withSvgButton(Plotly, plot, data) {
  plot.__studioSvg = data.svg;
  if (!data.svg) return data.config;
  if (!plot.__studioSvgButton) {
    plot.__studioSvgButton = {
      name: "studioDownloadSvg",
      icon: Plotly.Icons.disk,
      click: (gd) =>
        Plotly.downloadImage(gd, {
          format: "svg",
          filename: plot.__studioSvg.filename,
          width: gd._fullLayout.width,
          height: gd._fullLayout.height,
        }),
    };
  }
  plot.__studioSvgButton.title = data.svg.title; // a language switch redraws anyway
  return { ...data.config, modeBarButtonsToAdd: [plot.__studioSvgButton] };
}

// The pictures of a large head grid (figures.heads: layout images) show their pixels as
// squares, as Plotly draws a heatmap's cells, not blurred by the browser's smoothing.
function pixelatedPictures() {
  if (document.getElementById("studio-chart-style")) return;
  const style = document.createElement("style");
  style.id = "studio-chart-style";
  style.textContent = ".studio-chart .imagelayer image { image-rendering: pixelated; }";
  document.head.appendChild(style);
}

export default function (component) {
  const { parentElement } = component;
  const data = component.data[0]; // show_chart sends [payload]: see there
  pixelatedPictures();
  let plot = parentElement.querySelector(":scope > .studio-chart");
  if (!plot) {
    plot = document.createElement("div");
    plot.className = "studio-chart";
    parentElement.appendChild(plot);
  }
  const figure = JSON.parse(data.figure);
  // A figure laid out for a width (figures.heads: layout.meta.studio_min_width) keeps that
  // width in a much narrower container (a phone): the chart then scrolls sideways in its
  // own box, the page does not. Near that width it fits the container, as every chart.
  const planned = ((figure.layout && figure.layout.meta) || {}).studio_min_width || 0;
  // (a chart presenter mode scales, ui/presenter.py's fitCharts, keeps the width it gets)
  const narrow = !plot.__studioZoom && planned > 0 && parentElement.clientWidth < 0.8 * planned;
  plot.style.minWidth = narrow ? planned + "px" : "";
  parentElement.style.overflowX = narrow ? "auto" : "";
  // A click on a point is sent to Python (show_chart(..., clicks=True) returns it once).
  plot.__studioSend = data.clicks ? (v) => component.setTriggerValue("click", v) : null;
  plot.__studioQueue = (plot.__studioQueue || Promise.resolve())
    .then(() => plotlyLoaded(data.plotly))
    .then((Plotly) =>
      Plotly.react(plot, figure.data, figure.layout, withSvgButton(Plotly, plot, data)),
    )
    .then(() => {
      if (window.__studioFitCharts) window.__studioFitCharts(); // presenter mode: at once
      if (plot.__studioClicks) return;
      plot.__studioClicks = true;
      plot.on("plotly_click", (event) => {
        const point = event.points && event.points[0];
        if (!point || !plot.__studioSend) return;
        plot.__studioSend({ x: point.x, y: point.y, curve: point.curveNumber });
      });
    })
    .catch((error) => console.error(error));
}
"""
)
_chart = st.components.v2.component(CHART_COMPONENT, js=_JS, isolate_styles=False)


def served_plotly_url() -> str:
    """Where the page loads plotly.js from (ui/web.py's `plotly_url`, which the page's
    <head> already started loading); the folder is registered on first use (a v1 component
    is registered only inside a script run)."""
    if not _served.is_set():
        components_v1.declare_component(_ASSETS, path=str(PLOTLY_DIR))
        _served.set()
    return plotly_url(str(st.get_option("server.baseUrlPath") or ""))


@cache
def _template() -> dict[str, Any]:
    return TEMPLATE.to_plotly_json()


def _typed(value: Any) -> Any:
    """`json.dumps`' fallback: numpy arrays as plotly.js typed arrays, numpy numbers as
    numbers, anything else as Plotly's own encoder writes it."""
    import numpy as np
    from _plotly_utils.utils import PlotlyJSONEncoder, to_typed_array_spec

    if isinstance(value, np.ndarray):
        spec = to_typed_array_spec(value)
        return spec if isinstance(spec, dict) else value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return PlotlyJSONEncoder().default(value)


def figure_json(figure: go.Figure | Mapping[str, Any]) -> str:
    """The figure as Plotly JSON with the app's template (`style.TEMPLATE`), for the chart
    element. A plain dict ({"data": [...], "layout": {...}}) is encoded without copying."""
    if isinstance(figure, Mapping):
        spec = {"data": figure.get("data", []), "layout": dict(figure.get("layout", {}))}
    else:
        spec = {"data": figure._data, "layout": dict(figure._layout)}  # Plotly's own dicts
    spec["layout"]["template"] = _template()
    try:
        return json.dumps(spec, default=_typed, allow_nan=False, separators=(",", ":"))
    except ValueError:  # NaN or infinity outside a typed array: Plotly writes them as null
        return plotly.io.to_json(spec, validate=False)


def show_chart(
    figure: go.Figure | Mapping[str, Any] | str,
    *,
    key: str,
    where: Any = st,
    filename: str | None = None,
    clicks: bool = False,
) -> dict[str, Any] | None:
    """Draw `figure` (a `go.Figure`, its plain dict, or `figure_json`'s JSON) under
    `key` (in `where`, a column or placeholder, when given); the same key on the next run
    updates the same chart in place. `filename` names the PNG and SVG downloads; the
    toolbar speaks the interface's language. With `clicks`, a click on a point reruns the
    script and this returns `{"x", "y", "curve"}` of that point on that run (None on other
    runs)."""
    data = {
        "figure": figure if isinstance(figure, str) else figure_json(figure),
        "config": {**chart_config(lang(), filename=filename), "responsive": True},
        "plotly": served_plotly_url(),
        "svg": svg_button(lang(), filename=filename),
        "clicks": clicks,
    }
    events = {"on_click_change": _ignore} if clicks else {}
    # A list, not the dict itself: Streamlit checks each value of a dict for dataframes,
    # which imports pandas (0.35 s on a fresh server, before its first heatmaps) and runs
    # its type checks on every chart of every rerun.
    with nullcontext() if where is st else where:
        result = _chart(key=key, data=[data], **events)
    return getattr(result, "click", None) if clicks else None


def _ignore() -> None:
    """A trigger needs a callback to be registered; the page reads the value itself."""
