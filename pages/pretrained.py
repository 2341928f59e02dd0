"""Pretrained attention: the sidebar's sentence through a real transformer.

Every layer × head at once (BertViz's "model view", as heatmaps), one layer's heads large,
and one trained head next to a head of the project's untrained module on the same tokens.
The default model is the packaged all-MiniLM-L6-v2 (offline); any Hugging Face id or local
folder can be typed in: encoders (BERT-like), decoders (GPT-like: they can write tokens
after the text, whose attention is shown too) and encoder-decoders (T5, BART: the decoder's
self- and cross-attention in a view of their own).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import streamlit as st

from attention_core.attention_file import FORMATS, attention_bytes
from attention_core.compare import (
    all_layers,
    layer_view,
    most_focused_head,
    pretrained_labels,
    readable_result,
    visible_tokens,
)
from attention_core.export import download_name
from attention_core.figures.compare import model_view, plot_model_view, without_cramped_text
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.figures.lens import plot_attention_matrix
from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.limits import MAX_TOKENS
from attention_core.pretrained import MAX_GENERATE
from attention_core.stats import head_stats
from ui.cache import untrained_result
from ui.charts import show_chart
from ui.common import (
    choose,
    colour_bar_title,
    colour_scale_choice,
    current_settings,
    entry_guard,
    md_escape,
    seeded,
    token_chips,
)
from ui.language import tr
from ui.long.view import is_long_pretrained, show_long_pretrained
from ui.models import MODEL_STATE, model_label, model_or_stop, result_or_stop, unknown_warning
from ui.scale_notes import scale_caption

state = st.session_state
VIEWS = ("model", "layer", "contrast")


def _use_default_model() -> None:
    state["pretrained_model"] = ""


def _keep_in_range(key: str, size: int) -> None:
    """A layer/head index from a bigger model would be out of range for this one."""
    if not 0 <= state.get(key, 0) < size:
        state[key] = 0


def _one_head(where: Any, title: str, weights: np.ndarray, labels: list[str], *, key: str) -> None:
    """One (n, n) head in a half-width column: its title, heatmap and statistics."""
    stats = head_stats(weights)[0]
    with where:
        st.markdown(title)
        grid = head_grid(weights, labels, head_title="")
        figure = plot_heads(grid, colorbar_title=tr("compare_weight"), width_px=HALF_WIDTH_PX)
        show_chart(without_cramped_text(figure, width_px=HALF_WIDTH_PX), key=key)
        st.caption(tr("pretrained_head_stats", entropy=stats.entropy, top=stats.max_weight))


entry_guard()
st.title(tr("pretrained_title"))
st.caption(tr("pretrained_intro"))

# --- which model --------------------------------------------------------------------------
left, right = st.columns([3, 1], vertical_alignment="bottom")
left.text_input(
    tr("pretrained_model_label"),
    seeded("pretrained_model", state.get(MODEL_STATE, "")),
    key="pretrained_model",
    placeholder=tr("pretrained_model_placeholder"),
    help=tr("pretrained_model_help"),
    persist_state="session",
)
right.button(
    tr("pretrained_reset"),
    key="pretrained_reset",
    on_click=_use_default_model,
    disabled=not state["pretrained_model"].strip(),
)
name = state["pretrained_model"].strip()

settings = current_settings()
model = model_or_stop(name)
state[MODEL_STATE] = name  # the Compare page follows the last model that loaded
if is_long_pretrained(name, model, settings.text):  # past 512 tokens, within its context
    st.caption(
        tr(
            "pretrained_long_info",
            model=md_escape(model_label(name)),
            context=model.max_length,
            limit=MAX_TOKENS,
        )
        + " · "
        + tr(f"pretrained_family_{model.family}")
    )
    show_long_pretrained(name, model_label(name), settings.text)
    st.stop()
generate = None
if model.family == "decoder":
    generate = st.number_input(
        tr("pretrained_generate_label"),
        0,
        MAX_GENERATE,
        seeded("pretrained_generate", 0),
        key="pretrained_generate",
        help=tr("pretrained_generate_help"),
    )
pieces = result_or_stop(name, settings.text, generate)
result = readable_result(pieces, model.tokenizer)  # byte pieces as the characters they make
L, H = model.num_layers, model.num_heads
n_special = sum(result.special)
st.caption(
    tr(
        "pretrained_model_info",
        model=md_escape(model_label(name)),
        layers=L,
        heads=H,
        n=len(result.tokens),
        special=n_special,
    )
    + " · "
    + tr(f"pretrained_family_{model.family}")
)
if len(result.tokens) < len(pieces.tokens):
    st.caption(tr("pretrained_readable_note", pieces=len(pieces.tokens), n=len(result.tokens)))
if result.generated and any(result.generated):
    written = [t for t, g in zip(result.tokens, result.generated, strict=True) if g]
    st.caption(tr("pretrained_generated", tokens=md_escape(" ".join(written))))

# --- what the vocabulary could not read -----------------------------------------------------
unknown_warning(model, result, settings.text, key="pretrained_to_reader")

# --- tokens and special tokens -----------------------------------------------------------
hide = st.toggle(
    tr("pretrained_hide_special_label"),
    key="pretrained_hide_special",
    help=tr("pretrained_special_help"),
    disabled=n_special == 0,
)
hide = hide and n_special > 0
if hide:
    st.info(tr("pretrained_hide_special_note"))
labels = pretrained_labels(result, hide_special=hide)
token_chips(visible_tokens(result, hide_special=hide))

# --- every layer and head as a file (made when clicked), for a notebook or a re-upload ------
for column, fmt in zip(st.columns(len(FORMATS)), FORMATS, strict=True):
    column.download_button(
        tr("pretrained_download", ext=fmt),
        partial(attention_bytes, pieces.attentions, pieces.tokens, fmt),
        file_name=download_name(settings.text, fmt, prefix="pretrained-attention"),
        help=tr("pretrained_download_help"),
        key=f"pretrained_download_{fmt}",
        on_click="ignore",
    )

# --- one view at a time: they are heavy ---------------------------------------------------
view = choose(
    st.segmented_control,
    tr("pretrained_view_label"),
    (*VIEWS, "cross") if result.cross_attentions is not None else VIEWS,
    key="pretrained_view",
    default="model",
    format_func=lambda option: tr(f"pretrained_view_{option}"),
    required=True,
)
view = view or "model"
head_name = tr("compare_head_name", i="{i}")
layer_name = tr("compare_layer_name", l="{l}")
_keep_in_range("pretrained_layer", L)
_keep_in_range("pretrained_head", H)

if view == "model":
    grid = model_view(
        all_layers(result, hide_special=hide),
        labels,
        layer_title=layer_name,
        head_title=head_name,
    )
    scale = colour_scale_choice()  # the landing page's choice, kept across pages and in the URL
    st.caption(tr("pretrained_model_view_caption", layers=L, heads=H))
    st.caption(scale_caption(scale, len(labels), one_axis=True))
    if grid.block > 1:
        st.caption(tr("pretrained_thumbs_note", n=len(labels), block=grid.block))
    show_chart(
        plot_model_view(grid, scale=scale, colorbar_title=colour_bar_title(scale, one_axis=True)),
        key="pretrained_model_chart",
    )

elif view == "layer":
    layer = choose(st.select_slider, tr("pretrained_layer_label"), range(L), key="pretrained_layer")
    scale = colour_scale_choice()  # the landing page's choice, kept across pages and in the URL
    n = len(labels)
    st.caption(tr("pretrained_layer_caption", layer=layer, heads=H, n=n))
    st.caption(scale_caption(scale, n))
    show_chart(
        without_cramped_text(
            plot_heads(
                head_grid(
                    layer_view(result, layer, hide_special=hide), labels, head_title=head_name
                ),
                scale=scale,
                colorbar_title=tr(f"scale_bar_{scale}"),
            )
        ),
        key="pretrained_layer_chart",
    )

elif view == "cross":  # an encoder-decoder: what the decoder wrote, and where it looked
    c1, c2 = st.columns(2)
    layer = choose(c1.select_slider, tr("pretrained_layer_label"), range(L), key="pretrained_layer")
    head = choose(c2.selectbox, tr("pretrained_head_label"), range(H), key="pretrained_head")
    written = [f"{i}:{t}" for i, t in enumerate(result.decoder_tokens or [])]
    st.caption(tr("pretrained_cross_caption", m=len(written), n=len(result.tokens)))
    left, right = st.columns(2)
    with left:
        show_chart(
            plot_attention_matrix(
                result.decoder_attentions[layer, head],  # (m, m), causal
                written,
                written,
                title=tr("pretrained_decoder_self_title", layer=layer, head=head),
                colorbar_title=tr("compare_weight"),
            ),
            key="pretrained_decoder_chart",
        )
    with right:
        show_chart(
            plot_attention_matrix(
                result.cross_attentions[layer, head],  # (m, n): decoder → text
                written,
                pretrained_labels(result),
                title=tr("pretrained_cross_title", layer=layer, head=head),
                colorbar_title=tr("compare_weight"),
            ),
            key="pretrained_cross_chart",
        )

else:  # trained head vs the project's untrained module, same tokens
    focused = most_focused_head(all_layers(result, hide_special=hide))
    if "pretrained_head" not in state:  # start from the clearest learned pattern
        state["pretrained_layer"], state["pretrained_head"] = focused
    own_heads = settings.heads
    _keep_in_range("pretrained_own_head", own_heads)
    c1, c2, c3 = st.columns(3)
    layer = choose(c1.select_slider, tr("pretrained_layer_label"), range(L), key="pretrained_layer")
    head = choose(c2.selectbox, tr("pretrained_head_label"), range(H), key="pretrained_head")
    own = choose(
        c3.selectbox,
        tr("pretrained_own_head_label"),
        range(own_heads),
        key="pretrained_own_head",
        help=tr("pretrained_own_head_help"),
    )
    st.caption(tr("pretrained_focused_note", layer=focused[0], head=focused[1]))
    real = layer_view(result, layer, hide_special=hide)[head]  # (n, n)
    tokens = tuple(visible_tokens(result, hide_special=hide))
    mine = untrained_result(tokens, settings.model)[own]  # (n, n)
    left, right = st.columns(2)
    model_name = md_escape(model_label(name))
    real_title = tr("pretrained_real_title", model=model_name, layer=layer, head=head)
    _one_head(left, real_title, real, labels, key="pretrained_real_chart")
    own_title = tr("pretrained_own_title", head=own, seed=settings.seed)
    _one_head(right, own_title, mine, labels, key="pretrained_own_chart")
    st.info(tr("pretrained_contrast_caption"))
