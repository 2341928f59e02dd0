"""attention_core.notebook.widget: the views as anywidget widgets, their state synced as a
frontend syncs it (`set_state`, what a comm message does), one layer per change, the
static view still inside; `widget=None` outside a live kernel is the static view.

In a real JupyterLab, clicked in Chromium: tests/browser/test_jupyterlab_widget_browser.py.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from attention_core.notebook import View, head_view, heads_grid, model_view
from attention_core.notebook.widget import live_kernel, use_widget

anywidget = pytest.importorskip("anywidget", reason="the widgets extra (requirements-dev.txt)")
HOSTILE = "</script><img src=x onerror=alert(1)>"


def _weights(L: int = 3, H: int = 2, n: int = 4, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((L, H, n, n))
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)  # (L, H, n, n), rows sum to 1


TOKENS = ["[CLS]", "cat", HOSTILE, "[SEP]"]


def _z(trace: dict) -> np.ndarray:
    """A heatmap's z as Plotly's JSON carries it (a base64 typed array, or lists)."""
    z = trace["z"]
    if isinstance(z, dict):  # {"dtype", "bdata", "shape"}
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        return flat.reshape([int(s) for s in str(z["shape"]).split(",")]).astype(float)
    return np.asarray(z, dtype=float)


def test_outside_a_kernel_the_default_is_todays_static_view() -> None:
    assert not live_kernel()
    assert not use_widget(None)
    assert isinstance(head_view(_weights(), TOKENS), View)
    assert isinstance(heads_grid(_weights(), TOKENS), View)


def test_head_view_widget_sends_the_layer_shown_and_follows_python() -> None:
    w = _weights()
    view = head_view(w, TOKENS, layer=1, heads=[1], widget=True)
    assert isinstance(view, anywidget.AnyWidget)
    assert (view.layer, view.heads, view.selected, view.scale) == (1, [1], None, "absolute")
    # one layer travels: (H, n, n) float32, the weights as given
    sent = np.frombuffer(view.weights, dtype="<f4").reshape(2, 4, 4)
    np.testing.assert_array_equal(sent, w[1])
    view.layer = 2  # Python → view: the next layer's weights replace the buffer
    np.testing.assert_array_equal(np.frombuffer(view.weights, dtype="<f4").reshape(2, 4, 4), w[2])
    assert len(view.weights) == 2 * 4 * 4 * 4  # bytes per change: H·n·k float32


def test_a_click_in_the_view_reaches_python_and_its_observers() -> None:
    view = head_view(_weights(), TOKENS, widget=True)
    seen: list[int | None] = []
    view.observe(lambda change: seen.append(change.new), "selected")
    view.set_state({"selected": 2})  # what the frontend's click sends over the comm
    view.set_state({"hovered": 3, "heads": [0], "scale": "relative", "layer": 1})
    assert view.selected == 2 and seen == [2]
    assert (view.hovered, view.heads, view.scale, view.layer) == (3, [0], "relative", 1)
    view.set_state({"selected": None})  # the token unpinned
    assert seen == [2, None]


@pytest.mark.parametrize(
    ("name", "value"),
    [("layer", 3), ("heads", [2]), ("selected", 4), ("hovered", -1), ("scale", "log")],
)
def test_state_out_of_range_is_refused_with_the_range(name: str, value: object) -> None:
    import traitlets

    view = head_view(_weights(), TOKENS, widget=True)
    with pytest.raises(traitlets.TraitError, match="must be"):
        setattr(view, name, value)


def test_the_widget_carries_the_static_view_for_frontends_without_widgets(tmp_path) -> None:
    w = _weights()
    view = head_view(w, TOKENS, layer=2, widget=True)
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/html"] == head_view(w, TOKENS, layer=2, widget=False).data
    assert HOSTILE not in data["text/html"]  # escaped, as the static view always was
    saved = view.save_html(tmp_path / "view.html")
    assert saved.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_large_widget_ships_a_line_not_its_static_page(monkeypatch) -> None:
    from attention_core.notebook import widget as widget_module

    w = _weights(L=6, H=12, n=32)  # 73 728 weights
    tokens = [f"t{i}" for i in range(32)]
    monkeypatch.setattr(widget_module, "FALLBACK_MAX_WEIGHTS", w.size - 1)
    built: list[int] = []
    monkeypatch.setattr(widget_module.View, "__init__", _counting(View.__init__, built))
    view = head_view(w, tokens, widget=True)
    data, _ = view._repr_mimebundle_()
    assert not built  # the static page is not built for the display
    assert data["text/html"].startswith('<p class="studio-nb-widget-note">')
    assert "6 layers × 12 heads × 32 tokens" in data["text/html"]
    assert "save_html" in data["text/html"] and len(data["text/html"]) < 500
    # asked for, the static page is today's, unchanged
    assert view.data == head_view(w, tokens, widget=False).data
    monkeypatch.setattr(widget_module, "FALLBACK_MAX_WEIGHTS", w.size)  # at the bound: the page
    assert head_view(w, tokens, widget=True).fallback_html() == view.data


def _counting(init, calls: list[int]):
    def wrapped(self, *args, **kwargs):
        calls.append(1)
        init(self, *args, **kwargs)

    return wrapped


def test_the_es_module_is_inline_and_puts_tokens_in_as_text() -> None:
    view = head_view(_weights(), TOKENS, widget=True)
    esm = view._esm
    assert "export default" in esm and "renderHeadView" in esm  # the static view's renderer
    assert "http://" not in esm.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in esm and "import(" not in esm
    assert "innerHTML" not in esm  # tokens only ever as textContent / SVG text nodes
    assert view.spec["tokens"][2] == HOSTILE  # data, not markup


def test_grid_widget_redraws_its_figure_for_a_layer_and_a_scale() -> None:
    w = _weights()
    view = heads_grid(w, TOKENS, layer=0, widget=True)
    assert view.plotly_js  # plotly.js travels with the widget, no CDN
    z0 = _z(view.figure["data"][0])
    view.layer = 2
    z2 = _z(view.figure["data"][0])
    assert not np.allclose(z0, z2)
    np.testing.assert_allclose(z2, w[2, 0], atol=1e-6)  # head 0 of layer 2
    view.scale = "relative"
    assert view.figure["layout"] != heads_grid(w, TOKENS, layer=2, widget=True).figure["layout"]


def test_model_view_widget_and_widget_argument_checked() -> None:
    view = model_view(_weights(), TOKENS, widget=True)
    assert view.layer == 0 and view.figure["data"]
    with pytest.raises(ValueError, match="widget must be"):
        head_view(_weights(), TOKENS, widget="yes")
    with pytest.raises(ValueError, match="static HTML"):
        head_view(_weights(), TOKENS, sentence_b_start=2, widget=True)
