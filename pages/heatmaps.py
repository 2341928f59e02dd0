"""The landing page: the sentence's tokens, every head's attention matrix in readable
colours, why untrained attention is flat (in this sentence's numbers), one click to
attention that means something, and what each head does."""

from __future__ import annotations

from functools import partial

import streamlit as st

from attention_core.export import download_name, matrices_csv, matrices_json
from attention_core.figures.heads import IMAGE_CELLS, RELATIVE_MAX, head_grid
from attention_core.figures.layout import panel_layout
from attention_core.figures.scales import causal_rows
from ui.cache import head_summary, heads_chart
from ui.charts import show_chart
from ui.common import (
    analysis_or_stop,
    choose,
    colour_scale_choice,
    current_settings,
    entry_guard,
    forget,
    highlighted_text,
    md_escape,
    preset,
    token_chips,
)
from ui.head_summary import show_head_summary
from ui.language import tr
from ui.long.view import is_long, show_long
from ui.presenter import in_presenter_mode
from ui.presenter_heads import projector_heads
from ui.reader_switch import learned_names, learned_section, trained_caption, weights_switch

CHIPS_OPEN_MAX = 64  # more tokens than this: their chips fold away
FLAT_SPREAD = 1.0  # scores spread less than this (e^1 ≈ 2.7 ×): the weights are "flat"

entry_guard()
st.title(tr("heatmaps_title"))

settings = current_settings()
if is_long(settings):  # above 512 tokens: a zoomable map instead of every weight
    show_long(settings)
    st.stop()
analysis = analysis_or_stop(settings)
# on a projector the heads come first, a screen of them (ui/presenter_heads.py)
heads_slot = st.container() if in_presenter_mode() else None
if settings.trained:
    trained_caption(settings, analysis.pooled)
else:
    st.caption(tr("row_explainer"))
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
if n <= CHIPS_OPEN_MAX:
    token_chips([t.label for t in analysis.tokens], highlight=pick)
else:  # hundreds of chips would push the heads a screen down
    with st.expander(tr("tokens_all", n=n)):
        token_chips([t.label for t in analysis.tokens], highlight=pick)
if pick is not None and not analysis.tokens[pick].special:
    token = analysis.tokens[pick]
    highlighted_text(analysis.text, token.start, token.end)

# --- heads -------------------------------------------------------------------------------
scale_col, mean_col = st.columns([3, 1], vertical_alignment="bottom")
with scale_col:
    scale = colour_scale_choice()
show_mean = mean_col.toggle(tr("show_mean_label"), key="show_mean", disabled=heads == 1)
titles = {
    "head_title": tr("head_title", i="{i}"),
    "mean_title": tr("mean_title") if show_mean and heads > 1 else None,
}
grid = head_grid(analysis.weights, labels, **titles)
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
elif not (plan := panel_layout(labels, len(grid.titles))).cell_numbers:
    # the caption says how the drawn chart names its tokens (figures.layout.labelled): all,
    # rows the even ones and columns the odd ones (step 2), or some of them
    note = {1: "large_view_note_named", 2: "large_view_note_alternate"}
    st.caption(tr(note.get(plan.ticks.step, "large_view_note"), n=n))
if scale == "relative" and causal_rows(analysis.weights):  # row i's even share: 1/(i+1)
    st.caption(tr("scale_caption_relative_causal", n=n, last=n - 1, uniform=1 / n))
else:
    st.caption(tr(f"scale_caption_{scale}", n=n, uniform=1 / n, top=RELATIVE_MAX / n))
if heads_slot is not None:
    with heads_slot:
        projector_heads(
            analysis.weights, labels, **titles, scale=scale,
            colorbar_title=tr(f"scale_bar_{scale}"), key="heads_chart",
        )  # fmt: skip
else:
    show_chart(
        heads_chart(
            settings.model,
            **titles,
            scale=scale,
            colorbar_title=tr(f"scale_bar_{scale}"),
            exact=exact,
        ),
        key="heads_chart",
        filename=download_name(settings.text, "png", prefix=tr("download_prefix")).removesuffix(
            ".png"
        ),
    )

# --- why flat (untrained) or what was learned (trained), and where meaning comes from ------
stats, patterns, flat = head_summary(settings.model)  # of analysis.weights, cached
if settings.trained:
    learned_section(settings, grid.titles)
    weights_switch(settings, key="to_untrained")
else:
    st.subheader(tr("flat_header"))
    numbers = {
        "spread": flat.score_spread,
        "factor": flat.factor,
        "low": flat.low,
        "high": flat.high,
        "n": n,
        "uniform": flat.uniform,
    }
    with st.container(border=True):  # not an alert box: nothing is wrong here
        st.markdown(
            md_escape(
                tr("flat_why" if flat.score_spread < FLAT_SPREAD else "spread_why", **numbers)
            )
        )

st.subheader(tr("meaning_header"))
st.caption(tr("meaning_intro"))
columns = st.columns(3 if settings.trained else 4)  # trained: its way back is above
if not settings.trained:
    with columns[0]:
        weights_switch(settings, key="to_trained", width="stretch")
to_pretrained, to_train, to_handmade = columns[-3:]
if to_pretrained.button(
    tr("meaning_pretrained"),
    key="to_pretrained",
    icon=":material/neurology:",
    help=tr("meaning_pretrained_help"),
    width="stretch",
):
    preset("pretrained_view", "contrast")  # its most focused head beside an untrained one
    forget("pretrained_layer", "pretrained_head")  # so that page starts from that head
    st.switch_page("pages/pretrained.py")
to_train.page_link("pages/train.py", label=tr("meaning_train"), icon=":material/model_training:")
to_handmade.page_link("pages/handmade.py", label=tr("meaning_handmade"), icon=":material/edit:")

# --- what each head does ------------------------------------------------------------------
named = learned_names(settings, grid.titles) if settings.trained else None  # one naming
show_head_summary(stats, patterns, grid.titles, labels, names=named)

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
