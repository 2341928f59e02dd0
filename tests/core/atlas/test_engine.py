"""attention_core.atlas.engine: the build as Dask tasks in Dask's local mode (a process
pool on this machine) writes the rows the serial build writes, and resumes like it."""

from __future__ import annotations

from pathlib import Path

from attention_core.atlas.build import build, chunk_dirs
from attention_core.atlas.engine import build_dask
from attention_core.atlas.query import Atlas
from tests.support.atlas import SENTENCES


def test_dask_local_processes_write_the_serial_builds_rows(tmp_path: Path) -> None:
    serial = build("untrained", None, tmp_path / "serial", texts=SENTENCES, chunk_size=5)
    parallel = build_dask(
        "untrained",
        None,
        tmp_path / "dask",
        texts=SENTENCES,
        chunk_size=5,
        scheduler="processes",
        num_workers=2,
    )
    assert (parallel.added, parallel.tokens) == (serial.added, serial.tokens) == (24, serial.tokens)
    a, b = Atlas.open("untrained", tmp_path / "serial"), Atlas.open("untrained", tmp_path / "dask")
    for table in ("sentences", "heads", "pairs"):
        assert a.table(table) == b.table(table), table
    assert len(chunk_dirs(tmp_path / "dask" / "untrained")) == 5
    again = build_dask(
        "untrained",
        None,
        tmp_path / "dask",
        texts=[*SENTENCES, "新的一句。"],
        scheduler="synchronous",
    )
    assert (again.added, again.kept) == (1, 24)
