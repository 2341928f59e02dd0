"""Build an atlas index: a corpus through a model, chunk by chunk, into Parquet files.

    OUT/<model>/manifest.json                  model, its fingerprint, format version
                                               (<model>: `models.index_name`)
    OUT/<model>/chunk-000000/sentences.parquet  sentence id, text, language, tokens
    OUT/<model>/chunk-000000/heads.parquet      sentence × layer × head: the statistics
    OUT/<model>/chunk-000000/pairs.parquet      each head's strongest (query, key) pairs
    …

A chunk is CHUNK_SIZE sentences, written into a hidden folder `.partial-chunk-…` and then
renamed into place (a rename is atomic on one file system): a chunk is either whole or
absent, so a killed build leaves at most a partial folder, which the next build removes
before it goes on. The sentences still to do are those of the corpus whose ids no chunk
holds, in corpus order, cut into chunks numbered after the last one: a resumed build
writes exactly the chunks the uninterrupted one would have, and a grown corpus adds only
its new sentences (incremental). A chunk that cannot be read is named, with what to do.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attention_core.atlas.models import index_name, open_model
from attention_core.atlas.rows import METRICS, sentence_rows
from attention_core.atlas.sentences import AtlasError, read_corpus, sentence_id

__all__ = [
    "CHUNK_SIZE",
    "FORMAT",
    "BuildReport",
    "Plan",
    "build",
    "chunk_dirs",
    "default_index_dir",
    "index_chunk",
    "plan",
    "write_chunk",
]

CHUNK_SIZE = 128  # sentences per chunk: the most a killed build recomputes
FORMAT = 3  # 2: pairs carry key_pos; 3: heads carry agreement
TABLES = ("sentences", "heads", "pairs")
Progress = Callable[[int, int, int], None]  # (sentences done, to do, tokens done)


def default_index_dir() -> Path:
    """$ATTENTION_STUDIO_ATLAS, else <cache>/attention-studio/atlas (<cache>: $XDG_CACHE_HOME
    or ~/.cache), beside the corpus."""
    if folder := os.environ.get("ATTENTION_STUDIO_ATLAS"):
        return Path(folder).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "attention-studio" / "atlas"


@dataclass
class BuildReport:
    model: str
    folder: Path
    added: int = 0  # sentences indexed by this build
    kept: int = 0  # sentences the index held already
    tokens: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else float("nan")


def _schemas() -> dict[str, object]:
    import pyarrow as pa

    f64, i32, s = pa.float64(), pa.int32(), pa.string()
    # the statistics the app names (rows.METRICS), and the shuffled baseline of same-word
    stats = [(name, f64) for name in (*METRICS, "same_word_shuffled")]
    return {
        "sentences": pa.schema(
            [
                ("sentence", s),
                ("text", s),
                ("lang", s),
                ("n", i32),
                ("tokens", pa.list_(s)),
                ("truncated", pa.bool_()),
            ]
        ),
        "heads": pa.schema(
            [("sentence", s), ("layer", i32), ("head", i32), *stats, ("pattern", s)]
        ),
        "pairs": pa.schema(
            [
                ("sentence", s),
                ("layer", i32),
                ("head", i32),
                ("rank", i32),
                ("query", i32),
                ("key", i32),
                ("query_token", s),
                ("key_token", s),
                ("key_pos", s),
                ("weight", f64),
            ]
        ),
    }


def chunk_dirs(folder: Path) -> list[Path]:
    """The finished chunks of one model's index, in order."""
    return sorted(p for p in Path(folder).glob("chunk-*") if p.is_dir())


def _manifest(folder: Path, model_name: str, fingerprint: str) -> None:
    """Check the folder's manifest against the model, or write it (atomically)."""
    path = folder / "manifest.json"
    wanted = {"format": FORMAT, "model": model_name, "fingerprint": fingerprint}
    if path.is_file():
        try:
            found = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as error:
            raise AtlasError(
                f"{path} is damaged ({error}): delete {folder} and build again"
            ) from None
        if {k: found.get(k) for k in wanted} != wanted:
            raise AtlasError(
                f"{folder} holds an index of {found.get('fingerprint')!r} (format "
                f"{found.get('format')}), not of {fingerprint!r}: choose another --out or delete it"
            )
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".manifest-{os.getpid()}.json"
    tmp.write_text(json.dumps(wanted, indent=1) + "\n", "utf-8")
    os.replace(tmp, path)


