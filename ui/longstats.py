"""The long map's "What each head does": every head's statistics over all its weights,
streamed (attention_core.longstats), in the exact heatmaps' words (ui/head_summary.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attention_core.settings import ModelSettings
from ui.cache import long_stats
from ui.common import tr
from ui.head_summary import show_head_summary

if TYPE_CHECKING:
    from attention_core.longrun import LongAnalysis

__all__ = ["show_long_stats"]


def show_long_stats(analysis: LongAnalysis, model: ModelSettings) -> None:
    """Each head's pattern and statistics for `analysis` (`ui.cache.long_view(model)`):
    ~0.1 s a head at 4 096 tokens, once per text."""
    with st.spinner(tr("computing")):
        stats, patterns = long_stats(model)
    titles = [tr("head_title", i=h) for h in range(analysis.num_heads)]
    caption = tr("long_stats_caption", n=analysis.n)
    show_head_summary(stats, patterns, titles, analysis.labels, caption=caption)
