"""The training loop of `attention_core.train`: train step by step, evaluate, or both.

`train` is a generator: it yields a `Snapshot` (loss, accuracy, every head's weights on
the fixed example sequence) at step 0, every `snapshot_every` steps and at the end, so a
caller can draw attention going from noise to a sharp pattern while it learns, and stop
it between any two steps (`should_stop`). `evaluate` measures the trained model on
held-out sequences that training never draws: exact accuracy, and the *focus* of each
head, its mean attention mass on the position that holds the answer. `fit` does both in
one call. Adam on cross-entropy; every random draw comes from a generator seeded by the
config, so the same config gives bit-identical runs, and the global torch RNG is never
touched.

Shape legend: B batch, n seq_len, H num_heads, K output classes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_core.train.induction import InductionModel, detector_scores, probe_sequences
from attention_core.train.model import ToyAttentionModel, build_model
from attention_core.train.tasks.config import TASKS, TRAIN_STREAM, TrainConfig, check_int
from attention_core.train.tasks.data import (
    example_sequence,
    sample_sequences,
    target_positions,
    task_outputs,
)

__all__ = ["Evaluation", "Snapshot", "TrainResult", "evaluate", "fit", "train"]


@dataclass(frozen=True)
class Snapshot:
    """The model after `step` updates.

    loss and accuracy are on a fresh training batch (accuracy per position), weights are
    every head on `example_sequence(config)` (the same sequence in every snapshot), and
    predictions are the model's answers on that sequence.
    """

    step: int
    loss: float
    accuracy: float
    weights: np.ndarray  # (H, n, n) float32, each row sums to 1
    predictions: np.ndarray  # (n,) int64
    # (2, H) previous-token and induction score of every head on held-out probe sequences
    # (attention_core.train.induction.detector_scores); 2-layer tasks only
    detector: np.ndarray | None = None


@dataclass(frozen=True)
class Evaluation:
    """Held-out results: exact per-position accuracy and how sharply each head attends to
    the answer's position (its mass on `target_positions`, averaged over all rows that
    have an answer)."""

    accuracy: float
    position_accuracy: np.ndarray  # (n,) accuracy of each output position (NaN: no answers)
    sequence_accuracy: float  # every position right
    head_focus: np.ndarray  # (H,) mean attention mass on the target position
    best_head: int
    focus: float  # head_focus[best_head]
    num_sequences: int


@dataclass(frozen=True)
class TrainResult:
    """What `fit` returns: the trained model, every snapshot and the held-out evaluation."""

    config: TrainConfig
    model: ToyAttentionModel | InductionModel = field(repr=False)
    snapshots: tuple[Snapshot, ...]
    evaluation: Evaluation

    @property
    def stopped_early(self) -> bool:
        return self.snapshots[-1].step < self.config.steps

    @property
    def losses(self) -> np.ndarray:
        """(S,) the loss of every snapshot, in order."""
        return np.array([s.loss for s in self.snapshots], dtype=np.float64)


def _batch(config: TrainConfig, rng: np.random.Generator) -> tuple[Tensor, Tensor]:
    seqs = sample_sequences(config, config.batch_size, rng=rng)  # (B, n)
    answers = task_outputs(config.task, seqs)  # (B, n)
    return torch.from_numpy(seqs), torch.from_numpy(answers)


def _check_model(model: nn.Module, config: TrainConfig) -> None:
    if not isinstance(model, ToyAttentionModel | InductionModel):
        raise ValueError("model must be a ToyAttentionModel made by build_model(config)")
    mc = model.config
    sizes = ("task", "seq_len", "vocab_size", "embed_dim", "num_heads")
    if any(getattr(mc, s) != getattr(config, s) for s in sizes):
        raise ValueError(
            "model was built for a different task or size: "
            + ", ".join(f"{s}={getattr(mc, s)!r} vs {getattr(config, s)!r}" for s in sizes)
        )


def train(
    config: TrainConfig,
    *,
    model: ToyAttentionModel | InductionModel | None = None,
    should_stop: Callable[[], bool] | None = None,
    resumable: bool = False,
) -> Iterator[Snapshot]:
    """Train step by step, yielding a Snapshot at step 0 (untrained), every
    `snapshot_every` steps and at the end.

    Pass `model` (from `build_model(config)`) to keep the trained model; it is updated in
    place. `should_stop` is asked before every step; when it returns True the run ends
    with a snapshot of the current step, or, if `resumable`, pauses there: the next
    `next()` carries on exactly as if nothing had happened (same batches, same optimizer
    state; only that extra snapshot differs). The config is validated here, before the
    first snapshot is requested. Adam on cross-entropy; the global torch RNG is never
    touched.
    """
    config.validate()
    if model is None:
        model = build_model(config)
    _check_model(model, config)
    return _train(config, model, should_stop, resumable)


def _train(
    config: TrainConfig,
    model: ToyAttentionModel | InductionModel,
    should_stop: Callable[[], bool] | None,
    resumable: bool = False,
) -> Iterator[Snapshot]:
    rng = np.random.default_rng([TRAIN_STREAM, config.seed])
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    example = torch.from_numpy(example_sequence(config))[None]  # (1, n)
    probe = probe_sequences(config) if TASKS[config.task].layers == 2 else None  # (P, n)
    K = config.num_classes
    for step in range(config.steps + 1):
        stop = should_stop is not None and bool(should_stop())
        tokens, answers = _batch(config, rng)  # (B, n), (B, n)
        # grad mode is set per step, never held across a yield: the caller's mode between
        # snapshots stays the caller's
        with torch.enable_grad():
            logits, _ = model(tokens)  # (B, n, K)
            # answers of -1 (no answer: `induction`'s first occurrences) are left out
            loss = F.cross_entropy(
                logits.reshape(-1, K), answers.reshape(-1), ignore_index=-1
            )  # (B·n, K)
        last = step == config.steps or (stop and not resumable)
        if stop or last or step % config.snapshot_every == 0:
            with torch.no_grad():
                valid = answers >= 0
                accuracy = (logits.argmax(-1) == answers)[valid].double().mean().item()
                ex_logits, ex_weights = model(example)  # (1, n, K), (1, H, n, n)
                detector = None
                if probe is not None:
                    _, probe_weights = model(torch.from_numpy(probe))  # (P, H, n, n)
                    detector = detector_scores(probe_weights.numpy(), probe)  # (2, H)
            yield Snapshot(
                step=step,
                loss=float(loss.item()),
                accuracy=float(accuracy),
                weights=ex_weights[0].numpy().astype(np.float32),  # (H, n, n)
                predictions=ex_logits[0].argmax(-1).numpy().astype(np.int64),  # (n,)
                detector=detector,
            )
        if last:
            return
        optimizer.zero_grad(set_to_none=True)
        with torch.enable_grad():
            loss.backward()
        optimizer.step()


def evaluate(
    model: ToyAttentionModel | InductionModel,
    config: TrainConfig,
    *,
    num_sequences: int = 512,
    seed: int = 12345,
) -> Evaluation:
    """Accuracy and attention focus on `num_sequences` fresh held-out sequences.

    Focus of a head = mean over sequences and rows of the weight it puts on the target
    position (`target_positions`); the best head is the one with the highest focus.
    """
    config.validate()
    _check_model(model, config)
    check_int("num_sequences", num_sequences, 1, 100_000)
    rng = np.random.default_rng(seed)
    seqs = sample_sequences(config, num_sequences, rng=rng, held_out=True)  # (B, n)
    answers = task_outputs(config.task, seqs)  # (B, n)
    targets = target_positions(config.task, seqs)  # (B, n)
    with torch.no_grad():
        logits, weights = model(torch.from_numpy(seqs))  # (B, n, K), (B, H, n, n)
    valid = answers >= 0  # (B, n) positions with an answer (all but induction's first ones)
    correct = logits.argmax(-1).numpy() == answers  # (B, n)
    w = weights.numpy().astype(np.float64)
    index = np.broadcast_to(np.maximum(targets, 0)[:, None, :, None], (*w.shape[:3], 1))
    mass = np.take_along_axis(w, index, axis=-1)[..., 0]  # (B, H, n)
    head_focus = (mass * valid[:, None]).sum(axis=(0, 2)) / valid.sum()  # (H,)
    if TASKS[config.task].layers == 2:
        # every key right after an earlier copy of the query's token holds the answer, not
        # only the latest: the focus is the mass on all of them (the induction score)
        head_focus = detector_scores(w, seqs)[1]  # (H,)
    best = int(head_focus.argmax())
    per_position = valid.sum(axis=0)  # (n,)
    with np.errstate(invalid="ignore", divide="ignore"):
        position_accuracy = (correct & valid).sum(axis=0) / per_position  # (n,), NaN if none
    return Evaluation(
        accuracy=float(correct[valid].mean()),
        position_accuracy=position_accuracy,
        sequence_accuracy=float((correct | ~valid).all(axis=1).mean()),
        head_focus=head_focus,
        best_head=best,
        focus=float(head_focus[best]),
        num_sequences=num_sequences,
    )


def fit(
    config: TrainConfig,
    *,
    should_stop: Callable[[], bool] | None = None,
    on_snapshot: Callable[[Snapshot], None] | None = None,
    num_sequences: int = 512,
) -> TrainResult:
    """Train to the end (or until `should_stop`), then evaluate on held-out sequences."""
    model = build_model(config)
    snapshots = []
    for snap in train(config, model=model, should_stop=should_stop):
        snapshots.append(snap)
        if on_snapshot is not None:
            on_snapshot(snap)
    evaluation = evaluate(model, config, num_sequences=num_sequences)
    return TrainResult(config, model, tuple(snapshots), evaluation)
