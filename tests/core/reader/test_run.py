"""The trained reader as the app runs it (attention_core.reader.run, .card, .words and
attention_core.pooling): one layer's trace against the model's own forward pass, pooling
to jieba words against sums worked by hand, and the pipeline's `weights="trained"` view."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT, MAX_TEXT_CHARS
from attention_core.pipeline import analyze, forward
from attention_core.pooling import pool_weights, word_groups
from attention_core.reader import load_shipped
from attention_core.reader.card import HEAD_PATTERNS, head_facts, shipped_shape
from attention_core.reader.run import layer_trace, reader_ids, reader_tokens
from attention_core.reader.words import sentence_same_word, word_lengths
from attention_core.settings import ModelSettings
from attention_core.stats import same_word

ARTICLE = "中和有一個永和路"  # jieba: 中和 / 有 / 一個 / 永和路
CLASS = "老師在教室裡用投影機講解注意力機制，學生們都聽得非常認真喔。"


@pytest.fixture(scope="module")
def reader():
    return load_shipped()


def _model_weights(reader, text: str) -> list[torch.Tensor]:
    """The model's own forward pass: every layer's weights (H, n, n) for `text`."""
    with torch.no_grad():
        _, weights = reader.model(torch.tensor([reader.vocab.encode(text).ids]))
    return [w[0] for w in weights]


# --- one layer's trace ---------------------------------------------------------------------
def test_every_layers_trace_is_the_models_own_attention(reader):
    tokens = reader_tokens(CLASS, reader.vocab).tokens
    own = _model_weights(reader, CLASS)
    for layer, expected in enumerate(own):
        trace = layer_trace(reader, [tokens], layer)
        torch.testing.assert_close(trace.weights[0], expected, atol=EXACT, rtol=0)
        # the five steps inside agree with the weights they end in
        scores = trace.q @ trace.k.transpose(-2, -1) / trace.divisor
        allowed = torch.tril(torch.ones(len(tokens), len(tokens), dtype=torch.bool))
        soft = torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1)
        torch.testing.assert_close(soft, trace.weights, atol=EXACT, rtol=0)


def test_a_padding_mask_is_added_to_the_causal_one(reader):
    tokens = reader_tokens(ARTICLE, reader.vocab).tokens
    n = len(tokens)
    keep = torch.ones(n, n, dtype=torch.bool)
    keep[:, 3] = False  # no query may look at token 3
    w = layer_trace(reader, [tokens], 1, mask=keep).weights[0]  # (H, n, n)
    assert torch.all(w[:, :, 3] == 0)
    assert torch.all(torch.triu(w, diagonal=1) == 0)  # still causal
    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:2]), atol=EXACT, rtol=0)


def test_a_layer_outside_the_model_or_a_sentence_past_its_context_is_refused(reader):
    tokens = reader_tokens(ARTICLE, reader.vocab).tokens
    with pytest.raises(ValueError, match="layers 0 to 3"):
        layer_trace(reader, [tokens], 4)
    too_long = reader_tokens("字" * reader.config.context, reader.vocab).tokens
    with pytest.raises(ValueError, match="context"):
        layer_trace(reader, [too_long], 0)


def test_tokens_start_with_bos_and_unknown_units_are_flagged(reader):
    read = reader_tokens("貓😀ア cat", reader.vocab)
    assert [t.label for t in read.tokens] == ["[BOS]", "貓", "😀", "ア", "cat"]
    assert read.tokens[0].special and not any(t.special for t in read.tokens[1:])
    assert "😀" not in reader.vocab.index and 2 in read.unknown
    ids = reader_ids(read.tokens, reader.vocab)
    assert ids[0] == reader.vocab.bos_id
    assert ids == reader.vocab.encode("貓😀ア cat").ids
    assert reader_ids(["[PAD]", "中和"], reader.vocab) == [reader.vocab.unk_id] * 2


# --- pooling to words ------------------------------------------------------------------------
def test_word_groups_follow_jieba_and_keep_specials_apart():
    offsets = [(0, 0), *[(i, i + 1) for i in range(len(ARTICLE))]]
    groups = word_groups(offsets, [True] + [False] * len(ARTICLE), ARTICLE)
    assert groups.group.tolist() == [0, 1, 1, 2, 3, 3, 4, 4, 4]
    assert groups.spans == [(0, 0), (0, 2), (2, 3), (3, 5), (5, 8)]
    assert groups.lengths == [1, 2, 1, 2, 3]
    assert word_lengths(ARTICLE) == [2, 1, 2, 3]


def test_pooled_weights_sum_keys_and_average_queries_by_hand():
    w = np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]])  # (1, 3, 3)
    pooled = pool_weights(w, np.array([0, 1, 1]))  # pieces 1 and 2 are one word
    # word 1's row: mean of rows 1 and 2, keys summed: [(0.5+0.2)/2, (0.5+0+0.3+0.5)/2]
    np.testing.assert_allclose(pooled, [[[1.0, 0.0], [0.35, 0.65]]])


def test_the_trained_view_pools_the_readers_characters_to_jieba_words(reader):
    chars = analyze(ModelSettings(text=ARTICLE, tokenizer="char", weights="trained"))
    words = analyze(ModelSettings(text=ARTICLE, tokenizer="jieba", weights="trained"))
    assert [t.label for t in chars.tokens] == ["[BOS]", *ARTICLE]
    assert [t.label for t in words.tokens] == ["[BOS]", "中和", "有", "一個", "永和路"]
    assert words.pooled and not chars.pooled and words.read_tokens == 9
    shape = shipped_shape()
    own = _model_weights(reader, ARTICLE)[shape.default_layer].numpy()  # (H, 9, 9)
    np.testing.assert_allclose(chars.weights, own, atol=EXACT, rtol=0)
    groups = [[0], [1, 2], [3], [4, 5], [6, 7, 8]]
    for a, rows in enumerate(groups):
        for b, keys in enumerate(groups):
            want = own[:, rows][:, :, keys].sum(-1).mean(-1)  # (H,)
            np.testing.assert_allclose(words.weights[:, a, b], want, atol=EXACT, rtol=0)


def test_the_trained_view_uses_the_checkpoints_sizes_and_layer(reader):
    s = ModelSettings(text=ARTICLE, embed_dim=6, num_heads=3, seed=9, weights="trained", layer=2)
    e = s.effective
    assert (e.embed_dim, e.num_heads, e.attention, e.causal, e.layer) == (128, 4, "multi", True, 2)
    a = analyze(s, with_trace=True)
    assert a.trace["q"].shape == (4, 9, 32) and not a.pooled  # a trace is never pooled
    own = _model_weights(reader, ARTICLE)[2].numpy()
    np.testing.assert_allclose(a.weights, own, atol=EXACT, rtol=0)
    assert forward([a.tokens], s).weights.shape == (1, 4, 9, 9)
    with pytest.raises(ValueError, match="no module"):
        forward([a.tokens], s, module=torch.nn.Identity())  # type: ignore[arg-type]


def test_long_text_is_cut_at_the_context_and_unknowns_are_counted(reader):
    context = reader.config.context
    a = analyze(ModelSettings(text="注意力😀" * 30_000, tokenizer="char", weights="trained"))
    assert a.text_cut and len(a.text) == MAX_TEXT_CHARS
    assert len(a.tokens) == context and a.total_tokens == 1 + MAX_TEXT_CHARS
    assert a.truncated
    assert list(a.unknown) == [i for i in range(1, context) if i % 4 == 0]  # every 😀
    pooled = analyze(ModelSettings(text="注意力😀" * 30, tokenizer="jieba", weights="trained"))
    assert pooled.truncated and pooled.read_tokens == context
    assert all("😀" in pooled.tokens[i].text for i in pooled.unknown)


# --- what the card says about the heads ------------------------------------------------------
def test_every_head_has_the_cards_numbers_and_a_name_only_when_they_are_clear():
    """Names from the card's everyday figures: a pattern's name when its mass is clear, the
    word's when same-word beats shuffled words, "taught" for the head fit.py taught; the
    best word head on everyday sentences is ≥ 2.0 × shuffled words."""
    facts = head_facts()
    shape = shipped_shape()
    card = load_shipped().card
    assert facts is not None and len(facts) == shape.num_layers
    taught = tuple(card["word_head"])
    for row in facts:
        assert len(row) == shape.num_heads
        for fact in row:
            assert set(fact.masses) == set(HEAD_PATTERNS)
            figures = card["everyday"]
            assert fact.masses["previous"] == figures["heads"]["previous"][fact.layer][fact.head]
            assert fact.word_observed == figures["same_word"]["observed"][fact.layer][fact.head]
            if (fact.layer, fact.head) == taught:
                assert fact.name == "taught" and fact.taught
                assert fact.value == pytest.approx(fact.word_ratio)
            elif fact.name in HEAD_PATTERNS:
                assert fact.value == fact.masses[fact.name] >= 0.3
                # not a word head that its previous character (often in its word) would hide
                assert fact.word_ratio < 1.25 or fact.word_observed <= fact.value
            elif fact.name == "word":
                assert fact.value == pytest.approx(fact.word_ratio) and fact.value >= 1.25
            else:
                assert fact.name is None and max(fact.masses.values()) < 0.3
    best = max((f.word_ratio, f.layer) for row in facts for f in row)
    assert shape.default_layer == best[1]  # the default layer holds the best word head
    best_head = max((f for row in facts for f in row), key=lambda f: f.word_ratio)
    assert best_head.name in ("word", "taught") and best_head.value >= 2.0


def test_the_sentences_own_same_word_figure_matches_the_statistic(reader):
    a = analyze(ModelSettings(text=CLASS, tokenizer="char", weights="trained"))
    mine = sentence_same_word(a.weights, a.text)
    direct = same_word(a.weights, word_lengths(CLASS), offset=1, causal=True)
    assert mine == direct
    assert sentence_same_word(a.weights[:, :3, :3], a.text) is not None  # 老師 is cut to fit
    alone = analyze(ModelSettings(text="我", tokenizer="char", weights="trained"))
    assert sentence_same_word(alone.weights, alone.text) is None  # no two-character word


def test_the_cards_head_masses_are_the_mean_weights_by_hand():
    from attention_core.reader.measure import heldout_heads

    reader = load_shipped()
    lines = ["貓坐在墊子上，因為它很累。", "短", ARTICLE]  # "短" is too short to count
    got = heldout_heads(reader.model, reader.vocab, lines)
    assert (got["sentences"], got["rows"]) == (2, (14 - 2) + (9 - 2))
    rows, prev, start, far, sign, sign_rows = 0, 0.0, 0.0, 0.0, 0.0, 0
    for text in (lines[0], ARTICLE):
        w = _model_weights(reader, text)[1][2].numpy()  # layer 1, head 2: (n, n)
        units = ["[BOS]", *text]
        for i in range(2, len(units)):
            rows += 1
            prev += w[i, i - 1]
            start += w[i, 0]
            far += w[i, 1 : max(1, i - 3)].sum()  # more than FAR = 3 places back, not [BOS]
            marks = [j for j in range(1, i) if units[j] in "，。"]
            if marks:
                sign += w[i, marks].sum()
                sign_rows += 1
    assert got["previous"][1][2] == pytest.approx(prev / rows, abs=1e-4)
    assert got["start"][1][2] == pytest.approx(start / rows, abs=1e-4)
    assert got["far"][1][2] == pytest.approx(far / rows, abs=1e-4)
    assert got["punctuation"][1][2] == pytest.approx(sign / sign_rows, abs=1e-4)
    assert got["punctuation_rows"] == sign_rows
