"""attention_core.positions: permutation equivariance without positions, checked against the
pipeline run on the shuffled text and an explicit permutation matrix P·A·Pᵀ."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from attention_core.limits import EXACT
from attention_core.pipeline import analyze
from attention_core.positions import (
    permutation,
    permutation_check,
    positional_table,
    repeated_tokens,
)
from attention_core.settings import Settings

SENTENCES = [
    "中和有一個永和路",
    "The cat sat on the mat because it was tired.",
    "我今天學了 self-attention 和 Transformer",
    "a b",
]
MODELS = [
    Settings(attention="multi", embed_dim=16, num_heads=4),
    Settings(attention="single", embed_dim=8, num_heads=1, seed=5),
]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 20])
@pytest.mark.parametrize("seed", [0, 1, 41])
def test_permutation_is_a_seeded_permutation(n: int, seed: int) -> None:
    p = permutation(n, seed)
    assert sorted(p.tolist()) == list(range(n))
    np.testing.assert_array_equal(p, permutation(n, seed))  # a function of (n, seed)
    if n >= 2:
        assert p.tolist() != list(range(n))  # a shuffle always moves something


def test_different_seeds_give_different_shuffles() -> None:
    assert len({tuple(permutation(6, s).tolist()) for s in range(10)}) > 5


def test_permutation_rejects_negative_n() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        permutation(-1, 0)


def _p_matrix(perm: np.ndarray) -> np.ndarray:
    n = len(perm)
    p = np.zeros((n, n))
    p[np.arange(n), perm] = 1.0  # shuffled position i holds original token perm[i]
    return p


@pytest.mark.parametrize("settings", MODELS)
@pytest.mark.parametrize("text", SENTENCES)
@pytest.mark.parametrize("seed", [0, 3, 11])
def test_without_positions_the_shuffle_only_permutes(
    settings: Settings, text: str, seed: int
) -> None:
    s = replace(settings, text=text)
    n = len(analyze(s).tokens)
    perm = permutation(n, seed)
    result = permutation_check(s, perm)
    assert result.plain.max_difference < 1e-6
    # reference: the pipeline on the shuffled tokens, and an explicit P·A·Pᵀ
    shuffled_text = " | ".join(result.shuffled_tokens)
    shuffled = analyze(replace(s, text=shuffled_text, tokenizer="manual")).weights
    original = analyze(s).weights
    p = _p_matrix(perm)
    for h in range(original.shape[0]):
        np.testing.assert_allclose(shuffled[h], p @ original[h] @ p.T, atol=EXACT)
        np.testing.assert_allclose(result.plain.shuffled[h], shuffled[h], atol=EXACT)
        np.testing.assert_allclose(result.plain.original[h], original[h], atol=EXACT)
        np.testing.assert_allclose(result.plain.restored[h], original[h], atol=EXACT)


@pytest.mark.parametrize("settings", MODELS)
@pytest.mark.parametrize("text", SENTENCES[:3])
@pytest.mark.parametrize("seed", [0, 3, 11])
def test_with_positions_the_shuffle_changes_the_weights(
    settings: Settings, text: str, seed: int
) -> None:
    s = replace(settings, text=text)
    n = len(analyze(s).tokens)
    assert n >= 3
    result = permutation_check(s, permutation(n, seed))
    assert result.positional.max_difference > 1e-3
    reference = analyze(replace(s, positional=True)).weights
    np.testing.assert_allclose(result.positional.original, reference, atol=EXACT)


def test_sidebar_switches_are_ignored() -> None:
    s = Settings(text=SENTENCES[1], causal=True, positional=True)
    n = len(analyze(s).tokens)
    result = permutation_check(s, permutation(n, 2))
    assert result.plain.max_difference < 1e-6  # bidirectional, no positions, as documented
    np.testing.assert_allclose(
        result.plain.original,
        analyze(replace(s, causal=False, positional=False)).weights,
        atol=EXACT,
    )


def test_repeated_word_has_identical_rows_only_without_positions() -> None:
    s = Settings(text="the cat saw the dog")
    result = permutation_check(s, permutation(5, 0))
    assert repeated_tokens(result.tokens) == {"the": [0, 3]}
    (group,) = result.repeats
    assert group.token == "the" and group.positions == [0, 3]
    assert group.row_difference_plain == 0.0
    assert group.row_difference_positional > 1e-3
    np.testing.assert_array_equal(result.plain.original[:, 0], result.plain.original[:, 3])


def test_permutation_check_rejects_a_wrong_permutation() -> None:
    s = Settings(text="中和有一個永和路")  # 4 tokens
    with pytest.raises(ValueError, match=r"permutation of 0\.\.3"):
        permutation_check(s, [0, 1, 2])
    with pytest.raises(ValueError, match=r"permutation of 0\.\.3"):
        permutation_check(s, [0, 1, 1, 2])


def test_one_token_is_trivially_equivariant() -> None:
    result = permutation_check(Settings(text="貓"), permutation(1, 0))
    assert result.plain.max_difference == 0.0
    assert result.positional.max_difference == 0.0


def test_positional_table_matches_the_formula() -> None:
    n, dim = 6, 10
    table = positional_table(n, dim)
    assert table.shape == (n, dim) and table.dtype == np.float32
    for p in range(n):
        for i in range(dim // 2):
            angle = p / 10000 ** (2 * i / dim)
            assert table[p, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[p, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)
    assert positional_table(3, 5).shape == (3, 5)  # odd dims work too
    with pytest.raises(ValueError, match="embed_dim >= 1"):
        positional_table(3, 0)
