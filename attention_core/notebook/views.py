"""The notebook's views, called as BertViz's are: head view, model view, heads grid.

    from attention_core.notebook import head_view, model_view   # was: from bertviz import …
    head_view(outputs.attentions, tokens)

Each returns a `View` (attention_core.notebook.html) that displays itself as the cell's
result and saves as standalone HTML; nothing is fetched from a CDN. In a live kernel
(`widget=None`) or with `widget=True` each returns a widget instead
(attention_core.notebook.widget): `layer`, `heads`, `selected`, `hovered`, `scale` shared
with Python, the static view still inside it. The head view is the
app's own renderer (`figures.headview`), the grids are the app's own figures.

Shape legend: L layers, H heads, n tokens (queries), k keys (n but in cross-attention).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from attention_core.figures.compare import model_view as tile_model_view
from attention_core.figures.compare import plot_model_view
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.i18n import DEFAULT_LANG, t
from attention_core.notebook.html import View, figure_body
from attention_core.notebook.inputs import Attention, NotebookInputError, as_attention
from attention_core.notebook.sections import head_view_body, sections
from attention_core.notebook.sources import figure_source, head_source, widget_note
from attention_core.notebook.widget import make_widget, use_widget

__all__ = ["head_view", "heads_grid", "model_view"]


def head_view(
    attention: Any = None,
    tokens: Sequence[str] | None = None,
    sentence_b_start: int | None = None,
    prettify_tokens: bool = True,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    encoder_attention: Any = None,
    decoder_attention: Any = None,
    cross_attention: Any = None,
    encoder_tokens: Sequence[str] | None = None,
    decoder_tokens: Sequence[str] | None = None,
    include_layers: Sequence[int] | None = None,
    html_action: str = "view",
    *,
    batch: int = 0,
    lang: str = DEFAULT_LANG,
    every_weight: bool | None = None,
    widget: bool | None = None,
) -> Any:
    """BertViz's head view of `attention` (transformers' tuple of (B, H, n, n), or an
    (L, H, n, n) array) over `tokens`: one layer at a time (a menu picks it), queries on
    the left, keys on the right, every line drawn at open; hover or click a token for its
    own lines, a coloured square per head switches it off.

    BertViz's encoder-decoder call instead of `attention` and `tokens`:
    `encoder_attention`, `decoder_attention`, `cross_attention` (transformers'
    `encoder_attentions`, `decoder_attentions`, `cross_attentions`; any of them) with
    `encoder_tokens` and `decoder_tokens`; a menu "Attention:" switches Encoder, Decoder and
    Cross (decoder tokens on the left, encoder tokens on the right), as BertViz's does.

    `layer` is shown first (default: the first included); `heads` are switched on at the
    start (default: all); `sentence_b_start` adds BertViz's menu A→A, B→B, A→B, B→A;
    `include_layers` keeps only those layers. `batch` picks one sentence of a batch.
    `every_weight`: every weight travels (up to `figures.headview.EVERY_WEIGHT_MAX`
    weights a page) or only those >= MIN_WEIGHT, the page saying how many lines are left
    out; default every weight up to `sections.EVERY_WEIGHT_AUTO`.
    `html_action` is accepted for BertViz's calls: "view" and "return" both return the
    View (its `.data` is the HTML). `widget`: see the module's docstring; a widget sends
    every weight of the layer shown (float32), one layer at a time."""
    _action(html_action)
    parts = sections(
        attention,
        tokens,
        encoder_attention=encoder_attention,
        decoder_attention=decoder_attention,
        cross_attention=cross_attention,
        encoder_tokens=encoder_tokens,
        decoder_tokens=decoder_tokens,
        include_layers=include_layers,
        batch=batch,
        prettify_tokens=prettify_tokens,
    )

    def static() -> View:
        body = head_view_body(
            parts,
            layer=layer,
            heads=heads,
            sentence_b_start=sentence_b_start,
            every_weight=every_weight,
            lang=lang,
        )
        return View(body, title=t("lens_view_head", lang))

    if not _widget(widget, list(parts) == ["all"] and sentence_b_start is None):
        return static()
    return make_widget(
        head_source(parts["all"], layer=layer, heads=heads, lang=lang, static=static)
    )


def _widget(widget: bool | None, plain: bool) -> bool:
    """Whether to return a widget (`use_widget`); an encoder-decoder's or a sentence
    pair's view is static (its menus are the static page's)."""
    if not use_widget(widget):
        return False
    if not plain and widget:
        raise NotebookInputError(
            "an encoder-decoder's or a sentence pair's view is static HTML: pass widget=False"
        )
    return plain


def _action(html_action: str) -> None:
    """BertViz's html_action: "view" or "return" (both return the View here)."""
    if html_action not in ("view", "return"):
        raise NotebookInputError(f"html_action must be 'view' or 'return', got {html_action!r}")


def _labels(tokens: Sequence[str]) -> list[str]:
    """The app's axis labels, `index:token` (unique even where tokens repeat)."""
    return [f"{i}:{token}" for i, token in enumerate(tokens)]


