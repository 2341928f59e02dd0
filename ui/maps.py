"""Maps of attention combined across layers, drawn the same way wherever they are shown
(the Lens page for a model, the attention-file page for a file): rollout after each
layer, and attention flow. The numbers come from attention_core.lens; here only how they
are captioned, coloured and drawn.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.figures.compare import without_cramped_text
from attention_core.figures.heads import head_grid, plot_heads
from ui.charts import show_chart
from ui.common import colour_bar_title
from ui.language import tr


def show_rollout(
    rolled: np.ndarray, labels: list[str], scale: str, *, key: str, filename: str
) -> None:
    """Rollout after each layer, (L, m, m) with its m labels, under `key`."""
    st.caption(tr("lens_rollout_caption"))
    grid = head_grid(rolled.astype(np.float32), labels, head_title=tr("lens_after_layer", i="{i}"))
    # rows of rollout sum to 1 (attention_core.lens.rollout): every scale applies
    figure = plot_heads(grid, scale=scale, colorbar_title=colour_bar_title(scale))
    show_chart(without_cramped_text(figure), key=key, filename=filename)


def show_flow(
    flows: np.ndarray, labels: list[str], layers: int, scale: str, *, key: str, filename: str
) -> None:
    """Attention flow through all `layers`, (m, m) with its m labels, under `key`."""
    st.caption(tr("lens_flow_caption", n=len(labels)))
    # A flow row is not a distribution: each entry is a max flow of its own, at most 1, and
    # a row sums to several (measured: ~5 at 6 tokens). "Weight × n" would mean nothing, so
    # under "relative" flow stays absolute, and says so; contrast (0 … the largest entry)
    # needs no distribution and applies.
    if scale == "relative":
        scale = "absolute"
        st.caption(tr("lens_flow_not_relative"))
    grid = head_grid(
        flows[None].astype(np.float32), labels, head_title=tr("lens_flow_title", layers=layers)
    )
    figure = plot_heads(grid, scale=scale, colorbar_title=colour_bar_title(scale))
    show_chart(without_cramped_text(figure), key=key, filename=filename)
