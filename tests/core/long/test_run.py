"""attention_core.long.run: a long text through the project's own module as maps, equal to the
module's own weights (and torch.nn.MultiheadAttention's) wherever those exist."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.attention import causal_mask
from attention_core.limits import EXACT, MAX_INPUT_CHARS, MAX_LONG_TOKENS, MAX_TOKENS
from attention_core.long.run import (
    TextTooLong,
    analyze_long,
    block_starts,
    check_length,
    find_rows,
    overview_size,
)
from attention_core.pipeline import _embedded, analyze, build_module
from attention_core.settings import ModelSettings
from attention_core.tokenize import tokenize

WORDS = "the cat sat on the mat. 中和有一個永和路！ a dog ran\n\nnew paragraph here; then more"


@pytest.mark.parametrize(
    ("attention", "embed_dim", "heads", "causal", "positional"),
    [
        ("multi", 64, 8, False, False),
        ("multi", 64, 8, True, True),
        ("multi", 12, 3, True, False),
        ("single", 16, 1, False, True),
    ],
)
def test_maps_equal_the_modules_weights(attention, embed_dim, heads, causal, positional):
    text = " ".join([WORDS] * 12)  # ~300 tokens: analyze keeps them all
    model = ModelSettings(
        text=text,
        tokenizer="auto",
        attention=attention,
        embed_dim=embed_dim,
        num_heads=heads,
        causal=causal,
        positional=positional,
        seed=3,
    )
    short, long = analyze(model), analyze_long(model)
    assert long.n == len(short.tokens) <= MAX_TOKENS and long.labels == short.labels
    assert long.num_heads == short.weights.shape[0] and len(long.maps) == 1
    for h in range(long.num_heads):
        got = long.maps[0].exact(h, slice(None), slice(None))  # (n, n)
        np.testing.assert_allclose(got, short.weights[h], atol=EXACT, rtol=0)
    assert long.divisor == short.divisor


@pytest.mark.parametrize("causal", [False, True])
def test_maps_equal_torch_multihead_attention(causal):
    model = ModelSettings(text=WORDS * 4, embed_dim=32, num_heads=4, causal=causal, seed=1)
    long = analyze_long(model)
    n = long.n
    ref = build_module(model).to_torch()
    x = _embedded([long.tokens], model)  # (1, n, C)
    with torch.no_grad():
        _, w = ref(
            x,
            x,
            x,
            attn_mask=~causal_mask(n) if causal else None,  # torch: True = not allowed
            need_weights=True,
            average_attn_weights=False,
        )  # (1, H, n, n)
    for h in range(4):
        got = long.maps[0].exact(h, slice(None), slice(None))
        np.testing.assert_allclose(got, w[0, h].numpy(), atol=EXACT, rtol=0)


def test_4096_tokens_without_n_squared_floats():
    model = ModelSettings(
        text="字" * 5000, tokenizer="char", embed_dim=64, num_heads=8, causal=True
    )
    long = analyze_long(model)
    n, H = MAX_LONG_TOKENS, 8
    assert long.n == n and long.total_tokens == 5000 and long.tokens_cut
    assert long.nbytes <= 2 * 4 * H * n * (64 // H + 1)  # q̂ and k̂, no (H, n, n)
    assert long.nbytes < 4 * n * n  # less than one head's weights
    row = long.maps[0].exact(3, slice(4000, 4001), slice(None))  # (1, n)
    assert abs(row.sum() - 1) < 1e-4 and not row[0, 4001:].any()  # causal


def test_bounds_are_refused_with_what_to_do():
    with pytest.raises(TextTooLong, match="MAX_INPUT_CHARS"):
        check_length("a" * (MAX_INPUT_CHARS + 1))
    check_length("a" * MAX_INPUT_CHARS)
    with pytest.raises(TextTooLong):
        analyze_long(ModelSettings(text="字" * 1_000_000))
    with pytest.raises(ValueError, match="max_tokens"):
        analyze_long(ModelSettings(text="abc"), max_tokens=MAX_LONG_TOKENS + 1)
    with pytest.raises(ValueError, match="trained"):
        analyze_long(ModelSettings(text="abc", weights="trained"))


def test_find_rows_names_the_token_holding_the_phrase():
    tokens = tokenize(WORDS, "auto")
    rows = find_rows(tokens, WORDS, "THE")
    assert [tokens[r].text.casefold() for r in rows] == ["the", "the", "then"]  # substrings
    assert tokens[find_rows(tokens, WORDS, "永和")[0]].text.startswith("永")
    assert find_rows(tokens, WORDS, "dog ran") == [find_rows(tokens, WORDS, "dog")[0]]
    assert find_rows(tokens, WORDS, "  ") == [] and find_rows(tokens, WORDS, "zebra") == []


def test_block_starts_cut_at_sentences_and_paragraphs():
    tokens = tokenize(WORDS, "auto")
    sentences = block_starts(tokens, WORDS, "sentence")
    paragraphs = block_starts(tokens, WORDS, "paragraph")
    assert sentences[0] == 0 and sentences == sorted(set(sentences))
    assert len(paragraphs) == 2 and set(paragraphs) <= set(sentences)
    assert tokens[paragraphs[1]].text == "new"
    assert [tokens[i - 1].text for i in sentences[1:3]] == [".", "！"]
    with pytest.raises(ValueError, match="sentence, paragraph"):
        block_starts(tokens, WORDS, "chapter")


def test_overview_size_keeps_all_heads_within_the_budget():
    assert overview_size(8) == 256 and overview_size(64) == 128
    assert all(overview_size(h) ** 2 * h <= 1 << 20 for h in (1, 8, 16, 64))
