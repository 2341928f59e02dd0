"""Tests for attention_core/train/live.py: a run driven snapshot by snapshot (as the page
drives it across reruns) is exactly the library's uninterrupted training, Stop keeps what
was trained, and the page's plain data matches hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.stats import head_stats
from attention_core.train import TrainConfig, default_config, example_sequence, fit, train
from attention_core.train.live import (
    LiveRun,
    compare_payload,
    example_labels,
    example_table,
    head_table,
    live_config,
    single_thread,
    target_matrix,
)

SMALL = default_config("reverse", steps=30)  # snapshots at 0, 10, 20, 30


def _same_snapshots(ours, reference) -> None:
    assert [s.step for s in ours] == [s.step for s in reference]
    for a, b in zip(ours, reference, strict=True):
        assert a.loss == b.loss and a.accuracy == b.accuracy
        np.testing.assert_array_equal(a.weights, b.weights)
        np.testing.assert_array_equal(a.predictions, b.predictions)


# The references run on one thread too: a different thread count sums in another order
# and changes the last bits of the weights.


def test_a_run_advanced_piecewise_equals_the_library_fit():
    with single_thread():
        reference = fit(SMALL)
    run = LiveRun.start(SMALL)
    seen = []
    while run.running:  # one snapshot per "script run", as the page does
        seen.append(run.advance())
    assert run.advance() is None  # finished runs stay finished
    _same_snapshots(run.snapshots, reference.snapshots)
    _same_snapshots(seen, reference.snapshots)
    assert run.status == "done" and run.progress == 1.0
    assert run.evaluation.accuracy == reference.evaluation.accuracy
    np.testing.assert_array_equal(run.evaluation.head_focus, reference.evaluation.head_focus)
    np.testing.assert_array_equal(run.steps, [0, 10, 20, 30])
    np.testing.assert_array_equal(run.losses, reference.losses)
    assert run.train_seconds > 0


def test_stop_ends_at_the_next_step_and_keeps_what_was_trained():
    run = LiveRun.start(SMALL)
    run.advance()
    run.advance()  # snapshots at steps 0 and 10
    run.request_stop()
    assert run.running  # the stop takes effect in the next advance
    last = run.advance()
    assert last.step == 11 and not run.running and run.status == "stopped"
    assert run.progress == pytest.approx(11 / 30)
    assert run.evaluation is not None
    # the reference: the library's own generator asked to stop before step 11
    calls = iter(range(100))
    with single_thread():
        reference = list(train(SMALL, should_stop=lambda: next(calls) >= 11))
    _same_snapshots(run.snapshots, reference)


def test_stop_before_the_first_snapshot_keeps_the_untrained_model():
    run = LiveRun.start(SMALL)
    run.request_stop()
    run.advance()
    assert [s.step for s in run.snapshots] == [0] and run.status == "stopped"
    with single_thread():
        untrained = next(train(SMALL))
    np.testing.assert_array_equal(run.snapshots[0].weights, untrained.weights)


def test_stop_after_the_end_changes_nothing():
    run = LiveRun.start(default_config("previous", steps=3))
    run.run_to_end()
    run.request_stop()
    assert run.status == "done" and not run.stop_requested


def test_invalid_settings_do_not_start():
    with pytest.raises(ValueError, match=r"steps must be in 1\.\.5000, got 0"):
        LiveRun.start(live_config("reverse", **{**_fields(SMALL), "steps": 0}))


def test_snapshot_at_names_the_steps_there_are():
    run = LiveRun.start(default_config("reverse", steps=10))
    run.run_to_end()
    assert run.snapshot_at(10) is run.snapshots[-1]
    with pytest.raises(ValueError, match=r"snapshots at: \[0, 10\]"):
        run.snapshot_at(5)


def _fields(config: TrainConfig) -> dict:
    names = ("seq_len", "vocab_size", "embed_dim", "num_heads", "steps", "lr", "seed")
    return {name: getattr(config, name) for name in names}


def test_live_config_keeps_about_a_hundred_snapshots_and_does_not_validate():
    base = _fields(default_config("reverse"))
    assert live_config("reverse", **base).snapshot_every == 10  # the library's default
    assert live_config("reverse", **{**base, "steps": 5000}).snapshot_every == 50
    assert live_config("reverse", **{**base, "steps": 1001}).snapshot_every == 11
    bad = live_config("reverse", **{**base, "seq_len": 1})  # built, not validated
    with pytest.raises(ValueError, match=r"seq_len must be in 2\.\.16, got 1"):
        bad.validate()


def test_single_thread_sets_one_thread_and_restores_after_the_last_user():
    before = torch.get_num_threads()
    with single_thread():
        assert torch.get_num_threads() == 1
        with single_thread():  # a second concurrent run
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1  # the first one still runs
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), single_thread():
        raise RuntimeError("interrupted")
    assert torch.get_num_threads() == before


@pytest.mark.parametrize(
    ("task", "targets"),
    [
        ("reverse", [5, 4, 3, 2, 1, 0]),  # the anti-diagonal
        ("previous", [0, 0, 1, 2, 3, 4]),  # below the diagonal; row 0 on itself
    ],
)
def test_target_matrix_is_one_hot_on_the_answer_position(task, targets):
    m = target_matrix(default_config(task))
    assert m.dtype == np.float32 and m.shape == (6, 6)
    np.testing.assert_array_equal(m, np.eye(6, dtype=np.float32)[targets])


def test_target_matrix_of_match_pairs_equal_tokens():
    config = default_config("match")
    seq = example_sequence(config)
    m = target_matrix(config)
    for i, j in zip(*np.nonzero(m), strict=True):
        assert i != j and seq[i] == seq[j]
    np.testing.assert_array_equal(m.sum(1), 1)


def test_example_labels_and_table_by_hand():
    config = default_config("reverse")
    seq = example_sequence(config).tolist()
    assert example_labels(config) == [f"{i}:{tok}" for i, tok in enumerate(seq)]
    model = [seq[5], seq[4], seq[3], seq[2], seq[1], (seq[0] + 1) % 10]  # last one wrong
    table = example_table(config, np.array(model))
    assert table["input"] == seq
    assert table["answer"] == seq[::-1]
    assert table["right"] == [1, 1, 1, 1, 1, 0]
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        example_table(config, np.zeros(5, dtype=np.int64))


def test_head_table_and_compare_payload_describe_the_last_snapshot():
    run = LiveRun.start(default_config("match", steps=10, num_heads=4))
    with pytest.raises(ValueError, match="train first"):
        compare_payload(run, title="x")
    assert head_table(run) == []
    run.run_to_end()
    rows = head_table(run)
    stats = head_stats(run.snapshots[-1].weights)
    assert len(rows) == 4
    for row, s in zip(rows, stats, strict=True):
        assert row["head"] == s.head and row["entropy"] == s.entropy
        assert row["top_key"] == run.labels[s.top_key]
        assert row["focus"] == run.evaluation.head_focus[s.head]
    payload = compare_payload(run, title="match · step 10")
    assert payload["weights"].dtype == np.float32 and payload["weights"].shape == (4, 6, 6)
    np.testing.assert_array_equal(payload["weights"], run.snapshots[-1].weights)
    assert payload["labels"] == example_labels(run.config)
    assert payload["title"] == "match · step 10"


def test_concurrent_script_threads_take_turns_on_one_run():
    """Streamlit's fast reruns start the next script run while the last one may still be
    inside advance(); both must get whole snapshots, in order, none twice."""
    import threading

    run = LiveRun.start(SMALL)
    errors: list[BaseException] = []

    def script() -> None:
        try:
            while run.running:
                run.advance()
        except BaseException as error:  # pragma: no cover - the failure being tested
            errors.append(error)

    threads = [threading.Thread(target=script) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    with single_thread():
        reference = fit(SMALL)
    _same_snapshots(run.snapshots, reference.snapshots)
    assert run.status == "done"
