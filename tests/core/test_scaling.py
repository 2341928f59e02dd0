"""Tests for attention_core/scaling.py: the √d_k experiment of the article's step (3).

References: theory (q·k of N(0, 1) vectors has std √d_k; Vaswani et al. 2017, footnote 4),
torch's Categorical entropy on N(0, 1) logits (the large-d_k limit of the scaled scores),
and the limits of softmax (uniform as T → ∞, one-hot as the scores grow).
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import pytest
import torch

from attention_core.scaling import DEFAULT_DIMS, scaled_divisor, scaling_experiment


@pytest.fixture(scope="module")
def result():
    return scaling_experiment(DEFAULT_DIMS, seed=0)


def test_default_dims_are_powers_of_two_from_2_to_1024(result):
    assert DEFAULT_DIMS == (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    np.testing.assert_array_equal(result.dims, DEFAULT_DIMS)
    assert np.all(result.queries >= result.n_samples)


def test_unscaled_entropy_falls_towards_zero(result):
    e = result.entropy_unscaled
    assert e[-1] < 0.2
    assert e[-1] < e[1]  # d_k = 1024 vs d_k = 4
    assert np.all(np.diff(e) < 0.02)  # monotone up to sampling noise
    assert result.max_weight_unscaled[-1] > 0.9  # nearly one-hot


def test_scaled_entropy_stays_high_at_every_dk(result):
    assert np.all(result.entropy_scaled > 0.5)
    assert np.all(result.entropy_scaled > result.entropy_unscaled - 0.02)
    assert np.all(result.max_weight_scaled < 0.5)
    # flat: the scaled softmax hardly depends on d_k
    assert np.ptp(result.entropy_scaled) < 0.1


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_dot_std_grows_like_sqrt_dk(seed):
    r = scaling_experiment(seed=seed)
    np.testing.assert_allclose(r.dot_std / np.sqrt(r.dims), 1.0, rtol=0.1)
    np.testing.assert_allclose(r.scaled_std, 1.0, rtol=0.1)
    np.testing.assert_allclose(r.sqrt_dims, [math.sqrt(d) for d in DEFAULT_DIMS])


def test_scaled_entropy_matches_torch_on_standard_normal_logits(result):
    # for large d_k, q·k / √d_k is close to N(0, 1): compare with torch's own entropy
    gen = torch.Generator().manual_seed(123)
    logits = torch.randn(20_000, result.n_keys, generator=gen)
    dist = torch.distributions.Categorical(logits=logits)
    entropy = (dist.entropy() / math.log(result.n_keys)).mean().item()
    max_weight = dist.probs.max(-1).values.mean().item()
    assert result.entropy_scaled[-1] == pytest.approx(entropy, abs=0.03)
    assert result.max_weight_scaled[-1] == pytest.approx(max_weight, abs=0.03)


def test_same_seed_same_result_other_seed_other_numbers(result):
    again = scaling_experiment(DEFAULT_DIMS, seed=0)
    for f in fields(result):
        a, b = getattr(result, f.name), getattr(again, f.name)
        assert np.array_equal(a, b), f.name
    other = scaling_experiment(DEFAULT_DIMS, seed=1)
    assert not np.array_equal(result.dot_std, other.dot_std)


def test_a_dk_does_not_depend_on_the_other_dims_asked_for(result):
    alone = scaling_experiment([64], seed=0)
    i = DEFAULT_DIMS.index(64)
    assert alone.dot_std[0] == result.dot_std[i]
    assert alone.entropy_unscaled[0] == result.entropy_unscaled[i]


def test_temperature_only_moves_the_scaled_curves(result):
    hot = scaling_experiment(DEFAULT_DIMS, seed=0, temperature=1000.0)
    np.testing.assert_array_equal(hot.entropy_unscaled, result.entropy_unscaled)
    # T → ∞: softmax of nearly equal logits is uniform
    np.testing.assert_allclose(hot.entropy_scaled, 1.0, atol=1e-3)
    np.testing.assert_allclose(hot.max_weight_scaled, 1 / hot.n_keys, atol=1e-3)
    cold = scaling_experiment(DEFAULT_DIMS, seed=0, temperature=0.25)
    assert np.all(cold.entropy_scaled < result.entropy_scaled)


def test_two_keys_max_weight_is_at_least_a_half():
    r = scaling_experiment([2, 8, 32], n_keys=2, n_samples=64, seed=5)
    assert np.all(r.max_weight_unscaled >= 0.5) and np.all(r.max_weight_scaled >= 0.5)
    assert np.all((r.entropy_scaled >= 0) & (r.entropy_scaled <= 1))


def test_scaled_divisor():
    assert scaled_divisor(4) == 2.0
    assert scaled_divisor(16, temperature=0.5) == 2.0
    assert scaled_divisor(2, temperature=3.0) == pytest.approx(3 * math.sqrt(2))
    with pytest.raises(ValueError, match="head_dim"):
        scaled_divisor(0)
    with pytest.raises(ValueError, match="temperature"):
        scaled_divisor(4, temperature=0.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dims": []}, "at least one"),
        ({"dims": [0]}, "integer from 1"),
        ({"dims": [2.5]}, "integer from 1"),
        ({"dims": [True]}, "integer from 1"),
        ({"dims": [8], "n_keys": 1}, "n_keys"),
        ({"dims": [8], "n_samples": 1}, "n_samples"),
        ({"dims": [8], "temperature": 0}, "temperature"),
        ({"dims": [8], "temperature": float("nan")}, "temperature"),
    ],
)
def test_invalid_arguments_say_what_is_valid(kwargs, message):
    dims = kwargs.pop("dims")
    with pytest.raises(ValueError, match=message):
        scaling_experiment(dims, **kwargs)
