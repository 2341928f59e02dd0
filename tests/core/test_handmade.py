"""attention_core.handmade: the article's worked example, checked against the article's own
text and hand-computed sums."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core.handmade import (
    ARTICLE_MATRIX,
    ARTICLE_TOKENS,
    ARTICLE_VECTORS,
    MAX_HANDMADE_DIM,
    axis_labels,
    carry_vectors,
    check_rows,
    default_matrix,
    default_vectors,
    format_weight,
    mix,
    normalise_rows,
    parse_tokens,
    weighted_sum_lines,
)
from tests.support.availability import seed_files

# Copied from the article (../shared/seed), character for character.
ARTICLE_LINES = [
    "中和 = 0.5×中和 + 0×有 + 0×一個 + 0.5×永和路",
    "有 = 0×中和 + 1×有 + 0×一個 + 0×永和路",
    "一個 = 0×中和 + 0×有 + 1×一個 + 0×永和路",
    "永和路 = 0.5×中和 + 0×有 + 0×一個 + 0.5×永和路",
]


def test_article_example_gives_the_articles_four_lines() -> None:
    assert ARTICLE_TOKENS == ("中和", "有", "一個", "永和路")
    assert weighted_sum_lines(ARTICLE_TOKENS, ARTICLE_MATRIX) == ARTICLE_LINES


def test_article_text_contains_the_same_lines() -> None:
    # ../shared/seed beside the repo, as CI lays it out; missing: skip locally, fail under CI
    texts = [p.read_text(encoding="utf-8") for p in seed_files()]
    for line in ARTICLE_LINES:
        assert any(line in text for text in texts), line


def test_article_mix_by_hand() -> None:
    # 中和 = 0.5·(2, 0, 1) + 0.5·(4, 1, 0) = (3, 0.5, 0.5); 有 and 一個 keep their own vectors
    expected = np.array(
        [
            [3.0, 0.5, 0.5],
            [0.0, 3.0, 0.0],
            [0.0, 0.0, 2.0],
            [3.0, 0.5, 0.5],
        ]
    )
    np.testing.assert_array_equal(mix(ARTICLE_MATRIX, ARTICLE_VECTORS), expected)


def test_mix_small_case_by_hand() -> None:
    matrix = np.array([[0.25, 0.75], [1.0, 0.0]])
    vectors = np.array([[4.0, -8.0], [8.0, 4.0]])
    # row 0: 0.25·(4, -8) + 0.75·(8, 4) = (1 + 6, -2 + 3) = (7, 1); row 1: (4, -8)
    np.testing.assert_allclose(mix(matrix, vectors), [[7.0, 1.0], [4.0, -8.0]])


def test_mix_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="one row per token"):
        mix(np.eye(3), np.ones((2, 3)))
    with pytest.raises(ValueError, match="square"):
        mix(np.ones((2, 3)), np.ones((2, 3)))


def test_check_rows_accepts_valid_matrices() -> None:
    assert check_rows(ARTICLE_MATRIX) == []
    assert check_rows(np.array([[0.1, 0.2, 0.7], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]])) == []


def test_check_rows_flags_negative_and_non_summing_rows() -> None:
    matrix = np.array(
        [
            [0.5, 0.5, 0.0],  # fine
            [-0.5, 1.0, 0.5],  # negative, sums to 1
            [0.3, 0.3, 0.3],  # sums to 0.9
        ]
    )
    problems = check_rows(matrix)
    assert [(p.row, p.kind) for p in problems] == [(1, "negative"), (2, "sum")]
    assert problems[0].columns == (0,)
    assert problems[1].row_sum == pytest.approx(0.9)


def test_check_rows_negative_and_wrong_sum_in_one_row() -> None:
    problems = check_rows(np.array([[-1.0, 0.5], [0.0, 1.0]]))
    assert [(p.row, p.kind) for p in problems] == [(0, "negative"), (0, "sum")]
    assert problems[1].row_sum == pytest.approx(-0.5)


def test_check_rows_flags_empty_cells_once() -> None:
    problems = check_rows(np.array([[math.nan, 2.0], [0.0, 1.0]]))
    assert [(p.row, p.kind, p.columns) for p in problems] == [(0, "not_finite", (0,))]


def test_normalise_rows_by_hand() -> None:
    matrix = np.array(
        [
            [1.0, 3.0, 0.0],  # → 0.25, 0.75, 0
            [-1.0, 2.0, 2.0],  # negative dropped → 0, 0.5, 0.5
            [0.0, 0.0, 0.0],  # nothing left → uniform
        ]
    )
    expected = np.array([[0.25, 0.75, 0.0], [0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(normalise_rows(matrix), expected)
    np.testing.assert_allclose(
        normalise_rows(np.array([[math.nan, 1.0], [2.0, 2.0]])),
        [
            [0.0, 1.0],
            [0.5, 0.5],
        ],
    )


def test_normalise_keeps_valid_rows() -> None:
    np.testing.assert_array_equal(normalise_rows(ARTICLE_MATRIX), ARTICLE_MATRIX)


@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 6)).map(lambda t: (t[0], t[0])),
        elements=st.one_of(st.floats(-10, 10), st.just(math.nan)),
    )
)
def test_normalised_rows_always_pass_the_check(matrix: np.ndarray) -> None:
    assert check_rows(normalise_rows(matrix)) == []


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.5, "0.5"), (1.0, "1"), (0.0, "0"), (-0.0, "0"), (0.25, "0.25"), (1 / 3, "0.3333")],
)
def test_format_weight(value: float, text: str) -> None:
    assert format_weight(value) == text


def test_weighted_sum_lines_writes_negatives_as_minus_and_empty_as_question_mark() -> None:
    lines = weighted_sum_lines(["a", "b"], np.array([[1.5, -0.5], [math.nan, 1.0]]))
    assert lines == ["a = 1.5×a - 0.5×b", "b = ?×a + 1×b"]


def test_weighted_sum_lines_needs_one_token_per_row() -> None:
    with pytest.raises(ValueError, match="one token per matrix row"):
        weighted_sum_lines(["a"], np.eye(2))


@pytest.mark.parametrize(
    "text",
    [
        "中和 | 有 | 一個 | 永和路",
        "中和|有|一個|永和路",
        "中和 有 一個 永和路",
        " 中和 |  有|一個 | 永和路 | ",
    ],
)
def test_parse_tokens_article_forms(text: str) -> None:
    assert parse_tokens(text) == list(ARTICLE_TOKENS)


def test_parse_tokens_keeps_spaces_inside_bar_separated_tokens() -> None:
    assert parse_tokens("New York | is | big") == ["New York", "is", "big"]
    assert parse_tokens("") == []
    assert parse_tokens(" | | ") == []


def test_axis_labels_keep_repeats_apart() -> None:
    assert axis_labels(["the", "cat", "the"]) == ["0:the", "1:cat", "2:the"]


def test_default_matrices_are_valid() -> None:
    for n in (1, 2, 5):
        np.testing.assert_array_equal(default_matrix(n), np.eye(n))
        uniform = default_matrix(n, kind="uniform")
        assert check_rows(uniform) == []
        np.testing.assert_allclose(uniform, 1.0 / n)
    assert default_matrix(0).shape == (0, 0)
    with pytest.raises(ValueError, match="identity"):
        default_matrix(3, kind="random")


def test_default_vectors() -> None:
    np.testing.assert_array_equal(default_vectors(ARTICLE_TOKENS), ARTICLE_VECTORS)
    v = default_vectors(["cat", "dog", "cat"], dim=5)
    assert v.shape == (3, 5)
    np.testing.assert_array_equal(v[0], v[2])  # the same token always gets the same vector
    assert set(np.unique(v)) <= {-2.0, -1.0, 0.0, 1.0, 2.0}
    with pytest.raises(ValueError, match=str(MAX_HANDMADE_DIM)):
        default_vectors(["a"], dim=MAX_HANDMADE_DIM + 1)


def test_carry_vectors_keeps_edits_of_remaining_tokens() -> None:
    old_tokens = ["a", "b", "c"]
    old = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    # a token removed: "c" keeps its edited vector, found by its text
    np.testing.assert_array_equal(carry_vectors(old_tokens, old, ["a", "c"], dim=2), old[[0, 2]])
    # a token renamed (same count): the vector stays at its position
    np.testing.assert_array_equal(carry_vectors(old_tokens, old, ["a", "B", "c"], dim=2), old)
    # a larger dim: old values kept, the new column from the defaults
    wider = carry_vectors(old_tokens, old, old_tokens, dim=3)
    np.testing.assert_array_equal(wider[:, :2], old)
    np.testing.assert_array_equal(wider[:, 2], default_vectors(old_tokens, dim=3)[:, 2])
    # a new token, count changed: defaults
    more = carry_vectors(old_tokens, old, ["a", "b", "c", "zzz"], dim=2)
    np.testing.assert_array_equal(more[3], default_vectors(["zzz"], dim=2)[0])
