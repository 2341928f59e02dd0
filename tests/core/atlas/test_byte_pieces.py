"""The head atlas on a byte-level BPE model (a tiny random GPT-2 whose tokenizer, trained
offline on the corpus, cuts most Chinese characters into byte pieces: tests/support/
byte_models.py): the index keeps the model's own weights per piece but names each piece by
the character it helps make, so its pairs read, and are searched, as text; a drawn head
pools the pieces to the characters (rows still sum to 1), against a pooling by hand of the
model's own output_attentions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attention_core.atlas.build import build
from attention_core.atlas.models import MAX_TOKENS, open_model
from attention_core.atlas.query import Atlas
from attention_core.limits import EXACT
from attention_core.pooling import readable_pieces
from tests.support.atlas import SENTENCES
from tests.support.byte_models import HAN, byte_gpt2, hand_pool, saved_byte_gpt2

CHINESE = [s for s in SENTENCES if HAN.search(s)]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return saved_byte_gpt2(tmp_path_factory.mktemp("atlas-bytes") / "gpt2")


def test_a_reading_names_pieces_by_character_and_keeps_the_models_weights(folder: str) -> None:
    tokenizer, model, _, _ = byte_gpt2()
    text = next(s for s in CHINESE if 40 < len(tokenizer(s)["input_ids"]) <= MAX_TOKENS)
    (reading,) = open_model(folder).read([text])
    ids = tokenizer(text)["input_ids"]
    pieces = readable_pieces(tokenizer, ids)
    assert pieces.merged and reading.readable is not None
    assert reading.ids == ids and reading.tokens == pieces.piece_labels
    assert set("".join(reading.tokens)) <= set(text)  # characters, not byte mojibake
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    own = torch.cat(out.attentions).double().numpy()  # (L, H, n, n)
    np.testing.assert_allclose(reading.attentions, own, atol=EXACT)  # the model's, per piece
    labels, pooled = reading.head_weights(1, 2)
    assert labels == list(text)
    np.testing.assert_allclose(
        pooled, hand_pool(own[1, 2], pieces.groups, pieces.groups), atol=EXACT
    )
    np.testing.assert_allclose(pooled.sum(-1), 1.0, atol=EXACT)


def test_the_index_of_a_byte_level_model_reads_and_searches_as_text(
    folder: str, tmp_path: Path
) -> None:
    out = tmp_path / "index"
    build(folder, None, out, texts=CHINESE)
    atlas = Atlas.open(folder, out)
    pairs = atlas.top_pairs(1, 2, k=50)
    assert pairs
    for pair in pairs:  # every token of a pair is a character of its sentence
        assert pair["query_token"] in pair["text"] and pair["key_token"] in pair["text"]
    token = next(p["query_token"] for p in pairs if HAN.fullmatch(p["query_token"]))
    found = atlas.top_pairs(1, 2, query_token=token, k=50)
    assert found and all(p["query_token"] == token for p in found)
    top = atlas.top_sentences(1, 2, "previous", k=3)
    assert all(set("".join(item["tokens"])) <= set(item["text"]) for item in top)
