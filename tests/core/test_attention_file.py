"""attention_core.attention_file: every format round-trips the weights and tokens exactly,
and opens with numpy's, safetensors' and torch's own readers to the same values;
hostile and broken files are refused with a reason and nothing in them runs."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
import torch

import attention_core.attention_file as attention_file
from attention_core.attention_file import (
    FORMATS,
    AttentionFileError,
    attention_bytes,
    read_attention,
)
from tests.support.files import independent_reads
from tests.support.hostile import PWNED, RunsOnUnpickle

TOKENS = ["[CLS]", "中和", "</script>", "=SUM(A1)", "[SEP]"]


def _weights() -> np.ndarray:
    w = np.random.default_rng(1).random((2, 3, 5, 5))
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)  # (L, H, n, n)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_brings_back_the_same_weights_and_tokens(fmt: str) -> None:
    read = read_attention(attention_bytes(_weights(), TOKENS, fmt), f"view.{fmt}")
    np.testing.assert_array_equal(read.weights, _weights())
    assert read.tokens == TOKENS and read.layers == [0, 1]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_opens_with_numpy_safetensors_and_torch_own_readers(fmt, tmp_path) -> None:
    """What a user's own code gets from the file: the weights and tokens written, exactly."""
    path = tmp_path / f"view.{fmt}"
    path.write_bytes(attention_bytes(_weights(), TOKENS, fmt))
    reads = independent_reads(path)
    assert reads
    for reader, (weights, tokens) in reads.items():
        assert weights.dtype == np.float32 and weights.shape == (2, 3, 5, 5), reader
        np.testing.assert_array_equal(weights, _weights(), err_msg=reader)
        assert tokens == TOKENS, reader


def test_a_pickle_in_a_pt_file_is_refused_and_never_runs() -> None:
    out = io.BytesIO()
    torch.save({"attentions": torch.from_numpy(_weights()), "tokens": RunsOnUnpickle()}, out)
    with pytest.raises(AttentionFileError, match=r"not a readable \.pt"):
        read_attention(out.getvalue(), "evil.pt")
    assert not PWNED.exists()


def test_an_object_array_in_an_npz_is_refused() -> None:
    out = io.BytesIO()
    np.savez(out, attentions=_weights(), tokens=np.array([RunsOnUnpickle()] * 5, dtype=object))
    with pytest.raises(AttentionFileError, match=r"not a readable \.npz"):
        read_attention(out.getvalue(), "evil.npz")


def test_a_small_zip_that_unpacks_to_gigabytes_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(attention_file, "MAX_FILE_BYTES", 10_000)
    out = io.BytesIO()
    np.savez_compressed(out, attentions=np.zeros((1, 1, 60, 60), np.float32), tokens=["a"])
    assert len(out.getvalue()) < 10_000
    with pytest.raises(AttentionFileError, match="unpacks to over"):
        read_attention(out.getvalue(), "bomb.npz")


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"not a file at all", "x.npz", "not a readable .npz"),
        (b"\xff" * 8 + b"{}", "x.safetensors", "header is longer"),
        (b"garbage", "x.pt", "not a readable .pt"),
        (b"", "x.csv", "must end in"),
        (b"", "no_extension", "must end in"),
    ],
)
def test_broken_files_say_what_is_wrong(data: bytes, name: str, message: str) -> None:
    with pytest.raises(AttentionFileError, match=message):
        read_attention(data, name)


def test_a_file_over_the_limit_is_refused_before_it_is_read(monkeypatch) -> None:
    monkeypatch.setattr(attention_file, "MAX_FILE_BYTES", 100)
    with pytest.raises(AttentionFileError, match="over"):
        read_attention(b"\0" * 101, "big.npz")


@pytest.mark.parametrize(
    ("attentions", "tokens", "message"),
    [
        (_weights(), TOKENS[:4], "4 tokens for attention over 5"),
        (_weights() * 2, TOKENS, "sum to"),
        (np.full((1, 1, 5, 5), np.nan, np.float32), TOKENS, "NaN"),
    ],
)
def test_weights_that_are_not_weights_are_refused(attentions, tokens, message: str) -> None:
    data = attention_bytes(attentions, tokens, "safetensors")
    with pytest.raises(AttentionFileError, match=message):
        read_attention(data, "x.safetensors")


def test_tokens_must_be_strings() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for key, value in {"attentions": _weights(), "tokens": np.arange(5)}.items():
            buffer = io.BytesIO()
            np.save(buffer, value)
            archive.writestr(f"{key}.npy", buffer.getvalue())
    with pytest.raises(AttentionFileError, match="list of strings"):
        read_attention(out.getvalue(), "x.npz")
    meta = attention_bytes(_weights(), TOKENS, "safetensors")
    assert json.loads(meta[8 : 8 + int.from_bytes(meta[:8], "little")])["__metadata__"]
