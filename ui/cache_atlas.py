"""The head atlas's Streamlit caches (pages/atlas.py), beside ui/cache.py and keyed the same
way: plain values (a model's name, a folder, texts, numbers), never a model or a tensor. An
opened index and an atlas model are shared resources; what is computed from them is data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from ui.cache import lens_head_effects, loaded_model

if TYPE_CHECKING:
    import numpy as np

    from attention_core.atlas.models import AtlasModel
    from attention_core.atlas.project import QKPoints
    from attention_core.atlas.query import Atlas
    from attention_core.atlas.search import Hit

__all__ = [
    "atlas_ablation",
    "atlas_attends_from",
    "atlas_head_weights",
    "atlas_index",
    "atlas_model",
    "atlas_qk",
    "atlas_sentence_rows",
]


@st.cache_resource(max_entries=6, show_spinner=False)
def atlas_index(model: str, folder: str, stamp: tuple[str, ...]) -> Atlas:
    """The index of `model` under `folder`, opened once (DuckDB, its summary in memory);
    `stamp` (its chunks' names) opens it again once a build has added chunks."""
    from attention_core.atlas.query import Atlas

    return Atlas.open(model, folder)


@st.cache_resource(max_entries=3, show_spinner=False)
def atlas_model(name: str) -> AtlasModel:
    """An atlas model; MiniLM is the Pretrained page's packaged model, not a second copy."""
    from attention_core.atlas.models import MiniLM, open_model

    return MiniLM(loaded_model("")) if name == "minilm" else open_model(name)


@st.cache_data(max_entries=32, show_spinner=False)
def atlas_sentence_rows(name: str, text: str) -> list[dict]:
    """The index's head rows for one sentence (the sidebar's), computed as the build does."""
    from attention_core.atlas.rows import sentence_rows

    model = atlas_model(name)
    (reading,) = model.read([text])
    return sentence_rows(reading, causal=model.causal, same_word=name == "reader")[1]


@st.cache_data(max_entries=16, show_spinner=False)
def atlas_head_weights(name: str, text: str, layer: int, head: int) -> tuple[list[str], np.ndarray]:
    """One head's weights on one sentence and their labels: (n, n) over the model's tokens,
    or (m, m) over the characters a byte-level tokenizer's pieces make (`Reading.head_weights`)."""
    (reading,) = atlas_model(name).read([text])
    return reading.head_weights(layer, head)


@st.cache_data(max_entries=8, show_spinner=False)
def atlas_qk(
    name: str, texts: tuple[str, ...], layer: int, head: int, mine: str, method: str = "pca"
) -> QKPoints:
    """One head's queries and keys over `texts` and the user's sentence, projected (PCA or
    t-SNE: attention_core.atlas.project.joint_projection)."""
    from attention_core.atlas.project import collect

    return collect(atlas_model(name), texts, layer, head, mine=mine or None, method=method)


@st.cache_data(max_entries=16, show_spinner=False)
def atlas_ablation(name: str, text: str) -> np.ndarray | None:
    """(L, H) effect of knocking out each head alone on `text`: the reader's next-unit KL
    (lens.reader_head_effects), MiniLM's sentence embedding moved (1 − cos, lens.
    head_effects); None for the untrained module (one layer, no output to compare)."""
    from attention_core import lens

    if name == "reader":
        from attention_core.reader import load_shipped

        return lens.reader_head_effects(load_shipped(), text).kl
    if name == "minilm":
        return lens_head_effects("", text).pooled_distance
    return None


@st.cache_data(max_entries=16, show_spinner=False)
def atlas_attends_from(
    name: str, _atlas: Atlas, stamp: tuple[str, ...], layer: int, head: int, token: str, pos: str
) -> tuple[list[Hit], int]:
    """Every row of `token` in the indexed sentences that contain it, read again
    (attention_core.atlas.search); keyed on the index's chunks (`stamp`), not the object."""
    from attention_core.atlas.search import attends_from

    return attends_from(_atlas, atlas_model(name), layer, head, token, key_pos=pos or None)
