"""Tests for ui/charts.py's figure_json: what the chart element receives is exactly what
Plotly's own `plotly.io.to_json` writes for the figure with the app's template (the
reference), for plain-dict figures (`heads_spec`) and `go.Figure`s alike."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest

from attention_core.figures.heads import head_grid, heads_spec, plot_heads, plot_matrix
from attention_core.figures.style import TEMPLATE
from ui.charts import figure_json


def _reference(figure: go.Figure) -> dict:
    figure.update_layout(template=TEMPLATE)
    return json.loads(plotly.io.to_json(figure, validate=False))


def _weights(n: int, heads: int, seed: int = 0) -> np.ndarray:
    raw = np.random.default_rng(seed).random((heads, n, n), dtype=np.float32)
    return raw / raw.sum(-1, keepdims=True)


@pytest.mark.parametrize(
    ("n", "heads", "scale"),
    [(4, 1, "relative"), (30, 8, "absolute"), (64, 4, "contrast"), (600, 12, "relative")],
)
def test_a_heads_spec_travels_as_plotly_writes_its_figure(n: int, heads: int, scale: str) -> None:
    grid = head_grid(_weights(n, heads), [f"{i}:w" for i in range(n)], head_title="head {i}")
    sent = json.loads(figure_json(heads_spec(grid, scale=scale, colorbar_title="×")))
    assert sent == _reference(plot_heads(grid, scale=scale, colorbar_title="×"))
    assert sent["layout"]["template"] == TEMPLATE.to_plotly_json()


def test_a_figure_travels_as_plotly_writes_it_and_is_not_changed() -> None:
    figure = plot_matrix(_weights(5, 1)[0], list("abcde"), list("abcde"), title="<b>x</b>")
    before = figure.to_plotly_json()
    sent = json.loads(figure_json(figure))
    assert figure.to_plotly_json() == before  # no template written into the caller's figure
    assert sent == _reference(figure)


def test_numpy_arrays_become_typed_arrays_and_nan_becomes_null() -> None:
    spec = {"data": [{"type": "bar", "y": np.array([1.0, 2.0], dtype=np.float32)}]}
    sent = json.loads(figure_json(spec))
    assert sent["data"][0]["y"]["dtype"] == "f4"  # base64, not a list of numbers
    loose = {"data": [{"type": "bar", "y": [1.0, float("nan")], "x": [np.int64(3), 4]}]}
    sent = json.loads(figure_json(loose))  # valid JSON: NaN outside an array is null
    assert sent["data"][0]["y"] == [1.0, None] and sent["data"][0]["x"] == [3, 4]


def test_the_served_plotly_js_is_the_version_the_plotly_package_ships() -> None:
    """data/plotly holds plotly.js's cartesian bundle, unchanged (its hash), of the same
    version as the full bundle inside the plotly package that builds the figures."""
    import hashlib
    import re
    from pathlib import Path

    import plotly

    from attention_core.resources import DATA_DIR
    from ui.web import PLOTLY_JS

    ours = (DATA_DIR / "plotly" / PLOTLY_JS).read_bytes()
    full = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    version = re.compile(rb"plotly\.js[^\n]*? v(\d+\.\d+\.\d+)")
    assert version.search(ours[:300]).group(1) == version.search(full[:300]).group(1)
    assert b"(cartesian - minified)" in ours[:300]
    digest = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"
    assert hashlib.sha256(ours).hexdigest() == digest
    assert len(ours) < len(full) / 3  # what a phone downloads and parses


def test_plotly_is_loaded_from_a_url_that_names_its_version():
    """ui/server.py lets browsers keep plotly.js for a year: its URL carries the file's
    hash, so another bundle under the same name is fetched anew."""
    import hashlib

    from attention_core.resources import DATA_DIR
    from tests.support.apptest import drawn_charts, run_app
    from ui.web import PLOTLY_JS, PLOTLY_ROUTE

    digest = hashlib.sha256((DATA_DIR / "plotly" / PLOTLY_JS).read_bytes()).hexdigest()[:12]
    at = run_app()
    import json

    from ui.charts import CHART_COMPONENT

    chart = next(e for e in at.get("bidi_component") if e.proto.component_name == CHART_COMPONENT)
    (payload,) = json.loads(chart.proto.json)
    assert payload["plotly"] == f"{PLOTLY_ROUTE}{PLOTLY_JS}?v={digest}"
    assert drawn_charts(at)
