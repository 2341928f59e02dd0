"""attention_core.stats on matrices whose statistics can be computed by hand, and head
similarity against SciPy's Jensen–Shannon distance (an implementation not ours)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from attention_core.stats import (
    BROAD_ENTROPY,
    PATTERN_MASS,
    flatness,
    head_patterns,
    head_similarity,
    head_stats,
    same_word,
    similarity_order,
)

EYE = np.eye(4)
UNIFORM = np.full((4, 4), 0.25)
PREVIOUS = np.array([[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=float)
ARTICLE = np.array([[0.5, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, 0], [0.5, 0, 0, 0.5]])


def test_identity_uniform_previous_by_hand():
    eye, uni, prev = head_stats(np.stack([EYE, UNIFORM, PREVIOUS]))
    assert (eye.entropy, eye.max_weight, eye.diagonal, eye.previous) == (0, 1, 1, 0)
    assert eye.distance == 0
    assert uni.entropy == pytest.approx(1.0)
    assert uni.max_weight == 0.25 and uni.first == 0.25
    assert uni.distance == pytest.approx((6 + 4 + 4 + 6) / 4 / 4)  # Σ|i-j| / 4 per row
    assert prev.previous == 1.0 and prev.first == 0.5 and prev.top_key == 0


def test_article_matrix():
    (s,) = head_stats(ARTICLE)
    assert s.diagonal == pytest.approx((0.5 + 1 + 1 + 0.5) / 4)
    assert s.entropy == pytest.approx(2 * np.log(2) / 4 / np.log(4))
    assert s.distance == pytest.approx((1.5 + 0 + 0 + 1.5) / 4)


def test_similarity_symmetric_ones_on_diagonal_and_ordering():
    w = np.stack([EYE, UNIFORM, EYE * 0.9 + 0.025, PREVIOUS])
    sim = head_similarity(w)
    assert sim.shape == (4, 4)
    np.testing.assert_array_equal(sim, sim.T)
    np.testing.assert_array_equal(np.diag(sim), 1.0)
    assert (sim >= 0).all() and (sim <= 1).all()
    assert sim[0, 2] > sim[0, 1]  # a softened identity is closer to identity than uniform
    # disjoint one-hot rows: JSD = ln 2 → similarity 0
    assert head_similarity(np.stack([EYE, np.roll(EYE, 1, axis=1)]))[0, 1] == pytest.approx(0)
    order = similarity_order(sim)
    assert sorted(order) == [0, 1, 2, 3]
    assert abs(order.index(0) - order.index(2)) == 1


def test_masked_rows_and_bad_shapes():
    w = np.stack([EYE, EYE])
    w[:, 1] = 0  # a fully masked row
    assert head_similarity(w)[0, 1] == pytest.approx(1)
    assert head_stats(np.zeros((2, 0, 0)))[1].head == 1
    with pytest.raises(ValueError, match="H, n, n"):
        head_stats(np.zeros((2, 3, 4)))


# --- similarity values, not just its shape ------------------------------------------------------
# head_similarity(a, b) = 1 − mean over query rows r of JSD(a_r ‖ b_r) in bits (the code takes
# JSD in nats and divides by ln 2), over the rows that carry weight in every head.
# scipy's jensenshannon(p, q, base=2) is the JS *distance*, √JSD in bits; squared, JSD.


def scipy_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 − mean row JSD in bits, from scipy, over the rows live (non-zero) in both heads."""
    live = [r for r in range(a.shape[0]) if a[r].sum() > 0 and b[r].sum() > 0]
    return 1.0 - float(np.mean([jensenshannon(a[r], b[r], base=2) ** 2 for r in live]))


def random_heads(rng: np.random.Generator, heads: int, n: int) -> np.ndarray:
    """(heads, n, n) row-stochastic, some rows sharp, some with exact zeros."""
    w = rng.dirichlet(np.full(n, 0.3), size=(heads, n))  # (H, n, n), rows sum to 1
    w[0] = np.tril(w[0])  # a causal head: zeros above the diagonal
    w[0] /= w[0].sum(-1, keepdims=True)
    return w


