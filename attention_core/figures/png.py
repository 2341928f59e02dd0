"""Colour-mapped pictures of matrices: a 256-colour palette sampled from a Plotly colour
scale, each cell's palette index, and an 8-bit palette PNG (ISO/IEC 15948) of them.

Large head grids send most heads as such pictures instead of heatmap traces: a 512 x 512
panel is 256 kB of indices before compression instead of 1 MB of float32 (see
`figures.heads.plot_heads`). Written with zlib + struct, so the library needs no imaging
package.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.colors

__all__ = ["colour_indices", "palette", "palette_png"]


def palette(colorscale: str | Sequence[Any]) -> np.ndarray:
    """(256, 3) uint8: the colour scale sampled at 256 evenly spaced points, as Plotly
    interpolates it (linearly in RGB between its stops)."""
    scale = plotly.colors.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    stops = np.array([float(position) for position, _ in scale])
    colours = plotly.colors.convert_colors_to_same_type([c for _, c in scale], "rgb")[0]
    rgb = np.array([plotly.colors.unlabel_rgb(c) for c in colours], dtype=np.float64)  # (S, 3)
    at = np.linspace(0.0, 1.0, 256)
    channels = [np.interp(at, stops, rgb[:, k]) for k in range(3)]
    return np.clip(np.rint(np.stack(channels, axis=1)), 0, 255).astype(np.uint8)  # (256, 3)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def palette_png(indices: np.ndarray, palette: np.ndarray) -> bytes:
    """An 8-bit palette PNG (ISO/IEC 15948): pixel (i, j) has colour palette[indices[i, j]]."""
    idx = np.asarray(indices, dtype=np.uint8)
    h, w = idx.shape
    rows = np.zeros((h, w + 1), dtype=np.uint8)  # each scanline starts with filter type 0
    rows[:, 1:] = idx
    header = struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)  # 8-bit depth, colour type 3
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"PLTE", np.ascontiguousarray(palette, dtype=np.uint8).tobytes()),
            # level 1: a 512 x 512 panel compresses in ~4 ms and the output is barely larger
            _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)),
            _png_chunk(b"IEND", b""),
        ]
    )


def colour_indices(matrix: np.ndarray, zmin: float, zmax: float) -> np.ndarray:
    """Palette index 0…255 of each cell: its place between zmin and zmax (clipped)."""
    m = np.nan_to_num(np.asarray(matrix, dtype=np.float64), nan=zmin)
    span = zmax - zmin if zmax > zmin else 1.0
    return np.clip(np.rint((m - zmin) / span * 255), 0, 255).astype(np.uint8)
