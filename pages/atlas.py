"""Head atlas: every head of a model across a corpus — what it does and where it fires.

HeadVis's map (each head a point, axes and colour chosen from its corpus-wide statistics,
a click or the list picks a head: its pattern, its top sentences with the attention
drawn, its strongest pairs), AttentionViz's joint picture of one head's queries and keys,
and the untrained module, the trained reader and MiniLM side by side. One view at a time.
The index is built by `python -m attention_core.atlas build` (or, small, from here).
"""

from __future__ import annotations

import streamlit as st

from attention_core.atlas.models import MODELS
from attention_core.atlas.query import own_models
from attention_core.atlas.shipped import is_shipped
from ui.atlas import (
    model_name,
    open_index,
    show_build,
    show_head,
    show_map,
    show_shipped,
)
from ui.atlas_views import show_compare, show_qk
from ui.common import choose, current_settings, entry_guard
from ui.language import tr

VIEWS = ("map", "qk", "compare")

entry_guard()
st.title(tr("atlas_title"))
st.caption(tr("atlas_intro"))
text = current_settings().text.strip()

view = choose(
    st.segmented_control,
    tr("atlas_view_label"),
    VIEWS,
    key="atlas_view",
    default="map",
    required=True,
    format_func=lambda v: tr(f"atlas_view_{v}"),
)
if view == "compare":
    show_compare()
    st.stop()

model = choose(
    st.segmented_control,
    tr("atlas_model_label"),
    (*MODELS, *own_models()),  # your own models: those indexed with --model FOLDER
    key="atlas_model",
    default="reader",
    required=True,
    format_func=model_name,
)
atlas = open_index(model or "reader")
if atlas is None:
    show_build(model or "reader")
    st.stop()
st.caption(
    tr(
        "atlas_index_info",
        sentences=atlas.sentence_count,
        layers=atlas.layers,
        heads=atlas.heads,
        chunks=atlas.chunks,
    )
)
if is_shipped(atlas.folder):
    show_shipped(model)

if view == "qk":
    show_qk(atlas, model, text)
else:
    head_map, lang, strongest = show_map(atlas, model, text)
    show_head(atlas, model, head_map, lang, text, strongest)
