"""`python -m bench.section_ab --against <commit> [--reps N] [--cases 32x8,512x12]`: an
issue's before/after of a typed sentence on the landing page, in one command.

Both trees are served at once (the old one from `git archive <commit>` into a temporary
folder, the working tree as it is) to one headless Chromium, and typed sentences alternate
between them, so load on the machine falls on both alike. Per update: wall time
(Ctrl+Enter → every panel painted and decoded, `bench.chromium.wait_painted`), the
renderer's main-thread busy time (CDP `Performance.getMetrics` TaskDuration) and the
server's CPU (its process tree, psutil). The table gives medians and the paired median
difference (now − before) with a 95 % bootstrap interval: separate runs' medians move by
±30 ms with load on this 2-core machine; paired differences are steadier.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.app_server import streamlit_server
from bench.chromium import VIEWPORT, app_url, chromium, mark_chart, wait_painted
from bench.measure import REPO, sentence
from bench.section_browser import BOX, _settings
from bench.tables import Table, machine_note

__all__ = ["compare", "main", "paired_difference"]

METRICS = ("wall", "renderer busy", "server CPU")


def paired_difference(
    now: list[float], before: list[float], *, resamples: int = 4000, seed: int = 0
) -> tuple[float, float, float]:
    """Median of the pairwise differences now − before, and its 95 % bootstrap interval."""
    diffs = [a - b for a, b in zip(now, before, strict=True)]
    rng = random.Random(seed)
    boots = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(resamples))
    return statistics.median(diffs), boots[int(0.025 * resamples)], boots[int(0.975 * resamples)]


def _server_cpu(server: Any) -> float:
    import psutil

    root = psutil.Process(server.process.pid)
    return sum(sum(p.cpu_times()[:2]) for p in [root, *root.children(recursive=True)])


def _task_seconds(cdp: Any) -> float:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def compare(
    old_repo: Path, cases: list[tuple[int, int]], reps: int
) -> dict[tuple[int, int], dict[str, list[tuple[float, float, float]]]]:
    """{(n, heads): {"before"|"now": [(wall, renderer busy, server CPU) per update]}}."""
    trees = {"before": old_repo, "now": REPO}
    results: dict[tuple[int, int], dict[str, list[tuple[float, float, float]]]] = {}
    with chromium() as browser, ExitStack() as stack:
        servers = {
            name: stack.enter_context(streamlit_server(repo=repo, wait_healthy=True))
            for name, repo in trees.items()
        }
        for n, heads in cases:
            pages = {}
            for name, server in servers.items():
                page = browser.new_page(viewport=VIEWPORT)
                page.goto(app_url(server.url, _settings(n, heads, variant=1)), wait_until="commit")
                wait_painted(page, heads)
                cdp = page.context.new_cdp_session(page)
                cdp.send("Performance.enable")
                pages[name] = (page, cdp)
            rows = results.setdefault((n, heads), {"before": [], "now": []})
            for r in range(reps + 1):  # round 0 warms both up and is not counted
                order = list(pages) if r % 2 else list(pages)[::-1]
                for name in order:
                    page, cdp = pages[name]
                    mark_chart(page)
                    page.locator(BOX).fill(sentence(n, variant=100 + r))
                    busy, cpu = _task_seconds(cdp), _server_cpu(servers[name])
                    start = time.perf_counter()
                    page.locator(BOX).press("Control+Enter")
                    wall = wait_painted(page, heads) - start
                    if r:
                        rows[name].append(
                            (wall, _task_seconds(cdp) - busy, _server_cpu(servers[name]) - cpu)
                        )
            for page, _ in pages.values():
                page.close()
    return results


def table(commit: str, results: dict, reps: int) -> Table:
    """The markdown table of `compare`'s results."""
    out = Table(
        f"Typed sentence, before ({commit}) → now, {reps} alternating updates per case",
        ["case", "metric", "before (median s)", "now (median s)", "now − before [95 % CI]"],
    )
    for (n, heads), rows in results.items():
        for k, metric in enumerate(METRICS):
            before = [row[k] for row in rows["before"]]
            now = [row[k] for row in rows["now"]]
            diff, low, high = paired_difference(now, before)
            out.add(
                f"{n} × {heads}",
                metric,
                f"{statistics.median(before):.3f}",
                f"{statistics.median(now):.3f}",
                f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]",
            )
    out.notes.append(machine_note())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the commit to compare with")
    parser.add_argument("--reps", type=int, default=30, help="updates per case and tree")
    parser.add_argument("--cases", default="32x8,512x12", help="tokens x heads, comma-separated")
    args = parser.parse_args(argv)
    cases = [(int(n), int(h)) for n, h in (case.split("x") for case in args.cases.split(","))]
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as folder:
        archive = subprocess.run(
            ["git", "archive", args.against], cwd=REPO, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        results = compare(Path(folder), cases, args.reps)
    print(table(args.against, results, args.reps).markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
