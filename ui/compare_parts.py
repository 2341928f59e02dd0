"""The Compare page's statistics and similarity sections, shared by the exact heads (weights
in hand) and the long maps' (statistics streamed from the maps, ui/long/compare.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from attention_core.compare import sort_heads, stats_rows
from attention_core.figures.compare import plot_similarity, plot_stat_bars
from attention_core.stats import STAT_NAMES, similarity_order
from ui.charts import show_chart
from ui.common import choose, seeded
from ui.language import tr

if TYPE_CHECKING:
    import numpy as np

    from attention_core.stats import HeadStats

__all__ = ["similarity", "statistics"]

SORT_KEYS = ("head", *STAT_NAMES)


def statistics(groups: list[tuple[list[HeadStats], list[str], list[str]]]) -> None:
    """Head statistics of one or more stacks: a sortable table and one metric as bars.

    `groups`: (`stats.head_stats` of the stack's heads, head names, token labels) per stack.
    """
    st.subheader(tr("compare_stats_header"), help=tr("compare_stats_help"))
    stats, rows = [], []
    for group_stats, names, labels in groups:
        stats += group_stats
        rows += stats_rows(group_stats, names, labels)
    c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
    sort_key = choose(
        c1.selectbox,
        tr("compare_sort_label"),
        SORT_KEYS,
        key="compare_sort",
        default="entropy",
        format_func=lambda stat: tr(f"compare_stat_{stat}"),
    )
    metric = choose(
        c2.selectbox,
        tr("compare_metric_label"),
        STAT_NAMES,
        key="compare_metric",
        default="entropy",
        format_func=lambda stat: tr(f"compare_stat_{stat}"),
    )
    descending = c3.toggle(
        tr("compare_descending_label"),
        seeded("compare_descending", True),
        key="compare_descending",
    )
    order = sort_heads(stats, sort_key, descending=descending)
    table = pd.DataFrame([rows[i] for i in order])
    columns = {"head": st.column_config.TextColumn(tr("compare_stat_head"))}
    columns.update(
        {
            m: st.column_config.NumberColumn(tr(f"compare_stat_{m}"), format="%.3f")
            for m in STAT_NAMES
        }
    )
    columns["top_key"] = st.column_config.TextColumn(tr("compare_stat_top_key"))
    st.dataframe(
        table,
        column_config=columns,
        hide_index=True,
        key="compare_stats_table",
        height="content" if len(rows) <= 24 else "auto",  # every head visible, no scrolling
    )
    show_chart(
        plot_stat_bars(
            [row[metric] for row in rows],
            [str(row["head"]) for row in rows],
            order=order,
            axis_title=tr(f"compare_stat_{metric}"),
            y_range=None if metric == "distance" else (0.0, 1.0),  # shares and entropy: 0…1
        ),
        key="compare_stats_chart",
    )


def similarity(sim: np.ndarray | None, names: list[str]) -> None:
    """Jensen–Shannon similarity of every pair of heads (`stats.head_similarity`, (H, H); None
    for a single head), similar heads next to each other."""
    st.subheader(tr("compare_sim_header"), help=tr("compare_sim_help"))
    if sim is None:
        st.info(tr("compare_one_head"))
        return
    show_chart(
        plot_similarity(
            sim, names, order=similarity_order(sim), colorbar_title=tr("compare_sim_colorbar")
        ),
        key="compare_sim_chart",
    )
