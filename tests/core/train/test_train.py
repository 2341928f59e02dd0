"""Tests for attention_core.train: every toy task is really learned, through attention.

The learned checks train each task with its default config and seed 0 (about a second
each) and compare the model with hand-worked answers, not with the library's own rules.
Every row of every task has a defined target (for `previous`, position 0 answers its own
token), so the focus averages over all rows and none is excluded.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
import torch

from attention_core.i18n import LANGS, catalog, t
from attention_core.limits import MAX_TRAIN_STEPS
from attention_core.train import (
    TASKS,
    SettingError,
    TrainConfig,
    attention_mask,
    build_model,
    default_config,
    evaluate,
    example_sequence,
    fit,
    is_held_out,
    sample_sequences,
    target_positions,
    task_outputs,
    train,
)

# Worked by hand: task → (sequence, position holding each answer, the answers).
HAND = {
    # mirror: position i reads position 5 - i
    "reverse": ([3, 1, 4, 1, 5, 9], [5, 4, 3, 2, 1, 0], [9, 5, 1, 4, 1, 3]),
    # one step back; position 0 has nothing before it and answers its own token
    "previous": ([3, 1, 4, 1, 5, 9], [0, 0, 1, 2, 3, 4], [3, 3, 1, 4, 1, 5]),
    # 7 at 0 and 2, 2 at 1 and 4, 5 at 3 and 5: each answers its twin's position
    "match": ([7, 2, 7, 5, 2, 5], [2, 4, 0, 5, 1, 3], [2, 4, 0, 5, 1, 3]),
    # sorted 1 3 4 6 7 9; next larger: 4→6 (pos 5), 9 wraps round to 1 (pos 2), 1→3 (pos 4),
    # 7→9 (pos 1), 3→4 (pos 0), 6→7 (pos 3)
    "sort": ([4, 9, 1, 7, 3, 6], [5, 2, 4, 1, 0, 3], [6, 1, 3, 9, 4, 7]),
}

# ---------------------------------------------------------------------------------------
# The task rules, against hand-worked cases


@pytest.mark.parametrize("task", list(HAND))
def test_target_positions_and_answers_match_the_hand_worked_example(task):
    seq, targets, answers = (np.array(a) for a in HAND[task])
    assert target_positions(task, seq).tolist() == targets.tolist()
    assert task_outputs(task, seq).tolist() == answers.tolist()
    # a batch gives the same rows as one sequence at a time
    other = np.array(seq[::-1])
    batch = np.stack([seq, other])  # (2, n)
    assert target_positions(task, batch).shape == (2, len(seq))
    assert target_positions(task, batch)[1].tolist() == target_positions(task, other).tolist()


def test_sequences_that_break_a_task_rule_are_refused():
    with pytest.raises(ValueError, match="exactly twice"):
        target_positions("match", np.array([1, 1, 1, 2]))
    with pytest.raises(ValueError, match="distinct"):
        target_positions("sort", np.array([3, 1, 3]))
    with pytest.raises(ValueError, match="valid tasks"):
        target_positions("rotate", np.array([1, 2]))


@pytest.mark.parametrize("task", list(TASKS))
def test_sampled_sequences_obey_the_task_and_never_cross_the_held_out_split(task):
    config = default_config(task)
    rng = np.random.default_rng(0)
    train_seqs = sample_sequences(config, 20_000, rng=rng)
    held = sample_sequences(config, 500, rng=rng, held_out=True)
    for seqs in (train_seqs, held):
        assert seqs.shape[1] == config.seq_len
        assert seqs.min() >= 0 and seqs.max() < config.vocab_size
    for row in held[:100]:
        counts = Counter(row.tolist())
        if task == "match":
            assert set(counts.values()) == {2}
        if task == "sort":
            assert set(counts.values()) == {1}
    # sort (30 240 possible sequences) and match (10 800) would overlap heavily if the
    # split were not enforced; held-out accuracy is on sequences training never drew
    assert not {tuple(r) for r in train_seqs.tolist()} & {tuple(r) for r in held.tolist()}
    # the split is a fixed share of all sequences, not a handful
    assert 0.1 < is_held_out(np.random.default_rng(1).integers(0, 10, (5000, 6))).mean() < 0.3


def test_example_sequence_is_fixed_held_out_and_independent_of_the_seed():
    config = default_config("match")
    ex = example_sequence(config)
    assert ex.shape == (config.seq_len,)
    assert np.array_equal(ex, example_sequence(default_config("match", seed=7, lr=1e-2)))
    assert bool(is_held_out(ex))
    assert sorted(Counter(ex.tolist()).values()) == [2, 2, 2]


def test_only_tasks_whose_answer_is_never_the_query_itself_mask_the_diagonal():
    # match: a token is not its own twin; sort: a number does not follow itself; but in
    # reverse (odd n) and previous (position 0) a row's answer can be the row itself
    for task, masked in {"reverse": False, "previous": False, "match": True, "sort": True}.items():
        config = default_config(task)
        n = config.seq_len
        expected = ~np.eye(n, dtype=bool) if masked else np.ones((n, n), dtype=bool)
        assert np.array_equal(attention_mask(config), expected)
        snap = next(iter(train(config)))
        diagonal = snap.weights[:, range(n), range(n)]  # (H, n)
        assert (diagonal == 0).all() if masked else (diagonal > 0).all()
    odd = default_config("reverse", seq_len=5)
    assert target_positions("reverse", np.arange(5))[2] == 2  # the middle answers itself
    assert attention_mask(odd).all()


def test_every_task_has_a_title_and_explanation_in_both_languages():
    cjk = re.compile(r"[\u4e00-\u9fff]")
    cat = catalog()  # the words are the app's: data/i18n/train.toml
    for name, info in TASKS.items():
        assert info.name == name
        title, explanation = cat[f"train_task_{name}"], cat[f"train_task_{name}_explain"]
        assert set(title) == set(explanation) == set(LANGS)
        assert cjk.search(title["zh-TW"]) and cjk.search(explanation["zh-TW"])
        assert not cjk.search(explanation["en"])
        assert len(explanation["en"]) > 200


def test_a_setting_that_cannot_be_trained_says_why_in_words_the_app_can_translate():
    cases = {
        "range": {"seq_len": 1},
        "heads": {"embed_dim": 6, "num_heads": 4},
        "match_even": {"task": "match", "seq_len": 5},
        "sort_vocab": {"task": "sort", "seq_len": 6, "vocab_size": 6},
    }
    for reason, fields in cases.items():
        with pytest.raises(SettingError) as err:
            TrainConfig(**fields).validate()
        assert err.value.reason == reason
        assert t(f"train_error_{reason}", "zh-TW", **err.value.params)


# ---------------------------------------------------------------------------------------
# Learning: accuracy, focus on the answer, and the hand-worked examples


@pytest.mark.parametrize("task", list(HAND))  # induction: tests/core/train/test_induction.py
def test_each_task_is_learned_and_solved_by_one_sharp_head(task):
    result = fit(default_config(task))
    config = result.config
    ev = result.evaluation
    assert ev.accuracy >= 0.95, ev
    assert ev.focus >= 0.8, ev.head_focus
    assert ev.head_focus.shape == (config.num_heads,)
    assert ev.focus == pytest.approx(ev.head_focus.max())
    # the untrained model attends near uniformly: the focus was learned, not built in
    untrained = evaluate(build_model(config), config)
    assert untrained.focus < 0.5
    assert untrained.accuracy < 0.5
    assert result.snapshots[-1].loss < result.snapshots[0].loss / 20

    # the hand-worked example: right answers, and the best head looks where a person would
    seq, targets, answers = HAND[task]
    with torch.no_grad():
        logits, weights = result.model(torch.tensor([seq]))  # (1, n, K), (1, H, n, n)
    assert logits[0].argmax(-1).tolist() == answers
    best = weights[0, ev.best_head]  # (n, n)
    assert best.argmax(-1).tolist() == targets
    assert best[range(len(seq)), targets].mean().item() >= 0.8


def test_snapshots_come_at_step_zero_every_k_steps_and_at_the_end():
    config = default_config("reverse", steps=25, snapshot_every=10)
    snaps = list(train(config))
    assert [s.step for s in snaps] == [0, 10, 20, 25]
    n, H = config.seq_len, config.num_heads
    for s in snaps:
        assert s.weights.shape == (H, n, n) and s.weights.dtype == np.float32
        np.testing.assert_allclose(s.weights.sum(-1), 1.0, atol=1e-5)
        assert s.predictions.shape == (n,)
        assert 0.0 <= s.accuracy <= 1.0
    # step 0 is the untrained model on the fixed example sequence
    with torch.no_grad():
        _, w0 = build_model(config)(torch.from_numpy(example_sequence(config))[None])
    np.testing.assert_array_equal(snaps[0].weights, w0[0].numpy())


def test_same_seed_gives_an_identical_curve_and_another_seed_a_different_one():
    config = default_config("previous", steps=40, snapshot_every=1)
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()
    first = [s.loss for s in train(config)]
    second = list(train(config))
    assert len(first) == 41
    assert first == [s.loss for s in second]  # exact equality, not approx
    other = [s.loss for s in train(default_config("previous", steps=40, seed=1, snapshot_every=1))]
    assert other != first
    # training draws from its own generators: the caller's random state is untouched
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.random.get_state()[1].tolist() == np_state[1].tolist()
    # and a caller inside torch.no_grad() gets the very same run
    with torch.no_grad():
        assert [s.loss for s in train(config)] == first


def test_should_stop_ends_the_run_early_with_a_snapshot_of_where_it_stopped():
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 3  # True when asked before step 3

    config = default_config("reverse")
    snaps = list(train(config, should_stop=stop))
    assert [s.step for s in snaps] == [0, 3]
    full = config.steps // config.snapshot_every + 1
    assert len(snaps) < full
    result = fit(config, should_stop=lambda: True)
    assert result.stopped_early and [s.step for s in result.snapshots] == [0]


def test_train_keeps_the_model_it_is_given():
    config = default_config("reverse", steps=5)
    model = build_model(config)
    before = model.readout.weight.detach().clone()
    list(train(config, model=model))
    assert not torch.equal(before, model.readout.weight)
    with pytest.raises(ValueError, match="different task or size"):
        train(default_config("previous"), model=model)


# ---------------------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"steps": 0}, "steps must be in 1..5000"),
        ({"steps": MAX_TRAIN_STEPS + 1}, "steps must be in 1..5000"),
        ({"seq_len": 1}, "seq_len must be in 2..16"),
        ({"embed_dim": 30, "num_heads": 4}, "valid num_heads: 1, 2, 3, 5, 6, 10, 15, 30"),
        ({"task": "rotate"}, "valid tasks: reverse, previous, match, sort"),
        ({"lr": 0.0}, r"lr must be a number in \(0, 1\]"),
        ({"lr": -1e-3}, "lr must be"),
        ({"task": "match", "seq_len": 5}, "seq_len must be even"),
        ({"task": "sort", "seq_len": 6, "vocab_size": 6}, "vocab_size must be > seq_len"),
        ({"snapshot_every": 0}, "snapshot_every must be in"),
        ({"embed_init_std": 0.0}, "embed_init_std must be"),
    ],
)
def test_validate_names_what_is_valid(changes, message):
    config = TrainConfig(**changes)
    with pytest.raises(ValueError, match=message):
        config.validate()
    # train refuses at the call, before any snapshot is asked for
    with pytest.raises(ValueError, match=message):
        train(config)


def test_defaults_are_valid_and_the_class_default_is_reverse():
    assert TrainConfig() == default_config("reverse")
    for task in TASKS:
        default_config(task).validate()
    with pytest.raises(ValueError, match="valid tasks"):
        default_config("rotate")
    with pytest.raises(ValueError, match="unknown settings"):
        default_config("reverse", heads=2)
