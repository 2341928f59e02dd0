"""What each view hands its widget (`widget.WidgetSource`): the page's fixed part once, and
how one layer is drawn, with the same builders as the static view (one picture, one place).

The head view's widget sends a layer's weights as float32 (H × n × k, every weight: the
numbers are the model's to within float32) and draws the WIDGET_OPEN_LINES strongest lines
at open, the page saying so and offering the rest (up to `figures.headview.OPEN_LINES`);
the grids send a layer's figure from `figures.heads` / `figures.compare`, rebuilt for the
layer and colour scale asked for.

Shape legend: L layers, H heads, n queries, k keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attention_core.figures.lens import HEAD_COLORS
from attention_core.i18n import t
from attention_core.notebook.html import View
from attention_core.notebook.inputs import Attention, NotebookInputError
from attention_core.notebook.widget import WidgetSource, figure_json, layer_bytes, widget_words

__all__ = ["WIDGET_OPEN_LINES", "figure_source", "head_source", "widget_note"]

# lines a widget's head view draws at open: 1 000 SVG lines draw in ~0.04 s, the static
# page's 20 000 in ~0.5 s, on every layer change (docs/performance.md)
WIDGET_OPEN_LINES = 1_000


def _first(att_layers: Sequence[int], layer: int | None) -> int:
    first = att_layers[0] if layer is None else int(layer)
    if first not in att_layers:
        raise NotebookInputError(f"layer {first} is not among the layers shown {list(att_layers)}")
    return first


def widget_note(title: str, weights: Any, lang: str) -> str:
    """The line a large widget's display data holds instead of its static view (the
    frontend shows it where widgets do not run); `weights` is (L, H, n, k)."""
    L, H, n = weights.shape[:3]
    return t("nb_widget_fallback", lang, title=title, layers=L, heads=H, tokens=n)


def head_source(
    att: Attention,
    *,
    layer: int | None,
    heads: Sequence[int] | None,
    lang: str,
    static: Callable[[], View],
) -> WidgetSource:
    """The head view of one checked attention as a widget's source."""
    H, n = att.weights.shape[1:3]  # (L, H, n, k)
    on = list(range(H)) if heads is None else [int(h) for h in heads]
    if any(not 0 <= h < H for h in on):
        raise NotebookInputError(f"heads must be in 0..{H - 1}, got {list(heads or [])}")
    spec = {
        "tokens": att.tokens,
        "key_tokens": att.key_tokens,
        "heads": [
            {"name": t("head_title", lang, i=h), "color": HEAD_COLORS[h % len(HEAD_COLORS)]}
            for h in range(H)
        ],
        "layer_names": [t("compare_layer_name", lang, l=i) for i in att.layers],
        "filename": "head-view",
        "text": {
            "svg": t("lens_head_view_svg", lang),
            "hint": t("lens_head_view_hint", lang),
            "open_cap": t("hv_open_cap", lang, shown="{shown}", total="{total}"),
            "more_lines": t("hv_more_lines", lang, count="{count}"),
        },
        "words": widget_words(lang),
        "open_lines": WIDGET_OPEN_LINES,
    }

    def draw(model_layer: int, _scale: str) -> dict[str, Any]:
        return {"weights": layer_bytes(att.weights[att.layers.index(model_layer)])}  # (H, n, k)

    return WidgetSource(
        kind="head",
        spec=spec,
        layers=list(att.layers),
        heads=H,
        queries=n,
        draw=draw,
        static=static,
        state={"layer": _first(att.layers, layer), "heads": on},
        weights=int(att.weights.size),
        note=widget_note(t("lens_view_head", lang), att.weights, lang),
    )


def figure_source(
    figure_for: Callable[[int, str], Any],
    *,
    layers: Sequence[int],
    heads: int,
    queries: int,
    layer: int | None,
    lang: str,
    static: Callable[[], View],
    weights: int = 0,
    note: str = "",
) -> WidgetSource:
    """A Plotly view as a widget's source: `figure_for(layer, scale)` builds the figure
    (the static view's own builder) for the layer and colour scale the widget shows;
    `weights` and `note` as `WidgetSource` takes them (the static view's size, and the
    line shown instead of it past `widget.FALLBACK_MAX_WEIGHTS`)."""
    return WidgetSource(
        kind="figure",
        spec={
            "layer_names": [t("compare_layer_name", lang, l=i) for i in layers],
            "words": widget_words(lang),
        },
        layers=list(layers),
        heads=heads,
        queries=queries,
        draw=lambda model_layer, scale: {"figure": figure_json(figure_for(model_layer, scale))},
        static=static,
        state={"layer": _first(layers, layer)},
        weights=weights,
        note=note,
    )
