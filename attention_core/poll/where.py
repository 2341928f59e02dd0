""" "Where does this head look?": a class question from one attention row of the trained
reader (plain data in; `attention_core.reader.where` computes the row).

The options are the sentence as the reader reads it, [BOS] and one unit each (a CJK
character, an English word, a sign); the answers are the options with the row's largest
weight (ties count, after rounding to what the phones and the reveal show).
"""

from __future__ import annotations

from collections.abc import Sequence

from attention_core.poll.store import MAX_PROMPT, Question

__all__ = ["question_where"]


def question_where(
    sentence: str,
    options: Sequence[str],
    row: Sequence[float],
    *,
    query: int,
    layer: int,
    head: int,
    word: Sequence[int],
    unknown: Sequence[int] = (),
    digits: int = 4,
) -> Question:
    """A "where" question: `row` (n,) is head `head` of layer `layer`'s attention from
    option `query` over the n `options`, rounded to `digits`; `word` the options of the
    query's jieba word, `unknown` those the reader reads as [UNK]. Equal labels stay
    apart on the phones by their keys (the option's index), not by their text."""
    weights = tuple(round(float(w), digits) for w in row)
    top = max(weights, default=0.0)
    return Question(
        options=tuple(str(o) for o in options),
        query=int(query),
        head=int(head),
        answers=tuple(j for j, w in enumerate(weights) if w == top),
        layer=int(layer),
        kind="where",
        prompt=str(sentence)[:MAX_PROMPT],
        probs=weights,
        word=tuple(sorted(int(j) for j in word)),
        unknown=tuple(sorted(int(j) for j in unknown)),
    )
