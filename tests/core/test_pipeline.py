"""attention_core.pipeline: text → tokens → embeddings → the module, as the pages see it."""

from __future__ import annotations

import numpy as np
import torch

from attention_core.attention import build_attention, causal_mask
from attention_core.embedding import embed
from attention_core.limits import EXACT, MAX_TEXT_CHARS
from attention_core.pipeline import analyze
from attention_core.settings import Settings


def test_article_example_matches_the_module_directly():
    s = Settings(text="中和有一個永和路", tokenizer="jieba", embed_dim=8, num_heads=2, seed=3)
    a = analyze(s)
    assert [t.text for t in a.tokens] == ["中和", "有", "一個", "永和路"]
    assert a.labels == ["0:中和", "1:有", "2:一個", "3:永和路"]
    m = build_attention("multi", 8, 2, seed=3)
    with torch.no_grad():
        _, w = m(embed(a.tokens, 8, seed=3))
    np.testing.assert_array_equal(a.weights, w[0].numpy())
    assert a.weights.dtype == np.float32 and not a.truncated


def test_single_causal_positional_and_trace():
    s = Settings(
        text="the cat saw the dog",
        tokenizer="word",
        attention="single",
        embed_dim=6,
        causal=True,
        positional=True,
    )
    a = analyze(s, with_trace=True)
    assert a.weights.shape == (1, 5, 5)
    assert np.all(np.triu(a.weights[0], 1) == 0)
    m = build_attention("single", 6, seed=0)
    with torch.no_grad():
        out, _ = m(embed(a.tokens, 6, seed=0, positional=True), causal_mask(5))
    np.testing.assert_allclose(a.trace["output"], out[0].numpy(), atol=EXACT)
    assert a.trace["scores"].shape == (1, 5, 5) and a.trace["q"].shape == (1, 5, 6)


def test_truncation_and_text_cut():
    a = analyze(Settings(text="字" * (MAX_TEXT_CHARS + 10), tokenizer="char"), max_tokens=50)
    assert len(a.tokens) == 50 and a.total_tokens == MAX_TEXT_CHARS
    assert a.text_cut and a.truncated
    np.testing.assert_allclose(a.weights.sum(-1), 1, atol=1e-5)


def test_same_settings_same_matrices():
    s = Settings(text="Attention is all you need.", seed=11)
    np.testing.assert_array_equal(analyze(s).weights, analyze(s).weights)


def test_a_script_calls_analyze_with_a_text_and_keyword_settings():
    """The one obvious call from text to attention, with the app's defaults otherwise;
    weights equal an independent recomputation (q and k from the module's nn.Linear)."""
    import attention_core
    from tests.support.teaching import reference_weights

    a = attention_core.analyze("中和有一個永和路", embed_dim=8, num_heads=2)
    assert [t.text for t in a.tokens] == ["中和", "有", "一個", "永和路"]
    assert a.weights.shape == (2, 4, 4)  # (heads, queries, keys)
    np.testing.assert_allclose(a.weights.sum(-1), 1, atol=EXACT)
    expected = reference_weights("中和有一個永和路", embed_dim=8, num_heads=2)
    np.testing.assert_allclose(a.weights, expected, atol=EXACT)
    causal = attention_core.analyze("the cat sat", causal=True, embed_dim=np.int64(8))
    assert causal.settings.causal and causal.weights.shape == (4, 3, 3)
    assert np.all(np.triu(causal.weights, 1) == 0)


def test_analyze_names_what_is_wrong_in_keyword_settings():
    import pytest

    for bad, words in (
        ({"embed_dim": 6, "num_heads": 4}, "num_heads=4: embed_dim=6 divides into 1, 2, 3, 6"),
        ({"tokenizer": "bpe"}, "tokenizer=bpe: valid: auto, jieba"),
        ({"heads": 2}, "unknown settings ['heads']"),
        ({"embed_dim": 0}, "embed_dim=0: an integer from 1 to"),
        ({"causal": "maybe"}, "causal=maybe: true or false"),
    ):
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            analyze("中和有一個永和路", **bad)
    with pytest.raises(ValueError, match="a text or a ModelSettings"):
        analyze(None)
