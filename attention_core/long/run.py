"""Long prompts through the project's own module: a text of up to MAX_LONG_TOKENS tokens as
`AttentionMap`s (attention_core.long.map), never as (H, n, n) weights.

`analyze` (attention_core.pipeline) keeps every head's weights: at 4 096 tokens × 8 heads that
is 537 MB, so it stops at MAX_TOKENS. `analyze_long` runs the same tokenizer, embedding and
seeded module (`pipeline.queries_keys`: the module's own projections, split into heads as
`forward` splits them), and keeps each head's queries and keys with each row's log-sum-exp:
4·H·n·(D + 1) bytes twice, 2 MB at 4 096 tokens × embed_dim 64 × 8 heads. Weights are then
recomputed exactly for any rectangle (the same scale 1/√D, the same causal mask when the
settings say causal), and pooled for an overview.

What else a long text needs to be read: where its sentences and paragraphs start (for
`long.map.block_aggregate`), and which rows a searched word or phrase is on.

Shape legend: H heads, n tokens, D head size.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass

from attention_core.limits import (
    LONG_OVERVIEW_CELLS,
    MAX_INPUT_CHARS,
    MAX_LONG_TOKENS,
    MAX_TEXT_CHARS,
    MAX_TILE_SIZE,
)
from attention_core.long.map import AttentionMap
from attention_core.long.text import MapsOfTokens
from attention_core.settings import ModelSettings
from attention_core.tokenize import Token, token_labels, tokenize

__all__ = [
    "BLOCKS",
    "LongAnalysis",
    "TextTooLong",
    "analyze_long",
    "block_starts",
    "check_length",
    "find_rows",
    "overview_size",
]

BLOCKS = ("sentence", "paragraph")
# a sentence ends after one of these (Chinese and Western punctuation), or at a line break
_SENTENCE_END = re.compile(r"[。！？!?.;；…]$")
MAX_FOUND = 100  # rows a search returns at most (the first ones)


class TextTooLong(ValueError):
    """A text longer than MAX_INPUT_CHARS: refused before it is cut or tokenized."""


def check_length(text: str) -> None:
    """Raise TextTooLong when `text` has more than MAX_INPUT_CHARS characters."""
    if len(text) > MAX_INPUT_CHARS:
        raise TextTooLong(
            f"the text has {len(text)} characters, more than MAX_INPUT_CHARS={MAX_INPUT_CHARS}: "
            "paste a chapter, not a book"
        )


@dataclass(frozen=True, eq=False)
class LongAnalysis(MapsOfTokens):
    """A long text's tokens and its attention maps (one per layer; the untrained module has
    one layer, H heads)."""

    settings: ModelSettings
    text: str  # the text actually tokenized (cut at MAX_TEXT_CHARS)
    tokens: list[Token]  # at most max_tokens
    total_tokens: int  # the tokens of the whole (cut) text
    text_cut: bool  # the text was longer than MAX_TEXT_CHARS
    maps: tuple[AttentionMap, ...]  # one per layer, each (H, n, n) on demand
    divisor: float  # what the scores were divided by (√D)

    @property
    def tokens_cut(self) -> bool:
        """More tokens than a long map takes (MAX_LONG_TOKENS): the rest was dropped."""
        return self.total_tokens > len(self.tokens)

    @property
    def labels(self) -> list[str]:
        return token_labels(self.tokens)


def analyze_long(settings: ModelSettings, *, max_tokens: int = MAX_LONG_TOKENS) -> LongAnalysis:
    """The untrained module of `settings` on its text's first `max_tokens` tokens, as maps.

    Same tokenizer, embedding, projections, scale and causal mask as `pipeline.analyze`, so
    `maps[0].exact(h, rows, cols)` equals `analyze(...).weights[h, rows, cols]` wherever both
    exist (within limits.EXACT). Raises TextTooLong above MAX_INPUT_CHARS characters, and
    ValueError for the trained reader (its context is its own bound) or max_tokens beyond
    MAX_LONG_TOKENS."""
    from attention_core.pipeline import queries_keys

    settings = settings.effective
    check_length(settings.text)
    if settings.trained:
        raise ValueError("long maps run the untrained module; the trained reader has its context")
    if not 1 <= max_tokens <= MAX_LONG_TOKENS:
        raise ValueError(f"max_tokens must be in 1..{MAX_LONG_TOKENS}, got {max_tokens}")
    text = settings.text[:MAX_TEXT_CHARS]
    all_tokens = tokenize(text, settings.tokenizer)
    tokens = all_tokens[:max_tokens]
    if not tokens:
        raise ValueError("the text has no tokens")
    q, k, divisor = queries_keys(tokens, settings)  # (H, n, D) each
    layer = AttentionMap.from_qk(q, k, causal=settings.causal, scale=1.0 / divisor)
    return LongAnalysis(
        settings=settings,
        text=text,
        tokens=tokens,
        total_tokens=len(all_tokens),
        text_cut=len(settings.text) > MAX_TEXT_CHARS,
        maps=(layer,),
        divisor=divisor,
    )


def overview_size(num_heads: int) -> int:
    """Cells a side of each head's overview, so that all heads' overviews together hold at
    most LONG_OVERVIEW_CELLS cells (256 a side up to 16 heads, 128 at 64 heads)."""
    side = math.isqrt(LONG_OVERVIEW_CELLS // max(1, num_heads))
    return max(16, min(MAX_TILE_SIZE // 2, side))


def block_starts(tokens: list[Token], text: str, kind: str = "sentence") -> list[int]:
    """The tokens where each sentence (or paragraph) starts, 0 first, strictly increasing:
    `long.map.block_aggregate`'s boundaries. A sentence ends after 。！？!?.;； or … and at a
    line break; a paragraph at a blank line (or, in a text without blank lines, a line
    break)."""
    if kind not in BLOCKS:
        raise ValueError(f"kind must be one of {', '.join(BLOCKS)}; got {kind!r}")
    breaks = "\n\n" if kind == "paragraph" and "\n\n" in text.strip() else "\n"
    starts = [0]
    for i in range(1, len(tokens)):
        prev, tok = tokens[i - 1], tokens[i]
        between = text[prev.end : tok.start] if prev.end <= tok.start else ""
        if breaks in between or (kind == "sentence" and _SENTENCE_END.search(prev.text)):
            starts.append(i)
    return starts


def find_rows(tokens: list[Token], text: str, query: str) -> list[int]:
    """The rows (token indices) where `query` occurs in `text`, case-insensitively: for each
    occurrence, the token holding its first character (or the next token, when it starts
    between tokens). At most MAX_FOUND rows, in order, each once. Empty query: none."""
    needle = query.strip().casefold()
    if not needle or not tokens:
        return []
    hay = text.casefold()
    if len(hay) != len(text):  # casefold changed lengths (ß → ss): offsets would drift
        hay, needle = text, query.strip()
    ends = [t.end for t in tokens]
    rows: list[int] = []
    at = hay.find(needle)
    while at >= 0 and len(rows) < MAX_FOUND:
        row = _first_end_after(ends, at)
        if row < len(tokens) and (not rows or rows[-1] != row):
            rows.append(row)
        at = hay.find(needle, at + 1)
    return rows


def _first_end_after(ends: list[int], offset: int) -> int:
    """The first token whose end is after `offset` (bisect over ascending ends)."""
    return bisect.bisect_right(ends, offset)
