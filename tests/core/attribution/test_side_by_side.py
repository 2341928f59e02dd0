"""Tests for attention_core/attribution/side_by_side.py and views.py: the rank statistics
against SciPy's own (`spearmanr`, `kendalltau`, `permutation_test`), the views against the
lens's functions on the reader (its own weights, rollout, ablation by reader_ablate), and
the table's verdicts on rows made to agree, disagree and sink.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from attention_core.attribution import agreement, attribute, head_table
from attention_core.attribution.side_by_side import (
    compare,
    kendall_rows,
    permutation_p,
    spearman_rows,
)
from attention_core.lens import reader_ablate, reader_attention, rollout
from attention_core.limits import EXACT
from attention_core.reader.weights import load_shipped

TEXT = "中和有一個永和路"


@pytest.fixture(scope="module")
def reader():
    return load_shipped()


@pytest.fixture(scope="module")
def agreed(reader):
    return agreement(reader, TEXT, steps=8, permutations=199)


def test_rank_statistics_equal_scipys():
    rng = np.random.default_rng(3)
    rows = rng.random((6, 9))
    rows[2, :4] = rows[2, 4]  # ties
    y = rng.random(9)
    y[:2] = y[2]
    rho, tau = spearman_rows(rows, y), kendall_rows(rows, y)
    for k in range(6):
        assert rho[k] == pytest.approx(stats.spearmanr(rows[k], y).statistic, abs=1e-12)
        assert tau[k] == pytest.approx(stats.kendalltau(rows[k], y).statistic, abs=1e-12)
    assert np.isnan(spearman_rows(np.ones((1, 9)), y)).all()


def test_the_permutation_p_value_agrees_with_scipys_permutation_test():
    rng = np.random.default_rng(4)
    y = rng.random(10)
    rows = np.stack([y + 0.3 * rng.random(10), rng.random(10)])
    ours = permutation_p(rows, y, permutations=1999, seed=0)
    for k in range(2):
        theirs = stats.permutation_test(
            (rows[k], y),
            lambda a, b: stats.spearmanr(a, b).statistic,
            permutation_type="pairings",
            n_resamples=1999,
            rng=1,
        ).pvalue
        assert ours[k] == pytest.approx(theirs, abs=0.03)
    assert ours[0] < 0.05 < ours[1]


def test_the_views_are_the_lens_own_on_the_reader(reader, agreed):
    views = agreed.views
    first = agreed.attributions["integrated_gradients"]
    p = first.position
    own = reader_attention(reader, TEXT).attentions
    np.testing.assert_allclose(views.raw, own[:, :, p, : p + 1], atol=EXACT)
    np.testing.assert_allclose(views.rollout, rollout(own)[:, p, : p + 1], atol=EXACT)
    for layer, head in [(0, 1), (3, 2)]:
        knocked = reader_ablate(reader, TEXT, [(layer, head)])
        change = knocked.logits[p, first.target] - knocked.original[p, first.target]
        assert views.ablation[layer, head] == pytest.approx(change, abs=1e-4)


def test_the_agreement_numbers_are_scipys_on_the_arrays(agreed):
    views = agreed.views
    for a, result in enumerate(agreed.attributions.values()):
        y = np.abs(result.scores[views.keys])
        for layer, head in [(0, 0), (2, 3)]:
            raw = views.raw[layer, head]
            assert agreed.rho[a, 0, layer, head] == pytest.approx(
                stats.spearmanr(raw, y).statistic, abs=1e-12
            )
            assert agreed.tau[a, 1, layer, head] == pytest.approx(
                stats.kendalltau(views.norm[layer, head], y).statistic, abs=1e-12
            )
            assert agreed.rho[a, 2, layer, head] == pytest.approx(
                stats.spearmanr(views.rollout[layer], y).statistic, abs=1e-12
            )
    assert len(agreed.table) == views.raw.shape[0] * views.raw.shape[1]
    assert agreed.methods == ["integrated_gradients", "input_x_gradient", "occlusion"]


def test_head_table_is_the_table_against_any_method(agreed):
    first = head_table(agreed, "integrated_gradients")
    assert first == agreed.table  # the first method's is the agreement's own table
    occlusion = head_table(agreed, "occlusion")
    a = agreed.methods.index("occlusion")
    y = np.abs(agreed.attributions["occlusion"].scores[agreed.views.keys])
    for row in occlusion:
        raw = agreed.views.raw[row.layer, row.head]
        assert row.rho == pytest.approx(stats.spearmanr(raw, y).statistic, abs=1e-12)
        assert row.p == agreed.p[a, 0, row.layer, row.head]
    assert [r.rho for r in occlusion] != [r.rho for r in first]
    with pytest.raises(ValueError, match="method must be one of"):
        head_table(agreed, "lime")


def test_the_table_names_agreeing_disagreeing_and_sink_heads(agreed):
    views = agreed.views
    m = len(views.keys)
    scores = np.zeros(len(agreed.attributions["occlusion"].scores))
    scores[:m] = np.arange(m) + 1.0  # the last key matters most, [BOS] least
    made = dataclasses.replace(agreed.attributions["occlusion"], scores=scores)
    raw = np.zeros_like(views.raw)
    raw[0, 0] = np.arange(m) + 1.0  # agrees: the same order
    raw[0, 1] = -(np.arange(m) + 1.0)  # disagrees: the reverse order
    raw[0, 2, 0] = 0.9  # pours its weight onto [BOS], which carries nothing: a sink
    raw[0, 2, 1:] = 0.1 / (m - 1)
    raw[1:] = np.random.default_rng(0).random(raw[1:].shape)
    fake = dataclasses.replace(views, raw=raw, norm=raw)
    table = compare({"occlusion": made}, fake, permutations=199).table
    verdicts = {(r.layer, r.head): r for r in table}
    assert verdicts[0, 0].verdict == "agrees" and verdicts[0, 0].rho == pytest.approx(1.0)
    assert verdicts[0, 1].verdict == "disagrees"
    assert verdicts[0, 2].verdict == "sink" and verdicts[0, 2].sink == "[BOS]"


def test_an_encoder_compares_the_mean_row_over_every_token(loaded):
    pytest.importorskip("transformers")
    result = agreement(
        loaded,
        "the cat sat",
        target="a dog lay",
        steps=4,
        methods=["input_x_gradient"],
        permutations=99,
    )
    n = len(result.attributions["input_x_gradient"].ids)
    assert result.views.raw.shape == (6, 12, n)
    np.testing.assert_allclose(result.views.raw, result.views.attentions.mean(axis=2), atol=EXACT)
    assert np.isfinite(result.views.ablation).all()


def test_bad_methods_are_refused(reader):
    with pytest.raises(ValueError, match="methods must be"):
        agreement(reader, TEXT, methods=["lime"])
    with pytest.raises(ValueError, match="method must be"):
        attribute(reader, TEXT, method="lime")
