"""Sentences where one head attends from a token to a kind of word, found on every row.

The index keeps each head's two strongest (query, key) pairs per sentence (`rows.py`), so
"from 它 to a noun" there finds 它 only where it leads one of those two. This search sees
every row: the index narrows the corpus to the sentences that contain the token (DuckDB,
`Atlas.sentences_with`), the model reads them again (at most `limit`, as the page's other
on-demand views do), and in each the rows of that token are checked: their strongest key,
and the jieba part of speech of the word that key starts in (`rows.char_tags`, the tags
the index's pairs carry). A token the model splits into pieces is matched piece by piece
as the model's tokens show it.

Shape legend: L layers, H heads, n tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.atlas.models import AtlasModel
from attention_core.atlas.query import Atlas
from attention_core.atlas.rows import char_tags

__all__ = ["SEARCH_LIMIT", "Hit", "attends_from"]

SEARCH_LIMIT = 40  # sentences read again per search: ~1 s for MiniLM on 2 cores


@dataclass(frozen=True)
class Hit:
    """One row of the token: where the head looks most, and how much."""

    text: str
    query: int  # the row (the token's place among the model's tokens)
    key: int  # its strongest key
    query_token: str
    key_token: str
    key_pos: str  # jieba's tag of the word the key starts in; "" for a special token
    weight: float


def attends_from(
    atlas: Atlas,
    model: AtlasModel,
    layer: int,
    head: int,
    token: str,
    *,
    key_pos: str | None = None,
    limit: int = SEARCH_LIMIT,
) -> tuple[list[Hit], int]:
    """Every row of `token` in the indexed sentences that contain it (at most `limit`),
    with its strongest key in head (layer, head), kept when that key's word is tagged
    `key_pos` (a prefix: "n" takes "nr", "ns"…; None: any). Returns the hits, heaviest
    first, and how many sentences were read."""
    token = token.strip()
    if not token:
        return [], 0
    texts = atlas.sentences_with(token, limit)
    hits: list[Hit] = []
    for reading in model.read(texts):
        weights = reading.attentions[layer, head]  # (n, n)
        tags = char_tags(reading.text)
        for i, shown in enumerate(reading.tokens):
            if shown.removeprefix("##") != token:
                continue
            j = int(np.argmax(weights[i]))
            a, b = reading.offsets[j] if j < len(reading.offsets) else (0, 0)
            pos = tags[a] if b > a and a < len(tags) else ""
            if key_pos and not pos.startswith(key_pos):
                continue
            hits.append(
                Hit(reading.text, i, j, shown, reading.tokens[j], pos, float(weights[i, j]))
            )
    hits.sort(key=lambda h: -h.weight)
    return hits, len(texts)
