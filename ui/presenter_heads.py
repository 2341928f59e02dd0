"""The landing page's heads on a projector: as many per screen as stay readable, → / ← for
the others.

`figures.projector.screen_plan` says how many heads fit one 1920 × 1080 screen with every
label in 24 px type and none overlapping; the chart is built for that size (one label size,
`SCREEN_META`, so ui/presenter.py never squeezes it) and the pager's buttons, which → and
← press, show the next or previous heads. All heads fit: no pager.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st

from attention_core.figures.heads import head_grid, heads_spec
from attention_core.figures.projector import (
    PROJECTOR_FONT_PX,
    PROJECTOR_HEIGHT_PX,
    PROJECTOR_WIDTH_PX,
    SCREEN_META,
    screen_plan,
)
from ui.charts import show_chart
from ui.language import tr
from ui.presenter import arrow_keys

__all__ = ["FIRST_HEAD_KEY", "projector_heads"]

FIRST_HEAD_KEY = "presenter_first_head"


def _turn(by: int, heads: int) -> None:
    first = st.session_state.get(FIRST_HEAD_KEY, 0) + by
    st.session_state[FIRST_HEAD_KEY] = min(max(first, 0), max(heads - 1, 0))


def projector_heads(
    weights: np.ndarray,
    labels: Sequence[str],
    *,
    head_title: str,
    mean_title: str | None,
    scale: str,
    colorbar_title: str,
    key: str,
) -> None:
    """The heads of `weights` (H, n, n) for the projector, under chart key `key`: one screen
    of them and, when they are more than a screen holds, the pager (→ / ←)."""
    heads = int(weights.shape[0])
    with_mean = mean_title is not None and heads > 1
    plan = screen_plan(labels, heads + with_mean)
    if plan.per_screen >= heads + with_mean:
        shown, first = None, 0
    else:
        per = plan.per_screen
        first = min(st.session_state.get(FIRST_HEAD_KEY, 0) // per * per, heads - 1)
        shown = list(range(first, min(first + per, heads)))
        prev, where, after = st.columns([1, 3, 1], vertical_alignment="center")
        prev.button(
            tr("presenter_heads_prev"), key="presenter_heads_prev", on_click=_turn,
            args=(-per, heads), disabled=first == 0, icon=":material/arrow_back:",
            width="stretch",
        )  # fmt: skip
        where.markdown(
            tr(
                "presenter_head_where" if len(shown) == 1 else "presenter_heads_where",
                first=shown[0],
                last=shown[-1],
                heads=heads,
            ),
            text_alignment="center",
        )
        after.button(
            tr("presenter_heads_next"), key="presenter_heads_next", on_click=_turn,
            args=(per, heads), disabled=shown[-1] >= heads - 1, icon=":material/arrow_forward:",
            width="stretch",
        )  # fmt: skip
        arrow_keys(right=["presenter_heads_next"], left=["presenter_heads_prev"])
        mean_title = None  # the mean of a screen's heads is not the mean of all of them
    grid = head_grid(weights, labels, head_title=head_title, mean_title=mean_title, heads=shown)
    spec = heads_spec(
        grid,
        scale=scale,
        colorbar_title=colorbar_title,
        cols=len(grid.titles),
        panel_px=plan.panel_px,
        width_px=PROJECTOR_WIDTH_PX,
        fonts=(PROJECTOR_FONT_PX,),
    )
    spec["layout"]["meta"] = {SCREEN_META: [PROJECTOR_WIDTH_PX, PROJECTOR_HEIGHT_PX]}
    show_chart(spec, key=key)
