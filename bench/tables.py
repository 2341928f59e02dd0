"""How the benchmarks report: medians, table cells, markdown tables, the machine line, JSON.

Timings are wall-clock medians. On a shared or loaded machine wall time mostly measures
the neighbours, so sections that run a server or a browser also report the CPU time the
measured processes used (bench/measure.py's `cpu_seconds`): that number moves much less
with the load and tells whether a change made the work itself cheaper.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = [
    "RESULTS_DIR",
    "Table",
    "dump_json",
    "fmt_ms",
    "fmt_s",
    "machine_note",
    "median",
]

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def median(values: Iterable[float]) -> float:
    """The median, or NaN for no values."""
    data = list(values)
    return statistics.median(data) if data else float("nan")


def fmt_s(seconds: float, digits: int = 2) -> str:
    """Seconds for a table cell ("—" for NaN)."""
    return "—" if seconds != seconds else f"{seconds:.{digits}f}"


def fmt_ms(seconds: float) -> str:
    """Seconds shown as milliseconds for a table cell."""
    if seconds != seconds:
        return "—"
    ms = seconds * 1000
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


@dataclass
class Table:
    """A markdown table with a title and notes (what was measured, how, the targets)."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        self.rows.append([str(c) for c in cells])

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if self.rows:
            lines.append("| " + " | ".join(self.columns) + " |")
            lines.append("|" + "|".join("---" for _ in self.columns) + "|")
            lines += ["| " + " | ".join(row) + " |" for row in self.rows]
            lines.append("")
        lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"


def machine_note() -> str:
    """One line about the machine and its load, printed above the results."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    versions = {}
    for name in ("torch", "streamlit", "plotly", "playwright"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "missing"
    return (
        f"{platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} (1/5/15 min), Python "
        f"{platform.python_version()}, " + ", ".join(f"{k} {v}" for k, v in versions.items())
    )


def dump_json(path: Path, data: object) -> None:
    """Raw numbers next to the markdown, for anyone who wants to compare runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
