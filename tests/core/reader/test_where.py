"""One attention row of the trained reader for a class question
(attention_core/reader/where.py), checked against another path through the reader: the
row is `ReaderLM.forward`'s own attention weights on `Vocab.encode`'s ids (never a number
written here, so a retrained reader passes too), the word is jieba's word holding the
query's character, a character outside the vocabulary is flagged and kept, a sentence
longer than the context is cut and the cut part named."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.reader import load_shipped
from attention_core.reader.where import question_of, where_round
from attention_core.tokenize import tokenize
from tests.support.availability import unavailable

EVERYDAY = "我們明天早上去學校上課"
ARTICLE = "中和有一個永和路"


@pytest.fixture(scope="module")
def reader():
    try:
        return load_shipped()
    except Exception as error:  # the package's data missing: said, not a failure here
        unavailable(f"the shipped reader does not load: {error}")


def _forward_row(reader, text: str, layer: int, head: int, query: int) -> np.ndarray:
    ids = torch.tensor([reader.vocab.encode(text).ids[: reader.config.context]])  # (1, n)
    with torch.inference_mode():
        _, weights = reader.model(ids)  # L x (1, H, n, n)
    return weights[layer][0, head, query].double().numpy()


def _jieba_word(text: str, start: int) -> str:
    return next(t.text for t in tokenize(text, "jieba") if t.start <= start < t.end)


@pytest.mark.parametrize(("text", "query"), [(EVERYDAY, None), (ARTICLE, 6), (ARTICLE, 2)])
def test_the_row_is_the_readers_own_attention(reader, text: str, query: int | None) -> None:
    config = reader.config
    for layer in range(config.num_layers):
        for head in range(config.num_heads):
            found = where_round(text, layer=layer, head=head, query=query, reader=reader)
            expected = _forward_row(reader, text, layer, head, found.query)
            np.testing.assert_allclose(found.row, expected, atol=1e-5)
    assert found.labels[0] == "[BOS]" and "".join(found.labels[1:]) == text
    assert found.query == (len(text) if query is None else query)
    assert sum(found.row) == pytest.approx(1, abs=1e-5)
    assert max(found.row[found.query + 1 :], default=0) == 0  # causal: nothing after it


@pytest.mark.parametrize(("text", "query"), [(EVERYDAY, 10), (ARTICLE, 7), (ARTICLE, 3)])
def test_the_outlined_word_is_jiebas_word_of_the_query(reader, text: str, query: int) -> None:
    found = where_round(text, layer=0, head=0, query=query, reader=reader)
    chars = "".join(found.labels[j] for j in found.word)
    assert found.query in found.word
    assert chars == _jieba_word(text, query - 1)  # label j is character j-1 of the text
    assert list(found.word) == list(range(found.word[0], found.word[-1] + 1))


def test_a_character_outside_the_vocabulary_is_flagged_not_dropped(reader) -> None:
    rare = next(c for c in "龘靐齉爩鱻麤" if c not in reader.vocab.index)
    text = f"我們{rare}上課"
    found = where_round(text, layer=0, head=0, reader=reader)
    assert found.labels[3] == rare and found.unknown == (3,)
    np.testing.assert_allclose(found.row, _forward_row(reader, text, 0, 0, 5), atol=1e-5)
    question = question_of(found)
    assert question.unknown == (3,) and question.options[3] == rare


def test_a_sentence_longer_than_the_context_is_cut_and_the_cut_named(reader) -> None:
    kept = reader.config.context - 1  # [BOS] takes one position
    text = "上課" * kept + "下課了"
    found = where_round(text, layer=0, head=0, reader=reader)
    assert len(found.labels) == reader.config.context
    assert found.text == text[:kept] and found.dropped == text[kept:]
    assert found.query == kept  # the last kept character
    assert where_round(EVERYDAY, layer=0, head=0, reader=reader).dropped == ""


@pytest.mark.parametrize(
    "options",
    [{"layer": -1, "head": 0}, {"layer": 0, "head": 99}, {"layer": 0, "head": 0, "query": 0},
     {"layer": 0, "head": 0, "query": 99}],
)  # fmt: skip
def test_what_the_reader_does_not_have_is_refused_with_a_choice(reader, options) -> None:
    with pytest.raises(ValueError, match="…"):
        where_round(EVERYDAY, reader=reader, **options)
    with pytest.raises(ValueError, match="no characters"):
        where_round("   ", layer=0, head=0, reader=reader)


def test_the_question_answers_the_rows_largest_weight(reader) -> None:
    found = where_round(EVERYDAY, layer=1, head=1, reader=reader)
    question = question_of(found)
    assert question.kind == "where" and question.prompt == EVERYDAY
    assert int(np.argmax(found.row)) in question.answers
    np.testing.assert_allclose(question.probs, found.row, atol=5e-5)
    assert question.word == found.word