def test_identity_vs_uniform_over_four_keys_by_hand():
    # Every row: p = one-hot, q = 1/4 each; m = (p + q) / 2 = (5/8, 1/8, 1/8, 1/8).
    # JSD = ½ KL(p ‖ m) + ½ KL(q ‖ m), in nats:
    #   KL(p ‖ m) = ln(1 / (5/8)) = ln(8/5)
    #   KL(q ‖ m) = ¼ ln((1/4) / (5/8)) + ¾ ln((1/4) / (1/8)) = ¼ ln(2/5) + ¾ ln 2
    # The code's base is 2 (JSD in nats / ln 2, so disjoint rows give exactly 1):
    jsd_nats = 0.5 * math.log(8 / 5) + 0.5 * (0.25 * math.log(2 / 5) + 0.75 * math.log(2))
    expected = 1 - jsd_nats / math.log(2)  # ≈ 0.4512
    assert expected == pytest.approx(0.45121, abs=1e-5)
    sim = head_similarity(np.stack([EYE, UNIFORM]))
    assert sim[0, 1] == pytest.approx(expected, abs=1e-12)
    assert sim[1, 0] == pytest.approx(expected, abs=1e-12)
    assert scipy_similarity(EYE, UNIFORM) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("seed", "heads", "n"), [(0, 5, 7), (1, 3, 2), (2, 4, 16)])
def test_similarity_equals_scipy_jensen_shannon(seed: int, heads: int, n: int):
    w = random_heads(np.random.default_rng(seed), heads, n)
    sim = head_similarity(w)
    expected = np.array(
        [[scipy_similarity(w[a], w[b]) for b in range(heads)] for a in range(heads)]
    )
    np.testing.assert_allclose(sim, expected, atol=1e-9)
    assert np.ptp(expected[~np.eye(heads, dtype=bool)]) > 0.01  # the values differ: a real check


def test_similarity_with_a_masked_row_uses_only_rows_live_in_every_head():
    w = random_heads(np.random.default_rng(3), 3, 6)
    w[1, 2] = 0  # head 1, query 2: fully masked → row 2 is dropped for every pair
    sim = head_similarity(w)
    rows = [r for r in range(6) if r != 2]
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        assert sim[a, b] == pytest.approx(scipy_similarity(w[a, rows], w[b, rows]), abs=1e-9)
    # heads 0 and 2 lose row 2 too, although both carry weight there (live in EVERY head)
    assert sim[0, 2] != pytest.approx(scipy_similarity(w[0], w[2]), abs=1e-6)


# --- patterns and flatness -----------------------------------------------------------------------


def test_max_weight_is_the_mean_of_row_maxima_and_peak_the_largest_weight():
    w = np.array([[0.9, 0.1], [0.5, 0.5]])
    (s,) = head_stats(w)
    assert s.max_weight == pytest.approx((0.9 + 0.5) / 2)  # what the summary names it
    assert s.peak == pytest.approx(0.9)  # the cell a student sees


def test_head_patterns_by_hand():
    n = 5
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    last = np.zeros((n, n))
    last[:, -1] = 1.0
    weak_previous = 0.3 * PREVIOUS + 0.7 * UNIFORM  # previous 0.3 + 0.7/4 = 0.475 < 0.5
    found = head_patterns(np.stack([PREVIOUS, EYE, UNIFORM, ARTICLE]))
    assert found[0] == ("previous", 1.0)
    assert found[1] == ("self", 1.0)
    assert found[2] == ("broad", pytest.approx(1.0))
    assert found[3][0] == "self" and found[3][1] == pytest.approx(0.75)
    assert head_patterns(np.stack([first, last])) == [("first", 1.0), ("last", 1.0)]
    (weak,) = head_patterns(weak_previous)
    assert weak is None or weak[0] == "broad"  # below PATTERN_MASS: not "previous"
    assert PATTERN_MASS == 0.5 and 0 < BROAD_ENTROPY < 1


