"""Tests for attention_core/compare.py: against hand-computed cases, the pipeline's own path
(tokenizer "manual") and transformers-free fake pretrained results."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.compare import (
    all_layers,
    difference_peak,
    diverging_limit,
    head_difference,
    layer_view,
    most_focused_head,
    pretrained_labels,
    same_tokens,
    sort_heads,
    stack_heads,
    stats_rows,
    unknown_pieces,
    untrained_attention,
    visible_tokens,
)
from attention_core.limits import EXACT
from attention_core.pipeline import analyze
from attention_core.pretrained import PretrainedAttention
from attention_core.settings import Settings
from attention_core.stats import STAT_NAMES, head_similarity, head_stats

RNG = np.random.default_rng(7)


def _rows(shape: tuple[int, ...]) -> np.ndarray:
    w = RNG.random(shape).astype(np.float32)
    return w / w.sum(-1, keepdims=True)


# Three heads over n = 3 tokens whose statistics are known by hand.
ONE_HOT = np.eye(3, dtype=np.float32)  # entropy 0, diagonal 1
UNIFORM = np.full((3, 3), 1 / 3, dtype=np.float32)  # entropy 1, max weight 1/3
FIRST = np.array([[1, 0, 0], [1, 0, 0], [0.5, 0.5, 0]], dtype=np.float32)
HEADS = np.stack([ONE_HOT, UNIFORM, FIRST])  # (3, 3, 3)


def _fake_result() -> PretrainedAttention:
    """[CLS] 中 [UNK] 路 [SEP] over the text "中個路", 2 layers × 2 heads, random rows."""
    return PretrainedAttention(
        tokens=["[CLS]", "中", "[UNK]", "[UNK]", "[SEP]"],
        offsets=[(0, 0), (0, 1), (1, 2), (2, 3), (0, 0)],
        special=[True, False, False, False, True],
        unknown=[False, False, True, True, False],
        attentions=_rows((2, 2, 5, 5)),
        truncated=False,
    )


# --- differences ---------------------------------------------------------------------------


def test_difference_of_a_head_with_itself_is_all_zero():
    w = _rows((6, 6))
    diff = head_difference(w, w)
    assert diff.shape == (6, 6) and diff.dtype == np.float32
    assert not diff.any()
    assert difference_peak(diff) == 0.0
    assert diverging_limit(diff) == 1.0  # neutral scale, not a zero-width one


def test_difference_matches_hand_computation_and_rows_sum_to_zero():
    a = np.array([[0.5, 0.5], [1.0, 0.0]])
    b = np.array([[0.25, 0.75], [0.0, 1.0]])
    diff = head_difference(a, b)
    np.testing.assert_allclose(diff, [[0.25, -0.25], [1.0, -1.0]])
    np.testing.assert_allclose(diff.sum(-1), 0.0, atol=EXACT)
    assert difference_peak(diff) == pytest.approx(1.0)
    assert diverging_limit(np.array([[0.2, -0.5]])) == pytest.approx(0.5)


def test_difference_refuses_heads_of_different_sizes():
    with pytest.raises(ValueError, match="same shape"):
        head_difference(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match=r"\(n, n\)"):
        head_difference(np.ones((2, 3)), np.ones((2, 3)))


def test_same_tokens_and_stack_heads():
    assert same_tokens(["中和", "有"], ("中和", "有"))
    assert not same_tokens(["中和", "有"], ["中", "和", "有"])
    a, b = _rows((2, 4, 4)), _rows((3, 4, 4))
    stacked = stack_heads(a, b)
    assert stacked.shape == (5, 4, 4)
    np.testing.assert_array_equal(stacked[:2], a)
    np.testing.assert_array_equal(stacked[2:], b)
    with pytest.raises(ValueError, match="same n"):
        stack_heads(a, _rows((2, 5, 5)))


# --- statistics: sorting and table rows ---------------------------------------------------


def test_sort_heads_by_hand_known_statistics():
    stats = head_stats(HEADS)
    assert sort_heads(stats, "entropy") == [1, 2, 0]  # uniform, first-token, one-hot
    assert sort_heads(stats, "entropy", descending=False) == [0, 2, 1]
    assert sort_heads(stats, "diagonal")[0] == 0  # the identity head looks at itself
    assert sort_heads(stats, "first")[0] == 2  # the head that looks at token 0
    assert sort_heads(stats, "head") == [0, 1, 2]  # the given order, whatever `descending`


def test_sort_heads_keeps_ties_in_order_and_rejects_unknown_metrics():
    stats = head_stats(np.stack([UNIFORM, ONE_HOT, UNIFORM, ONE_HOT]))
    assert sort_heads(stats, "entropy") == [0, 2, 1, 3]
    assert sort_heads(stats, "entropy", descending=False) == [1, 3, 0, 2]
    with pytest.raises(ValueError, match="entropy"):
        sort_heads(stats, "loudness")


def test_stats_rows_carry_every_statistic_and_the_top_key_label():
    stats = head_stats(HEADS)
    labels = ["0:a", "1:b", "2:c"]
    rows = stats_rows(stats, ["h0", "h1", "h2"], labels)
    assert [r["head"] for r in rows] == ["h0", "h1", "h2"]
    for s, row in zip(stats, rows, strict=True):
        for metric in STAT_NAMES:
            assert row[metric] == pytest.approx(getattr(s, metric))
    assert rows[2]["top_key"] == "0:a"  # FIRST sends 2.5 of its 3 rows' mass to token 0
    assert rows[0]["entropy"] == pytest.approx(0.0)
    assert rows[1]["entropy"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="one name per head"):
        stats_rows(stats, ["h0"], labels)


def test_similarity_is_symmetric_with_ones_on_the_diagonal():
    sim = head_similarity(_rows((5, 7, 7)))
    np.testing.assert_allclose(sim, sim.T)
    np.testing.assert_array_equal(np.diag(sim), 1.0)
    assert (sim >= 0).all() and (sim <= 1).all()


# --- the untrained module on given tokens --------------------------------------------------


@pytest.mark.parametrize(
    ("attention", "num_heads", "causal", "positional"),
    [("multi", 4, False, False), ("multi", 2, True, True), ("single", 4, False, True)],
)
def test_untrained_attention_equals_the_pipeline_on_the_same_tokens(
    attention: str, num_heads: int, causal: bool, positional: bool
):
    tokens = ["[CLS]", "the", "cat", "sat", "##s", "[SEP]"]
    module = {
        "attention": attention,
        "embed_dim": 8,
        "num_heads": num_heads,
        "seed": 3,
        "causal": causal,
        "positional": positional,
    }
    mine = untrained_attention(tokens, **module)
    settings = Settings(text=" | ".join(tokens), tokenizer="manual", **module)
    reference = analyze(settings)
    assert [t.label for t in reference.tokens] == tokens
    assert mine.shape == (settings.heads, 6, 6) and mine.dtype == np.float32
    np.testing.assert_allclose(mine, reference.weights, atol=EXACT)
    np.testing.assert_allclose(mine.sum(-1), 1.0, atol=EXACT)
    if causal:
        assert not np.triu(mine, k=1).any()


# --- pretrained results (a fake one: no model needed) --------------------------------------


def test_layer_view_and_labels_with_special_tokens_shown():
    result = _fake_result()
    w = layer_view(result, 1)
    np.testing.assert_array_equal(w, result.attentions[1])
    assert pretrained_labels(result) == ["0:[CLS]", "1:中", "2:[UNK]", "3:[UNK]", "4:[SEP]"]
    np.testing.assert_array_equal(all_layers(result), result.attentions)


def test_hiding_special_tokens_drops_them_and_renormalises_rows():
    result = _fake_result()
    w = layer_view(result, 0, hide_special=True)  # (2, 3, 3)
    kept = result.attentions[0][:, 1:4, 1:4]  # by hand: tokens 1..3
    np.testing.assert_allclose(w, kept / kept.sum(-1, keepdims=True), atol=EXACT)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=EXACT)
    assert visible_tokens(result, hide_special=True) == ["中", "[UNK]", "[UNK]"]
    assert pretrained_labels(result, hide_special=True) == ["0:中", "1:[UNK]", "2:[UNK]"]
    assert all_layers(result, hide_special=True).shape == (2, 2, 3, 3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        layer_view(result, 2)


def test_most_focused_head_is_the_lowest_entropy_one():
    attentions = np.stack(
        [np.stack([UNIFORM, FIRST]), np.stack([UNIFORM, ONE_HOT])]
    )  # (2, 2, 3, 3)
    assert most_focused_head(attentions) == (1, 1)  # the one-hot head: entropy 0
    attentions[0, 0] = ONE_HOT  # a tie at entropy 0: the lower layer wins
    assert most_focused_head(attentions) == (0, 0)
    with pytest.raises(ValueError, match=r"\(L, H, n, n\)"):
        most_focused_head(np.ones((2, 3, 3)))


def test_unknown_pieces_come_from_the_offsets():
    result = _fake_result()
    assert unknown_pieces(result, "中個路") == ["個", "路"]
    no_offsets = PretrainedAttention(
        tokens=["[UNK]"],
        offsets=[(0, 0)],
        special=[False],
        unknown=[True],
        attentions=np.ones((1, 1, 1, 1), dtype=np.float32),
        truncated=False,
    )
    assert unknown_pieces(no_offsets, "") == ["[UNK]"]
