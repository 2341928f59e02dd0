"""The landing page: the sentence's tokens, then every head's attention matrix."""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention_core.export import download_name, matrices_csv, matrices_json
from attention_core.figures.heads import CELL_TEXT_MAX, IMAGE_CELLS, head_grid, plot_heads
from attention_core.stats import head_stats
from ui.charts import show_chart
from ui.common import (
    analysis_or_stop,
    choose,
    current_settings,
    entry_guard,
    highlighted_text,
    md_escape,
    token_chips,
    tr,
)

entry_guard()
st.title(tr("heatmaps_title"))
st.caption(tr("row_explainer"))

settings = current_settings()
analysis = analysis_or_stop(settings)
labels = analysis.labels
n, heads = len(labels), analysis.weights.shape[0]

# --- tokens ------------------------------------------------------------------------------
st.subheader(tr("tokens_header", n=n))
pick = choose(
    st.selectbox,
    tr("highlight_label"),
    range(n),
    key="highlight_token",
    default=None,
    placeholder=tr("highlight_none"),
    format_func=lambda i: labels[i],
)
token_chips([t.label for t in analysis.tokens], highlight=pick)
if pick is not None and not analysis.tokens[pick].special:
    token = analysis.tokens[pick]
    highlighted_text(analysis.text, token.start, token.end)

# --- heads -------------------------------------------------------------------------------
show_mean = st.toggle(tr("show_mean_label"), key="show_mean", disabled=heads == 1)
grid = head_grid(
    analysis.weights,
    labels,
    head_title=tr("head_title", i="{i}"),
    mean_title=tr("mean_title") if show_mean and heads > 1 else None,
)
head_dim = settings.embed_dim // settings.heads
st.caption(
    tr(
        "shape_caption",
        heads=heads,
        n=n,
        embed_dim=settings.embed_dim,
        head_dim=head_dim,
        scale=head_dim**0.5,
    )
)
exact = 0
if grid.matrices.size > IMAGE_CELLS:  # heads beyond one are sent as colour-mapped pictures
    st.caption(tr("image_view_note", n=n))
    exact = choose(
        st.selectbox,
        tr("exact_head_label"),
        range(len(grid.titles)),
        format_func=grid.titles.__getitem__,
        key="exact_head",
        default=0,
    )
elif n > CELL_TEXT_MAX * 4:
    st.caption(tr("large_view_note", n=n))
show_chart(
    plot_heads(grid, colorbar_title=tr("weight_label"), exact=(exact,)),
    key="heads_chart",
    filename=download_name(settings.text, "png", prefix=tr("download_prefix")).removesuffix(".png"),
)

# --- what each head does ------------------------------------------------------------------
st.subheader(tr("summary_header"), help=tr("summary_help"))
for s in head_stats(analysis.weights):
    line = tr(
        "summary_line",
        head=grid.titles[s.head],
        entropy=s.entropy,
        max_weight=s.max_weight,
        diagonal=s.diagonal,
        previous=s.previous,
        top=labels[s.top_key],
    )
    st.markdown(md_escape(line))

# --- downloads: exactly what is shown (built only when clicked) ----------------------------
token_texts = [t.label for t in analysis.tokens]
config = {**settings.to_query_params(), "text": analysis.text, "n_tokens": n}
left, right, _ = st.columns([1, 1, 4])
left.download_button(
    tr("download_csv"),
    partial(matrices_csv, grid.matrices, token_texts, head_names=grid.titles),
    file_name=download_name(settings.text, "csv", prefix=tr("download_prefix")),
    mime="text/csv",
    key="download_csv",
    help=tr("download_help"),
    on_click="ignore",
)
right.download_button(
    tr("download_json"),
    partial(matrices_json, grid.matrices, token_texts, head_names=grid.titles, config=config),
    file_name=download_name(settings.text, "json", prefix=tr("download_prefix")),
    mime="application/json",
    key="download_json",
    help=tr("download_help"),
    on_click="ignore",
)
