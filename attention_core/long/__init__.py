"""Long prompts (up to MAX_LONG_TOKENS = 4 096 tokens): attention kept as maps computed on
demand, never as (L, H, n, n) weights.

One job per module:

    map         AttentionMap: each head's q̂ = [q·scale, −lse] and k̂ = [k, 1], exact weights of
                any rectangle, pooled tiles and pyramids, `block_aggregate` (sentences,
                paragraphs), `row_blocks` (a head's exact weights a block of rows at a time)
    scores      how a map makes a block of its scores (plain, or soft-capped as Gemma 2's)
                and each row's log-sum-exp
    rollout     attention rollout of a few rows carried back through the maps
    run         a text through the project's own (untrained) module as maps (`analyze_long`),
                its sentence starts, a phrase's rows, the length check
    text        MapsOfTokens: what a long text held as maps is, whoever read it (no torch)
    scale       a map's exact and pooled cells relative to an even share (the colours)
    stats       head_stats / head_patterns / head similarity streamed over row blocks
    store       MapStore: maps kept for a server's sessions within LONG_STORE_BYTES
    lens        the lens from maps: received attention, sinks, one row's rollout, a long
                minimal pair's row change
    pretrained  a real model's long text as maps (`run_model_long`), rebuilt from each
                layer's q and k and checked against the model's own weights; refused
                (`LongRefused`) where the maps could not be the model's numbers

Names are imported on first use (`attention_core.lazy`): `text` loads no torch, and the
app names it before any long text arrives.

Shape legend: L layers, H heads, n tokens, D head size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

__all__ = [
    "BLOCKS",
    "CHECK_TOKENS",
    "REDUCES",
    "SIMILARITY_WORK",
    "AttentionMap",
    "LongAnalysis",
    "LongRefused",
    "MapStore",
    "MapsOfTokens",
    "PretrainedLong",
    "TextTooLong",
    "Tile",
    "analyze_long",
    "as_map",
    "block_aggregate",
    "block_starts",
    "check_length",
    "colour_key",
    "even_mass",
    "find_rows",
    "long_head_similarity",
    "long_head_stats",
    "long_head_summary",
    "long_row_change",
    "overview_size",
    "received",
    "relative_cells",
    "relative_values",
    "rollout_full",
    "rollout_row",
    "rollout_rows",
    "row_blocks",
    "row_keys",
    "run_model_long",
    "sends_relative",
    "sink_mass",
    "top_keys",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "REDUCES": "map",
        "AttentionMap": "map",
        "Tile": "map",
        "as_map": "map",
        "block_aggregate": "map",
        "row_blocks": "map",
        "rollout_full": "rollout",
        "rollout_rows": "rollout",
        "BLOCKS": "run",
        "LongAnalysis": "run",
        "TextTooLong": "run",
        "analyze_long": "run",
        "block_starts": "run",
        "check_length": "run",
        "find_rows": "run",
        "overview_size": "run",
        "colour_key": "scale",
        "even_mass": "scale",
        "relative_cells": "scale",
        "relative_values": "scale",
        "row_keys": "scale",
        "sends_relative": "scale",
        "SIMILARITY_WORK": "stats",
        "long_head_similarity": "stats",
        "long_head_stats": "stats",
        "long_head_summary": "stats",
        "MapStore": "store",
        "MapsOfTokens": "text",
        "long_row_change": "lens",
        "received": "lens",
        "rollout_row": "lens",
        "sink_mass": "lens",
        "top_keys": "lens",
        "CHECK_TOKENS": "pretrained",
        "LongRefused": "pretrained",
        "PretrainedLong": "pretrained",
        "run_model_long": "pretrained",
    },
)

if TYPE_CHECKING:
    from attention_core.long.lens import long_row_change, received, rollout_row, sink_mass, top_keys
    from attention_core.long.map import (
        REDUCES,
        AttentionMap,
        Tile,
        as_map,
        block_aggregate,
        row_blocks,
    )
    from attention_core.long.pretrained import (
        CHECK_TOKENS,
        LongRefused,
        PretrainedLong,
        run_model_long,
    )
    from attention_core.long.rollout import rollout_full, rollout_rows
    from attention_core.long.run import (
        BLOCKS,
        LongAnalysis,
        TextTooLong,
        analyze_long,
        block_starts,
        check_length,
        find_rows,
        overview_size,
    )
    from attention_core.long.scale import (
        colour_key,
        even_mass,
        relative_cells,
        relative_values,
        row_keys,
        sends_relative,
    )
    from attention_core.long.stats import (
        SIMILARITY_WORK,
        long_head_similarity,
        long_head_stats,
        long_head_summary,
    )
    from attention_core.long.store import MapStore
    from attention_core.long.text import MapsOfTokens
