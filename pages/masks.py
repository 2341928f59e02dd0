"""Encoder vs decoder: the same sentence with a bidirectional (BERT) and a causal (GPT) mask,
then padding: two sentences batched with [PAD] and a key-padding mask."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attention_core.figures.heads import head_grid, plot_heads
from attention_core.figures.masks import figure_height, plot_bool_matrix, plot_padded_weights
from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.i18n import LANGS, t
from attention_core.limits import EXACT
from attention_core.masking import future_share
from ui.cache import cached_analysis, padded_batch
from ui.charts import show_chart
from ui.common import (
    analysis_or_stop,
    choose,
    colour_scale_choice,
    entry_guard,
    md_escape,
    token_chips,
)
from ui.language import tr
from ui.reader_switch import untrained_lesson

state = st.session_state
ALL_HEADS = -1


entry_guard()
st.title(tr("masks_title"))
st.markdown(tr("masks_intro"))

settings = untrained_lesson("lesson_untrained_masks")
encoder = analysis_or_stop(replace(settings, causal=False))
decoder = cached_analysis(replace(settings, causal=True))
labels = encoder.labels
heads = encoder.weights.shape[0]

# --- one head side by side, or every head one model after the other ----------------------
options = [0] if heads == 1 else [ALL_HEADS, *range(heads)]
head = choose(
    st.selectbox,
    tr("masks_head_label"),
    options,
    key="masks_head",
    default=0,
    format_func=lambda h: tr("masks_all_heads") if h == ALL_HEADS else tr("head_title", i=h),
)
st.caption(tr("masks_sidebar_note"))
scale = colour_scale_choice()  # shared with the other pages' heads, and kept in the URL
if scale == "relative":  # a causal row i spreads its weight over i + 1 keys, not n
    st.caption(tr("masks_relative_causal", n=len(labels)))
colours = {"scale": scale, "colorbar_title": tr(f"scale_bar_{scale}")}
chosen = None if head == ALL_HEADS else [head]
models = [(encoder, "masks_encoder"), (decoder, "masks_decoder")]
if chosen is None:
    for analysis, name in models:
        st.subheader(tr(f"{name}_header"))
        st.caption(tr(f"{name}_caption"))
        grid = head_grid(analysis.weights, labels, head_title=tr("head_title", i="{i}"))
        show_chart(plot_heads(grid, **colours), key=name)
else:
    for column, (analysis, name) in zip(st.columns(2), models, strict=True):
        column.subheader(tr(f"{name}_header"))
        column.caption(tr(f"{name}_caption"))
        grid = head_grid(
            analysis.weights, labels, head_title=tr("head_title", i="{i}"), heads=chosen
        )
        figure = plot_heads(grid, **colours, width_px=HALF_WIDTH_PX)
        show_chart(figure, key=name, where=column)
st.info(
    tr(
        "masks_future",
        encoder=future_share(encoder.weights),
        decoder=future_share(decoder.weights),
    )
)
st.markdown(tr("masks_families"))

# --- padding: a batch of two sentences of unequal length ---------------------------------
st.header(tr("masks_padding_header"))
st.markdown(tr("masks_padding_intro"))
# Streamlit forgets a widget's state while another page runs: keep a private copy
for key, default in (("masks_second", tr("masks_second_default")), ("masks_padding_causal", False)):
    if key not in state:
        state[key] = state.get(f"_{key}", default)
if state["masks_second"] in {t("masks_second_default", code) for code in LANGS}:
    state["masks_second"] = tr("masks_second_default")  # the untouched example follows the language
second = st.text_input(tr("masks_second_label"), key="masks_second", max_chars=500)
causal = st.toggle(tr("masks_padding_causal"), key="masks_padding_causal")
state["_masks_second"], state["_masks_padding_causal"] = second, causal
if not second.strip():
    st.info(tr("masks_second_empty"))
    st.stop()
try:
    with st.spinner(tr("computing")):
        batch = padded_batch((encoder.text, second), replace(settings.model, causal=causal))
except Exception as error:
    st.error(tr("error_generic", error=type(error).__name__))
    st.stop()
if batch.lengths[1] == 0:
    st.info(tr("masks_second_no_tokens"))
    st.stop()
if batch.lengths[0] == batch.lengths[1]:
    st.info(tr("masks_same_length", n=batch.n))

names = [tr("masks_sentence", i=b + 1) for b in range(2)]
for b, name in enumerate(names):
    st.markdown(
        md_escape(tr("masks_sentence_tokens", name=name, n=batch.lengths[b], total=batch.n))
    )
    token_chips(batch.tokens[b])

st.markdown(f"**{tr('masks_key_mask_title')}**")
show_chart(
    plot_bool_matrix(
        batch.key_mask,
        names,
        [str(i) for i in range(batch.n)],
        true_text=tr("masks_true"),
        false_text=tr("masks_false"),
    ),
    key="masks_key_mask",
)
st.caption(tr("masks_key_mask_caption"))

pick = choose(
    st.segmented_control,
    tr("masks_sentence_label"),
    [0, 1],
    default=0,
    key="masks_sentence_pick",
    format_func=lambda b: names[b],
)
b = 0 if pick is None else pick
height = figure_height(batch.n)
left, right = st.columns(2)
left.markdown(f"**{tr('masks_allowed_title', name=names[b])}**")
show_chart(
    plot_bool_matrix(
        batch.allowed[b],
        batch.labels(b),
        batch.labels(b),
        height=height,
        true_text=tr("masks_true"),
        false_text=tr("masks_false"),
        width_px=HALF_WIDTH_PX,
    ),
    key="masks_allowed",
    where=left,
)
head_name = tr("masks_mean_heads") if chosen is None else tr("head_title", i=head)
right.markdown(f"**{tr('masks_padded_title', name=names[b], head=head_name)}**")
show_chart(
    plot_padded_weights(
        batch.view(b, None if chosen is None else head),
        batch.labels(b),
        batch.key_mask[b],
        height=height,
        padded_text=tr("masks_padded_rows"),
        width_px=HALF_WIDTH_PX,
    ),
    key="masks_padded_weights",
    where=right,
)
if batch.pad_weight == 0.0:
    st.success(tr("masks_pad_weight", value=batch.pad_weight))
else:
    st.error(tr("masks_pad_weight_leak", value=batch.pad_weight))
if batch.max_difference < EXACT:
    st.success(tr("masks_alone", value=batch.max_difference))
else:
    st.error(tr("masks_alone_changed", value=batch.max_difference))
st.caption(tr("masks_query_rows"))
