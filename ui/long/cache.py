"""The long maps' caches: a long text as maps, not weights, whichever model read it.

A long view has a source, a plain hashable key: `("module", ModelSettings)` for the landing
page's untrained module (`attention_core.long.run.analyze_long`), `("pretrained", name, text)`
for a real model (`attention_core.long.pretrained.run_model_long`). `long_subject(source)` runs it
once and publishes its maps for the tile route (ui/long/tiles.py), shared read-only by every
session showing that text: a class opening the teacher's link holds one copy, not one each
(a resource, not data: a data cache would unpickle the maps on every rerun). Overviews and
block aggregates are data, keyed on the source, the layer and the reduce.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from attention_core.limits import MAX_LONG_TOKENS, MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.long.text import MapsOfTokens
from ui.cache import loaded_model, on_worker

if TYPE_CHECKING:
    import numpy as np

    from attention_core.lens.minimal_pairs import RowChange
    from attention_core.long.map import AttentionMap
    from attention_core.stats import HeadStats
    from attention_core.tokenize import Token

__all__ = [
    "LongSubject",
    "long_blocks",
    "long_overview",
    "long_pair",
    "long_rollout",
    "long_similarity",
    "long_sinks",
    "long_stats",
    "long_subject",
    "pretrained_token_count",
    "token_count",
]


@dataclass(frozen=True, eq=False)
class LongSubject(MapsOfTokens):
    """A long text as the long view shows it, whichever model read it."""

    text: str  # the text read (cut at MAX_TEXT_CHARS); the tokens' spans index it
    tokens: list[Token]
    maps: tuple[AttentionMap, ...]  # one per layer
    map_id: str  # what tiles are asked for with (ui/long/tiles.py)
    total_tokens: int  # the tokens of the whole (character-cut) text
    cut_by: str | None  # None, "characters", "model" or "max_tokens" (the tokens' bound first)
    limit: int  # the token bound that applied
    text_cut: bool  # longer than MAX_TEXT_CHARS characters (cut there before tokenizing)

    @property
    def labels(self) -> list[str]:
        return [t.label for t in self.tokens]


@st.cache_data(max_entries=64, show_spinner=False)
def token_count(text: str, tokenizer: str) -> int:
    """Tokens of `text` (cut at MAX_TEXT_CHARS) under `tokenizer`: whether the landing page
    draws it as exact heatmaps or as a long map, known before any attention is computed."""
    from attention_core.tokenize import tokenize

    return len(tokenize(text[:MAX_TEXT_CHARS], tokenizer))


@st.cache_data(max_entries=64, show_spinner=False)
def pretrained_token_count(name: str, text: str) -> int:
    """Tokens (special ones included) the model `name` makes of `text` cut at MAX_TEXT_CHARS."""
    from attention_core.pretrained.forward import count_tokens

    return count_tokens(loaded_model(name).tokenizer, text[:MAX_TEXT_CHARS])


@st.cache_resource(max_entries=4, show_spinner=False)  # 2-36 MB each at 4 096 tokens
def long_subject(source: tuple) -> LongSubject:
    """The long view of `source` (see the module docstring), its maps published."""
    from ui.long.tiles import publish

    if source[0] == "module":
        from attention_core.long.run import analyze_long

        analysis = on_worker(analyze_long, source[1])
        cut = "max_tokens" if analysis.tokens_cut else "characters" if analysis.text_cut else None
        return LongSubject(
            text=analysis.text,
            tokens=analysis.tokens,
            maps=analysis.maps,
            map_id=publish(analysis.maps),
            total_tokens=analysis.total_tokens,
            cut_by=cut,
            limit=MAX_LONG_TOKENS,
            text_cut=analysis.text_cut,
        )
    from attention_core.long.pretrained import run_model_long

    _, name, text = source
    run = on_worker(run_model_long, loaded_model(name), text)
    return LongSubject(
        text=run.text,
        tokens=run.spans,
        maps=run.maps,
        map_id=publish(run.maps),
        total_tokens=run.total_tokens,
        cut_by=run.cut_by,
        limit=run.limit,
        text_cut=run.text_cut,
    )


def _overview(subject: LongSubject, layer: int, reduce: str, relative: bool) -> str:
    from attention_core.long.run import overview_size
    from attention_core.long.scale import relative_values
    from ui.long.chart import overview_json
    from ui.long.tiles import tile_payload

    # relative causal "max" cells travel beside the values: half the cells, the same bytes
    size = overview_size(subject.num_heads * (2 if relative else 1))
    amap = subject.maps[layer]
    tiles = [amap.overview(h, size=size, reduce=reduce) for h in range(subject.num_heads)]
    return overview_json(
        [tile_payload(t, relative_values(amap, t) if relative else None) for t in tiles if t]
    )


def long_overview(source: tuple, layer: int, reduce: str, scale: str = "absolute") -> str:
    """Every head's pooled overview of one layer of `long_subject(source)`, as the long map's
    JSON: ~50-100 ms a head at 4 096 tokens, so once per text, layer and reduce. Under the
    relative `scale`, a causal map's "max" cells carry their relative values
    (long.scale.sends_relative)."""
    from attention_core.long.scale import sends_relative

    causal = long_subject(source).maps[layer].causal
    return _long_overview(source, layer, reduce, sends_relative(reduce, scale, causal=causal))


@st.cache_data(max_entries=16, show_spinner=False)  # ≤ 5.6 MB of JSON (LONG_OVERVIEW_CELLS)
def _long_overview(source: tuple, layer: int, reduce: str, relative: bool) -> str:
    return on_worker(_overview, long_subject(source), layer, reduce, relative)


@st.cache_data(max_entries=16, show_spinner=False)
def long_stats(source: tuple, layer: int) -> tuple[list[HeadStats], list[tuple[str, float] | None]]:
    """`attention_core.long.stats.long_head_summary` of one layer of `long_subject(source)`:
    every head's statistics and pattern over all its weights, streamed (0.4-1.3 s at 4 096
    tokens × 8 heads on the shared 2-core machine)."""
    from attention_core.long.stats import long_head_summary

    return on_worker(long_head_summary, long_subject(source).maps[layer])


@st.cache_data(max_entries=16, show_spinner=False)
def long_blocks(source: tuple, layer: int, kind: str) -> tuple[np.ndarray, list[int]]:
    """Attention between the sentences (or paragraphs) of one layer of `long_subject(source)`,
    every head: (H, S, S) float32, rows summing to 1 (`long.map.block_aggregate`), and where
    each starts; (0, S, S) when there are more than MAX_TOKENS blocks."""
    import numpy as np

    from attention_core.long.map import block_aggregate
    from attention_core.long.run import block_starts

    subject = long_subject(source)
    starts = block_starts(subject.tokens, subject.text, kind)
    if len(starts) < 2 or len(starts) > MAX_TOKENS:
        return np.zeros((0, len(starts), len(starts)), np.float32), starts
    amap = subject.maps[layer]
    heads = [block_aggregate(amap, h, starts) for h in range(subject.num_heads)]
    return np.stack(heads), starts  # (H, S, S)


@st.cache_data(max_entries=8, show_spinner=False)  # (L, H, n) float64: 0.3 MB at 4 096 × 8
def long_sinks(source: tuple) -> tuple[dict[str, np.ndarray], dict[str, bool], np.ndarray]:
    """`long.lens.sink_mass` of `long_subject(source)`: mass per sink kind (L, H), which kinds
    the text has, and every head's received attention (L, H, n)."""
    from attention_core.long.lens import sink_mass

    subject = long_subject(source)
    labels = [t.label for t in subject.tokens]
    special = [t.special for t in subject.tokens]
    return on_worker(sink_mass, subject.maps, labels, special)


