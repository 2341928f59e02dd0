"""Questions to an atlas index, answered by DuckDB over its Parquet chunks.

Why Parquet + DuckDB (and not SQLite): the index is written once per chunk and then only
read in columns — "mean `previous` of every head over the Chinese sentences" touches one
or two columns of hundreds of thousands of rows, which a columnar file compresses well
(zstd) and DuckDB scans vectorised, in milliseconds, straight from the files, with no
server and no import step; chunks written by separate processes (or by Dask over the
partitions) need no shared database file or lock, and pandas, Polars, Spark or Dask read
the same files. SQLite would store row by row and need one writer.

`Atlas.open(out, model)` builds, once, a small in-memory summary (language × layer × head:
the mean of every statistic, the count of each pattern); the page's map and search read
that. A head's top sentences and pairs read the chunks themselves.
"""

from __future__ import annotations

import json
import shlex
import threading
import weakref
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attention_core.atlas.build import FORMAT, chunk_dirs, default_index_dir
from attention_core.atlas.models import index_name
from attention_core.atlas.rows import METRICS
from attention_core.atlas.sentences import AtlasError

__all__ = ["LANGS", "Atlas", "HeadMap", "build_command", "own_models"]

LANGS = ("all", "zh", "en")
TOP_MIN_TOKENS = 8  # [CLS]/[BOS] and separators included


def build_command(model: str, out: Path | None = None, limit: int | None = None) -> str:
    """The command that builds (or completes) an index, for messages."""
    parts = ["python -m attention_core.atlas build", f"--model {shlex.quote(model)}"]
    if limit:
        parts.append(f"--limit {limit}")
    if out is not None:
        parts.append(f"--out {out}")
    return " ".join(parts)


