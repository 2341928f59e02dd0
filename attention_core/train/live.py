"""A resumable training run: `LiveRun` trains one snapshot at a time, for a caller that is
interrupted between steps and comes back later (a UI that redraws after every snapshot and
is cut off by the next click, a notebook cell, a test).

A plain `for snap in train(...)` loop dies with the code that runs it. `LiveRun` keeps the
`attention_core.train.loop.train` generator itself (the model and the optimizer live
inside it): whoever calls `advance` next carries on where the last call left off, Stop is
a flag the generator reads before its next step (`should_stop`), and every snapshot taken
so far is kept, so a stopped run still has its curves, its replay and its held-out
evaluation. A stopped run can `resume`: the generator pauses rather than ends
(`resumable`), so the resumed run is the uninterrupted one plus the snapshot where it
stopped.

Pace: a run can be shown at `PACES` seconds on screen (`frame_delay` says how long to wait
before showing the next snapshot), so a class watches it learn instead of seeing only the
end; "fast" shows it as fast as the machine trains.

Next to the run: the plain data a caller draws (labels of the example sequence, the
target pattern, the answers, one row per head, the last heads as plain data to set
beside other heads), and `single_thread`, which trains on one CPU thread (see there why).

    run = LiveRun.start(default_config("reverse"))
    while run.running:
        snap = run.advance()          # the next Snapshot; the last one also evaluates
    run.evaluation.accuracy           # held-out accuracy of the trained model

Shape legend: n seq_len, H num_heads, S snapshots.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attention_core.attention import MultiHeadAttention
from attention_core.limits import MAX_TRAIN_STEPS
from attention_core.stats import STAT_NAMES, head_stats
from attention_core.train.induction import InductionModel, head_layer
from attention_core.train.loop import Evaluation, Snapshot, evaluate, train
from attention_core.train.model import build_model
from attention_core.train.tasks import (
    TASKS,
    TrainConfig,
    example_sequence,
    target_positions,
    task_outputs,
)

__all__ = [
    "DEFAULT_PACE",
    "MAX_SNAPSHOTS",
    "PACES",
    "SHARP_FOCUS",
    "ExampleTrace",
    "LiveRun",
    "compare_payload",
    "example_labels",
    "example_table",
    "example_trace",
    "frame_delay",
    "head_names",
    "head_table",
    "live_config",
    "parse_pace",
    "single_thread",
    "target_matrix",
]

SHARP_FOCUS = 0.8  # a head this focused on the answer "explains" the task (Evaluation.focus)
MAX_SNAPSHOTS = 100  # about this many snapshots per run at most: replay steps, memory
# (H x n² floats each; up to 128 x 16² x 4 B = 128 kB per snapshot)
# seconds a whole run takes on screen at each pace (0: as fast as it trains); at least
# MIN_FRAMES snapshots are drawn at every pace but "fast" (the defaults keep 31-61)
PACES: dict[str, float] = {"watch": 10.0, "slow": 30.0, "fast": 0.0}
DEFAULT_PACE = "watch"
MIN_FRAMES = 20


def parse_pace(raw: str | None) -> str | None:
    """The pace a URL value names (`?pace=fast`), or None unless it is one of PACES."""
    if raw is None:
        return None
    value = raw.strip().lower()
    return value if value in PACES else None


def frame_delay(pace: str, progress: float, elapsed: float) -> float:
    """Seconds to wait before showing the snapshot at `progress` (0…1) of a run whose
    first frame was shown `elapsed` seconds ago: frames keep to the pace's clock, and a
    run that trains slower than its pace is never held back."""
    total = PACES.get(pace, 0.0)
    return max(0.0, total * min(max(progress, 0.0), 1.0) - elapsed)


# --- torch threads -------------------------------------------------------------------------
_threads_lock = threading.Lock()
_threads_users = 0
_threads_saved = 1


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one intra-op thread inside the block.

    The toy model's tensors are tiny (64 x 6 x 32), so splitting an op over threads buys
    nothing, while on a busy machine OpenMP's threads wait for each other: on the 2-core
    build machine under load, 300 steps of `reverse` took 1.2-8 s on one thread and
    47-107 s on two. torch's setting is process-wide (new threads start from it), so a
    counter restores it only when the last concurrent run leaves.
    """
    global _threads_users, _threads_saved
    with _threads_lock:
        if _threads_users == 0:
            _threads_saved = torch.get_num_threads()
        _threads_users += 1
        torch.set_num_threads(1)
    try:
        yield
    finally:
        with _threads_lock:
            _threads_users -= 1
            if _threads_users == 0:
                torch.set_num_threads(_threads_saved)


