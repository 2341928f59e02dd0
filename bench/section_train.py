"""Benchmark of attention_core.train: how fast each toy task is learned on this CPU.

Trains every task's default config (`default_config(task)`) with several seeds, on one
torch thread as the app does (`attention_core.train.live.single_thread`), evaluates
held-out accuracy after every snapshot (every `snapshot_every` steps) and prints a
markdown table of medians over the seeds:

    task | heads | steps | steps/s | steps to 95 % held-out | wall time to 95 % (s)
         | CPU time to 95 % (s) | wall time, all steps (s) | final accuracy
         | best-head focus | step-0 mean row max (largest head)

Times count training only, not the evaluations this benchmark adds between snapshots.
On a shared machine wall time mostly measures the neighbours; the CPU time of this
process moves much less with the load. The step-0 column is the bound the tests hold
every task to (`attention_core.train.model.STEP0_ROW_MAX`): attention starts unstructured.
`induction` is the 2-layer attention-only model (attention_core.train.induction); its
focus is the induction score of its best head.

    python bench/section_train.py [--seeds 3] [--tasks reverse induction] [--lr 0.001]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from attention_core.train import TASKS, build_model, default_config, evaluate, train
from attention_core.train.live import single_thread

TARGET_ACCURACY = 0.95


@dataclass(frozen=True)
class Run:
    """One seed of one task."""

    steps_to_target: float  # NaN if never reached
    wall_to_target: float
    cpu_to_target: float
    wall_total: float
    final_accuracy: float
    focus: float
    steps: int
    row_max0: float  # step 0: the largest head's mean row maximum


def measure(task: str, seed: int, lr: float | None = None) -> Run:
    """Train `task` with `seed`, timing only the training between held-out evaluations."""
    config = default_config(task, seed=seed, **({"lr": lr} if lr is not None else {}))
    model = build_model(config)
    snapshots = train(config, model=model)
    wall = cpu = 0.0
    reached: tuple[float, float, float] | None = None
    row_max0 = float("nan")
    while True:
        w0, c0 = time.perf_counter(), time.process_time()
        with single_thread():
            snap = next(snapshots, None)
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
        if snap is None:
            break
        if snap.step == 0:
            row_max0 = float(snap.weights.max(-1).mean(-1).max())
        if reached is None and evaluate(model, config).accuracy >= TARGET_ACCURACY:
            reached = (snap.step, wall, cpu)
    final = evaluate(model, config)
    nan = float("nan")
    steps, wall_t, cpu_t = reached if reached is not None else (nan, nan, nan)
    return Run(steps, wall_t, cpu_t, wall, final.accuracy, final.focus, config.steps, row_max0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per task (0..N-1)")
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--lr", type=float, default=None, help="override every task's lr")
    args = parser.parse_args(argv)

    # warm-up: the first optimizer and the first forward pass pay one-time import and
    # allocation costs that belong to no task
    list(train(default_config("reverse", steps=2)))
    print(f"median of {args.seeds} seeds; held-out accuracy checked every snapshot\n")
    print(
        "| task | heads | steps | steps/s | steps to 95 % held-out | wall time to 95 % (s) | "
        "CPU time to 95 % (s) | wall time, all steps (s) | final accuracy | best-head focus "
        "| step-0 mean row max |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for task in args.tasks:
        runs = [measure(task, seed, args.lr) for seed in range(args.seeds)]
        med = {
            name: statistics.median(getattr(r, name) for r in runs)
            for name in ("steps_to_target", "wall_to_target", "cpu_to_target", "wall_total")
        }
        acc = statistics.median(r.final_accuracy for r in runs)
        focus = statistics.median(r.focus for r in runs)
        row_max0 = max(r.row_max0 for r in runs)  # the worst seed
        config = default_config(task)
        layered = config.total_heads > config.num_heads  # induction: H in layer 0, 1 in layer 1
        heads = f"{config.num_heads} + 1" if layered else str(config.num_heads)
        rate = statistics.median(r.steps / r.wall_total for r in runs)
        print(
            f"| {task} | {heads} | {config.steps} | {rate:.0f} | {med['steps_to_target']:.0f} | "
            f"{med['wall_to_target']:.2f} | {med['cpu_to_target']:.2f} | "
            f"{med['wall_total']:.2f} | {acc:.3f} | {focus:.2f} | {row_max0:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
