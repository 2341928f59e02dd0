"""The notebook's views, called as BertViz's are: head view, model view, heads grid.

    from attention_core.notebook import head_view, model_view   # was: from bertviz import …
    head_view(outputs.attentions, tokens)

Each returns a `View` (attention_core.notebook.html) that displays itself as the cell's
result and saves as standalone HTML; nothing is fetched from a CDN. The head view is the
app's own renderer (`figures.headview`), the grids are the app's own figures.

Shape legend: L layers, H heads, n tokens.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from attention_core.figures.compare import model_view as tile_model_view
from attention_core.figures.compare import plot_model_view
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.figures.headview import HEAD_VIEW_CSS, HEAD_VIEW_JS, SCALE, sparse_weights
from attention_core.figures.lens import HEAD_COLORS
from attention_core.i18n import DEFAULT_LANG, t
from attention_core.notebook.html import View, figure_body, json_for_script
from attention_core.notebook.inputs import Attention, NotebookInputError, as_attention

__all__ = ["head_view", "heads_grid", "model_view"]

FILTERS = ("all", "aa", "bb", "ab", "ba")  # BertViz's sentence A / B choices

_CONTROLS_JS = r"""
(function () {
  const box = document.currentScript.parentElement;
  const payload = JSON.parse(box.querySelector("script.hv-payload").textContent);
  const mount = box.querySelector(".hv-mount");
  const layerPick = box.querySelector("select.hv-layer");
  const filterPick = box.querySelector("select.hv-filter");
  const n = payload.tokens.length, H = payload.heads.length, s = payload.b_start;
  const keep = {
    all: () => true,
    aa: (i, j) => i < s && j < s, bb: (i, j) => i >= s && j >= s,
    ab: (i, j) => i < s && j >= s, ba: (i, j) => i >= s && j < s,
  };
  function show() {
    const layer = payload.layers[Number(layerPick.value)];
    const filter = keep[filterPick ? filterPick.value : "all"];
    const weights = denseWeights(layer, n, H, payload.scale, filter);  // H × n × n
    const spec = { tokens: payload.tokens, heads: payload.heads, active: payload.active,
                   weights, filename: payload.filename, text: payload.text };
    renderHeadView({ data: { spec }, parentElement: mount });
  }
  layerPick.addEventListener("change", show);
  if (filterPick) filterPick.addEventListener("change", show);
  show();
})();
"""


def _options(values: Sequence[str], selected: int, css: str) -> str:
    """A <select> of escaped option texts (values are their indices or FILTERS names)."""
    names = FILTERS if css == "hv-filter" else [str(i) for i in range(len(values))]
    options = "".join(
        f'<option value="{name}"{" selected" if i == selected else ""}>{html.escape(text)}</option>'
        for i, (name, text) in enumerate(zip(names, values, strict=True))
    )
    return f'<select class="{css}">{options}</select>'


def head_view(
    attention: Any,
    tokens: Sequence[str],
    sentence_b_start: int | None = None,
    prettify_tokens: bool = True,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    include_layers: Sequence[int] | None = None,
    *,
    batch: int = 0,
    lang: str = DEFAULT_LANG,
    html_action: str = "view",
) -> View:
    """BertViz's head view of `attention` (transformers' tuple of (B, H, n, n), or an
    (L, H, n, n) array) over `tokens`: one layer at a time (a menu picks it), queries on
    the left, keys on the right, hover or click a token for its lines, a coloured square
    per head switches it off.

    `layer` is shown first (default: the first included); `heads` are switched on at the
    start (default: all); `sentence_b_start` adds BertViz's menu A→A, B→B, A→B, B→A;
    `include_layers` keeps only those layers. `batch` picks one sentence of a batch.
    `html_action` is accepted for BertViz's calls: "view" and "return" both return the
    View (its `.data` is the HTML)."""
    att = _checked(attention, tokens, html_action, include_layers, batch, prettify_tokens)
    L, H, n, _ = att.weights.shape
    first = att.layers[0] if layer is None else int(layer)
    if first not in att.layers:
        raise NotebookInputError(f"layer {first} is not among the layers shown {att.layers}")
    on = list(range(H)) if heads is None else [int(h) for h in heads]
    if any(not 0 <= h < H for h in on):
        raise NotebookInputError(f"heads must be in 0..{H - 1}, got {list(heads or [])}")
    if sentence_b_start is not None and not 0 < int(sentence_b_start) < n:
        raise NotebookInputError(f"sentence_b_start must be in 1..{n - 1}, got {sentence_b_start}")
    payload = {
        "tokens": att.tokens,
        "heads": [
            {"name": t("head_title", lang, i=h), "color": HEAD_COLORS[h % len(HEAD_COLORS)]}
            for h in range(H)
        ],
        "active": [h in on for h in range(H)],
        "layers": [sparse_weights(att.weights[i]) for i in range(L)],  # (H, n, n) each
        "scale": SCALE,
        "b_start": None if sentence_b_start is None else int(sentence_b_start),
        "filename": "head-view",
        "text": {"svg": t("lens_head_view_svg", lang), "hint": t("lens_head_view_hint", lang)},
    }
    layer_names = [t("compare_layer_name", lang, l=i) for i in att.layers]
    controls = f"{t('lens_layer_label', lang)} " + _options(
        layer_names, att.layers.index(first), "hv-layer"
    )
    if sentence_b_start is not None:
        filters = [t(f"nb_filter_{name}", lang) for name in FILTERS]
        controls += " " + _options(filters, 0, "hv-filter")
    body = (
        '<div class="studio-headview-box">'
        f"<style>{HEAD_VIEW_CSS}</style>"
        f'<div class="hv-controls studio-headview">{controls}</div>'
        '<div class="hv-mount"></div>'
        f'<script type="application/json" class="hv-payload">{json_for_script(payload)}</script>'
        # one function scope: a notebook shows many views in one document, and the
        # renderer's top-level constants would clash as globals
        f"<script>(function () {{\n{HEAD_VIEW_JS}\n{_CONTROLS_JS}\n}})();</script>"
        "</div>"
    )
    return View(body, title=t("lens_view_head", lang))


def _checked(
    attention: Any,
    tokens: Sequence[str],
    html_action: str,
    include_layers: Sequence[int] | None,
    batch: int,
    prettify_tokens: bool,
) -> Attention:
    """BertViz's arguments checked (`as_attention`); html_action "view" or "return"."""
    if html_action not in ("view", "return"):
        raise NotebookInputError(f"html_action must be 'view' or 'return', got {html_action!r}")
    return as_attention(
        attention,
        tokens,
        include_layers=include_layers,
        batch=batch,
        prettify_tokens=prettify_tokens,
    )


