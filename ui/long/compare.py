"""The Compare page on a text longer than MAX_TOKENS tokens: the heads of the
untrained module, or of one layer of a pretrained model whose context is longer, compared over
every weight of the long text — their statistics (a sortable table and bars) and their
Jensen–Shannon similarity, both streamed from the maps (attention_core.long.stats), equal to
the exact page's numbers. Heads side by side are the long map itself (the landing and
Pretrained pages); an A − B difference map is drawn for texts up to MAX_TOKENS, and the page
says so.
"""

from __future__ import annotations

import streamlit as st

from attention_core.limits import MAX_TOKENS
from attention_core.tokenize import token_labels
from ui.common import choose
from ui.compare_parts import similarity, statistics
from ui.language import tr
from ui.long.cache import long_similarity, long_stats
from ui.long.view import long_cut_warning, subject_or_message

__all__ = ["show_long_compare"]


def show_long_compare(source: tuple, label: str | None) -> None:
    """Statistics and similarity of one layer's heads of `long_subject(source)`; `label`
    names a pretrained model (None: the project's module)."""
    subject = subject_or_message(source)
    if subject is None:
        return
    long_cut_warning(subject, label)
    layers, heads = len(subject.maps), subject.num_heads
    st.info(tr("compare_long_intro", n=subject.n, limit=MAX_TOKENS))
    layer = 0
    if layers > 1:
        layer = choose(
            st.select_slider,
            tr("compare_layer_label"),
            range(layers),
            key="compare_long_layer",
        )
    names = [tr("compare_head_name", i=h) for h in range(heads)]
    with st.spinner(tr("computing")):
        stats, _ = long_stats(source, layer)
    statistics([(stats, names, token_labels(subject.tokens))])
    if heads < 2:
        similarity(None, names)
        return
    try:
        with st.spinner(tr("computing")):
            sim = long_similarity(source, layer)
    except ValueError:  # past its work bound: say which, draw nothing
        from attention_core.long.stats import SIMILARITY_WORK

        st.subheader(tr("compare_sim_header"), help=tr("compare_sim_help"))
        st.info(tr("compare_long_sim_bound", heads=heads, n=subject.n, work=SIMILARITY_WORK))
        return
    similarity(sim, names)
