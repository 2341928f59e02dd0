"""attention_core/figures/heads.py's picture panels: a head grid too large to send as
numbers (`IMAGE_CELLS`) sent as palette PNGs (attention_core/figures/png.py).

References: the input weights themselves, Plotly's own colour-scale sampling
(`plotly.colors.sample_colorscale`) for the picture panels, and Pillow's PNG decoder for
the hand-written PNGs.
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import plotly.colors
from PIL import Image

from attention_core.figures.heads import (
    PICTURE_LEVELS,
    colour_indices,
    head_grid,
    palette_png,
    plot_heads,
    pooled,
)
from attention_core.figures.layout import panel_layout
from tests.support.figures import axes_by_panel as _axes
from tests.support.figures import decode_typed as _decode
from tests.support.figures import figure_spec as _spec
from tests.support.figures import repeated_labels as _labels
from tests.support.figures import softmax_weights as _softmax_weights

# --- plot_heads: picture panels for large grids --------------------------------------------------


def _png(image: dict) -> tuple[np.ndarray, np.ndarray]:
    """A layout image's (palette indices (h, w), palette (256, 3)), decoded by Pillow."""
    head, data = image["source"].split(",", 1)
    assert head == "data:image/png;base64"
    with Image.open(io.BytesIO(base64.b64decode(data))) as png:
        assert png.mode == "P"
        return np.asarray(png), np.array(png.getpalette()[: 256 * 3]).reshape(256, 3)


def test_large_grid_sends_pictures_and_keeps_one_exact_heatmap():
    H, n = 12, 512
    w = _softmax_weights(H, n, seed=1)
    fig = plot_heads(head_grid(w, _labels(n)))
    text = fig.to_json()
    assert len(text) <= 1.4 * w.nbytes  # the brief's bound; in fact far below it
    assert len(text) <= 0.2 * w.nbytes
    spec = json.loads(text)
    assert [t["type"] for t in spec["data"]] == ["heatmap"]
    np.testing.assert_array_equal(_decode(spec["data"][0]["z"]), w[0])
    assert spec["data"][0]["x"] == _labels(n)
    ys = _axes(spec["layout"], "y")
    assert all(ys[p]["scaleanchor"] == ("x" if p == 0 else f"x{p + 1}") for p in range(H))
    # every other head a picture laid exactly over its panel's n × n cells, query 0 on top
    images = spec["layout"]["images"]
    assert [(i["xref"], i["yref"]) for i in images] == [(f"x{p}", f"y{p}") for p in range(2, H + 1)]
    for image in images:
        assert (image["x"], image["y"], image["sizex"], image["sizey"]) == (-0.5, -0.5, n, n)
        assert (image["xanchor"], image["yanchor"], image["sizing"]) == ("left", "top", "stretch")
    assert ys[1]["range"] == [n - 0.5, -0.5]  # the y axis runs down: y = -0.5 is the top
    # no larger than the panel is drawn: neighbouring tokens share a pixel
    side = panel_layout(_labels(n), H).panel_px
    assert side < n
    assert all(_png(image)[0].shape == (side, side) for image in images)


def test_pooled_pixels_are_the_mean_of_the_cells_they_cover():
    rng = np.random.default_rng(7)
    z = rng.random((7, 7))
    # 7 cells into 3 pixels: np.linspace(0, 7, 4).round() = 0, 2, 5, 7 → blocks of 2, 3, 2
    blocks = [slice(0, 2), slice(2, 5), slice(5, 7)]
    by_hand = np.array([[z[r, c].mean() for c in blocks] for r in blocks])
    np.testing.assert_allclose(pooled(z, 3), by_hand)
    # every cell counts once: the pooled picture keeps the matrix's total weight
    sizes = np.array([2, 3, 2])
    assert np.isclose((pooled(z, 3) * np.outer(sizes, sizes)).sum(), z.sum())
    assert pooled(z, 7) is z and pooled(z, 9) is z  # as many pixels as cells: as it is


