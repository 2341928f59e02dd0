"""Tests for attention_core/figures/attribution.py: the data behind the rows, and the
tokens drawn literally."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.figures.attribution import plot_token_rows, token_rows


def test_each_row_is_scaled_to_its_own_largest_magnitude_and_keeps_its_values():
    data = token_rows(
        ["a", "<b>", "c"],
        [np.array([0.2, 0.4, 0.1]), np.array([-3.0, 1.5, 0])],
        ["attention", "attribution"],
    )
    np.testing.assert_allclose(data.shares, [[0.5, 1.0, 0.25], [1.0, 0.5, 0.0]])
    fig = plot_token_rows(data, title="x<br>y")
    trace = fig.data[0]
    assert list(trace.y) == ["attribution", "attention"]  # the first row on top
    assert list(trace.text[0]) == ["a", "&lt;b&gt;", "c"]  # drawn as typed, never markup
    np.testing.assert_allclose(trace.customdata[0], [-3.0, 1.5, 0])
    assert fig.layout.title.text == "x&lt;br&gt;y"
    zero = token_rows(["a"], [np.zeros(1)], ["none"])
    assert zero.shares.tolist() == [[0.0]]
    with pytest.raises(ValueError, match="one value per label"):
        token_rows(["a"], [np.zeros(2)], ["x"])