def _labels(tokens: Sequence[str]) -> list[str]:
    """The app's axis labels, `index:token` (unique even where tokens repeat)."""
    return [f"{i}:{token}" for i, token in enumerate(tokens)]


def model_view(
    attention: Any,
    tokens: Sequence[str],
    sentence_b_start: int | None = None,
    prettify_tokens: bool = True,
    include_layers: Sequence[int] | None = None,
    include_heads: Sequence[int] | None = None,
    *,
    batch: int = 0,
    lang: str = DEFAULT_LANG,
    html_action: str = "view",
) -> View:
    """BertViz's model view: every (included) layer × head at once, here as one tiled
    heatmap (the app's Lens page picture), token labels on hover. `sentence_b_start` is
    accepted for BertViz's calls; the tiles always show the whole matrix."""
    att = _checked(attention, tokens, html_action, include_layers, batch, prettify_tokens)
    H = att.weights.shape[1]
    chosen = list(range(H)) if include_heads is None else [int(h) for h in include_heads]
    if not chosen or any(not 0 <= h < H for h in chosen):
        raise NotebookInputError(f"include_heads must be in 0..{H - 1}, got {include_heads}")
    tiles = tile_model_view(
        att.weights[:, chosen],  # (L', H', n, n)
        _labels(att.tokens),
        layer_title=t("compare_layer_name", lang, l="{l}"),
        head_title=t("compare_head_name", lang, i="{i}"),
        layer_ids=att.layers,
        head_ids=chosen,
    )
    figure = plot_model_view(tiles, colorbar_title=t("nb_weight", lang))
    return View(figure_body(figure), title=t("nb_model_view", lang), figure=figure)


def heads_grid(
    attention: Any,
    tokens: Sequence[str],
    layer: int = 0,
    heads: Sequence[int] | None = None,
    *,
    mean: bool = False,
    prettify_tokens: bool = True,
    batch: int = 0,
    lang: str = DEFAULT_LANG,
) -> View:
    """One layer's heads side by side, the app's heads grid (one heatmap per head, square
    cells, numbers in the cells of short sentences); `mean` adds their mean."""
    att = as_attention(attention, tokens, batch=batch, prettify_tokens=prettify_tokens)
    if layer not in att.layers:
        raise NotebookInputError(f"layer must be in 0..{len(att.layers) - 1}, got {layer}")
    H = att.weights.shape[1]
    if heads is not None and any(not 0 <= int(h) < H for h in heads):
        raise NotebookInputError(f"heads must be in 0..{H - 1}, got {list(heads)}")
    grid = head_grid(
        att.weights[att.layers.index(layer)],  # (H, n, n)
        _labels(att.tokens),
        head_title=t("head_title", lang, i="{i}"),
        mean_title=t("mean_title", lang) if mean else None,
        heads=None if heads is None else [int(h) for h in heads],
    )
    figure = plot_heads(grid)
    return View(figure_body(figure), title=t("nb_heads", lang), figure=figure)
