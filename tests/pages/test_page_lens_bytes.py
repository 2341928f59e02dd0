"""The Lens page on a byte-level BPE model (a tiny random GPT-2 whose tokenizer, trained
offline on the corpus, cuts most Chinese characters into byte pieces; tests/support/
byte_models.py): the maps and the head view label the text's characters and show the
model's own output_attentions pooled to them by hand; the neuron view keeps the model's
rows, one per piece, named by the character and the piece's place in it."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from attention_core.limits import EXACT
from attention_core.pooling import readable_pieces
from attention_core.tokenize import tokenize
from tests.support import teaching
from tests.support.apptest import (  # noqa: F401 (offline: autouse)
    chart,
    md_unescape,
    offline,
    texts,
    weights_of,
)
from tests.support.availability import require_minilm
from tests.support.byte_models import TEXT, byte_gpt2, hand_pool, saved_byte_gpt2
from tests.support.figures import assert_head_view_weights, head_view_weights
from ui.headview import HEAD_VIEW_COMPONENT
from ui.models import MODEL_STATE


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return saved_byte_gpt2(tmp_path_factory.mktemp("bytes") / "gpt2")


@functools.cache
def own() -> tuple[list[int], np.ndarray]:
    """The page's ids (the text as run_model encodes it: no end-of-text token) and the
    model's own output_attentions over them (L, H, n, n)."""
    tokenizer, model, _, _ = byte_gpt2()
    ids = tokenizer(TEXT)["input_ids"]
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    return ids, torch.cat(out.attentions).double().numpy()


def lens(folder: str, lang: str = "en", **state: object) -> AppTest:
    at = teaching.open_page("lens", {"text": TEXT, "lang": lang}, {MODEL_STATE: folder, **state})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_the_maps_label_characters_with_the_models_weights_pooled(folder: str) -> None:
    ids, attentions = own()
    pieces = readable_pieces(byte_gpt2()[0], ids)
    assert pieces.merged and len(ids) > len(TEXT)  # characters cut into bytes
    at = lens(folder, lens_view="maps", lens_scope="layer", lens_layer=1)
    traces = chart(at, "lens_map_chart")["data"]
    assert traces[0]["x"] == [f"{i}:{c}" for i, c in enumerate(TEXT)]
    hand = hand_pool(attentions[1], pieces.groups, pieces.groups)  # (H, m, m)
    for head, trace in enumerate(traces):
        np.testing.assert_allclose(weights_of(trace), hand[head], atol=EXACT)
    assert f"{len(ids)} tokens shown as {len(TEXT)}" in md_unescape(texts(at))


def test_the_maps_pool_the_characters_to_jieba_words(folder: str) -> None:
    """Pieces pooled to characters, then characters to jieba words (the Pretrained page's
    pooling, then the words toggle's): by hand, every row still summing to 1."""
    ids, attentions = own()
    at = lens(folder, lens_view="maps", lens_scope="layer", lens_layer=0, lens_words=True)
    traces = chart(at, "lens_map_chart")["data"]
    words = [t.text for t in tokenize(TEXT, "jieba")]
    assert traces[0]["x"] == [f"{i}:{w}" for i, w in enumerate(words)]
    pieces = readable_pieces(byte_gpt2()[0], ids)
    assert pieces.labels == list(TEXT)  # one label per character
    per_char = hand_pool(attentions[0], pieces.groups, pieces.groups)  # (H, m, m)
    ends = np.cumsum([len(w) for w in words])
    runs = [list(range(a, b)) for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    hand = hand_pool(per_char, runs, runs)  # (H, words, words)
    for head, trace in enumerate(traces):
        np.testing.assert_allclose(weights_of(trace), hand[head], atol=EXACT)
        np.testing.assert_allclose(weights_of(trace).sum(-1), 1.0, atol=EXACT)


def test_the_head_view_draws_characters_and_the_pooled_weights(folder: str) -> None:
    ids, attentions = own()
    pieces = readable_pieces(byte_gpt2()[0], ids)
    at = lens(folder, lens_view="head", lens_layer=1)
    (element,) = [
        e for e in at.get("bidi_component") if e.proto.component_name == HEAD_VIEW_COMPONENT
    ]
    spec = json.loads(json.loads(element.proto.json)["spec"])
    assert [str(t) for t in spec["tokens"]] == list(TEXT)
    hand = hand_pool(attentions[1], pieces.groups, pieces.groups)
    assert_head_view_weights(spec, hand, atol=6e-5)
    assert head_view_weights(spec).shape == (4, len(TEXT), len(TEXT))


def test_the_neuron_view_keeps_one_row_per_piece_named_by_its_character(folder: str) -> None:
    ids, attentions = own()
    pieces = readable_pieces(byte_gpt2()[0], ids)
    query = next(i for i, (_, parts) in enumerate(pieces.parts) if parts > 1)
    part, parts = pieces.parts[query]
    name = f"{pieces.piece_labels[query]} ({part}/{parts})"
    at = lens(folder, lens_view="neuron", lens_layer=1, lens_head=2, lens_query=query, lens_key=0)
    (picker,) = [s for s in at.selectbox if s.key == "lens_query"]
    assert picker.options[query] == f"{query}:{name}"
    assert len(picker.options) == len(ids)  # the model's own rows: one per piece
    shown = md_unescape(texts(at))
    want = attentions[1, 2, query, 0]
    assert f"for this pair: {want:.6f}. Rebuilt from q and k: {want:.6f}" in shown
    assert "one query and one key per piece" in shown and name in shown


def test_the_note_reads_in_traditional_chinese(folder: str) -> None:
    ids, _ = own()
    at = lens(folder, "zh-TW", lens_view="sinks")
    assert f"{len(ids)} 個詞元顯示成 {len(TEXT)} 個" in md_unescape(texts(at))
    assert "斷詞器" in texts(at)


def test_a_model_whose_pieces_are_characters_shows_no_note() -> None:
    """The packaged MiniLM (WordPiece: one piece per Chinese character) is shown as before."""
    require_minilm()
    at = teaching.open_page("lens", {"text": TEXT, "lang": "en"}, {})
    assert not at.exception, at.exception
    assert "tokens shown as" not in md_unescape(texts(at))
