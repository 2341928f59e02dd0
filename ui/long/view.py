"""A text longer than MAX_TOKENS as a long map, a find box, and attention between sentences or
paragraphs: on the landing page (the untrained module) and on the pretrained page
(a real model whose context is longer than MAX_TOKENS).

Up to MAX_TOKENS the pages draw every weight as before. Above it, the text's first tokens (up
to MAX_LONG_TOKENS, or the model's context) are a long map (ui/long/chart.py over
ui/long/tiles.py, fed by ui/long/cache.py), and the page says which bound cut the text
(characters: MAX_TEXT_CHARS; tokens: MAX_LONG_TOKENS; the model's own context). Whether a
text is long is known from its token count alone, before any attention is computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attention_core.limits import MAX_INPUT_CHARS, MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.settings import Settings
from ui.cache import prepare_process
from ui.charts import show_chart
from ui.common import choose, colour_scale_choice, md_escape, seeded
from ui.language import tr
from ui.long.cache import (
    LongSubject,
    long_blocks,
    long_overview,
    long_subject,
    pretrained_token_count,
    token_count,
)
from ui.long.chart import show_long_map
from ui.long.stats import show_long_stats
from ui.long.tiles import publish, store
from ui.scale_notes import long_scale_caption

if TYPE_CHECKING:  # transformers loads with the model, not with the page
    from attention_core.pretrained import LoadedModel

__all__ = [
    "is_long",
    "is_long_pretrained",
    "long_cut_warning",
    "row_input",
    "show_long",
    "show_long_pretrained",
    "subject_or_message",
]

VIEWS = ("map", "sentence", "paragraph")  # the map, or long.run.BLOCKS aggregated
REDUCES = ("mass", "max", "mean")  # long.map.REDUCES, the share first: rows sum to 1
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


def is_long_pretrained(name: str, model: LoadedModel, text: str) -> bool:
    """Whether the pretrained page shows `text` as a long map: more than MAX_TOKENS tokens
    for a model whose context is longer than that (an encoder's or a decoder's: an
    encoder-decoder's views are its own). A model with a shorter context cuts the text at it
    and draws every weight (the page says so)."""
    if model.family == "encoder-decoder" or model.max_length <= MAX_TOKENS:
        return False
    if len(text) <= SURELY_SHORT or len(text) > MAX_INPUT_CHARS:
        return False
    return pretrained_token_count(name, text) > MAX_TOKENS


def show_long(settings: Settings) -> None:
    """The landing page's long view of `settings`' text (its first MAX_LONG_TOKENS tokens)."""
    subject = subject_or_message(("module", settings.model))
    if subject is not None:
        _show(subject, ("module", settings.model), prefix="long", model=None)


def show_long_pretrained(name: str, label: str, text: str) -> None:
    """The pretrained page's long view of `text` through the model `name` (shown as
    `label`): its first tokens up to the model's context, every layer."""
    subject = subject_or_message(("pretrained", name, text))
    if subject is not None:
        _show(subject, ("pretrained", name, text), prefix="pretrained_long", model=label)


def subject_or_message(source: tuple) -> LongSubject | None:
    """The long subject of `source`, or None after a message (a refusal says why)."""
    from attention_core.long.pretrained import LongRefused

    prepare_process()
    try:
        with st.spinner(tr("long_spinner")):
            subject = long_subject(source)
    except LongRefused as refused:  # the maps could not be the model's own numbers
        st.error(tr("long_refused", why=md_escape(str(refused))))
        return None
    except Exception as error:  # the page must show a message, never a traceback
        st.error(tr("error_generic", error=type(error).__name__))
        return None
    if subject.map_id not in store():  # evicted for other texts since: back under the same id
        publish(subject.maps, subject.map_id)
    return subject


def row_input(key: str, n: int, *, label: str, help: str) -> int:
    """A token row 0..n − 1 typed as a number, the last by default (what a decoder writes its
    next token from); a row kept from a longer text starts again at the last."""
    if not 0 <= st.session_state.get(key, n - 1) < n:
        st.session_state[key] = n - 1
    return int(st.number_input(label, 0, n - 1, seeded(key, n - 1), key=key, help=help))


def long_cut_warning(subject: LongSubject, model: str | None) -> None:
    """Which bounds cut the text, in words: its characters, then its tokens (one sentence
    when both did: the tokens counted are those of the characters read)."""
    if subject.cut_by == "characters":
        st.warning(tr("text_cut", limit=MAX_TEXT_CHARS))
    if subject.text_cut:
        count = tr("long_count_chars", chars=MAX_TEXT_CHARS, total=subject.total_tokens)
    else:
        count = tr("long_count", total=subject.total_tokens)
    if subject.cut_by == "max_tokens":
        st.warning(tr("long_tokens_cut", count=count, limit=subject.limit))
    elif subject.cut_by in ("model", "tokenizer"):
        st.warning(
            tr(
                f"long_{subject.cut_by}_cut",
                model=md_escape(model or ""),
                count=count,
                limit=subject.limit,
            )
        )