@st.cache_data(max_entries=32, show_spinner=False)
def long_rollout(source: tuple, row: int) -> tuple[np.ndarray, np.ndarray]:
    """Query `row`'s rollout through every layer of `long_subject(source)` (n,), and its row in
    the last layer, the heads' mean (n,)."""
    from attention_core.long.lens import rollout_row

    subject = long_subject(source)
    last = subject.maps[-1]
    raw = sum(
        last.exact(h, slice(row, row + 1), slice(0, subject.n))[0] for h in range(last.num_heads)
    )
    return on_worker(rollout_row, subject.maps, row), raw / last.num_heads


@st.cache_data(max_entries=16, show_spinner=False)  # (H, H) float64
def long_similarity(source: tuple, layer: int) -> np.ndarray:
    """`attention_core.long.stats.long_head_similarity` of one layer of `long_subject(source)`
    (~2 s at 4 096 tokens × 8 heads; ValueError past its work bound)."""
    from attention_core.long.stats import long_head_similarity

    return on_worker(long_head_similarity, long_subject(source).maps[layer])


@st.cache_data(max_entries=16, show_spinner=False)  # (L, H, s) twice: 1.6 MB at 4 096 × 48 heads
def long_pair(name: str, text_a: str, text_b: str, query: int) -> RowChange | None:
    """`long.lens.long_row_change` of token `query` between the long subjects of `text_a` and
    `text_b` through the model `name`."""
    from attention_core.long.lens import long_row_change

    a = long_subject(("pretrained", name, text_a))
    b = long_subject(("pretrained", name, text_b))
    labels_a, labels_b = [t.label for t in a.tokens], [t.label for t in b.tokens]
    return on_worker(long_row_change, a.maps, labels_a, b.maps, labels_b, query)
