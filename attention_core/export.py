"""Downloads of exactly what a view shows: CSV (long format) and JSON, and safe file names."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence

import numpy as np

__all__ = [
    "CSV_COLUMNS",
    "download_name",
    "matrices_csv",
    "matrices_json",
    "spreadsheet_safe",
    "spreadsheet_text",
]

CSV_COLUMNS = ("head", "query_index", "query_token", "key_index", "key_token", "weight")

# A cell starting with one of these is read as a formula by Excel, LibreOffice and Google
# Sheets (OWASP "CSV injection"): a token such as =HYPERLINK(...) would run on opening.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """`text` for a CSV text cell: with a leading apostrophe when it would start a formula
    (spreadsheets show the apostrophe-quoted text literally; `spreadsheet_text` undoes it).
    An apostrophe-led text gets one more, so the mapping is reversible."""
    return "'" + text if text.startswith((*_FORMULA_START, "'")) else text


def spreadsheet_text(cell: str) -> str:
    """The text a `spreadsheet_safe` cell stands for."""
    if cell.startswith("'") and cell[1:].startswith((*_FORMULA_START, "'")):
        return cell[1:]
    return cell


def matrices_csv(weights: np.ndarray, tokens: Sequence[str], *, head_names: Sequence[str]) -> str:
    """Long format, one row per (head, query, key): the columns of CSV_COLUMNS. Text cells
    go through `spreadsheet_safe`, so a token can never run as a spreadsheet formula."""
    w = np.asarray(weights)  # (P, n, n)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; a "\r" or "\n" in a cell is quoted
    writer.writerow(CSV_COLUMNS)
    cells = [spreadsheet_safe(token) for token in tokens]
    n = len(tokens)
    for p, name in enumerate(head_names):
        head = spreadsheet_safe(name)
        for i in range(n):
            for j in range(n):
                writer.writerow([head, i, cells[i], j, cells[j], repr(float(w[p, i, j]))])
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
