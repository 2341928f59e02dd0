"""attention_core.embedding: stable per-token vectors and Vaswani et al.'s sinusoidal positions."""

from __future__ import annotations

import math

import torch

from attention_core.embedding import embed, sinusoidal_positions, token_vector


def test_same_token_same_vector_without_positions():
    x = embed(["the", "cat", "saw", "the", "dog"], 8, seed=1)
    assert x.shape == (1, 5, 8)
    assert torch.equal(x[0, 0], x[0, 3])
    assert not torch.equal(x[0, 0], x[0, 1])
    assert torch.equal(x[0, 1], token_vector("cat", 8, seed=1))


def test_seed_changes_vectors_and_is_stable():
    assert torch.equal(embed(["中和"], 4, seed=3), embed(["中和"], 4, seed=3))
    assert not torch.equal(embed(["中和"], 4, seed=3), embed(["中和"], 4, seed=4))


def test_positions_separate_repeated_tokens():
    x = embed(["the", "cat", "the"], 6, seed=0, positional=True)
    assert not torch.equal(x[0, 0], x[0, 2])
    plain = embed(["the", "cat", "the"], 6, seed=0)
    torch.testing.assert_close(x - plain, sinusoidal_positions(3, 6).unsqueeze(0))


def test_sinusoidal_values_by_hand():
    pe = sinusoidal_positions(3, 5)  # odd width works
    assert pe.shape == (3, 5)
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0]))
    p, i = 2, 2  # dims 2 and 3 share frequency 1 / 10000^(2/5)
    angle = p / 10000 ** (i / 5)
    assert math.isclose(pe[p, 2].item(), math.sin(angle), abs_tol=1e-6)
    assert math.isclose(pe[p, 3].item(), math.cos(angle), abs_tol=1e-6)


def test_tokens_use_their_label_and_empty_is_fine():
    class T:
        label = "hello"

    assert torch.equal(embed([T()], 4)[0, 0], token_vector("hello", 4))
    assert embed([], 4).shape == (1, 0, 4)
