"""A head atlas: every head of a model across a whole corpus — what it does, where it fires.

HeadVis (Anthropic) plots each head by corpus-wide metrics and lists its top sequences;
AttentionViz (Yeh et al. 2023) draws queries and keys of many tokens in one space. This
package builds the index both need, for the project's three models, offline:

    sentences.py  the corpus: a file or folder, a sentence a line; bad input named
    models.py     untrained module, trained reader, MiniLM: every layer's attention
    rows.py       one sentence's rows: the app's own per-head statistics, the top pairs
    build.py      chunks of Parquet, atomic, resumable, incremental
    engine.py     the same build as Dask tasks, one per chunk (`--engine dask`)
    query.py      DuckDB over the chunks: the head map, search, top sentences and pairs
    project.py    one head's queries and keys projected together (PCA, q·k as closeness)

    python -m attention_core.atlas build --model minilm [--corpus FILE|DIR] [--out DIR]

No Streamlit here; torch, DuckDB and pyarrow are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "AtlasError": "sentences",
    "read_corpus": "sentences",
    "MODELS": "models",
    "open_model": "models",
    "METRICS": "rows",
    "build": "build",
    "default_index_dir": "build",
    "build_dask": "engine",
    "Atlas": "query",
    "HeadMap": "query",
    "build_command": "query",
    "joint_projection": "project",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