def model_view(
    attention: Any = None,
    tokens: Sequence[str] | None = None,
    sentence_b_start: int | None = None,
    prettify_tokens: bool = True,
    display_mode: str = "dark",
    encoder_attention: Any = None,
    decoder_attention: Any = None,
    cross_attention: Any = None,
    encoder_tokens: Sequence[str] | None = None,
    decoder_tokens: Sequence[str] | None = None,
    include_layers: Sequence[int] | None = None,
    include_heads: Sequence[int] | None = None,
    html_action: str = "view",
    *,
    batch: int = 0,
    lang: str = DEFAULT_LANG,
    widget: bool | None = None,
) -> Any:
    """BertViz's model view: every (included) layer × head at once, here as one tiled
    heatmap (the app's Lens page picture), token labels on hover. An encoder-decoder
    (`encoder_attention`, `decoder_attention`, `cross_attention` with `encoder_tokens`
    and `decoder_tokens`, as `head_view` takes them) gets three sections, Encoder, Decoder
    and Cross (rows: decoder tokens, columns: encoder tokens); `View.figures` holds each.
    `sentence_b_start` and `display_mode` are accepted for BertViz's calls; the tiles
    always show the whole matrix, in the app's colours."""
    _action(html_action)
    if display_mode not in ("dark", "light"):
        raise NotebookInputError(f"display_mode must be 'dark' or 'light', got {display_mode!r}")
    parts = sections(
        attention,
        tokens,
        encoder_attention=encoder_attention,
        decoder_attention=decoder_attention,
        cross_attention=cross_attention,
        encoder_tokens=encoder_tokens,
        decoder_tokens=decoder_tokens,
        include_layers=include_layers,
        batch=batch,
        prettify_tokens=prettify_tokens,
    )
    if list(parts) == ["all"]:
        att = parts["all"]

        def static() -> View:
            figure = _tiles(att, include_heads, lang)
            return View(figure_body(figure), title=t("nb_model_view", lang), figure=figure)

        if not _widget(widget, True):
            return static()
        source = figure_source(
            lambda _layer, scale: _tiles(att, include_heads, lang, scale=scale),
            layers=att.layers,
            heads=att.weights.shape[1],
            queries=len(att.tokens),
            layer=None,
            lang=lang,
            static=static,
            weights=int(att.weights.size),
            note=widget_note(t("nb_model_view", lang), att.weights, lang),
        )
        return make_widget(source)
    _widget(widget, False)
    figures = {kind: _tiles(part, include_heads, lang) for kind, part in parts.items()}
    body = "".join(
        f'<h4 class="studio-nb-section">{html.escape(t(f"nb_kind_{kind}", lang))}</h4>'
        + figure_body(figure, bundle=i == 0)
        for i, (kind, figure) in enumerate(figures.items())
    )
    return View(body, title=t("nb_model_view", lang), figures=figures)


def _tiles(
    att: Attention, include_heads: Sequence[int] | None, lang: str, *, scale: str = "absolute"
) -> go.Figure:
    """One attention's layers × heads as the app's tiled heatmap."""
    H = att.weights.shape[1]
    chosen = list(range(H)) if include_heads is None else [int(h) for h in include_heads]
    if not chosen or any(not 0 <= h < H for h in chosen):
        raise NotebookInputError(f"include_heads must be in 0..{H - 1}, got {include_heads}")
    tiles = tile_model_view(
        att.weights[:, chosen],  # (L', H', n, k)
        _labels(att.tokens),
        layer_title=t("compare_layer_name", lang, l="{l}"),
        head_title=t("compare_head_name", lang, i="{i}"),
        layer_ids=att.layers,
        head_ids=chosen,
        key_labels=None if att.key_tokens is None else _labels(att.key_tokens),
    )
    return plot_model_view(tiles, scale=scale, colorbar_title=t("nb_weight", lang))


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
    widget: bool | None = None,
) -> Any:
    """One layer's heads side by side, the app's heads grid (one heatmap per head, square
    cells, numbers in the cells of short sentences); `mean` adds their mean. As a widget
    (`widget`) its `layer` and `scale` redraw the grid, a click on a row sets `selected`."""
    att = as_attention(attention, tokens, batch=batch, prettify_tokens=prettify_tokens)
    if layer not in att.layers:
        raise NotebookInputError(f"layer must be in 0..{len(att.layers) - 1}, got {layer}")
    H = att.weights.shape[1]
    if heads is not None and any(not 0 <= int(h) < H for h in heads):
        raise NotebookInputError(f"heads must be in 0..{H - 1}, got {list(heads)}")

    def figure_for(model_layer: int, scale: str = "absolute") -> go.Figure:
        grid = head_grid(
            att.weights[att.layers.index(model_layer)],  # (H, n, n)
            _labels(att.tokens),
            head_title=t("head_title", lang, i="{i}"),
            mean_title=t("mean_title", lang) if mean else None,
            heads=None if heads is None else [int(h) for h in heads],
        )
        return plot_heads(grid, scale=scale)

    def static() -> View:
        figure = figure_for(layer)
        return View(figure_body(figure), title=t("nb_heads", lang), figure=figure)

    if not use_widget(widget):
        return static()
    return make_widget(
        figure_source(
            figure_for,
            layers=att.layers,
            heads=H,
            queries=len(att.tokens),
            layer=layer,
            lang=lang,
            static=static,
            weights=int(att.weights[0].size),
            note=widget_note(t("nb_heads", lang), att.weights[:1], lang),
        )
    )
