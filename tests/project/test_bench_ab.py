"""bench/section_ab.py: the paired before/after statistic, checked by hand."""

from __future__ import annotations

import statistics

import pytest

from bench.section_ab import paired_difference


def test_a_constant_shift_is_found_exactly():
    before = [0.30, 0.25, 0.41, 0.28, 0.33]
    now = [b + 0.02 for b in before]  # every update 20 ms slower, whatever the load
    diff, low, high = paired_difference(now, before)
    assert diff == pytest.approx(0.02) and low == pytest.approx(0.02) == high


def test_the_interval_holds_the_median_of_the_differences():
    before = [1.0] * 9
    now = [1.0 + d for d in (-0.3, -0.1, 0.0, 0.05, 0.1, 0.1, 0.2, 0.4, 0.9)]
    diff, low, high = paired_difference(now, before, resamples=2000, seed=3)
    assert diff == pytest.approx(
        statistics.median([a - b for a, b in zip(now, before, strict=True)])
    )
    assert low <= diff <= high and low >= -0.3 and high <= 0.9


def test_unpaired_lists_are_refused():
    with pytest.raises(ValueError):
        paired_difference([1.0, 2.0], [1.0])
