"""Tests for attention_core/quiz.py's question from an attribution: the answer is the
largest magnitude (ties count), the lure is attention's strongest key."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.quiz import top_token_round


def test_the_answer_is_the_largest_magnitude_and_the_lure_the_strongest_weight():
    question = top_token_round(np.array([0.1, -2.0, 2.0, 0.5]), np.array([0.7, 0.1, 0.1, 0.1]))
    assert question.answers == (1, 2) and question.answer == 1
    assert question.lure == 0 and not question.attention_was_right
    assert question.is_correct(2) and not question.is_correct(0) and not question.is_correct(None)
    assert question.choices == 4
    assert top_token_round(np.array([1.0, 0.0]), np.array([0.9, 0.1])).attention_was_right
    with pytest.raises(ValueError, match="one value per token"):
        top_token_round(np.zeros(3), np.zeros(2))
