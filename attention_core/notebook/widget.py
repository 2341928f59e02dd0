"""The views as live notebook widgets (anywidget): their state shared with Python both ways.

    w = head_view(outputs.attentions, tokens)          # in a live kernel: a widget
    w.layer = 2                                         # the view redraws layer 2
    w.selected                                          # the query token clicked, or None
    w.observe(lambda change: print(change.new), "selected")

`widget=None` (every view's default) gives a widget in a live IPython kernel that can open
comms (Jupyter, JupyterLab, VS Code, Colab) when anywidget is installed, and the static
`View` elsewhere; `widget=True` always the `anywidget.AnyWidget` (marimo:
`mo.ui.anywidget(head_view(..., widget=True))`); `widget=False` the static view.
A widget still carries its static view: `save_html` / `to_html` / `data` are the static
view's, built on first use. Its display data holds, next to the widget, the standalone
HTML for a small view (up to FALLBACK_MAX_WEIGHTS weights: nbconvert, a saved notebook or
a frontend without widgets shows the picture) and a line saying how to get it for a larger
one: building and shipping a 128-token model's static page (3.8 MB) in the cell that shows
the widget tripled its time to paint.

Traffic per change is one layer: the model's weights stay in the kernel, a `layer` change
sends that layer's H × n × k float32 weights (the head view) or that layer's figure.
anywidget is imported on first use; without it `widget=True` says which extra to install.

Shape legend: H heads, n queries, k keys.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from attention_core.figures.scales import SCALES
from attention_core.i18n import t
from attention_core.notebook.html import PLOTLY_BUNDLE, View
from attention_core.notebook.inputs import NotebookInputError
from attention_core.notebook.widget_esm import WIDGET_CSS, WIDGET_ESM

__all__ = [
    "EXTRA_HINT",
    "FALLBACK_MAX_WEIGHTS",
    "STATE",
    "StaticFallback",
    "WidgetSource",
    "anywidget_module",
    "figure_json",
    "layer_bytes",
    "live_kernel",
    "make_widget",
    "use_widget",
    "widget_class",
    "widget_words",
]

EXTRA_HINT = "pip install 'attention-studio[widgets]' (anywidget)"
STATE = ("layer", "heads", "selected", "hovered", "scale")  # synced both ways
FALLBACK_MAX_WEIGHTS = 200_000  # L·H·n·k up to which the display data holds the static view


def live_kernel() -> bool:
    """True inside a running IPython kernel that can open comms (where a widget talks)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False  # a terminal IPython, a plain script, pytest
    return importlib.util.find_spec("comm") is not None


def anywidget_module() -> Any:
    """anywidget, imported on first use; ImportError naming the extra without it."""
    try:
        return importlib.import_module("anywidget")
    except ImportError:
        raise ImportError(f"widget=True needs anywidget: {EXTRA_HINT}") from None


def use_widget(widget: bool | None) -> bool:
    """Whether a view returns a widget: `widget` as given, or (None) in a live kernel with
    anywidget installed. Raises ImportError for True without anywidget."""
    if widget is None:
        return live_kernel() and importlib.util.find_spec("anywidget") is not None
    if widget is True:
        anywidget_module()
        return True
    if widget is False:
        return False
    raise NotebookInputError(f"widget must be None, True or False, got {widget!r}")


@dataclass
class WidgetSource:
    """What a view hands its widget: the page's fixed part and how to draw one layer.

    `spec` travels once (tokens, heads' names and colours, layer names, words);
    `draw(layer, scale)` returns the traits that change with them (`weights` bytes or a
    `figure` dict); `static()` builds the static View (the fallback, `save_html`)."""

    kind: str  # "head" (the head view's renderer) or "figure" (a Plotly figure)
    spec: dict[str, Any]
    layers: list[int]  # the model's own index of each layer offered
    heads: int  # H
    queries: int  # n
    draw: Callable[[int, str], dict[str, Any]]
    static: Callable[[], View]
    state: dict[str, Any] = field(default_factory=dict)  # the first layer, heads…
    weights: int = 0  # L·H·n·k: what the static view would carry
    note: str = ""  # the display data's HTML line for a view past FALLBACK_MAX_WEIGHTS


def layer_bytes(weights: np.ndarray) -> bytes:
    """One layer (H, n, k) as the little-endian float32 buffer the widget's script reads."""
    return np.ascontiguousarray(weights, dtype="<f4").tobytes()


def figure_json(figure: Any) -> dict[str, Any]:
    """A go.Figure as the plain JSON dict Plotly.react takes (numpy arrays as lists)."""
    return json.loads(figure.to_json())


