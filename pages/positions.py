"""Positions and word order: shuffle the sentence, and attention without positions gives the
same matrix with rows and columns permuted; with sinusoidal positions it does not."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attention_core.figures.heads import head_grid, plot_heads, plot_matrix
from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.limits import EXACT
from attention_core.positions import (
    permutation,
    positional_table,
)
from ui.cache import permutation_result
from ui.charts import show_chart
from ui.common import analysis_or_stop, choose, colour_scale_choice, entry_guard, md_escape
from ui.language import tr
from ui.reader_switch import untrained_lesson
from ui.scale_notes import scale_caption

state = st.session_state
VIEWS = ("both", "plain", "positional")


def _chips(labels: list[str]) -> None:
    """`index:token` chips in the given order (token_chips would renumber them)."""
    st.markdown(" ".join(f":blue-background[{md_escape(label)}]" for label in labels))


def _shuffle() -> None:
    state["positions_seed"] = state.get("positions_seed", 0) + 1


entry_guard()
st.title(tr("positions_title"))
st.markdown(tr("positions_intro"))

settings = untrained_lesson("lesson_untrained_positions")
# the check is bidirectional and computes both embeddings, whatever the sidebar says
plain_settings = replace(settings, causal=False, positional=False)
analysis = analysis_or_stop(plain_settings)
n = len(analysis.tokens)
st.caption(tr("positions_sidebar_note"))
if n < 2:
    st.info(tr("positions_one_token"))
    st.stop()

# --- the shuffle: a seed that moves on with every click ----------------------------------
state.setdefault("positions_seed", 0)
left, right = st.columns([1, 3])
left.button(tr("positions_shuffle"), key="positions_shuffle", on_click=_shuffle, type="primary")
perm = permutation(n, state["positions_seed"])
right.caption(tr("positions_seed_caption", seed=state["positions_seed"]))
try:
    with st.spinner(tr("computing")):
        result = permutation_result(plain_settings.model, tuple(perm.tolist()))
except Exception as error:
    st.error(tr("error_generic", error=type(error).__name__))
    st.stop()

labels = analysis.labels
shuffled_labels = [labels[i] for i in result.perm]
st.markdown(tr("positions_original_order"))
_chips(labels)
st.markdown(tr("positions_shuffled_order"))
_chips(shuffled_labels)
st.caption(tr("positions_labels_note"))

heads = result.plain.original.shape[0]
c1, c2 = st.columns(2)
head = choose(
    c1.selectbox,
    tr("positions_head_label"),
    range(heads),
    key="positions_head",
    default=0,
    format_func=lambda h: tr("head_title", i=h),
)
view = choose(
    c2.segmented_control,
    tr("positions_view_label"),
    VIEWS,
    default="both",
    key="positions_view",
    format_func=lambda v: tr(f"positions_view_{v}"),
)

# --- original vs shuffled, without and with positions -------------------------------------
scale = colour_scale_choice()  # shared with the other pages' heads, and kept in the URL
st.caption(scale_caption(scale, n))
for mode in ("plain", "positional"):
    if view not in (None, "both", mode):
        continue
    run = result.plain if mode == "plain" else result.positional
    st.subheader(tr(f"positions_{mode}_header"))
    left, right = st.columns(2)
    for column, matrix, axis, title in (
        (left, run.original[head], labels, tr("positions_original_title")),
        (right, run.shuffled[head], shuffled_labels, tr("positions_shuffled_title")),
    ):
        column.markdown(f"**{title}**")
        show_chart(
            plot_heads(
                head_grid(matrix, axis, head_title=""),
                scale=scale,
                colorbar_title=tr(f"scale_bar_{scale}"),
                width_px=HALF_WIDTH_PX,
            ),
            key=f"positions_{mode}_{'original' if axis is labels else 'shuffled'}",
            where=column,
        )
    same = run.max_difference < EXACT
    verdict = f"positions_{mode}_{'same' if same else 'different'}"
    # the expected outcome is "same" without positions and "different" with them
    show = {
        ("plain", True): st.success,
        ("plain", False): st.error,
        ("positional", False): st.info,
        ("positional", True): st.warning,
    }[mode, same]
    show(tr(verdict, diff=run.max_difference))

# --- a repeated word --------------------------------------------------------------------------
st.subheader(tr("positions_repeat_header"))
if result.repeats:
    for group in result.repeats:
        line = tr(
            "positions_repeat_line",
            token=group.token,
            positions=", ".join(map(str, group.positions)),
            plain=group.row_difference_plain,
            positional=group.row_difference_positional,
        )
        st.markdown(md_escape(line))
else:
    st.caption(tr("positions_repeat_hint"))

# --- the encoding itself -----------------------------------------------------------------------
st.subheader(tr("positions_table_header"))
st.caption(tr("positions_table_caption", dim=settings.embed_dim))
st.markdown(f"**{tr('positions_table_title')}**")
table = positional_table(n, settings.embed_dim)  # (n, C)
show_chart(
    plot_matrix(
        table,
        labels,
        [str(j) for j in range(settings.embed_dim)],
        colorscale="RdBu",
        zmid=None,
        zmin=-1.0,
        zmax=1.0,
    ),
    key="positions_table",
)
