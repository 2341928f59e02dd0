"""The landing page for a text longer than MAX_TOKENS: the long map, a find box, and attention
between sentences or paragraphs (issue 26).

Up to MAX_TOKENS the page draws every weight as today. Above it (the untrained module only:
the trained reader's context is its own bound), the page shows the text's first
MAX_LONG_TOKENS tokens as a long map (ui/longchart.py over ui/tiles.py), says which bound
cut the text (characters: MAX_TEXT_CHARS; tokens: MAX_LONG_TOKENS), and what the short
page's other parts would need. Whether a text is long is known from its token count alone
(`ui.cache.token_count`), before any attention is computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attention_core.limits import MAX_INPUT_CHARS, MAX_LONG_TOKENS, MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.settings import Settings
from ui.cache import long_blocks, long_overview, long_view, prepare_process, token_count
from ui.charts import show_chart
from ui.common import choose, colour_scale_choice, md_escape, tr
from ui.longchart import show_long_map
from ui.longstats import show_long_stats
from ui.scale_notes import long_scale_caption
from ui.tiles import publish, store

if TYPE_CHECKING:  # torch loads with the first long text, not with the page
    from attention_core.longrun import LongAnalysis

__all__ = ["is_long", "show_long"]

VIEWS = ("map", "sentence", "paragraph")  # the map, or longrun.BLOCKS aggregated
REDUCES = ("mass", "max", "mean")  # longmap.REDUCES, the share first: rows sum to 1
BLOCK_LABEL_CHARS = 24  # characters of a sentence shown as its label
SURELY_SHORT = MAX_TOKENS // 4  # characters: fewer tokens than MAX_TOKENS whatever the tokenizer


def is_long(settings: Settings) -> bool:
    """Whether the landing page shows this text as a long map: the untrained module and more
    than MAX_TOKENS tokens. A text of at most SURELY_SHORT characters is not tokenized for
    this (no tokenizer makes more than 4 tokens of a character, special tokens included);
    one over MAX_INPUT_CHARS is not either (`analysis_or_stop` refuses it)."""
    text = settings.text
    if settings.trained or len(text) <= SURELY_SHORT or len(text) > MAX_INPUT_CHARS:
        return False
    return token_count(text, settings.tokenizer) > MAX_TOKENS


def show_long(settings: Settings) -> None:
    """The long view of `settings`' text (its first MAX_LONG_TOKENS tokens)."""
    model = settings.model
    prepare_process()
    try:
        with st.spinner(tr("long_spinner")):
            analysis, map_id = long_view(model)
    except Exception as error:  # the page must show a message, never a traceback
        st.error(tr("error_generic", error=type(error).__name__))
        return
    if map_id not in store():  # evicted for other texts since: back under the same id
        publish(analysis.maps, map_id)
    if analysis.text_cut:
        st.warning(tr("text_cut", limit=MAX_TEXT_CHARS))
    if analysis.tokens_cut:
        st.warning(tr("long_tokens_cut", total=analysis.total_tokens, limit=MAX_LONG_TOKENS))
    n, heads = analysis.n, analysis.num_heads
    st.subheader(tr("tokens_header", n=n))
    st.caption(
        tr(
            "long_intro",
            n=n,
            heads=heads,
            full_mb=4 * heads * n * n / 1e6,
            kept_mb=analysis.nbytes / 1e6,
        )
    )
    view = choose(
        st.segmented_control,
        tr("long_view_label"),
        VIEWS,
        key="long_view",
        default="map",
        format_func=lambda v: tr(f"long_view_{v}"),
        required=True,
    )
    if view != "map":
        _blocks(settings, view)
    else:
        _map(settings, analysis, map_id)
    st.caption(tr("long_skipped", limit=MAX_TOKENS))


def _map(settings: Settings, analysis: LongAnalysis, map_id: str) -> None:
    from attention_core.longrun import find_rows

    reduce = choose(
        st.segmented_control,
        tr("long_reduce_label"),
        REDUCES,
        key="long_reduce",
        default="mass",
        format_func=lambda r: tr(f"long_reduce_{r}"),
        required=True,
    )
    st.caption(tr(f"long_reduce_caption_{reduce}"))
    scale = colour_scale_choice()  # the app's colour scale (`scale=` in the link)
    causal = analysis.maps[0].causal
    st.caption(long_scale_caption(scale, analysis.n, causal=causal))
    query = st.text_input(tr("long_find_label"), key="long_find", help=tr("long_find_help"))
    labels = [t.label for t in analysis.tokens]
    focus = None
    rows = find_rows(analysis.tokens, analysis.text, query) if query.strip() else []
    if query.strip() and not rows:
        st.info(tr("long_find_none", query=md_escape(query.strip())))
    elif rows:
        focus = choose(
            st.selectbox,
            tr("long_find_match", k=len(rows)),
            rows,
            key="long_find_row",
            default=rows[0],
            format_func=lambda r: tr("long_find_option", row=r, label=labels[r]),
        )
    with st.spinner(tr("computing")):
        overview = long_overview(settings.model, reduce, scale)
    show_long_map(
        map_id=map_id,
        overview_json=overview,
        labels=labels,
        reduce=reduce,
        scale=scale,
        causal=causal,
        focus=focus,
        focus_key=f"{query.strip()}\x00{focus}",
    )
    show_long_stats(analysis, settings.model)


def _blocks(settings: Settings, kind: str) -> None:
    from attention_core.figures.heads import head_grid, heads_spec

    with st.spinner(tr("computing")):
        weights, starts = long_blocks(settings.model, kind)  # (H, S, S)
    if len(starts) < 2:
        st.info(tr("long_blocks_one"))
        return
    if weights.shape[0] == 0:
        st.info(tr("long_blocks_many", s=len(starts), limit=MAX_TOKENS))
        return
    analysis = long_view(settings.model)[0]
    labels = [_block_label(analysis, a) for a in starts]
    st.caption(tr(f"long_blocks_{kind}", s=len(starts)))
    grid = head_grid(weights, labels, head_title=tr("head_title", i="{i}"))
    spec = heads_spec(grid, scale="absolute", colorbar_title=tr("scale_bar_absolute"))
    show_chart(spec, key=f"long_blocks_{kind}")


def _block_label(analysis: LongAnalysis, start: int) -> str:
    """A block's first characters, from its first token on (the text as typed)."""
    at = analysis.tokens[start].start
    words = " ".join(analysis.text[at : at + BLOCK_LABEL_CHARS * 2].split())
    return words[:BLOCK_LABEL_CHARS] + ("…" if len(words) > BLOCK_LABEL_CHARS else "")