class StaticFallback:
    """What every widget keeps of its static view (a mixin before `anywidget.AnyWidget`):
    `view` (built once, on first use), `data`, `to_html`, `save_html`, and the display
    data's HTML for frontends without widgets (`fallback_html`: see the module's doc)."""

    def keep_static(self, static: Callable[[], View], *, weights: int, note: str) -> None:
        """`static` builds the static view; `weights` is its size (L·H·n·k), `note` the
        line shown instead of it past FALLBACK_MAX_WEIGHTS."""
        self._static = static
        self._static_weights = weights
        self._note = note
        self._view: View | None = None

    @property
    def view(self) -> View:
        """The static view (built once, on first use)."""
        if self._view is None:
            self._view = self._static()
        return self._view

    @property
    def data(self) -> str:
        """The static view's HTML fragment (BertViz's `html_action="return"`)."""
        return self.view.data

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # the widget for frontends that render widgets; for the rest the static HTML
        # (a small view) or how to get it (a large one: see the module's docstring)
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/html"] = self.fallback_html()
        return bundle

    def fallback_html(self) -> str:
        """The display data's HTML for frontends without widgets."""
        if self._static_weights <= FALLBACK_MAX_WEIGHTS or not self._note:
            return self.view.data
        return f'<p class="studio-nb-widget-note">{html.escape(self._note)}</p>'

    def to_html(self) -> str:
        """The static view as a whole HTML document (`View.to_html`)."""
        return self.view.to_html()

    def save_html(self, path: Any) -> Any:
        """The static view saved as standalone HTML (`View.save_html`)."""
        return self.view.save_html(path)


@cache
def widget_class() -> type:
    """The AnyWidget subclass (built on first use: anywidget is optional)."""
    anywidget = anywidget_module()
    import traitlets

    class AttentionWidget(StaticFallback, anywidget.AnyWidget):
        """A view as a widget: `layer`, `heads`, `selected`, `hovered`, `scale` synced."""

        _esm = WIDGET_ESM
        _css = WIDGET_CSS
        spec = traitlets.Dict().tag(sync=True)
        weights = traitlets.Bytes(b"").tag(sync=True)  # head view: the layer's (H, n, k)
        figure = traitlets.Dict().tag(sync=True)  # figure views: the layer's figure
        plotly_js = traitlets.Unicode("").tag(sync=True)  # figure views: plotly.js, inline
        layer = traitlets.Int(0).tag(sync=True)
        heads = traitlets.List(traitlets.Int()).tag(sync=True)
        selected = traitlets.Int(None, allow_none=True).tag(sync=True)
        hovered = traitlets.Int(None, allow_none=True).tag(sync=True)
        scale = traitlets.Unicode("absolute").tag(sync=True)

        def __init__(self, source: WidgetSource) -> None:
            self._source = source
            self.keep_static(source.static, weights=source.weights, note=source.note)
            self._ready = False  # the first layer is drawn once, below, not per trait set
            first = source.state.get("layer", source.layers[0])
            scale = source.state.get("scale", "absolute")
            plotly = PLOTLY_BUNDLE.read_text(encoding="utf-8") if source.kind == "figure" else ""
            super().__init__(
                spec={**source.spec, "kind": source.kind, "layers": source.layers},
                layer=first,
                scale=scale,
                heads=list(source.state.get("heads", range(source.heads))),
                plotly_js=plotly,
                **source.draw(first, scale),
            )
            self._ready = True

        @traitlets.validate("layer")
        def _check_layer(self, proposal: Any) -> int:
            if proposal.value not in self._source.layers:
                raise traitlets.TraitError(
                    f"layer must be one of {self._source.layers}, got {proposal.value}"
                )
            return proposal.value

        @traitlets.validate("heads")
        def _check_heads(self, proposal: Any) -> list[int]:
            bad = [h for h in proposal.value if not 0 <= h < self._source.heads]
            if bad:
                raise traitlets.TraitError(
                    f"heads must be in 0..{self._source.heads - 1}, got {proposal.value}"
                )
            return sorted(set(proposal.value))

        @traitlets.validate("selected", "hovered")
        def _check_token(self, proposal: Any) -> int | None:
            i = proposal.value
            if i is not None and not 0 <= i < self._source.queries:
                raise traitlets.TraitError(
                    f"a query token must be in 0..{self._source.queries - 1} or None, got {i}"
                )
            return i

        @traitlets.validate("scale")
        def _check_scale(self, proposal: Any) -> str:
            if proposal.value not in SCALES:
                raise traitlets.TraitError(f"scale must be one of {SCALES}, got {proposal.value!r}")
            return proposal.value

        @traitlets.observe("layer", "scale")
        def _redraw(self, _change: Any) -> None:
            # one layer's data, sent after the number (the script draws when it arrives)
            if not self._ready:
                return
            for name, value in self._source.draw(self.layer, self.scale).items():
                setattr(self, name, value)

    return AttentionWidget


def make_widget(source: WidgetSource) -> Any:
    """`source` as a live widget (an `anywidget.AnyWidget`)."""
    return widget_class()(source)


def widget_words(lang: str) -> dict[str, Any]:
    """The widget's menu words in `lang` (the catalog's)."""
    return {
        "layer": t("lens_layer_label", lang),
        "scale": t("scale_label", lang),
        "scales": {name: t(f"scale_{name}", lang) for name in SCALES},
    }
