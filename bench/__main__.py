"""`python -m bench [section ...] [--quick]`: run the benchmarks, print markdown tables.

With no section names every section runs, in this order: core, server, payload, browser,
bertviz, notebook, pretrained, lens, poll, reader, visit, atlas, long, long-models, pace,
decode, attribution, widgets, train, load, burst. The
tables are printed as each section finishes and written, with the raw numbers, to
bench/results/latest.md and latest.json (git-ignored). A section that fails is reported
and the others still run; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import importlib
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench.measure import REPO
from bench.tables import RESULTS_DIR, Table, dump_json, machine_note

TRAIN_SCRIPT = Path(__file__).resolve().parent / "section_train.py"
TRAIN_TIMEOUT_S = 900
LOAD_TIMEOUT_S = 1200


def _train(*, quick: bool = False) -> tuple[list[Table], dict]:
    """bench/section_train.py, run as its own process; it prints its own table."""
    title = "Training (bench/section_train.py)"
    if not TRAIN_SCRIPT.is_file():
        table = Table(title, [])
        table.notes.append("skipped: bench/section_train.py does not exist yet.")
        return [table], {"skipped": True}
    seeds = ["--seeds", "1"] if quick else []
    return _child(title, ["bench/section_train.py", *seeds], timeout_s=TRAIN_TIMEOUT_S)


def _load(*, quick: bool = False) -> tuple[list[Table], dict]:
    """bench/section_load.py in its own process: Locust's gevent patches the standard
    library when it is imported, which must not happen to this process."""
    flags = ["--quick"] if quick else []
    args = ["-m", "bench.section_load", *flags]
    return _child("Load (bench/section_load.py)", args, timeout_s=LOAD_TIMEOUT_S)


def _burst(*, quick: bool = False) -> tuple[list[Table], dict]:
    """bench/section_burst.py in its own process (Locust, like `load`)."""
    flags = ["--quick"] if quick else []
    args = ["-m", "bench.section_burst", *flags]
    title = "A class arriving at once (bench/section_burst.py)"
    return _child(title, args, timeout_s=LOAD_TIMEOUT_S)


def _child(title: str, args: list[str], *, timeout_s: float) -> tuple[list[Table], dict]:
    """`python <args>` run in the repository as a process of its own; the section's one
    table holds what it printed."""
    command = " ".join(["python", *args])
    done = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        error = done.stderr.strip()[-1500:]
        raise RuntimeError(f"`{command}` exited with {done.returncode}: {error}")
    table = Table(title, [])
    table.notes.append(f"output of `{command}`:\n\n" + done.stdout.strip())
    return [table], {"stdout": done.stdout}


# the sections run in this process: name → (module of bench/, its function), imported only
# when the section runs (`python -m bench core` should not import Playwright or bertviz)
IN_PROCESS = {
    "core": ("section_core", "run"),
    "server": ("section_server", "run"),
    "payload": ("section_server", "run_payload"),
    "browser": ("section_browser", "run"),
    "bertviz": ("section_bertviz", "run"),
    "notebook": ("section_notebook", "run"),  # a notebook cell → head view, vs BertViz
    "pretrained": ("section_pretrained", "run"),
    "lens": ("section_pretrained", "run_lens"),  # rollout, flow, norms, ablation, head view
    "poll": ("section_poll", "run"),  # a live class poll: 100 phones, two replicas, Redis
    "reader": ("section_reader", "run"),  # the trained reader: steps/s, typed → painted
    "visit": ("section_visit", "run"),  # the user's clock: cold start, a new phone, CPU/update
    "atlas": ("section_atlas", "run"),  # head atlas: MiniLM build rate, index size, queries
    "long": ("section_long", "run"),  # 1 024-4 096 tokens: the long map vs BertViz
    "long-models": ("section_long_models", "run"),  # a real model's shapes as long maps
    "pace": ("section_pace", "run"),  # the clocks tests no longer assert: slots, watch pace
    "decode": ("section_decode", "run"),  # a decoder writing: a reader step, 64 Llama steps
    "attribution": ("section_attribution", "run"),  # integrated gradients, the agreement table
    "widgets": ("section_widgets", "run"),  # the notebook widgets in JupyterLab: paint, redraw
}


def _sections() -> dict[str, Callable[..., tuple[list[Table], dict]]]:
    def lazy(module: str, function: str) -> Callable[..., tuple[list[Table], dict]]:
        return lambda **kw: getattr(importlib.import_module(f"bench.{module}"), function)(**kw)

    return {
        **{name: lazy(*where) for name, where in IN_PROCESS.items()},
        "train": _train,
        "load": _load,
        "burst": _burst,
    }


def _git_commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}{' + uncommitted changes' if dirty else ''}" if head else "unknown"


def main(argv: list[str] | None = None) -> int:
    sections = _sections()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "sections",
        nargs="*",
        metavar="section",
        help=f"any of: {', '.join(sections)} (default: all)",
    )
    parser.add_argument("--quick", action="store_true", help="small grids, few repeats (smoke)")
    parser.add_argument(
        "--out", type=Path, default=RESULTS_DIR / "latest.md", help="markdown output file"
    )
    parser.add_argument(
        "--app-repo",
        type=Path,
        default=None,
        help="serve app.py from this checkout in the browser and bertviz sections "
        "(before/after comparisons against a git worktree)",
    )
    args = parser.parse_args(argv)
    if args.app_repo is not None:
        from bench import app_server

        app_server.APP_REPO = args.app_repo.resolve()
    unknown = [name for name in args.sections if name not in sections]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; valid: {', '.join(sections)}")
    chosen = args.sections or list(sections)

    header = [
        "# Attention Studio benchmarks",
        "",
        f"- {dt.datetime.now().isoformat(timespec='seconds')}, commit {_git_commit()}"
        + (", --quick" if args.quick else ""),
        f"- {machine_note()}",
        *([f"- browser and bertviz sections serve {args.app_repo}"] if args.app_repo else []),
        "- wall-clock numbers on a loaded machine measure the neighbours too: see the CPU "
        "columns, and rerun on a quiet machine for the real figures.",
        "",
    ]
    print("\n".join(header), flush=True)
    out: list[str] = [*header]
    raw: dict[str, object] = {}
    failed = []
    started = time.perf_counter()
    for name in chosen:
        t0 = time.perf_counter()
        try:
            tables, data = sections[name](quick=args.quick)
            text = "\n".join(t.markdown() for t in tables)
            raw[name] = data
        except Exception as error:
            failed.append(name)
            text = f"### {name}\n\n**failed**: {type(error).__name__}: {error}\n"
            raw[name] = {"error": traceback.format_exc()}
            traceback.print_exc()
        text += f"\n_{name}: {time.perf_counter() - t0:.0f} s_\n"
        print(text, flush=True)
        out.append(text)
        gc.collect()
    footer = f"_total: {time.perf_counter() - started:.0f} s_\n"
    print(footer)
    out.append(footer)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(out), encoding="utf-8")
    dump_json(args.out.with_suffix(".json"), raw)
    print(f"written: {args.out} and {args.out.with_suffix('.json').name}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
