"""Shared helpers of the head-grid tests (tests/core/figures/test_heads.py, test_pictures.py):
peaked attention weights, `index:token` labels, and a figure read back from its JSON."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import plotly.graph_objects as go

from attention_core.pipeline import token_labels

__all__ = [
    "assert_head_view_weights",
    "axes_by_panel",
    "decode_typed",
    "figure_spec",
    "repeated_labels",
    "softmax_weights",
]


def softmax_weights(heads: int, n: int, *, seed: int = 0) -> np.ndarray:
    """(H, n, n) float32 rows that sum to 1, peaked like real attention."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(scale=3.0, size=(heads, n, n))
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def repeated_labels(n: int) -> list[str]:
    return token_labels([f"t{i % 5}" for i in range(n)])  # repeated tokens, distinct labels


def decode_typed(array: object) -> np.ndarray:
    assert isinstance(array, dict), "numpy arrays must travel as base64 typed arrays"
    flat = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
    return flat.reshape([int(s) for s in str(array["shape"]).split(",")])


def figure_spec(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def axes_by_panel(layout: dict, letter: str) -> dict[int, dict]:
    """Panel number (0-based) → its x or y axis."""
    found = {}
    for key, value in layout.items():
        m = re.fullmatch(rf"{letter}axis(\d*)", key)
        if m:
            found[int(m.group(1) or 1) - 1] = value
    return found


def head_view_weights(spec: dict) -> np.ndarray:
    """A head view spec's sparse weights (`figures.headview.sparse_weights`) decoded here,
    not by the library: (H, n, n), the weights left out (lighter than MIN_WEIGHT) 0."""
    n, heads, sparse = len(spec["tokens"]), len(spec["heads"]), spec["sparse"]
    out = np.zeros((heads, n, n))
    at = 0
    for row, count in enumerate(sparse["counts"]):  # rows in order: head, then query
        head, query = divmod(row, n)
        for key, value in zip(
            sparse["keys"][at : at + count], sparse["vals"][at : at + count], strict=True
        ):
            out[head, query, key] = value / spec["scale"]
        at += count
    assert at == len(sparse["keys"]) == len(sparse["vals"])
    return out


def assert_head_view_weights(spec: dict, reference: np.ndarray, *, atol: float) -> None:
    """The head view sends every weight a line is drawn for, within `atol` of `reference`
    (H, n, n), and leaves out only weights lighter than MIN_WEIGHT."""
    from attention_core.figures.headview import MIN_WEIGHT

    got, ref = head_view_weights(spec), np.asarray(reference, dtype=np.float64)
    assert got.shape == ref.shape
    kept = got > 0
    np.testing.assert_allclose(got[kept], ref[kept], atol=atol)
    assert (ref[~kept] < MIN_WEIGHT + atol).all()  # left out: only the light ones
    assert (ref[ref >= MIN_WEIGHT + atol] > 0).all() and kept.any()
