"""attention_core.stats on matrices whose statistics can be computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.stats import head_similarity, head_stats, similarity_order

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
