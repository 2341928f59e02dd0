"""Exported attention files opened as someone else's code would: with numpy, safetensors and
torch's own readers, never with attention_core.attention_file's. A file the project's reader
reads back could still be one nobody else can open (or reads differently)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def independent_reads(path: Path) -> dict[str, tuple[np.ndarray, list[str]]]:
    """The (L, H, n, n) weights and the tokens in the attention file at `path` (.npz,
    .safetensors or .pt), as each independent reader of its format returns them, by reader."""
    kind = path.suffix.lstrip(".")
    if kind == "npz":
        with np.load(path, allow_pickle=False) as archive:
            return {"np.load": (archive["attentions"], archive["tokens"].tolist())}
    if kind == "safetensors":
        import safetensors
        import safetensors.numpy
        import safetensors.torch

        with safetensors.safe_open(path, framework="np") as f:
            tokens = json.loads(f.metadata()["tokens"])
        return {
            "safetensors.numpy.load_file": (
                safetensors.numpy.load_file(path)["attentions"],
                tokens,
            ),
            "safetensors.torch.load_file": (
                safetensors.torch.load_file(path)["attentions"].numpy(),
                tokens,
            ),
        }
    if kind == "pt":
        import torch

        saved = torch.load(path, weights_only=True)  # refuses anything but tensors and plain data
        return {"torch.load(weights_only=True)": (saved["attentions"].numpy(), saved["tokens"])}
    raise ValueError(f"not an attention file: {path}")
