"""The same build on an existing engine: Dask, over the index's partitions (its chunks).

`build_dask` plans exactly as `build.build` does (the corpus read, the manifest checked,
partial chunks removed, the sentences no chunk holds cut into numbered chunks) and hands
each chunk to Dask as one task, `build.index_chunk`: the task loads the model once per
worker and writes its chunk atomically, so workers share nothing but the folder and no
scheduler of the project's own is involved. Local mode is Dask's own: `scheduler=
"processes"` (a process pool on this machine), "threads" or "synchronous"; a cluster is
`scheduler=<a dask.distributed Client>` with the index folder on storage every worker sees.

A parallel build that is killed may leave chunk 5 written and chunk 4 not; the next
build indexes chunk 4's sentences under a new number. The rows are the same as a serial
build's (tests/core/atlas/test_engine.py), the chunk layout may differ.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attention_core.atlas.build import CHUNK_SIZE, BuildReport, index_chunk, plan

__all__ = ["build_dask"]


def build_dask(
    model_name: str,
    corpus: Path | str | None = None,
    out: Path | str | None = None,
    *,
    limit: int | None = None,
    chunk_size: int = CHUNK_SIZE,
    scheduler: Any = "processes",
    num_workers: int | None = None,
    texts: Sequence[str] | None = None,
) -> BuildReport:
    """`build.build`, one Dask task per chunk (see the module docstring)."""
    import dask

    todo = plan(model_name, corpus, out, limit=limit, chunk_size=chunk_size, texts=texts)
    tasks = [
        dask.delayed(index_chunk, pure=False)(model_name, str(todo.folder), number, chunk)
        for number, chunk in todo.chunks
    ]
    start = time.perf_counter()
    options: dict[str, Any] = {"scheduler": scheduler}
    if num_workers is not None:
        options["num_workers"] = num_workers
    results = dask.compute(*tasks, **options) if tasks else ()
    report = todo.report
    report.added = sum(added for added, _ in results)
    report.tokens = sum(tokens for _, tokens in results)
    report.seconds = time.perf_counter() - start
    return report
