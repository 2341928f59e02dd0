"""Shared AppTest helpers: run the app with URL parameters and read its Plotly figures."""

from __future__ import annotations

import base64
import html
import json
import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.i18n import catalog
from ui.charts import CHART_COMPONENT
from ui.long.chart import LONG_CHART_COMPONENT

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 180
OWN_MARKUP = r"</?extra>"  # the hover templates' own tag, written by the figure builders


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


def open_after_first_run(page: str, params: dict[str, str] | None = None, **state: Any) -> AppTest:
    """`page` after the app's first run with `params` in the URL, `state` set before the
    page's run; fails on an exception. zh-TW: pass lang="zh-TW" as state; the AppTest can
    rerun like an English one (tests/pages/test_language_switch.py)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(params or {})
    at.run()
    at.switch_page(page)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


@dataclass(frozen=True)
class DrawnChart:
    """One chart as the app sent it (ui/charts.py): its key, Plotly figure and config."""

    key: str
    spec: dict[str, Any]
    config: dict[str, Any]
    size: int  # characters of what was sent for it (one websocket message holds it all)


def drawn_charts(at: AppTest) -> list[DrawnChart]:
    """Every chart on the page: the app's chart components (ui.charts), whose
    data carries the Plotly JSON, then any plain st.plotly_chart."""
    found = []
    for element in at.get("bidi_component"):
        if element.proto.component_name == CHART_COMPONENT:
            (data,) = json.loads(element.proto.json)  # ui/charts.py sends [payload]
            key = element.proto.id.rsplit("-", 1)[-1]
            spec = json.loads(data["figure"])
            found.append(DrawnChart(key, spec, data["config"], len(element.proto.json)))
    for element in at.get("plotly_chart"):
        key = element.proto.id.rsplit("-", 1)[-1]
        spec, config = json.loads(element.proto.spec), json.loads(element.proto.config)
        found.append(DrawnChart(key, spec, config, len(element.proto.spec)))
    return found


def long_map(at: AppTest) -> dict[str, Any]:
    """The data the landing page's long map element was sent (ui/long/chart.py): its
    overview tiles decoded from their JSON, and `bytes`, the size of what was sent."""
    found = [e for e in at.get("bidi_component") if e.proto.component_name == LONG_CHART_COMPONENT]
    assert len(found) == 1, f"{len(found)} long maps on the page"
    (data,) = json.loads(found[0].proto.json)  # [payload], as ui/charts.py sends
    return {**data, "overview": json.loads(data["overview"]), "bytes": len(found[0].proto.json)}


def charts(at: AppTest) -> dict[str, dict[str, Any]]:
    """Key → Plotly spec of every chart on the page (the key ends the element id)."""
    return {c.key: c.spec for c in drawn_charts(at)}


def chart(at: AppTest, key: str) -> dict[str, Any]:
    """The spec of the chart with `key`; fails, naming the charts there are, if none."""
    found = charts(at)
    assert key in found, f"no chart {key!r}; charts: {sorted(found)}"
    return found[key]


def figures(at: AppTest) -> list[dict[str, Any]]:
    """Every chart on the page, as its Plotly JSON spec."""
    return [c.spec for c in drawn_charts(at)]


def decode(array: Any) -> np.ndarray:
    """A Plotly data array: a plain list, or a base64 typed array {dtype, bdata, shape}."""
    if isinstance(array, dict) and "bdata" in array:
        flat = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
        shape = [int(s) for s in str(array.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(array, dtype=float)


def weights_of(trace: dict[str, Any]) -> np.ndarray:
    """The attention weights a heatmap trace shows (hover, cell numbers): its `customdata`
    where its colours follow a scale of their own (figures.heads: causal rows relative to
    their even share 1/(i+1)), else its z."""
    return decode(trace["customdata"] if "customdata" in trace else trace["z"])


def heatmaps(at: AppTest, chart: int = 0) -> list[dict[str, Any]]:
    """The heatmap traces of one chart."""
    return [t for t in figures(at)[chart]["data"] if t["type"] == "heatmap"]


def shown_text(values: Sequence[str]) -> list[str]:
    """What Plotly draws for figure strings, checked to be drawn literally.

    The figure builders escape `&`, `<`, `>` (attention_core/figures/text.py) and Plotly
    decodes those entities when it draws, so the text shown is `html.unescape` of the value.
    Fails unless each value is exactly the escaped form of what it shows (the reference is
    the standard library's `html.escape`): a raw `<b>` or `&#x41;` would be read as markup.
    """
    shown = [html.unescape(v) for v in values]
    escaped = [html.escape(text, quote=False) for text in shown]
    assert list(values) == escaped, "figure text Plotly would read as markup"
    return shown


def shown_labels(trace: dict[str, Any], axis: str = "x") -> list[str]:
    """The labels a trace shows on `axis` ("x" or "y"), as the student typed them."""
    return shown_text(trace[axis])


def _strings(node: object) -> Iterator[str]:
    """Every string in a JSON tree."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def drawn_strings(spec: dict[str, Any]) -> list[str]:
    """The strings of a figure spec that Plotly may draw: data and layout, not the theme."""
    layout = {k: v for k, v in spec["layout"].items() if k != "template"}
    return [*_strings(spec["data"]), *_strings(layout)]


def assert_drawn_literally(spec: dict[str, Any], own: str = OWN_MARKUP) -> None:
    """No string of the figure holds markup for Plotly to read.

    Apart from `own` (the builders' own tags), no `<` or `>`, and every `&` starts one of
    the entities attention_core/figures/text.py writes. `spec` is the parsed JSON: the raw
    JSON text escapes `<` as \\u003c, so a substring search in it would always pass.
    """
    for text in drawn_strings(spec):
        rest = re.sub(own, "", text)
        assert "<" not in rest and ">" not in rest, text
        assert not re.search(r"&(?!amp;|lt;|gt;)", rest), text


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


def md_unescape(text: str) -> str:
    """Markdown source as the reader sees it: the backslash escapes of ui.common.md_escape
    (and CommonMark's) removed, `0\\.95` → `0.95`."""
    return re.sub(r"\\(.)", r"\1", text)


def catalog_line(key: str, lang: str = "en") -> re.Pattern[str]:
    """Catalog entry `key` as a regex to read a shown line back: each `{name:.Nf}` becomes a
    group `name` of a number with N decimals, each other `{name}` a group of any text.
    Use with fullmatch on `md_unescape`d text."""
    parts: list[str] = []
    for literal, field, spec, _ in string.Formatter().parse(catalog()[key][lang]):
        parts.append(re.escape(literal))
        if field is None:
            continue
        fixed = re.fullmatch(r"\.(\d+)f", spec or "")
        number = rf"-?\d+\.\d{{{fixed.group(1)}}}" if fixed else ".+?"
        parts.append(rf"(?P<{field}>{number})")
    return re.compile("".join(parts))


def away_and_back(at: AppTest, page: str, away: str = "pages/heatmaps.py") -> AppTest:
    """`at` after a visit to page `away` and back to `page` (Streamlit forgets the widgets
    of a page that is not shown); fails on an exception."""
    at.switch_page(away)
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(autouse=True, scope="module")
def offline() -> Iterator[None]:
    """HF_HUB_OFFLINE=1 throughout a test module that imports this fixture (it is autouse):
    the pages that load a pretrained model must never reach a hub."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


def spy_bar_and_cancel(monkeypatch) -> list[object]:
    """Every bar's text and every button's key a page draws from now on, in order (the
    shared bar and Cancel of `ui.cancellable`, shown at once: BAR_AFTER_S set to 0)."""
    import streamlit.delta_generator as dg

    import ui.cancellable

    monkeypatch.setattr(ui.cancellable, "BAR_AFTER_S", 0.0)
    drawn: list[object] = []
    progress, button = dg.DeltaGenerator.progress, dg.DeltaGenerator.button

    def spy_progress(self, value, text=None, **kw):
        drawn.append(text)
        return progress(self, value, text=text, **kw)

    def spy_button(self, label, *args, **kw):
        drawn.append(kw.get("key"))
        return button(self, label, *args, **kw)

    monkeypatch.setattr(dg.DeltaGenerator, "progress", spy_progress)
    monkeypatch.setattr(dg.DeltaGenerator, "button", spy_button)
    return drawn