# --- the configuration a user picks --------------------------------------------------------
def live_config(
    task: str,
    *,
    seq_len: int,
    vocab_size: int,
    embed_dim: int,
    num_heads: int,
    steps: int,
    lr: float,
    seed: int,
) -> TrainConfig:
    """A TrainConfig from the settings a user picks, NOT validated (call `.validate()`).

    The snapshot interval grows with `steps` so a run keeps at most about MAX_SNAPSHOTS
    snapshots (the library's default interval of 10 for 1000 steps or fewer).
    """
    every = min(max(TrainConfig.snapshot_every, math.ceil(steps / MAX_SNAPSHOTS)), MAX_TRAIN_STEPS)
    return TrainConfig(
        task=task,
        seq_len=seq_len,
        vocab_size=vocab_size,
        embed_dim=embed_dim,
        num_heads=num_heads,
        steps=steps,
        lr=lr,
        seed=seed,
        snapshot_every=every,
    )


# --- one run -------------------------------------------------------------------------------
class LiveRun:
    """A training run that survives interruptions between its snapshots.

    `status` is "running" until the last snapshot, then "done" (all steps) or "stopped"
    (Stop was requested first). `train_seconds` counts only the time spent training and
    evaluating, not drawing.

    Thread-safe: a caller may call `advance` from a new thread while an earlier call is
    still inside it (a UI that starts a new handler thread on every click and stops the old
    one only later does). A lock makes the second call wait for that snapshot instead of
    re-entering the generator.
    """

    def __init__(self, config: TrainConfig) -> None:
        config.validate()
        self.config = config
        self.labels = example_labels(config)  # `index:token` of the example sequence
        self.model = build_model(config)
        self.snapshots: list[Snapshot] = []
        self.status = "running"
        self.stop_requested = False
        self.evaluation: Evaluation | None = None
        self.train_seconds = 0.0
        self._lock = threading.Lock()
        self._steps: Iterator[Snapshot] | None = train(
            config, model=self.model, should_stop=lambda: self.stop_requested, resumable=True
        )

    @classmethod
    def start(cls, config: TrainConfig) -> LiveRun:
        """A new run of `config` (validated here: ValueError names the valid values)."""
        return cls(config)

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def progress(self) -> float:
        """Fraction of the steps done, in [0, 1]."""
        if not self.snapshots:
            return 0.0
        return min(1.0, self.snapshots[-1].step / self.config.steps)

    def request_stop(self) -> None:
        """Ask the run to end: the next `advance` returns the last snapshot and evaluates."""
        if self.running:
            self.stop_requested = True

    def resume(self) -> bool:
        """Carry on a stopped run where it stopped; False when there is nothing to resume."""
        with self._lock:
            if self.status != "stopped" or self._steps is None:
                return False
            self.stop_requested = False
            self.status = "running"
            self.evaluation = None
            return True

    def advance(self) -> Snapshot | None:
        """Train up to the next snapshot and keep it; None once the run has ended.

        The snapshot that ends the run (the last step, or the first after Stop) also
        runs the held-out evaluation.
        """
        with self._lock:
            if not self.running or self._steps is None:
                return None
            # the generator checks the flag before each step, so a next() that starts
            # with the flag set yields the run's last snapshot
            last_requested = self.stop_requested
            began = time.perf_counter()
            with single_thread():
                snap = next(self._steps, None)
            self.train_seconds += time.perf_counter() - began
            if snap is not None:
                self.snapshots.append(snap)
            if snap is None or last_requested or snap.step >= self.config.steps:
                self._finish()
            return snap

    def run_to_end(self) -> None:
        """Advance until the run ends (a notebook's or a test's way to train)."""
        while self.running:
            self.advance()

    def _finish(self) -> None:
        last = self.snapshots[-1].step if self.snapshots else 0
        self.status = "done" if last >= self.config.steps else "stopped"
        if self.status == "done" and self._steps is not None:
            self._steps.close()  # type: ignore[attr-defined]  # a generator
            self._steps = None
        began = time.perf_counter()
        with single_thread():
            self.evaluation = evaluate(self.model, self.config)
        self.train_seconds += time.perf_counter() - began

    # --- the snapshots as plain arrays (curves, replay) ------------------------------------
    @property
    def steps(self) -> np.ndarray:
        """(S,) int64 step of every snapshot."""
        return np.array([s.step for s in self.snapshots], dtype=np.int64)

    @property
    def losses(self) -> np.ndarray:
        """(S,) training loss at every snapshot."""
        return np.array([s.loss for s in self.snapshots], dtype=np.float64)

    @property
    def accuracies(self) -> np.ndarray:
        """(S,) training-batch accuracy at every snapshot."""
        return np.array([s.accuracy for s in self.snapshots], dtype=np.float64)

    @property
    def detector(self) -> np.ndarray | None:
        """(S, 2, H) previous-token and induction score of every head at every snapshot
        (2-layer tasks), else None."""
        if not self.snapshots or self.snapshots[0].detector is None:
            return None
        return np.stack([s.detector for s in self.snapshots])  # (S, 2, H)

    def snapshot_at(self, step: int) -> Snapshot:
        """The snapshot taken at `step` (ValueError lists the steps there are)."""
        for snap in self.snapshots:
            if snap.step == step:
                return snap
        raise ValueError(f"no snapshot at step {step}; snapshots at: {self.steps.tolist()}")


