"""Benchmark of attention_core.train: how fast each toy task is learned on this CPU.

Trains every task's default config (`default_config(task)`) with several seeds, evaluates
held-out accuracy after every snapshot (every `snapshot_every` steps) and prints a
markdown table of medians over the seeds:

    task | heads | steps to 95 % held-out | wall time to 95 % (s) | CPU time to 95 % (s)
         | wall time, all steps (s) | final accuracy | best-head focus

Times count training only, not the evaluations this benchmark adds between snapshots.
On a shared machine wall time mostly measures the neighbours; the CPU time of this
process (all its threads) moves much less with the load.

    python bench/section_train.py [--seeds 3] [--tasks reverse match]
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


def measure(task: str, seed: int) -> Run:
    """Train `task` with `seed`, timing only the training between held-out evaluations."""
    config = default_config(task, seed=seed)
    model = build_model(config)
    snapshots = train(config, model=model)
    wall = cpu = 0.0
    reached: tuple[float, float, float] | None = None
    while True:
        w0, c0 = time.perf_counter(), time.process_time()
        snap = next(snapshots, None)
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
        if snap is None:
            break
        if reached is None and evaluate(model, config).accuracy >= TARGET_ACCURACY:
            reached = (snap.step, wall, cpu)
    final = evaluate(model, config)
    nan = float("nan")
    steps, wall_t, cpu_t = reached if reached is not None else (nan, nan, nan)
    return Run(steps, wall_t, cpu_t, wall, final.accuracy, final.focus)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per task (0..N-1)")
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    args = parser.parse_args(argv)

    # warm-up: the first optimizer and the first forward pass pay one-time import and
    # allocation costs that belong to no task
    list(train(default_config("reverse", steps=2)))
    print(f"median of {args.seeds} seeds; held-out accuracy checked every snapshot\n")
    print(
        "| task | heads | steps to 95 % held-out | wall time to 95 % (s) | "
        "CPU time to 95 % (s) | wall time, all steps (s) | final accuracy | best-head focus |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for task in args.tasks:
        runs = [measure(task, seed) for seed in range(args.seeds)]
        med = {
            name: statistics.median(getattr(r, name) for r in runs)
            for name in ("steps_to_target", "wall_to_target", "cpu_to_target", "wall_total")
        }
        acc = statistics.median(r.final_accuracy for r in runs)
        focus = statistics.median(r.focus for r in runs)
        heads = default_config(task).num_heads
        print(
            f"| {task} | {heads} | {med['steps_to_target']:.0f} | {med['wall_to_target']:.2f} | "
            f"{med['cpu_to_target']:.2f} | {med['wall_total']:.2f} | {acc:.3f} | {focus:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