def _done_ids(folder: Path) -> set[str]:
    import pyarrow.parquet as pq

    done: set[str] = set()
    for chunk in chunk_dirs(folder):
        try:
            for name in TABLES:
                pq.read_metadata(chunk / f"{name}.parquet")
            ids = pq.read_table(chunk / "sentences.parquet", columns=["sentence"]).column(0)
        except (OSError, ValueError) as error:
            raise AtlasError(
                f"{chunk} is damaged ({error}): delete that folder and build again; only its "
                "sentences are computed again"
            ) from None
        done.update(ids.to_pylist())
    return done


def write_chunk(folder: Path, index: int, rows: dict[str, list[dict]]) -> Path:
    """Write one chunk's three tables into a partial folder, then rename it into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    final = folder / f"chunk-{index:06d}"
    partial = folder / f".partial-chunk-{index:06d}-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name, schema in _schemas().items():
        table = pa.Table.from_pylist(rows[name], schema=schema)  # type: ignore[arg-type]
        pq.write_table(table, partial / f"{name}.parquet", compression="zstd")
    os.rename(partial, final)  # atomic: the chunk is whole or absent
    return final


@dataclass
class Plan:
    """What a build has left to do: the chunks to write (number, sentences), in order."""

    model: str
    folder: Path
    chunks: list[tuple[int, list[str]]]
    report: BuildReport


def plan(
    model_name: str,
    corpus: Path | str | None = None,
    out: Path | str | None = None,
    *,
    limit: int | None = None,
    chunk_size: int = CHUNK_SIZE,
    texts: Sequence[str] | None = None,
) -> Plan:
    """Read the corpus, check or write the manifest, remove partial chunks, and cut the
    sentences no chunk holds yet into numbered chunks (see the module docstring)."""
    if texts is None:
        read = read_corpus(corpus, limit=limit)
        sentences, notes = read.sentences, list(read.notes)
    else:
        sentences, notes = [t for t in dict.fromkeys(" ".join(t.split()) for t in texts) if t], []
    folder = Path(out if out is not None else default_index_dir()) / index_name(model_name)
    _manifest(folder, model_name, open_model(model_name).fingerprint)
    for partial in folder.glob(".partial-chunk-*"):
        shutil.rmtree(partial, ignore_errors=True)
        notes.append(f"removed {partial.name}: a build was interrupted there; it is redone")
    done = _done_ids(folder)
    todo = [s for s in sentences if sentence_id(s) not in done]
    existing = chunk_dirs(folder)
    first = int(existing[-1].name.split("-")[1]) + 1 if existing else 0
    chunks = [
        (number, todo[offset : offset + chunk_size])
        for number, offset in enumerate(range(0, len(todo), chunk_size), start=first)
    ]
    report = BuildReport(model_name, folder, kept=len(sentences) - len(todo), notes=notes)
    return Plan(model_name, folder, chunks, report)


def index_chunk(
    model_name: str, folder: Path | str, number: int, texts: list[str]
) -> tuple[int, int]:
    """Read `texts` with the model (loaded once per process) and write chunk `number`;
    returns (sentences, tokens). What a Dask task runs, and the serial build too."""
    model = open_model(model_name)
    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    tokens = 0
    for reading in model.read(texts):
        sentence, heads, pairs = sentence_rows(
            reading, causal=model.causal, same_word=model_name == "reader"
        )
        rows["sentences"].append(sentence)
        rows["heads"] += heads
        rows["pairs"] += pairs
        tokens += len(reading.tokens)
    write_chunk(Path(folder), number, rows)
    return len(rows["sentences"]), tokens


def build(
    model_name: str,
    corpus: Path | str | None = None,
    out: Path | str | None = None,
    *,
    limit: int | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: Progress | None = None,
    texts: Sequence[str] | None = None,
) -> BuildReport:
    """Index `corpus` (a file or folder; default the held-out split) for `model_name` into
    `out`/<model> (default `default_index_dir()`), or `texts` when given. Resumes and adds
    only new sentences (see the module docstring)."""
    todo = plan(model_name, corpus, out, limit=limit, chunk_size=chunk_size, texts=texts)
    report = todo.report
    total = sum(len(texts) for _, texts in todo.chunks)
    start = time.perf_counter()
    if progress:
        progress(0, total, 0)
    for number, chunk in todo.chunks:
        added, tokens = index_chunk(model_name, todo.folder, number, chunk)
        report.added += added
        report.tokens += tokens
        if progress:
            progress(report.added, total, report.tokens)
    report.seconds = time.perf_counter() - start
    return report