# --- plain data to draw a run --------------------------------------------------------------
def example_labels(config: TrainConfig) -> list[str]:
    """`index:token` labels of the example sequence every snapshot shows."""
    return [f"{i}:{int(tok)}" for i, tok in enumerate(example_sequence(config))]


def target_matrix(config: TrainConfig) -> np.ndarray:
    """(n, n) float32: row i is one-hot on the key that holds query i's answer — the
    pattern a perfect head draws on the example sequence."""
    targets = target_positions(config.task, example_sequence(config))  # (n,)
    n = config.seq_len
    matrix = np.zeros((n, n), dtype=np.float32)  # (n query, n key)
    matrix[np.arange(n), targets] = 1.0
    return matrix


def example_table(config: TrainConfig, predictions: np.ndarray) -> dict[str, list[int]]:
    """The example sequence, the correct answers, the model's answers, and 1/0 per
    position for right/wrong: {"input", "answer", "model", "right"}, each of length n."""
    seq = example_sequence(config)  # (n,)
    answers = task_outputs(config.task, seq)  # (n,)
    preds = np.asarray(predictions, dtype=np.int64).reshape(-1)  # (n,)
    if preds.shape != answers.shape:
        raise ValueError(f"predictions must have shape ({config.seq_len},), got {preds.shape}")
    return {
        "input": seq.tolist(),
        "answer": answers.tolist(),
        "model": preds.tolist(),
        "right": (preds == answers).astype(int).tolist(),
    }


