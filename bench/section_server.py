"""Sections 2 and 3, server and payload: what one rerun of the landing page costs the server,
and how many bytes of chart it sends.

Each view runs the real app (app.py → pages/heatmaps.py) in Streamlit's AppTest, in this
process: no browser, no websocket, but the whole script with its caches. "cold" = a new
sentence of the same length typed into the box (the analysis is computed), "warm" = the
same view rerun (the analysis comes from st.cache_data). AppTest adds its own overhead
(it recompiles the script on every run, ~10-30 ms), so these are upper bounds of the
server's script time. "figure" isolates `head_grid` + `plot_heads` + `plotly.io.to_json`
(what `ui.charts` serialises) on the same weights.

Payload: the bytes of every Plotly chart spec the view sends (UTF-8 JSON), against the
raw float32 size of the weights shown, n² · H · 4.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from bench.measure import REPO, sentence
from bench.streamlit_client import CHART
from bench.tables import Table, fmt_ms, fmt_s, median

__all__ = ["measure_view", "run", "run_payload"]

TOKENS = (8, 32, 128, 512)
HEADS = (1, 4, 12, 16)
EMBED_DIM = 192  # every head count above divides it
REPEATS = 3
TIMEOUT_S = 300

_VIEWS: dict[tuple[int, int], dict[str, Any]] = {}  # shared by the server and payload tables


def _quiet_streamlit() -> None:
    # AppTest runs without a server; Streamlit warns about the missing context on each run
    for name in ("streamlit", "streamlit.runtime.scriptrunner_utils.script_run_context"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _timed_run(at: Any) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    at.run(timeout=TIMEOUT_S)
    if at.exception:
        raise RuntimeError(f"the app raised: {at.exception[0].message}")
    return time.perf_counter() - w0, time.process_time() - c0


def _figure_cost(n: int, heads: int, repeats: int) -> float:
    """Median seconds of head_grid + plot_heads + plotly.io.to_json for this view."""
    import plotly.io

    from attention_core.figures.heads import head_grid, plot_heads
    from attention_core.pipeline import analyze
    from attention_core.settings import Settings

    a = analyze(Settings(text=sentence(n), tokenizer="char", embed_dim=EMBED_DIM, num_heads=heads))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        plotly.io.to_json(plot_heads(head_grid(a.weights, a.labels)), validate=False)
        times.append(time.perf_counter() - t0)
    return median(times)


def measure_view(n: int, heads: int, *, repeats: int = REPEATS) -> dict[str, Any]:
    """Run the landing page for n tokens × heads in AppTest: timings and chart bytes."""
    if (n, heads) in _VIEWS and len(_VIEWS[(n, heads)]["cold"]) >= repeats:
        return _VIEWS[(n, heads)]
    from streamlit.testing.v1 import AppTest

    _quiet_streamlit()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT_S)
    at.query_params.update(
        {
            "text": sentence(n),
            "tokenizer": "char",
            "attention": "multi",
            "embed_dim": str(EMBED_DIM),
            "num_heads": str(heads),
        }
    )
    first = _timed_run(at)  # a new session: reads the URL, computes the analysis
    cold, warm = [], []
    for r in range(repeats):
        at.text_area(key="text").set_value(sentence(n, variant=1000 + r))
        cold.append(_timed_run(at))
    for _ in range(repeats):
        warm.append(_timed_run(at))
    sent = [  # what each chart component carries: its data JSON, the figure inside it
        element.proto.json
        for element in at.get("bidi_component")
        if element.proto.component_name == CHART
    ]
    specs = [json.loads(data)["figure"] for data in sent]
    kinds: dict[str, int] = {}
    for spec in specs:
        for trace in json.loads(spec)["data"]:
            kinds[trace["type"]] = kinds.get(trace["type"], 0) + 1
    view = {
        "first": first,
        "cold": cold,
        "warm": warm,
        "figure": _figure_cost(n, heads, repeats),
        "spec_bytes": sum(len(s.encode("utf-8")) for s in sent),
        "charts": len(specs),
        "traces": kinds,
    }
    _VIEWS[(n, heads)] = view
    return view


def _grid(quick: bool) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    return ((8, 32), (1, 4), 1) if quick else (TOKENS, HEADS, REPEATS)


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    tokens, heads_grid, repeats = _grid(quick)
    table = Table(
        f"Server: script time per rerun of the landing page (AppTest, embed_dim {EMBED_DIM})",
        ["tokens", "heads", "cold s", "cold CPU s", "warm s", "warm CPU s", "figure ms"],
    )
    raw = {}
    for n in tokens:
        for h in heads_grid:
            v = measure_view(n, h, repeats=repeats)
            raw[f"{n}x{h}"] = v
            table.add(
                n,
                h,
                fmt_s(median(t for t, _ in v["cold"])),
                fmt_s(median(c for _, c in v["cold"])),
                fmt_s(median(t for t, _ in v["warm"])),
                fmt_s(median(c for _, c in v["warm"])),
                fmt_ms(v["figure"]),
            )
    table.notes += [
        f"medians of {repeats} reruns; cold = a new sentence (analysis computed), warm = "
        "the same view again (analysis cached); CPU = this process, all threads.",
        "figure = head_grid + plot_heads + plotly.io.to_json alone (what ui.charts "
        "serialises), included in the rerun times.",
        "target: 512 tokens × 12 heads rerun <= 0.5 s.",
    ]
    return [table], raw


def run_payload(*, quick: bool = False) -> tuple[list[Table], dict]:
    tokens, heads_grid, repeats = _grid(quick)
    table = Table(
        "Payload: chart bytes per view vs raw float32 weights",
        ["tokens", "heads", "spec bytes", "raw n²·H·4 bytes", "ratio", "traces"],
    )
    raw = {}
    for n in tokens:
        for h in heads_grid:
            v = measure_view(n, h, repeats=repeats)
            weights = n * n * h * 4
            raw[f"{n}x{h}"] = {"spec_bytes": v["spec_bytes"], "raw": weights}
            kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(v["traces"].items()))
            table.add(
                n,
                h,
                f"{v['spec_bytes']:,}",
                f"{weights:,}",
                f"{v['spec_bytes'] / weights:.2f}",
                kinds,
            )
    table.notes += [
        "spec bytes = UTF-8 length of every chart's data sent to the page (ui.charts: "
        "the chart component's JSON, the Plotly figure inside it as a string).",
        "heatmaps carry float32 base64 (4/3 of raw, plus Plotly's JSON escaping of '/' as "
        "\\u002f: ≈ 1.41 × raw at best); small views are dominated by labels and layout; "
        "grids above attention_core.figures.heads.IMAGE_CELLS cells send pictures (palette "
        "PNG) except one exact heatmap.",
        "target: ratio <= 1.4.",
    ]
    return [table], raw
