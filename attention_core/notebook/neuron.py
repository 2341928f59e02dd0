"""BertViz's neuron view in a notebook: one attention weight taken apart (q, k, q⊙k, their
sum, ÷√d, softmax), for a model you already have.

    from attention_core.notebook import neuron_view
    neuron_view(model, "The animal didn't cross the street because it was too tired",
                layer=3, head=1, query="it", tokenizer=tokenizer)

q and k are rebuilt from the model's own projections, after its rotary positions, per
key/value head under grouped-query attention, with its mask and soft cap
(`attention_core.lens.neuron_view`: every family `pretrained.zoo` lists).
Before anything is drawn every rebuilt row is checked against the model's own attention
(`output_attentions`) at EXACT (HALF_TOLERANCE for a bfloat16 / float16 model); where they
differ the view refuses with the reason instead of showing another number.

Shape legend: n tokens, D head size.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.lens import plot_neuron_view
from attention_core.i18n import DEFAULT_LANG, t
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.notebook.html import View, figure_body
from attention_core.notebook.inputs import NotebookInputError
from attention_core.notebook.sources import figure_source
from attention_core.notebook.widget import make_widget, use_widget

__all__ = ["NeuronViewRefused", "neuron_view"]


class NeuronViewRefused(NotebookInputError):
    """The neuron view cannot rebuild this model's own attention weights."""


def as_loaded_model(model: Any, tokenizer: Any) -> Any:
    """A notebook's (model, tokenizer) as a `pretrained.LoadedModel` (eager attention)."""
    from attention_core.pretrained import LoadedModel, from_model

    if isinstance(model, LoadedModel):
        return model
    if tokenizer is None:
        raise NotebookInputError("pass tokenizer= with a transformers model (or a LoadedModel)")
    return from_model(model, tokenizer)


def _position(tokens: list[str], at: int | str | None, default: int, what: str) -> int:
    """A token position from an index, a token's text (its first occurrence) or None."""
    if at is None:
        return default
    if isinstance(at, str):
        stripped = [token.lstrip("Ġ▁#").lower() for token in tokens]
        if at.lower() not in stripped:
            raise NotebookInputError(f"{what} {at!r} is not one of the tokens {tokens}")
        return stripped.index(at.lower())
    if not 0 <= int(at) < len(tokens):
        raise NotebookInputError(f"{what} must be in 0..{len(tokens) - 1}, got {at}")
    return int(at)


def neuron_view(
    model: Any,
    text: str,
    layer: int = 0,
    head: int = 0,
    query: int | str | None = None,
    key: int | str | None = None,
    *,
    tokenizer: Any = None,
    max_tokens: int = MAX_TOKENS,
    lang: str = DEFAULT_LANG,
    widget: bool | None = None,
) -> Any:
    """q of `query`, k of `key` and q⊙k in head `head` of layer `layer`, as three rows of
    cells, the sum, the scaling and the softmax in the title.

    `model`: a LoadedModel or a transformers model with its `tokenizer`. `query` / `key`:
    a position or a token's text (default: the last token, and the key it attends to
    most). Raises NeuronViewRefused when the rebuilt weights are not the model's own.
    As a widget (`widget`) its `layer` redraws the same head, query and key in another
    layer (`selected` stays None: its rows are q, k and q⊙k, not tokens)."""
    from attention_core.lens import neuron_view as take_apart
    from attention_core.pretrained import run_model

    loaded = as_loaded_model(model, tokenizer)
    result = run_model(loaded, text, max_tokens=max_tokens)
    if not 0 <= layer < loaded.num_layers or not 0 <= head < loaded.num_heads:
        raise NotebookInputError(
            f"layer must be in 0..{loaded.num_layers - 1} and head in "
            f"0..{loaded.num_heads - 1}, got layer {layer}, head {head}"
        )

    @functools.lru_cache(maxsize=4)  # the static view and the widget's first draw share one
    def figure_for(model_layer: int, _scale: str = "absolute") -> go.Figure:
        n = len(result.tokens)
        i = _position(result.tokens, query, n - 1, "query")
        own = result.attentions[model_layer, head, i].astype(np.float64)  # (n,) the model's row
        j = _position(result.tokens, key, int(own.argmax()), "key")
        try:  # the library checks every rebuilt row against the model's own
            parts = take_apart(loaded, text, model_layer, head, max_tokens=max_tokens)
        except ValueError as error:  # RebuildRefused (with its reason), a layout not understood
            raise NeuronViewRefused(
                f"the neuron view cannot take this model apart: {error}"
            ) from None
        raw = float(parts.raw_scores(i)[j])
        title = t("lens_neuron_title", lang, raw=raw, scaled=raw * parts.scaling, weight=own[j])
        if result.cut_by is not None:  # never a silent cut: which bound, and the query it leaves
            why = t(f"nb_why_{result.cut_by}", lang, limit=result.limit, chars=MAX_TEXT_CHARS)
            title += "<br>" + t("nb_neuron_cut", lang, n=n, why=why, query=i)
        figure = plot_neuron_view(
            parts.q[i],  # (D,)
            parts.k[j],  # (D,)
            rows=t("lens_neuron_rows", lang, query=result.tokens[i], key=result.tokens[j]).split(
                "|"
            ),
            title=title,
            hover=t("lens_neuron_hover", lang) + "<extra></extra>",
        )
        return figure

    def static() -> View:
        figure = figure_for(layer)
        return View(figure_body(figure), title=t("lens_view_neuron", lang), figure=figure)

    if not use_widget(widget):
        return static()
    source = figure_source(
        figure_for,
        layers=list(range(loaded.num_layers)),
        heads=loaded.num_heads,
        queries=len(result.tokens),
        layer=layer,
        lang=lang,
        static=static,
    )
    source.spec["rows_are_tokens"] = False  # its rows are q, k and q⊙k
    return make_widget(source)