def head_names(config: TrainConfig, template: str, layered: str) -> list[str]:
    """A title per head of the model: `template` with {i} (one layer), or `layered` with
    {layer} and {h} (the 2-layer model, whose heads are numbered across both layers)."""
    if TASKS[config.task].layers == 1:
        return [template.format(i=i) for i in range(config.total_heads)]
    return [
        layered.format(layer=layer, h=h)
        for layer, h in (head_layer(config, i) for i in range(config.total_heads))
    ]


def head_table(run: LiveRun) -> list[dict[str, Any]]:
    """One row per head of the last snapshot: `attention_core.stats` measures (STAT_NAMES),
    the most-attended key's label ("top_key") and the held-out focus on the answer."""
    if not run.snapshots:
        return []
    labels = run.labels
    focus = run.evaluation.head_focus if run.evaluation is not None else None
    rows = []
    for s in head_stats(run.snapshots[-1].weights):
        row: dict[str, Any] = {"head": s.head}
        row.update({name: getattr(s, name) for name in STAT_NAMES})
        row["top_key"] = labels[s.top_key]
        row["focus"] = float(focus[s.head]) if focus is not None else float("nan")
        rows.append(row)
    return rows


def compare_payload(run: LiveRun, *, title: str, names: list[str] | None = None) -> dict[str, Any]:
    """The last snapshot's heads on the example sequence, as plain data to set beside other
    heads (e.g. a pretrained model's): {"weights": (H, n, n) float32, "labels":
    `index:token` strings, "title", "names": one title per head or None}."""
    if not run.snapshots:
        raise ValueError("the run has no snapshot yet; train first")
    weights = np.ascontiguousarray(run.snapshots[-1].weights, dtype=np.float32)  # (H, n, n)
    if names is not None and len(names) != weights.shape[0]:
        raise ValueError(f"names must have one title per head ({weights.shape[0]})")
    return {"weights": weights, "labels": list(run.labels), "title": title, "names": names}


# --- a trained model's attention, step by step (for the lessons) ------------------------------
@dataclass(frozen=True)
class ExampleTrace:
    """One attention layer of a trained model on its task's example sequence, every step
    kept: `trace` is `AttentionTrace.numpy()` (x (n, C), q/k/v (H, n, D), scores, scaled,
    weights (H, n, n), head_outputs (H, n, D), concat, output (n, C)), so a page that
    shows the five steps for a sentence shows them for the trained model unchanged."""

    trace: dict[str, np.ndarray]
    labels: list[str]  # `index:token` of the example sequence
    divisor: float  # √d_k
    multi: bool  # MultiHeadAttention (with W_o), else the article's single head
    causal: bool  # keys after the query are masked
    mask_self: bool  # the diagonal is masked
    layer: int
    layers: int


def example_trace(run: LiveRun, layer: int = 0) -> ExampleTrace:
    """Every step of `layer` of the run's model (as trained so far) on the example sequence."""
    config = run.config
    model = run.model
    layers = TASKS[config.task].layers
    if not isinstance(layer, int) or not 0 <= layer < layers:
        raise ValueError(f"layer must be in 0..{layers - 1}, got {layer!r}")
    tokens = torch.from_numpy(example_sequence(config))[None]  # (1, n)
    with torch.no_grad(), single_thread():
        if isinstance(model, InductionModel):
            x = model.layer_input(tokens, layer)  # (1, n, C)
            module = model.layers[layer]
            mask = model.mask
        else:
            x = torch.cat(  # the ToyAttentionModel's input: [token | position] (1, n, C)
                [model.token_embedding(tokens), model.position_embedding.weight[None]], dim=-1
            )
            module = model.attention
            mask = model.mask
        t = module.trace(x, mask)
    return ExampleTrace(
        trace=t.numpy(),
        labels=list(run.labels),
        divisor=t.divisor,
        multi=isinstance(module, MultiHeadAttention),
        causal=layers == 2,
        mask_self=TASKS[config.task].mask_self,
        layer=layer,
        layers=layers,
    )
