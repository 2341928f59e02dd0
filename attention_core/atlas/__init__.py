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

No Streamlit here; torch, DuckDB and pyarrow are imported on first use (the names below too:
`attention_core.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

__all__ = [
    "METRICS",
    "MODELS",
    "Atlas",
    "AtlasError",
    "HeadMap",
    "build",
    "build_command",
    "build_dask",
    "default_index_dir",
    "joint_projection",
    "open_model",
    "read_corpus",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
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
    },
)

if TYPE_CHECKING:
    from attention_core.atlas.build import build, default_index_dir
    from attention_core.atlas.engine import build_dask
    from attention_core.atlas.models import MODELS, open_model
    from attention_core.atlas.project import joint_projection
    from attention_core.atlas.query import Atlas, HeadMap, build_command
    from attention_core.atlas.rows import METRICS
    from attention_core.atlas.sentences import AtlasError, read_corpus
