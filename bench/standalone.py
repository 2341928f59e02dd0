"""One section run on its own (`python -m bench.section_x [--quick]`): its tables printed.

For the sections that are also a process of their own (`section_load`: Locust's gevent
patches the standard library at import) or handy alone while working on one.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from bench.tables import Table

__all__ = ["run_alone"]


def run_alone(
    run: Callable[..., tuple[list[Table], dict]],
    prog: str,
    *,
    quick_help: str,
    argv: list[str] | None = None,
) -> None:
    """Parse `--quick` (`quick_help`: what the small run is) from `argv`, call
    `run(quick=...)` and print its tables as markdown."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    tables, _ = run(quick=args.quick)
    print("\n".join(t.markdown() for t in tables))