def own_models(out: Path | str | None = None) -> list[str]:
    """Your own models (their folders, as built with `--model FOLDER`) that have an index
    under `out` (default `default_index_dir()`), by folder name."""
    base = Path(out) if out is not None else default_index_dir()
    found = []
    for folder in sorted(base.glob("own-*")):
        try:
            model = json.loads((folder / "manifest.json").read_text("utf-8"))["model"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a half-made or foreign folder: not offered
        if isinstance(model, str) and index_name(model) == folder.name and chunk_dirs(folder):
            found.append(model)
    return found


@dataclass(frozen=True)
class HeadMap:
    """Every head of the model as a point: per head (P = L·H, row-major), its layer, its
    head number, the mean of each metric over the chosen sentences (NaN where undefined),
    its most frequent pattern and that pattern's share of the sentences."""

    layer: np.ndarray  # (P,) int
    head: np.ndarray  # (P,) int
    values: dict[str, np.ndarray]  # metric → (P,) float
    # metric → (P,) the sentences' standard deviation around that mean (NaN under two)
    spread: dict[str, np.ndarray]
    pattern: list[str]  # "" when no sentence shows a clear pattern
    pattern_share: np.ndarray  # (P,)
    sentences: int


class Atlas:
    """An index of one model, opened read-only."""

    def __init__(self, folder: Path) -> None:
        import duckdb

        self.folder = Path(folder)
        chunks = chunk_dirs(self.folder)
        if not chunks:
            raise AtlasError(f"no index in {self.folder}")
        try:
            found = json.loads((self.folder / "manifest.json").read_text("utf-8")).get("format")
        except (OSError, ValueError):
            found = None
        if found != FORMAT:
            raise AtlasError(
                f"{self.folder} was built in format {found}, this version reads format "
                f"{FORMAT}: delete that folder and build it again"
            )
        self.chunks = len(chunks)
        self.stamp = (str(self.folder), *(c.name for c in chunks))  # what it was opened on
        self._lock = threading.Lock()  # one DuckDB connection, one question at a time
        self._db = duckdb.connect()
        weakref.finalize(self, self._db.close)  # closed before the interpreter's teardown
        glob = str(self.folder / "chunk-*" / "{}.parquet").replace("'", "''")
        for table in ("sentences", "heads", "pairs"):
            self._db.execute(
                f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{glob.format(table)}')"
            )
        means = ", ".join(f"avg({m}) AS {m}, count({m}) AS n_{m}" for m in METRICS)
        self._db.execute(
            "CREATE TABLE summary AS SELECT s.lang, h.layer, h.head, count(*) AS rows, "
            f"{means} FROM heads h JOIN sentences s USING (sentence) GROUP BY ALL"
        )
        self._db.execute(
            "CREATE TABLE patterns AS SELECT s.lang, h.layer, h.head, h.pattern, count(*) AS c "
            "FROM heads h JOIN sentences s USING (sentence) WHERE h.pattern <> '' GROUP BY ALL"
        )
        self.layers, self.heads = (
            int(v) + 1 for v in self._one("SELECT max(layer), max(head) FROM summary")
        )
        self.sentence_count = int(self._one("SELECT count(*) FROM sentences")[0])

    @classmethod
    def open(cls, model: str, out: Path | str | None = None) -> Atlas:
        """The index of `model` under `out` (default `default_index_dir()`); AtlasError with
        the command that builds it when there is none."""
        base = Path(out) if out is not None else default_index_dir()
        folder = base / index_name(model)
        if not chunk_dirs(folder):
            raise AtlasError(
                f"no atlas index of {model} in {base}: build one with `"
                f"{build_command(model, None if out is None else base)}`"
            )
        return cls(folder)

    def _rows(self, sql: str, params: list[Any] | None = None) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params or []).fetchall()

    def _one(self, sql: str, params: list[Any] | None = None) -> tuple:
        return self._rows(sql, params)[0]

    @staticmethod
    def _lang(lang: str) -> tuple[str, list[Any]]:
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        return ("", []) if lang == "all" else ("AND lang = ?", [lang])

    def head_map(self, lang: str = "all") -> HeadMap:
        """Every head's mean statistics over the sentences of `lang` ("all", "zh", "en")."""
        where, params = self._lang(lang)
        # each language's mean weighted by how many rows had the metric (same_word and
        # induction are NULL where undefined)
        weighted = ", ".join(f"sum({m} * n_{m}) / nullif(sum(n_{m}), 0)" for m in METRICS)
        rows = self._rows(
            f"SELECT layer, head, {weighted}, sum(rows) FROM summary WHERE true {where} "
            "GROUP BY layer, head ORDER BY layer, head",
            params,
        )
        counts: dict[tuple[int, int], Counter[str]] = {}
        for layer, head, pattern, c in self._rows(
            f"SELECT layer, head, pattern, sum(c) FROM patterns WHERE true {where} GROUP BY ALL",
            params,
        ):
            counts.setdefault((layer, head), Counter())[pattern] += int(c)
        table = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
        if table.size == 0:
            table = np.zeros((0, len(METRICS) + 3))
        names, shares = [], []
        for layer, head, *_, total in table:
            best = counts.get((int(layer), int(head)), Counter()).most_common(1)
            names.append(best[0][0] if best else "")
            shares.append(best[0][1] / total if best and total else 0.0)
        sentences = self._one(f"SELECT count(*) FROM sentences WHERE true {where}", params)[0]
        sds = ", ".join(f"stddev_samp({m})" for m in METRICS)
        spread = self._rows(
            f"SELECT {sds} FROM heads h JOIN sentences s USING (sentence) WHERE true {where} "
            "GROUP BY layer, head ORDER BY layer, head",
            params,
        )
        spreads = np.array([[np.nan if v is None else v for v in r] for r in spread], dtype=float)
        spreads = spreads.reshape(len(table), len(METRICS))
        return HeadMap(
            layer=table[:, 0].astype(int),
            head=table[:, 1].astype(int),
            values={m: table[:, 2 + i] for i, m in enumerate(METRICS)},
            spread={m: spreads[:, i] for i, m in enumerate(METRICS)},
            pattern=names,
            pattern_share=np.array(shares),
            sentences=int(sentences),
        )

    def search(
        self, metric: str, minimum: float, lang: str = "all", *, limit: int = 20
    ) -> list[tuple[int, int, float]]:
        """Heads whose mean `metric` over the sentences of `lang` is at least `minimum`,
        strongest first: [(layer, head, mean)] ("previous" ≥ 0.5 in "zh": heads that look
        at the previous token in Chinese)."""
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        hm = self.head_map(lang)
        v = hm.values[metric]
        found = [
            (int(hm.layer[i]), int(hm.head[i]), float(v[i]))
            for i in np.argsort(-np.nan_to_num(v, nan=-np.inf), kind="stable")
            if not np.isnan(v[i]) and v[i] >= minimum
        ]
        return found[:limit]

    def top_sentences(
        self,
        layer: int,
        head: int,
        metric: str,
        *,
        lang: str = "all",
        k: int = 5,
        min_tokens: int = TOP_MIN_TOKENS,
    ) -> list[dict[str, Any]]:
        """The `k` sentences of at least `min_tokens` tokens (a two-word heading's means say
        little) on which head (layer, head) scores highest on `metric`, each with its text,
        tokens, the value, and the head's strongest pair there."""
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        where, params = self._lang(lang)
        rows = self._rows(
            f"SELECT s.sentence, s.text, s.tokens, h.{metric}, p.query, p.key, p.weight "
            "FROM heads h JOIN sentences s USING (sentence) LEFT JOIN pairs p ON "
            "p.sentence = h.sentence AND p.layer = h.layer AND p.head = h.head AND p.rank = 0 "
            f"WHERE h.layer = ? AND h.head = ? AND h.{metric} IS NOT NULL AND s.n >= ? {where} "
            f"ORDER BY h.{metric} DESC, s.sentence LIMIT ?",
            [layer, head, min_tokens, *params, k],
        )
        keys = ("sentence", "text", "tokens", "value", "query", "key", "weight")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def top_pairs(
        self,
        layer: int,
        head: int,
        *,
        query_token: str | None = None,
        key_pos: str | None = None,
        k: int = 10,
    ) -> list[dict[str, Any]]:
        """The head's strongest (query, key) pairs over the corpus; with `query_token`,
        only pairs whose query is that token, with `key_pos` only keys in a word of that
        part of speech (jieba's tags: "n" noun, "v" verb, "r" pronoun, "a" adjective; a
        prefix: "n" takes "nr", "ns"…): "from 它 to a noun"."""
        where, params = "", []
        if query_token:
            where, params = "AND p.query_token = ? ", [query_token]
        if key_pos:
            where, params = where + "AND p.key_pos LIKE ?", [*params, f"{key_pos}%"]
        rows = self._rows(
            "SELECT p.query_token, p.key_token, p.weight, s.text, p.query, p.key, p.key_pos "
            f"FROM pairs p JOIN sentences s USING (sentence) WHERE p.layer = ? AND p.head = ? "
            f"{where} ORDER BY p.weight DESC, p.sentence, p.rank LIMIT ?",
            [layer, head, *params, k],
        )
        keys = ("query_token", "key_token", "weight", "text", "query", "key", "key_pos")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def share_below(self, layer: int, head: int, metric: str, value: float) -> float:
        """The share of indexed sentences on which the head's `metric` is below `value`:
        where a new sentence falls among the corpus."""
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        below, total = self._one(
            f"SELECT count(*) FILTER (WHERE {metric} < ?), count({metric}) FROM heads "
            "WHERE layer = ? AND head = ?",
            [value, layer, head],
        )
        return below / total if total else float("nan")

    def sentences_with(self, text: str, limit: int) -> list[str]:
        """Up to `limit` indexed sentences that contain `text` literally, in id order."""
        rows = self._rows(
            "SELECT text FROM sentences WHERE instr(text, ?) > 0 ORDER BY sentence LIMIT ?",
            [text, int(limit)],
        )
        return [r[0] for r in rows]

    def sample(self, k: int) -> list[str]:
        """`k` indexed sentences, the same ones every time (ordered by id, i.e. by hash)."""
        return [
            r[0] for r in self._rows("SELECT text FROM sentences ORDER BY sentence LIMIT ?", [k])
        ]

    def table(self, name: str) -> list[tuple]:
        """Every row of one table, sorted: what the resume test compares."""
        if name not in ("sentences", "heads", "pairs"):
            raise ValueError(f"no table {name!r}")
        return self._rows(f"SELECT * FROM {name} ORDER BY ALL")
