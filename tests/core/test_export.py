"""attention_core.export: downloads parse back to exactly the matrices shown."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from attention_core.export import (
    CSV_COLUMNS,
    download_name,
    matrices_csv,
    matrices_json,
    spreadsheet_safe,
    spreadsheet_text,
)

W = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 3)).astype(np.float32)  # (2, 3, 3)
TOKENS = ["中和", "<script>", "中和"]


def test_csv_round_trip_exact():
    rows = list(csv.DictReader(io.StringIO(matrices_csv(W, TOKENS, head_names=["h0", "h1"]))))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 2 * 3 * 3
    back = np.zeros_like(W)
    for r in rows:
        back[int(r["head"][1]), int(r["query_index"]), int(r["key_index"])] = float(r["weight"])
        assert r["query_token"] == TOKENS[int(r["query_index"])]
    np.testing.assert_array_equal(back, W)


def test_csv_cells_never_start_a_spreadsheet_formula_and_read_back_exactly():
    tokens = ["=1+1", "+SUM(A1)", "-2", "@x", "\tTAB", "\rCR", "'quoted", "''", "plain", "a=b"]
    w = np.full((1, len(tokens), len(tokens)), 1 / len(tokens), dtype=np.float32)
    text = matrices_csv(w, tokens, head_names=["=h"])
    rows = list(csv.DictReader(io.StringIO(text, newline="")))  # a token holds "\r"
    cells = [r[k] for r in rows for k in ("head", "query_token", "key_token")]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert {r["head"] for r in rows} == {"'=h"}
    for r in rows:
        assert spreadsheet_text(r["query_token"]) == tokens[int(r["query_index"])]
    # only what needs it is quoted, and quoting is undone exactly
    assert spreadsheet_safe("plain") == "plain" and spreadsheet_safe("a=b") == "a=b"
    assert spreadsheet_safe("'x") == "''x" and spreadsheet_text("'x") == "'x"
    for token in tokens:
        assert spreadsheet_text(spreadsheet_safe(token)) == token


def test_json_round_trip_exact():
    doc = json.loads(matrices_json(W, TOKENS, head_names=["a", "b"], config={"seed": 1}))
    assert doc["tokens"] == TOKENS and doc["config"] == {"seed": 1}
    np.testing.assert_array_equal(np.array(doc["heads"]["b"], dtype=np.float32), W[1])


def test_download_names_are_inert():
    assert download_name("<img src=x onerror=alert(1)>", "csv") == (
        "attention-img-src-x-onerror-alert-1.csv"
    )
    assert download_name("中和有一個永和路", "json") == "attention.json"
    assert download_name("../../etc/passwd", "csv") == "attention-etc-passwd.csv"
