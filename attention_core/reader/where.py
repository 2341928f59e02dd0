""" "Where does this head look?": one attention row of the trained reader, as plain data
for a class question (`attention_core.poll.question_where`) and its reveal.

    text ─► cut to the reader's context ([BOS] + context-1 units; the rest is named)
         ─► [BOS] + units, those outside the vocabulary flagged (read as [UNK], kept)
         ─► layer `layer`'s attention (`run.layer_trace`, the path every trained view
            takes)                                                        (1, H, n, n)
         ─► head `head`, row `query`                                      (n,)
         ─► the jieba word the query's character belongs to (`pooling.word_groups`)

The row is the reader's own: tests/core/reader/test_where.py checks it against
`ReaderLM.forward`'s attention weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.poll import Question, question_where
from attention_core.pooling import word_groups
from attention_core.reader.run import layer_trace, reader_tokens
from attention_core.reader.weights import Reader, load_shipped

__all__ = ["WhereRound", "question_of", "where_round"]


@dataclass(frozen=True)
class WhereRound:
    """One row of one head over a sentence as the reader reads it.

    `labels` (n,): [BOS] and each kept unit; `row` (n,): the query's attention weights
    (sum 1, zero after the query: the reader is causal); `word`: the labels' indices of
    the query's jieba word; `unknown`: those read as [UNK]; `dropped`: the text cut off
    at the reader's context ("" when the sentence fits).
    """

    text: str  # the sentence as read (cut)
    labels: tuple[str, ...]
    row: tuple[float, ...]
    query: int
    layer: int
    head: int
    word: tuple[int, ...]
    unknown: tuple[int, ...]
    dropped: str = ""


def where_round(
    text: str, *, layer: int, head: int, query: int | None = None, reader: Reader | None = None
) -> WhereRound:
    """Head `head` of layer `layer` from the unit at label index `query` (1 is the first
    unit after [BOS]; None: the last kept unit). ValueError, saying what to choose, for
    a sentence without units or a layer, head or query the reader does not have."""
    reader = reader or load_shipped()
    config = reader.config
    if not 0 <= layer < config.num_layers or not 0 <= head < config.num_heads:
        raise ValueError(
            f"layer {layer}, head {head}: the reader has layers 0…{config.num_layers - 1} "
            f"and heads 0…{config.num_heads - 1}"
        )
    read = reader_tokens(text, reader.vocab)
    tokens = read.tokens[: config.context]  # [BOS] + at most context-1 units
    if len(tokens) < 2:
        raise ValueError("the sentence has no characters; type one")
    end = tokens[-1].end
    kept, dropped = text[:end], text[end:].strip() if len(read.tokens) > len(tokens) else ""
    query = len(tokens) - 1 if query is None else int(query)
    if not 1 <= query < len(tokens):
        raise ValueError(f"query {query}: choose a character 1…{len(tokens) - 1}")
    trace = layer_trace(reader, [tokens], layer)
    row = trace.weights[0, head, query].double().numpy()  # (n,) of (1, H, n, n)
    groups = word_groups([(t.start, t.end) for t in tokens], [t.special for t in tokens], kept)
    word = np.flatnonzero(groups.group == groups.group[query]).tolist()
    return WhereRound(
        text=kept,
        labels=tuple(t.label for t in tokens),
        row=tuple(float(w) for w in row),
        query=query,
        layer=layer,
        head=head,
        word=tuple(word),
        unknown=tuple(j for j in read.unknown if j < len(tokens)),
        dropped=dropped,
    )


def question_of(found: WhereRound) -> Question:
    """The class question of a round (its row rounded as the phones show it)."""
    return question_where(
        found.text,
        found.labels,
        found.row,
        query=found.query,
        layer=found.layer,
        head=found.head,
        word=found.word,
        unknown=found.unknown,
    )
