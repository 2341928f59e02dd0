"""Byte-level BPE pieces read as text (attention_core.pooling.readable_pieces): a byte-level
BPE tokenizer trained here, offline, with the `tokenizers` library on the package's
Traditional Chinese corpus (GPT-2's byte alphabet, as GPT-2, Llama 3 and Qwen use), and a
tiny random GPT-2 with that vocabulary, run by transformers itself (eager attention), both
from tests/support/byte_models.py.

The references are never the project: the labels are what the tokenizer's own decoder
makes of each run of pieces, the pooled weights a pooling by hand of the model's own
`output_attentions`.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from attention_core.compare import readable_result
from attention_core.limits import EXACT
from attention_core.notebook import head_view
from attention_core.pooling import readable_pieces, readable_tokens
from attention_core.tokenize import tokenize
from tests.support.byte_models import HAN, TEXT, byte_bpe, byte_gpt2, hand_pool


@pytest.fixture(scope="module")
def bpe():
    """A byte-level BPE tokenizer of 400 pieces trained on 400 lines of the corpus: most
    characters stay cut into their UTF-8 bytes (tests/support/byte_models.py)."""
    return byte_bpe()


@pytest.fixture(scope="module")
def gpt2(bpe):
    """A tiny random GPT-2 on that vocabulary (transformers' own, eager attention) and its
    attention over TEXT: (tokenizer, model, ids, (L, H, n, n))."""
    return byte_gpt2()


def _runs_by_the_tokenizer(tokenizer, ids: list[int]) -> list[tuple[int, int]]:
    """Where the tokenizer's own decoder ends a run of pieces: after piece k when the text
    decoded so far is whole (no replacement character) and a prefix of what all decode to."""
    whole = tokenizer.decode(ids)
    ends = [
        k
        for k in range(1, len(ids) + 1)
        if "\ufffd" not in (prefix := tokenizer.decode(ids[:k])) and whole.startswith(prefix)
    ]
    return list(zip([0, *ends[:-1]], ends, strict=True))


def test_a_character_cut_into_byte_pieces_is_one_label(gpt2) -> None:
    tokenizer, _, ids, _ = gpt2
    pieces = tokenizer.convert_ids_to_tokens(ids)
    assert any("\ufffd" in tokenizer.decode([i]) for i in ids)  # bytes of a character alone
    got = readable_pieces(tokenizer, ids)
    runs = _runs_by_the_tokenizer(tokenizer, ids)
    assert got.groups == [list(range(a, b)) for a, b in runs]
    assert got.labels[:-1] == [tokenizer.decode(ids[a:b]) for a, b in runs[:-1]]
    assert "".join(got.labels[:-1]) == TEXT and got.labels[-1] == "<|endoftext|>"
    assert got.special == [False] * (len(runs) - 1) + [True]
    cut = [(label, run) for label, run in zip(got.labels, got.groups, strict=True) if len(run) > 1]
    assert len([label for label, _ in cut if len(label) == 1 and HAN.match(label)]) >= 10
    assert not any("\ufffd" in label or "Ġ" in label for label in got.labels)
    # the same from the token strings alone (a notebook's tokens)
    assert readable_tokens(pieces, [False] * (len(ids) - 1) + [True]).labels == got.labels
    assert readable_pieces(tokenizer.backend_tokenizer, ids).labels == got.labels


def test_spaces_and_english_pieces_read_as_text(bpe) -> None:
    ids = bpe.encode("Attention is all you need 注意").ids
    got = readable_pieces(bpe, ids)
    assert "".join(got.labels) == "Attention is all you need 注意"
    assert readable_tokens(["Ġthe", "Ġcat"]).labels == [" the", " cat"]
    assert readable_tokens(["▁the", "<0xE6>", "<0xB3>", "<0xA8>"]).labels == [" the", "注"]
    assert readable_tokens(["[CLS]", "hello", "##s"]).labels == ["[CLS]", "hello", "##s"]


def test_pooled_rows_sum_to_one_keep_totals_and_equal_a_hand_pooling(gpt2) -> None:
    tokenizer, _, ids, attentions = gpt2
    got = readable_pieces(tokenizer, ids)
    pooled = got.pool(attentions)  # (L, H, m, m)
    np.testing.assert_allclose(pooled, hand_pool(attentions, got.groups, got.groups), atol=EXACT)
    np.testing.assert_allclose(pooled.sum(-1), 1.0, atol=EXACT)
    # each label's total attention received (summed over the query pieces) is kept
    sizes = np.array([len(run) for run in got.groups], dtype=float)
    received = np.stack([attentions[..., run].sum(-1) for run in got.groups], -1).sum(-2)
    np.testing.assert_allclose((pooled * sizes[:, None]).sum(-2), received, atol=EXACT)
    # a causal model stays causal: no character attends to a later one
    assert np.allclose(np.triu(pooled, 1), 0.0)


def test_pieces_pooled_to_jieba_words(gpt2) -> None:
    tokenizer, _, ids, attentions = gpt2
    words = readable_pieces(tokenizer, ids).words()
    jieba_words = [t.text for t in tokenize(TEXT, "jieba")]
    assert words.labels == [*jieba_words, "<|endoftext|>"]
    pooled = words.pool(attentions)
    np.testing.assert_allclose(
        pooled, hand_pool(attentions, words.groups, words.groups), atol=EXACT
    )
    np.testing.assert_allclose(pooled.sum(-1), 1.0, atol=EXACT)


def test_the_notebook_head_view_shows_characters_with_the_models_pooled_weights(gpt2) -> None:
    tokenizer, _, ids, attentions = gpt2
    tokens = tokenizer.convert_ids_to_tokens(ids)  # what a notebook passes, as for BertViz
    got = readable_pieces(tokenizer, ids)
    view = head_view(torch.from_numpy(attentions[:, None]), tokens)  # L × (1, H, n, n)
    (text,) = re.findall(r'class="hv-payload">(.*?)</script>', view.data)
    payload = json.loads(text)
    assert payload["tokens"] == got.labels  # "<|endoftext|>" is plain text to a notebook
    hand = hand_pool(attentions, got.groups, got.groups)  # (L, H, m, m)
    m, H = len(got.labels), attentions.shape[1]
    for layer, sent in enumerate(payload["layers"]):
        drawn = np.asarray(sent["dense"], dtype=float).reshape(H, m, m) / payload["scale"]
        np.testing.assert_allclose(drawn, hand[layer], atol=EXACT)
    raw = json.loads(
        re.findall(
            r'class="hv-payload">(.*?)</script>',
            head_view(torch.from_numpy(attentions[:, None]), tokens, prettify_tokens=False).data,
        )[0]
    )
    assert raw["tokens"] == tokens  # the pieces and the model's numbers as they are


def test_a_pretrained_result_reads_as_text(gpt2, tmp_path) -> None:
    """The Pretrained page's labels: run_model on the saved model, then readable_result."""
    from attention_core.pretrained import load_model, run_model

    tokenizer, model, _, _ = gpt2
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    result = run_model(load_model(str(tmp_path)), TEXT)
    shown = readable_result(result, tokenizer)
    ids = tokenizer.convert_tokens_to_ids(result.tokens)
    got = readable_pieces(tokenizer, ids)
    assert shown.tokens == got.labels and "".join(shown.tokens) == TEXT
    hand = hand_pool(result.attentions.astype(np.float64), got.groups, got.groups)
    np.testing.assert_allclose(shown.attentions, hand, atol=EXACT)
    assert len(shown.offsets) == len(shown.special) == len(shown.unknown) == len(shown.tokens)
    assert [TEXT[a:b] for a, b in shown.offsets] == shown.tokens


def test_the_pretrained_page_labels_characters_not_byte_pieces(gpt2, tmp_path) -> None:
    """The app's Pretrained page on the saved model: its heatmap's labels are the text's
    characters and its cells the model's own weights pooled by hand."""
    from tests.support import teaching as helpers_teaching
    from tests.support.apptest import chart, weights_of

    tokenizer, model, _, _ = gpt2
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    at = helpers_teaching.open_page(
        "pretrained",
        {"text": TEXT, "lang": "zh-TW"},
        {"pretrained_model": str(tmp_path), "pretrained_view": "layer", "pretrained_layer": 1},
    )
    assert not at.exception, at.exception
    ids = tokenizer(TEXT)["input_ids"]
    with torch.no_grad():
        own = model(torch.tensor([ids]), output_attentions=True).attentions[1][0].double().numpy()
    got = readable_pieces(tokenizer, ids)
    hand = hand_pool(own, got.groups, got.groups)  # (H, m, m)
    traces = chart(at, "pretrained_layer_chart")["data"]
    assert traces[0]["x"] == [f"{i}:{c}" for i, c in enumerate(TEXT)]
    for head, trace in enumerate(traces):
        np.testing.assert_allclose(weights_of(trace), hand[head], atol=EXACT)
    assert f"{len(ids)} 個詞元顯示成 {len(TEXT)} 個" in "\n".join(c.value for c in at.caption)


def test_each_piece_knows_its_character_its_place_and_the_labels_spans(gpt2) -> None:
    """What views that keep one row per piece show (the Lens page's neuron view, the head
    atlas): each piece named by the character it helps make and its place in it; and each
    label's characters in the text, from the pieces' own offsets."""
    tokenizer, _, ids, _ = gpt2
    got = readable_pieces(tokenizer, ids)
    pieces = tokenizer.convert_ids_to_tokens(ids)
    assert len(got.piece_labels) == len(got.parts) == len(pieces)
    for run, label in zip(got.groups, got.labels, strict=True):
        assert [got.piece_labels[i] for i in run] == [label] * len(run)
        assert [got.parts[i] for i in run] == [(j + 1, len(run)) for j in range(len(run))]
    offsets = tokenizer(TEXT, return_offsets_mapping=True)["offset_mapping"] + [(0, 0)]
    spans = got.spans(offsets)
    assert [TEXT[a:b] for a, b in spans[:-1]] == got.labels[:-1]  # every character itself
    assert spans[-1] == (0, 0)  # <|endoftext|> has no characters
