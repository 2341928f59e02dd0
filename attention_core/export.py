"""Downloads of exactly what a view shows: CSV (long format) and JSON, and safe file names."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence

import numpy as np

__all__ = ["CSV_COLUMNS", "download_name", "matrices_csv", "matrices_json"]

CSV_COLUMNS = ("head", "query_index", "query_token", "key_index", "key_token", "weight")


def matrices_csv(weights: np.ndarray, tokens: Sequence[str], *, head_names: Sequence[str]) -> str:
    """Long format, one row per (head, query, key): the columns of CSV_COLUMNS."""
    w = np.asarray(weights)  # (P, n, n)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    n = len(tokens)
    for p, name in enumerate(head_names):
        for i in range(n):
            for j in range(n):
                writer.writerow([name, i, tokens[i], j, tokens[j], repr(float(w[p, i, j]))])
    return out.getvalue()


def matrices_json(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    head_names: Sequence[str],
    config: dict[str, object],
) -> str:
    """{"config": ..., "tokens": [...], "heads": {name: n×n list}} with float32 values exact."""
    w = np.asarray(weights, dtype=np.float32)  # (P, n, n)
    doc = {
        "config": config,
        "tokens": list(tokens),
        "heads": {name: w[p].astype(float).tolist() for p, name in enumerate(head_names)},
    }
    return json.dumps(doc, ensure_ascii=False)


def download_name(text: str, ext: str, *, prefix: str = "attention") -> str:
    """A file name that is safe anywhere: ASCII letters, digits, '-' and '_' only."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:32]
    return f"{prefix}-{slug}.{ext}" if slug else f"{prefix}.{ext}"