def test_flatness_reads_the_scores_spread_off_the_weights_like_the_trace():
    from attention_core.pipeline import analyze
    from attention_core.settings import ModelSettings

    for causal in (False, True):
        settings = ModelSettings(
            text="a lecturer projects attention for the class to see it",
            tokenizer="word",
            embed_dim=32,
            num_heads=4,
            causal=causal,
        )
        result = analyze(settings, with_trace=True)
        scaled = result.trace["scaled"].astype(np.float64)  # (H, n, n), -inf where masked
        finite = np.isfinite(scaled)
        rows = finite.sum(-1) >= 2
        masked = np.where(finite, scaled, np.nan)
        reference = float(np.nanstd(masked, axis=-1)[rows].mean())  # from the scores themselves
        f = flatness(result.weights)
        assert f.score_spread == pytest.approx(reference, rel=1e-3)
        n = len(result.tokens)
        assert f.uniform == pytest.approx(1 / n)
        live = result.weights[result.weights > 0]
        assert f.low <= 1 / n <= f.high or causal
        assert np.mean((live >= f.low) & (live <= f.high)) == pytest.approx(0.9, abs=0.02)


def test_flatness_of_uniform_rows_has_no_spread():
    f = flatness(UNIFORM)
    assert f.score_spread == pytest.approx(0.0)
    assert f.low == f.high == 0.25 and f.factor == pytest.approx(1.0)


def test_flatness_of_a_large_grid_reads_percentiles_off_a_sample_to_three_decimals():
    rng = np.random.default_rng(7)
    scores = rng.normal(scale=0.4, size=(12, 512, 512))
    w = np.exp(scores)
    w = (w / w.sum(-1, keepdims=True)).astype(np.float32)  # (12, 512, 512)
    f = flatness(w)
    low, high = np.percentile(w.astype(np.float64), [5, 95])  # every weight
    assert f.low == pytest.approx(low, abs=5e-5) and f.high == pytest.approx(high, abs=5e-5)
    logs = np.log(w.astype(np.float64))
    assert f.score_spread == pytest.approx(logs.std(-1).mean(), rel=1e-4)


# --- same-word attention ------------------------------------------------------------------------
def test_same_word_by_hand_two_words():
    # words [0 1] [2]; rows 0 and 1 have a partner: 0.9 and 0.6 → 0.75. The other order
    # [0] [1 2]: rows 1 and 2, 0.1 and 0.2 → 0.15. Both orders, once each: baseline 0.45.
    w = np.array([[0.1, 0.9, 0.0], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    (head,) = same_word(w, [2, 1])
    assert head.rows == 2
    assert head.observed == pytest.approx(0.75, abs=1e-12)
    assert head.shuffled == pytest.approx(0.45, abs=1e-12)
    assert head.ratio == pytest.approx(0.75 / 0.45, abs=1e-12)


def test_same_word_causal_counts_only_earlier_partners_and_skips_bos():
    # [BOS] then 中和 / 有: only 和 (position 2) has an earlier partner, 中 (position 1)
    w = np.array([[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.1, 0.7, 0.2, 0], [0.25, 0.25, 0.25, 0.25]])
    (head,) = same_word(w, [2, 1], offset=1, causal=True)
    assert head.rows == 1 and head.observed == pytest.approx(0.7, abs=1e-12)
    # the other order 有 / 中和 puts the pair at positions 2, 3: row 3 gives 0.25 to 2
    assert head.shuffled == pytest.approx((0.7 + 0.25) / 2, abs=1e-12)


def test_same_word_blind_heads_score_one_and_a_word_head_above():
    lengths = [2, 1, 2, 3]  # 中和 / 有 / 一個 / 永和路
    n = sum(lengths)
    uniform = np.full((n, n), 1 / n)
    word = np.repeat(np.arange(len(lengths)), lengths)
    same = (word[:, None] == word[None, :]) & ~np.eye(n, dtype=bool)
    # 80 % of each row on the other characters of its word, 20 % spread over the rest
    focused = np.where(same, 0.8 / same.sum(1, keepdims=True).clip(1), 0.0)
    focused += np.where(~same, 0.2 / (~same).sum(1, keepdims=True), 0.0)
    uni, foc = same_word(np.stack([uniform, focused]), lengths)
    assert uni.ratio == pytest.approx(1.0, abs=1e-12)  # depends on word lengths only
    # on a sentence this short shuffled words still overlap the real ones a lot: 1.56
    assert foc.observed == pytest.approx(0.8, abs=1e-12) and foc.ratio > 1.5


def test_same_word_refuses_words_that_do_not_fit():
    with pytest.raises(ValueError, match="do not fit"):
        same_word(np.eye(3), [2, 2])
