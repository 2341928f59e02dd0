"""Minimal pairs of long texts: two prompts longer than MAX_TOKENS tokens that differ
in a few places, through a model whose context is longer — which heads change where one
token looks (every layer × head ranked, as for short sentences), and that head's two rows
over the whole text (lines over the shared tokens' positions, log scale).

Each text is a long subject of its own (ui/long/cache.py: one map per layer); the rows are
read exactly from the maps (attention_core.long.lens.long_row_change).
"""

from __future__ import annotations

import streamlit as st

from attention_core.limits import MAX_TOKENS
from ui.charts import show_chart
from ui.common import choose, md_escape
from ui.language import tr
from ui.long.cache import LongSubject, long_pair
from ui.long.view import long_cut_warning, row_input, subject_or_message

__all__ = ["show_long_pairs"]


def show_long_pairs(name: str, label: str, text_a: str, text_b: str) -> None:
    """The long minimal pair `text_a` / `text_b` through the model `name` (named `label`)."""
    from attention_core.figures.lens import plot_effect_grid
    from attention_core.figures.long_lens import plot_positions

    a = subject_or_message(("pretrained", name, text_a))
    b = subject_or_message(("pretrained", name, text_b))
    if a is None or b is None:
        return
    long_cut_warning(a, label)
    if (b.cut_by, b.total_tokens, b.text_cut) != (a.cut_by, a.total_tokens, a.text_cut):
        long_cut_warning(b, label)  # the same cut said once, not twice
    st.info(tr("pairs_long_intro", a=a.n, b=b.n, limit=MAX_TOKENS))
    label_a, help_a = tr("pairs_long_query_label"), tr("pairs_long_query_help")
    query = row_input("pairs_long_query", a.n, label=label_a, help=help_a)
    token = a.labels[query]
    with st.spinner(tr("computing")):
        change = long_pair(name, text_a, text_b, query)
    if change is None:
        st.info(tr("pairs_no_shared"))
        return
    ranking = change.ranking()
    top = tr("lens_list_sep").join(tr("lens_head_name", layer=la, head=h) for la, h in ranking[:3])
    st.caption(tr("pairs_ranking_caption", token=md_escape(token), heads=top))
    show_chart(
        plot_effect_grid(
            change.change,
            [ranking[0]],
            layer_title=tr("compare_layer_name", l="{l}"),
            head_title=tr("compare_head_name", i="{i}"),
            colorbar_title=tr("pairs_change"),
        ),
        key="pairs_long_ranking",
        filename="minimal-pairs-long-ranking",
    )
    layer, head = _chosen_head(a, ranking[0])
    shared = [f"{i}:{a.labels[i]}" for i, _ in change.pairs]
    st.caption(tr("pairs_long_rows_caption", layer=layer, head=head, token=md_escape(token)))
    rows = {
        tr("pairs_row_a"): change.rows_a[layer, head],
        tr("pairs_row_b"): change.rows_b[layer, head],
    }
    causal_end = sum(1 for i, _ in change.pairs if i <= query) if a.maps[0].causal else None
    figure = plot_positions(rows, shared, y_title=tr("lens_weight"), log=True, last=causal_end)
    show_chart(figure, key="pairs_long_rows", filename=f"minimal-pairs-long-l{layer}-h{head}")


def _chosen_head(a: LongSubject, first: tuple[int, int]) -> tuple[int, int]:
    """The layer and head whose rows are drawn (the largest change's, until one is picked)."""
    if "pairs_long_layer" not in st.session_state:
        st.session_state["pairs_long_layer"], st.session_state["pairs_long_head"] = first
    c1, c2 = st.columns(2)
    layer = choose(c1.selectbox, tr("lens_layer_label"), range(len(a.maps)), key="pairs_long_layer")
    head = choose(c2.selectbox, tr("lens_head_label"), range(a.num_heads), key="pairs_long_head")
    return int(layer), int(head)
