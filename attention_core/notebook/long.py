"""A long prompt in a notebook: your own model's attention over up to 4 096 tokens, one layer's
heads as a map pooled to what a page can hold, or any window of it exact.

    from attention_core.notebook import long_view
    long_view(model, long_text, tokenizer=tokenizer, layer=3)                   # every head
    long_view(model, long_text, tokenizer=tokenizer, layer=3, window=(3000, 3128))  # exact

The text runs once through the model (`long.pretrained.run_model_long`: each layer kept as a map
rebuilt from the model's queries and keys, soft-capped where Gemma 2 caps them, checked
against its own output_attentions; a sliding window narrower than the text is refused with the
reason).
Pooled, a cell is a block of `block` × `block` tokens holding the share of attention its rows
give its keys (summed over the keys, averaged over the rows: "mass"), so each pooled row still
sums to 1 and no row or column is dropped. A window of at most MAX_TOKENS tokens shows the
exact weights of its rows × its keys. The HTML holds at most `cells`² numbers a head, whatever
the length: a BertViz or heads_grid page of every weight at 4 096 tokens is ~100 MB.

Shape legend: H heads, n tokens, c cells a side.
"""

from __future__ import annotations

import functools
import itertools
import numbers
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.heads import head_grid, plot_heads
from attention_core.i18n import DEFAULT_LANG, t
from attention_core.limits import MAX_LONG_TOKENS, MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.notebook.html import View, figure_body
from attention_core.notebook.inputs import NotebookInputError
from attention_core.notebook.neuron import as_loaded_model
from attention_core.notebook.sources import figure_source
from attention_core.notebook.widget import make_widget, use_widget

__all__ = ["LongViewRefused", "long_view"]

CELLS = 128  # pooled cells a side of each head (the overview of a page, kept small inline)


class LongViewRefused(NotebookInputError):
    """This model's long map cannot be its own numbers (the reason, from run_model_long)."""


def long_view(
    model: Any,
    text: str,
    layer: int = 0,
    *,
    tokenizer: Any = None,
    window: tuple[int, int] | None = None,
    cells: int = CELLS,
    max_tokens: int = MAX_LONG_TOKENS,
    lang: str = DEFAULT_LANG,
    widget: bool | None = None,
) -> Any:
    """Layer `layer`'s heads over `text`'s first tokens (up to the model's context and
    `max_tokens`): pooled to at most `cells` a side, or the exact weights of tokens
    window[0]..window[1] − 1 (rows and keys, at most MAX_TOKENS of them).

    `model`: a LoadedModel or a transformers model with its `tokenizer`. Raises
    LongViewRefused where the maps cannot be the model's own, NotebookInputError on bad
    arguments. As a widget (`widget`, attention_core.notebook.widget) its `layer` redraws
    the map of another layer from the same run; `selected` is a row shown (pooled: a
    block of tokens)."""
    from attention_core.long.pretrained import LongRefused, run_model_long

    if not isinstance(cells, int) or not 8 <= cells <= MAX_TOKENS:
        raise NotebookInputError(f"cells must be an integer in 8..{MAX_TOKENS}, got {cells!r}")
    try:
        run = run_model_long(as_loaded_model(model, tokenizer), text, max_tokens=max_tokens)
    except LongRefused as refused:
        raise LongViewRefused(str(refused)) from None
    except ValueError as error:
        raise NotebookInputError(str(error)) from None
    if not 0 <= layer < len(run.maps):
        raise NotebookInputError(f"layer must be in 0..{len(run.maps) - 1}, got {layer}")
    span = None if window is None else _window(window, run.n)

    @functools.lru_cache(maxsize=4)  # the static view and the widget's first draw share one
    def figure_for(model_layer: int, _scale: str = "absolute") -> go.Figure:
        amap, n = run.maps[model_layer], run.n
        if window is None:
            tiles = [amap.overview(h, size=cells, reduce="mass") for h in range(amap.num_heads)]
            weights = np.stack([tile.values for tile in tiles])  # (H, c, c), rows summing to 1
            edges = tiles[0].row_edges  # (c + 1,)
            labels = [_span(run.tokens, int(a), int(b)) for a, b in itertools.pairwise(edges)]
            title = t("nb_long_pooled", lang, layer=model_layer, n=n, block=tiles[0].block)
        else:
            a, b = span
            weights = np.stack(
                [amap.exact(h, slice(a, b), slice(a, b)) for h in range(amap.num_heads)]
            )  # (H, b − a, b − a): the rows' weights on the window's keys (not all of theirs)
            labels = [f"{i}:{run.tokens[i]}" for i in range(a, b)]
            title = t("nb_long_window", lang, layer=model_layer, n=n, a=a, b=b - 1)
        if run.cut_by is not None:  # a second line: the title is catalog text and numbers only
            count = (
                t("long_count_chars", lang, chars=MAX_TEXT_CHARS, total=run.total_tokens)
                if run.text_cut
                else t("long_count", lang, total=run.total_tokens)
            )
            title += "<br>" + t(f"nb_long_cut_{run.cut_by}", lang, count=count, limit=run.limit)
        grid = head_grid(weights, labels, head_title=t("head_title", lang, i="{i}"))
        # 0 → the largest value shown: pooled shares are ~block / n, far below 1
        top = max(float(weights.max()), 1e-9)
        bar = t("nb_weight" if window is not None else "nb_long_share", lang)
        figure = plot_heads(grid, zmax=top, colorbar_title=bar)
        top = figure.layout.margin.t or 0
        figure.update_layout(
            title={"text": title, "font": {"size": 13}, "y": 1, "yanchor": "top", "pad": {"t": 12}},
            margin={"t": top + 56},
            height=(figure.layout.height or 600) + 56,
        )
        return figure

    def static() -> View:
        figure = figure_for(layer)
        return View(figure_body(figure), title=t("nb_long", lang), figure=figure)

    if not use_widget(widget):
        return static()
    source = figure_source(
        figure_for,
        layers=list(range(len(run.maps))),
        heads=run.maps[layer].num_heads,
        queries=len(figure_for(layer).data[0].y),  # the rows shown (pooled: blocks)
        layer=layer,
        lang=lang,
        static=static,
    )
    return make_widget(source)


def _span(tokens: list[str], a: int, b: int) -> str:
    """A pooled block's label: its token range and first token, `index:token` when one."""
    return f"{a}:{tokens[a]}" if b - a == 1 else f"{a}–{b - 1}:{tokens[a]}…"


def _window(window: object, n: int) -> tuple[int, int]:
    if (
        not isinstance(window, tuple | list)
        or len(window) != 2
        or not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in window)
    ):
        raise NotebookInputError(f"window must be (start, stop) token positions, got {window!r}")
    a, b = int(window[0]), int(window[1])
    if not 0 <= a < b <= n or b - a > MAX_TOKENS:
        raise NotebookInputError(
            f"window must satisfy 0 ≤ start < stop ≤ {n} with at most {MAX_TOKENS} tokens, "
            f"got {window}"
        )
    return a, b