def test_picture_pixels_are_the_colour_scale_at_each_weight():
    H, n = 5, 512
    w = _softmax_weights(H, n, seed=2)
    w[1, 0, :4] = [0.0, 1.0, 0.5, np.float32(1 / 3)]  # exact stops and a midpoint
    spec = _spec(plot_heads(head_grid(w, _labels(n)), exact=()))
    images = spec["layout"]["images"]
    assert len(images) == H
    side = panel_layout(_labels(n), H).panel_px
    reference = plotly.colors.sample_colorscale("Blues", list(np.linspace(0, 1, 256)))
    expected_palette = np.array([plotly.colors.unlabel_rgb(c) for c in reference])  # (256, 3)
    for h, image in enumerate(images):
        pixels, palette = _png(image)
        assert pixels.shape == (side, side)
        # the pooled weight's place on the scale, rounded to one of PICTURE_LEVELS evenly
        # spaced colours
        step = 255 / (PICTURE_LEVELS - 1)
        levels = np.rint(np.rint(np.clip(np.rint(pooled(w[h], side) * 255), 0, 255) / step) * step)
        np.testing.assert_array_equal(pixels, levels)
        assert len(np.unique(pixels)) <= PICTURE_LEVELS
        np.testing.assert_allclose(palette, expected_palette, atol=1)  # Plotly's colours
    # no heatmap left: an invisible scatter carries the one shared colour bar
    carriers = [t for t in spec["data"] if t["type"] == "scatter"]
    assert len(carriers) == 1 and carriers[0]["marker"]["coloraxis"] == "coloraxis"
    assert [k for k in spec["layout"] if k.startswith("coloraxis")] == ["coloraxis"]


def test_pictures_of_fewer_tokens_than_pixels_keep_every_cell():
    H, n = 9, 256  # 256² × 9 cells: pictures, on panels wider than 256 pixels
    w = _softmax_weights(H, n, seed=5)
    spec = _spec(plot_heads(head_grid(w, _labels(n))))
    assert panel_layout(_labels(n), H).panel_px >= n
    pixels, _ = _png(spec["layout"]["images"][0])
    step = 255 / (PICTURE_LEVELS - 1)
    levels = np.rint(np.rint(np.clip(np.rint(w[1] * 255), 0, 255) / step) * step)
    np.testing.assert_array_equal(pixels, levels)


def test_exact_panels_are_chosen_by_the_caller():
    H, n = 6, 512
    w = _softmax_weights(H, n, seed=3)
    spec = _spec(plot_heads(head_grid(w, _labels(n)), exact=(2, 5)))
    assert [(t["type"], t["xaxis"]) for t in spec["data"]] == [("heatmap", "x3"), ("heatmap", "x6")]
    assert [i["xref"] for i in spec["layout"]["images"]] == ["x", "x2", "x4", "x5"]
    np.testing.assert_array_equal(_decode(spec["data"][1]["z"]), w[5])


def test_colour_indices_clip_and_scale():
    m = np.array([[-1.0, 0.0, 0.25], [0.5, 1.0, 2.0]], dtype=np.float32)
    np.testing.assert_array_equal(colour_indices(m, 0.0, 1.0), [[0, 0, 64], [128, 255, 255]])
    np.testing.assert_array_equal(colour_indices(m, -1.0, 1.0)[0], [0, 128, 159])
    assert colour_indices(np.array([[np.nan]]), 0.0, 1.0)[0, 0] == 0


def test_palette_png_round_trips_through_pillow():
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 256, size=(7, 13), dtype=np.uint8)
    palette = rng.integers(0, 256, size=(256, 3), dtype=np.uint8)
    with Image.open(io.BytesIO(palette_png(idx, palette))) as png:
        png.load()  # checks every chunk's CRC and the zlib stream
        np.testing.assert_array_equal(np.asarray(png), idx)
        np.testing.assert_array_equal(
            np.array(png.getpalette()[: 256 * 3]).reshape(256, 3), palette
        )


def test_an_even_share_is_drawn_white_in_pictures_too():
    """Relative scale: a head attending evenly (every weight 1/n) is white, the middle of
    the diverging scale, in the picture panels as in the exact one."""
    H, n = 3, 512
    w = np.full((H, n, n), 1 / n, dtype=np.float32)
    spec = _spec(plot_heads(head_grid(w, _labels(n)), scale="relative"))
    for image in spec["layout"]["images"]:
        pixels, palette = _png(image)
        colours = palette[np.unique(pixels)]  # (k, 3) the colours drawn
        assert colours.min() >= 240, colours  # white-ish: RdBu's middle is (247, 247, 247)
        assert np.ptp(colours, axis=0).max() == 0  # one colour for the whole panel
