"""The notebook's long view (attention_core/notebook/long.py): a Llama's 1 500 tokens pooled
(each cell the share of attention a block of rows gives a block of keys) and a window of exact
weights, both against transformers' own eager output_attentions; the refusals (a sliding
window narrower than the text) and bad arguments. Tiny models built offline; their tokenizer
is the packaged model's vocabulary."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.notebook import LongViewRefused, NotebookInputError, long_view
from tests.support.availability import needs_minilm
from tests.support.models import minilm_tokenizer, tiny_decoder

pytestmark = needs_minilm

TEXT = "the cat sat on the mat and then it slept. " * 150  # 1 652 tokens


@functools.cache
def llama():
    """A tiny Llama (8 192-token context) as a notebook has it, its tokenizer, and its own
    eager weights for TEXT, (L, H, n, n)."""
    tokenizer = minilm_tokenizer()
    model = tiny_decoder("LlamaConfig", tokenizer.vocab_size, num_key_value_heads=2)
    with torch.no_grad():
        inputs = tokenizer(TEXT, return_tensors="pt")
        own = torch.cat(model(**inputs, output_attentions=True).attentions).numpy()
    return model, tokenizer, own


def _panels(view) -> list[np.ndarray]:
    from tests.support.apptest import weights_of

    return [weights_of(trace) for trace in view.figure.to_dict()["data"]]


def test_pooled_cells_are_the_share_a_block_of_rows_gives_a_block_of_keys() -> None:
    model, tokenizer, own = llama()
    n = own.shape[-1]
    view = long_view(model, TEXT, layer=1, tokenizer=tokenizer, cells=128)
    block = -(-n // 128)  # 13 tokens a cell
    edges = [*range(0, n, block), n]
    for h, got in enumerate(_panels(view)):
        want = np.array(
            [
                [own[1, h, a:b, c:d].sum(axis=1).mean() for c, d in itertools.pairwise(edges)]
                for a, b in itertools.pairwise(edges)
            ]
        )  # (c, c)
        np.testing.assert_allclose(got, want, atol=EXACT)
        np.testing.assert_allclose(got.sum(axis=1), 1, atol=1e-5)  # pooled rows sum to 1
    assert f"{block}×{block} tokens a cell" in view.figure.layout.title.text
    assert len(view.to_html()) < 3e6  # plotly.js included; every weight would be ~50 MB


def test_a_window_is_the_models_own_weights_exactly() -> None:
    model, tokenizer, own = llama()
    view = long_view(model, TEXT, layer=0, tokenizer=tokenizer, window=(1200, 1300))
    for h, got in enumerate(_panels(view)):
        np.testing.assert_allclose(got, own[0, h, 1200:1300, 1200:1300], atol=EXACT)
    pieces = tokenizer.convert_ids_to_tokens(tokenizer(TEXT)["input_ids"])
    labels = [f"{i}:{pieces[i]}" for i in range(1200, 1300)]  # the window's own tokens
    for trace in view.figure.to_dict()["data"]:
        assert list(trace["x"]) == labels and list(trace["y"]) == labels
    html = view.to_html()
    assert labels[0] == "1200:the" and '"1200:the"' in html and '"1299:the"' in html
    assert '"1199:' not in html and '"1300:' not in html  # nothing outside the window


def test_a_sliding_window_narrower_than_the_text_is_refused() -> None:
    _, tokenizer, _ = llama()
    own = {"num_key_value_heads": 2, "sliding_window": 128}
    mistral = tiny_decoder("MistralConfig", tokenizer.vocab_size, **own)
    with pytest.raises(LongViewRefused, match="sliding window"):
        long_view(mistral, TEXT, tokenizer=tokenizer)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"layer": 2}, "layer must be in 0..1"),
        ({"window": (5, 5)}, "window must satisfy"),
        ({"window": (0, 600)}, "at most 512 tokens"),
        ({"window": "all"}, "window must be"),
        ({"cells": 3}, "cells must be"),
    ],
)
def test_impossible_arguments_say_what_is_possible(kwargs: dict, message: str) -> None:
    model, tokenizer, _ = llama()
    with pytest.raises(NotebookInputError, match=message):
        long_view(model, TEXT, tokenizer=tokenizer, **kwargs)
    with pytest.raises(NotebookInputError, match="no tokens"):
        long_view(model, "", tokenizer=tokenizer)


def test_a_window_of_numpy_integers_is_a_window() -> None:
    """Positions computed with NumPy (np.argmax, np.int64 arithmetic) are positions."""
    model, tokenizer, _ = llama()
    ints = long_view(model, TEXT, layer=0, tokenizer=tokenizer, window=(1200, 1300))
    numpy = long_view(
        model, TEXT, layer=0, tokenizer=tokenizer, window=(np.int64(1200), np.int32(1300))
    )
    assert numpy.to_html() == ints.to_html()