def _show(subject: LongSubject, source: tuple, *, prefix: str, model: str | None) -> None:
    """The long view: which bound cut the text, the map or the blocks, for one layer."""
    long_cut_warning(subject, model)
    n, heads, layers = subject.n, subject.num_heads, len(subject.maps)
    st.subheader(tr("tokens_header", n=n))
    st.caption(
        tr(
            "long_intro",
            n=n,
            heads=heads * layers,
            full_mb=4 * heads * layers * n * n / 1e6,
            kept_mb=subject.nbytes / 1e6,
        )
    )
    layer = 0
    if layers > 1:
        layer = choose(
            st.selectbox,
            tr("compare_layer_label"),
            range(layers),
            key=f"{prefix}_layer",
            default=0,
            format_func=lambda i: tr("compare_layer_name", l=i),
        )
    view = choose(
        st.segmented_control,
        tr("long_view_label"),
        VIEWS,
        key=f"{prefix}_view",
        default="map",
        format_func=lambda v: tr(f"long_view_{v}"),
        required=True,
    )
    if view != "map":
        _blocks(subject, source, layer, view, prefix=prefix)
    else:
        _map(subject, source, layer, prefix=prefix)
    st.caption(tr("long_skipped", limit=MAX_TOKENS))


def _map(subject: LongSubject, source: tuple, layer: int, *, prefix: str) -> None:
    from attention_core.long.run import find_rows

    reduce = choose(
        st.segmented_control,
        tr("long_reduce_label"),
        REDUCES,
        key=f"{prefix}_reduce",
        default="mass",
        format_func=lambda r: tr(f"long_reduce_{r}"),
        required=True,
    )
    st.caption(tr(f"long_reduce_caption_{reduce}"))
    scale = colour_scale_choice()  # the app's colour scale (`scale=` in the link)
    causal = subject.maps[layer].causal
    st.caption(long_scale_caption(scale, subject.n, causal=causal))
    query = st.text_input(tr("long_find_label"), key=f"{prefix}_find", help=tr("long_find_help"))
    labels = subject.labels
    focus = None
    rows = find_rows(subject.tokens, subject.text, query) if query.strip() else []
    if query.strip() and not rows:
        st.info(tr("long_find_none", query=md_escape(query.strip())))
    elif rows:
        focus = choose(
            st.selectbox,
            tr("long_find_match", k=len(rows)),
            rows,
            key=f"{prefix}_find_row",
            default=rows[0],
            format_func=lambda r: tr("long_find_option", row=r, label=labels[r]),
        )
    with st.spinner(tr("computing")):
        overview = long_overview(source, layer, reduce, scale)
    show_long_map(
        map_id=subject.map_id,
        layer=layer,
        overview_json=overview,
        labels=labels,
        reduce=reduce,
        scale=scale,
        causal=causal,
        focus=focus,
        focus_key=f"{query.strip()}\x00{focus}",
        key=f"{prefix}_map",
    )
    show_long_stats(subject, source, layer)


def _blocks(subject: LongSubject, source: tuple, layer: int, kind: str, *, prefix: str) -> None:
    from attention_core.figures.heads import head_grid, heads_spec

    with st.spinner(tr("computing")):
        weights, starts = long_blocks(source, layer, kind)  # (H, S, S)
    if len(starts) < 2:
        st.info(tr("long_blocks_one"))
        return
    if weights.shape[0] == 0:
        st.info(tr("long_blocks_many", s=len(starts), limit=MAX_TOKENS))
        return
    labels = [_block_label(subject, a) for a in starts]
    st.caption(tr(f"long_blocks_{kind}", s=len(starts)))
    grid = head_grid(weights, labels, head_title=tr("head_title", i="{i}"))
    spec = heads_spec(grid, scale="absolute", colorbar_title=tr("scale_bar_absolute"))
    show_chart(spec, key=f"{prefix}_blocks_{kind}")


def _block_label(subject: LongSubject, start: int) -> str:
    """A block's first characters, from its first token on (the text as typed)."""
    at = subject.tokens[start].start
    words = " ".join(subject.text[at : at + BLOCK_LABEL_CHARS * 2].split())
    return words[:BLOCK_LABEL_CHARS] + ("…" if len(words) > BLOCK_LABEL_CHARS else "")
