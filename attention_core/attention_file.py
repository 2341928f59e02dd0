"""Attention as a file: every layer's weights and their tokens, to take out of the app (or
a notebook) and bring back in.

    attention_bytes(attentions, tokens, "npz")   → bytes of an .npz / .safetensors / .pt
    read_attention(data, "run.npz")              → Attention (checked), or AttentionFileError

Inside: `attentions` (L, H, n, n) float32 and the n `tokens`. An .npz holds the tokens as a
string array (read with allow_pickle=False), a .safetensors file in its metadata (JSON),
a .pt file as a list in a dict read with torch.load(weights_only=True): nothing in a file
is ever executed or unpickled. What is read is checked as a notebook's input is
(`notebook.inputs.as_attention`: shape against tokens, NaN, rows summing to 1).
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from attention_core.notebook.inputs import Attention, NotebookInputError, as_attention

__all__ = ["FORMATS", "MAX_FILE_BYTES", "AttentionFileError", "attention_bytes", "read_attention"]

FORMATS = ("npz", "safetensors", "pt")
MAX_FILE_BYTES = 200 * 1024 * 1024  # 12 layers × 12 heads × 512² float32 is 151 MB


class AttentionFileError(ValueError):
    """A file that is not an attention file this project can read (the message says why;
    `code` and `params` name the reason for an interface in another language, as
    `NotebookInputError`'s do)."""

    def __init__(self, message: str, *, code: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


def attention_bytes(attentions: np.ndarray, tokens: Sequence[str], fmt: str) -> bytes:
    """`attentions` (L, H, n, n) and their `tokens` as a file of format `fmt` (FORMATS)."""
    weights = np.ascontiguousarray(np.asarray(attentions, dtype=np.float32))  # (L, H, n, n)
    names = [str(t) for t in tokens]
    if fmt == "npz":
        out = io.BytesIO()
        np.savez_compressed(out, attentions=weights, tokens=np.array(names, dtype=str))
        return out.getvalue()
    if fmt == "safetensors":
        from safetensors.numpy import save

        return save({"attentions": weights}, metadata={"tokens": json.dumps(names)})
    if fmt == "pt":
        import torch

        out = io.BytesIO()
        torch.save({"attentions": torch.from_numpy(weights), "tokens": names}, out)
        return out.getvalue()
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _npz(data: bytes) -> tuple[Any, Any]:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        unpacked = sum(info.file_size for info in archive.zip.infolist())
        if unpacked > MAX_FILE_BYTES:  # a small zip may unpack to gigabytes
            raise AttentionFileError(
                f"the file unpacks to over {MAX_FILE_BYTES // 2**20} MB",
                code="unpacks_large",
                mb=MAX_FILE_BYTES // 2**20,
            )
        return archive["attentions"], archive["tokens"].tolist()


def _safetensors(data: bytes) -> tuple[Any, Any]:
    from safetensors.numpy import load

    (size,) = struct.unpack("<Q", data[:8])  # the header's length, then the JSON header
    if size > len(data) - 8:
        raise AttentionFileError("the file's header is longer than the file", code="header")
    metadata = json.loads(data[8 : 8 + size]).get("__metadata__") or {}
    return load(data)["attentions"], json.loads(metadata["tokens"])


def _pt(data: bytes) -> tuple[Any, Any]:
    import torch

    saved = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    return saved["attentions"], saved["tokens"]


def read_attention(data: bytes, name: str) -> Attention:
    """The attention in the bytes of file `name` (its extension says the format), checked.
    Raises AttentionFileError with the reason: too large, not such a file, no attentions
    or tokens, a shape that does not match the tokens, weights that are not weights."""
    if len(data) > MAX_FILE_BYTES:
        mb = MAX_FILE_BYTES // 2**20
        raise AttentionFileError(f"the file is over {mb} MB", code="too_large", mb=mb)
    fmt = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    readers = {"npz": _npz, "safetensors": _safetensors, "pt": _pt}
    if fmt not in readers:
        endings = "." + ", .".join(FORMATS)
        raise AttentionFileError(
            f"the file must end in {endings}", code="extension", endings=endings
        )
    try:
        attentions, tokens = readers[fmt](data)
    except AttentionFileError:
        raise
    except Exception as error:  # not a zip, a broken header, a pickle weights_only refuses
        raise AttentionFileError(
            f"not a readable .{fmt} attention file ({type(error).__name__}): it needs "
            "'attentions' (layers, heads, n, n) and 'tokens'",
            code="unreadable",
            fmt=fmt,
        ) from None
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise AttentionFileError("'tokens' must be a list of strings", code="tokens")
    try:
        return as_attention(attentions, tokens, prettify_tokens=False)
    except NotebookInputError as error:
        raise AttentionFileError(str(error), code=error.code, **error.params) from None
