"""attention_core.export: downloads parse back to exactly the matrices shown."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from attention_core.export import CSV_COLUMNS, download_name, matrices_csv, matrices_json

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
