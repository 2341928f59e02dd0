"""How many heads one projector screen shows, each with every label readable.

Presenter mode (ui/presenter.py) scales a chart until its smallest text is 24 px at a
1080 px tall window. A heads chart built for the projector uses one type size,
`PROJECTOR_FONT_PX` (12 px, so the scale is 2 at 1080p), and is laid out for the room a
1920 × 1080 projector leaves below the page's title and the head pager: `PROJECTOR_WIDTH_PX`
× `PROJECTOR_HEIGHT_PX` chart pixels (half the screen's). `screen_plan` then applies the
one labelling rule of `figures.layout` at that size: as many heads side by side as keep
every token named on one axis (a step of at most 2); fewer heads per screen otherwise, down
to one (whose labels the same rule thins when even one head cannot name them all). The
other heads are one key away (→ / ←, ui/presenter_heads.py).

Pure Python, no streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from attention_core.figures.layout import (
    MIN_SIZE_META,
    TickPlan,
    column_px,
    short_label,
    text_px,
    tick_plan,
)

__all__ = [
    "PROJECTOR_FONT_PX",
    "PROJECTOR_HEIGHT_PX",
    "PROJECTOR_WIDTH_PX",
    "SCREEN_META",
    "ScreenPlan",
    "screen_plan",
]

PROJECTOR_FONT_PX = 12  # the one label size: ×2 = 24 px on a 1080 px tall projector
PROJECTOR_WIDTH_PX = 820  # the chart's column at 1920 px (1920 - the QR corner - padding) ÷ 2
PROJECTOR_HEIGHT_PX = 400  # 1080 - the title and the pager above the chart - a margin, ÷ 2
TITLE_BAND_PX = 24 + 20  # a panel's title above it (figures.heads.TITLE_PX) + the margins
# layout.meta key: [width, height] a chart was laid out for; presenter mode never draws it
# smaller (its labels were spaced for that size)
SCREEN_META = MIN_SIZE_META


@dataclass(frozen=True)
class ScreenPlan:
    """`per_screen` panels side by side, `panel_px` a side, labelled as `ticks` says."""

    per_screen: int
    panel_px: int
    ticks: TickPlan

    @property
    def every_token_named(self) -> bool:
        """Every token has a label on one axis (rows or columns)."""
        return self.ticks.shown and self.ticks.step <= 2


def screen_plan(
    labels: Sequence[str],
    panels: int,
    *,
    width_px: float = PROJECTOR_WIDTH_PX,
    height_px: float = PROJECTOR_HEIGHT_PX,
) -> ScreenPlan:
    """The most of `panels` panels of len(labels) tokens that fit `width_px` × `height_px`
    side by side with every token named on one axis at PROJECTOR_FONT_PX; one when none do."""
    font = (PROJECTOR_FONT_PX,)
    widest = max((text_px(short_label(x), PROJECTOR_FONT_PX) for x in labels), default=0.0)
    margin = math.ceil(widest) + 8 + 10  # the row labels, and the figure's own margin
    band = math.ceil(widest) + 10  # column labels standing upright under the panels
    tall = height_px - TITLE_BAND_PX - band
    plan: ScreenPlan | None = None
    for per_screen in range(max(panels, 1), 0, -1):
        side = int(min(column_px(per_screen, width_px=width_px, margin_px=margin), tall))
        plan = ScreenPlan(per_screen, max(side, 40), tick_plan(labels, max(side, 40), fonts=font))
        if plan.every_token_named:
            return plan
    assert plan is not None
    return plan
