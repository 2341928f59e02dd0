"""The long map's "What each head does": every head's statistics over all its weights,
streamed (attention_core.long.stats), in the exact heatmaps' words (ui/head_summary.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attention_core.tokenize import token_labels
from ui.head_summary import show_head_summary
from ui.language import tr
from ui.long.cache import long_stats

if TYPE_CHECKING:
    from ui.long.cache import LongSubject

__all__ = ["show_long_stats"]


def show_long_stats(subject: LongSubject, source: tuple, layer: int) -> None:
    """Each head's pattern and statistics in layer `layer` of `subject`
    (`ui.long.cache.long_subject(source)`): ~0.1 s a head at 4 096 tokens, once per text."""
    with st.spinner(tr("computing")):
        stats, patterns = long_stats(source, layer)
    titles = [tr("head_title", i=h) for h in range(subject.num_heads)]
    labels = token_labels(subject.tokens)  # index:token, as the exact page's
    caption = tr("long_stats_caption", n=subject.n)
    show_head_summary(stats, patterns, titles, labels, caption=caption)
