"""Shared AppTest helpers: run the app with URL parameters and read its Plotly figures."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 180


def run_app(
    params: dict[str, str] | None = None, *, page: str | None = None, **state: Any
) -> AppTest:
    """The app after one run with `params` in the URL (and `page` switched to, if given)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if params:
        at.query_params.update(params)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


def figures(at: AppTest) -> list[dict[str, Any]]:
    """Every plotly_chart on the page, as its JSON spec."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def decode(array: Any) -> np.ndarray:
    """A Plotly data array: a plain list, or a base64 typed array {dtype, bdata, shape}."""
    if isinstance(array, dict) and "bdata" in array:
        flat = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
        shape = [int(s) for s in str(array.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(array, dtype=float)


def heatmaps(at: AppTest, chart: int = 0) -> list[dict[str, Any]]:
    """The heatmap traces of one chart."""
    return [t for t in figures(at)[chart]["data"] if t["type"] == "heatmap"]


def texts(at: AppTest) -> str:
    """All text the page shows in markdown, captions, alerts and headings, joined."""
    parts = []
    for kind in (
        "markdown",
        "caption",
        "info",
        "warning",
        "error",
        "success",
        "title",
        "header",
        "subheader",
        "text",
    ):
        parts += [str(e.value) for e in at.get(kind)]
    return "\n".join(parts)
