"""Attention in a notebook, called as BertViz's views are (one import to switch):

    from attention_core.notebook import head_view, model_view   # was: from bertviz import …
    outputs = model(**inputs, output_attentions=True)   # eager attention
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
    head_view(outputs.attentions, tokens)

    head_view(attention, tokens, …)    one layer's heads as lines (BertViz's head view)
    model_view(attention, tokens, …)   every layer × head as one tiled heatmap
    heads_grid(attention, tokens, layer)   one layer's heads side by side (the app's grid)
    neuron_view(model, text, layer, head, query, tokenizer=…)   one weight taken apart
    long_view(model, long_text, layer, tokenizer=…, window=…)   4 096 tokens: pooled or exact
    decode_view(model, prompt, steps=…, tokenizer=…)   a decoder writing, a slider per step
    attribution_view(model, text, target=…, tokenizer=…)   attention beside attribution

In a live kernel the views are anywidget widgets sharing `layer`, `heads`, `selected`,
`hovered` and `scale` with Python (`widget=`; attention_core.notebook.widget), the
decoder's `step` and the attribution's `method` and `head` too (decode_widget,
attribution_widget). A
TransformerLens `ActivationCache` is taken as `attention` (`head_view(cache, tokens)`);
`attention_core.notebook.circuitsvis` has CircuitsVis's attention calls.

`attention` is transformers' tuple of (B, H, n, n) tensors or an (L, H, n, n) array. Each
view displays itself in Jupyter, JupyterLab, VS Code and Colab with every script inline
(nothing from a CDN: it works offline) and saves as standalone HTML (`save_html`).
Attention that cannot be what it claims (rows not summing to 1, as an SDPA model's empty
attention, NaN, a shape that does not match the tokens) raises `NotebookInputError`.
"""

from __future__ import annotations

from attention_core.notebook.attribution import AttributionView, attribution_view
from attention_core.notebook.decode import DecodeView, decode_view
from attention_core.notebook.html import View
from attention_core.notebook.inputs import Attention, NotebookInputError, as_attention
from attention_core.notebook.long import LongViewRefused, long_view
from attention_core.notebook.neuron import NeuronViewRefused, neuron_view
from attention_core.notebook.views import head_view, heads_grid, model_view

__all__ = [
    "Attention",
    "AttributionView",
    "DecodeView",
    "LongViewRefused",
    "NeuronViewRefused",
    "NotebookInputError",
    "View",
    "as_attention",
    "attribution_view",
    "decode_view",
    "head_view",
    "heads_grid",
    "long_view",
    "model_view",
    "neuron_view",
]
