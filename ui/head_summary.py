""" "What each head does": each head's plain-language pattern and its statistics, the same
words for the exact heatmaps (pages/heatmaps.py) and the long map (ui/long/view.py)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from attention_core.stats import BROAD_ENTROPY, PATTERN_MASS, HeadStats
from ui.common import md_escape
from ui.language import tr

__all__ = ["SUMMARY_OPEN", "show_head_summary"]

SUMMARY_OPEN = 4  # up to this many heads, their sentences are shown unfolded


def show_head_summary(
    stats: Sequence[HeadStats],
    patterns: Sequence[tuple[str, float] | None],
    titles: Sequence[str],
    labels: Sequence[str],
    *,
    caption: str | None = None,
    names: Sequence[str] | None = None,
) -> None:
    """The section: its header (with what the numbers mean), `caption` when given, then per
    head its plain sentence in bold and its statistics on the next line. `titles`: the
    heads' names; `labels`: the tokens' (for the key with the most weight); `names`: each
    head's plain sentence when the page names its heads elsewhere (the trained reader's
    learned patterns), instead of this sentence's pattern."""
    st.subheader(
        tr("summary_header"), help=tr("summary_help", mass=PATTERN_MASS, broad=BROAD_ENTROPY)
    )
    if caption:
        st.caption(caption)
    paragraphs = []
    for s, pattern in zip(stats, patterns, strict=True):
        name = titles[s.head]
        line = tr(
            "summary_line",
            head=name,
            entropy=s.entropy,
            max_weight=s.max_weight,
            peak=s.peak,
            diagonal=s.diagonal,
            previous=s.previous,
            top=labels[s.top_key],
        )
        plain = tr(f"pattern_{pattern[0]}", head=name, value=pattern[1]) if pattern else ""
        plain = plain or tr("pattern_none", head=name)
        if names is not None and s.head < len(names):
            plain = names[s.head]
        paragraphs.append("**" + md_escape(plain) + "**  \n" + md_escape(line))
    # One element, folded away beyond a few heads: drawn on every typed sentence, these lines
    # cost the browser more than the heatmaps' own update (~25 ms of 0.3 s at 8 heads,
    # Chromium A/B); a folded expander's text is drawn only when opened.
    with st.expander(
        tr("summary_expander", heads=len(paragraphs)), expanded=len(paragraphs) <= SUMMARY_OPEN
    ):
        st.markdown("\n\n".join(paragraphs))
