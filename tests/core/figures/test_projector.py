"""figures/projector.py: how many heads a 1080p projector shows, every label readable."""

from __future__ import annotations

import pytest

from attention_core.figures.layout import LABEL_PITCH, labelled
from attention_core.figures.projector import (
    PROJECTOR_FONT_PX,
    PROJECTOR_HEIGHT_PX,
    PROJECTOR_WIDTH_PX,
    TITLE_BAND_PX,
    screen_plan,
)


def _labels(n: int, token: str) -> list[str]:
    return [f"{i}:{token}" for i in range(n)]


@pytest.mark.parametrize("token", ["捷", "yesterday"])
@pytest.mark.parametrize("n", [4, 12, 24, 25, 41])
def test_a_screen_of_heads_fits_the_projector_with_labels_apart(n: int, token: str) -> None:
    plan = screen_plan(_labels(n, token), 4)
    assert 1 <= plan.per_screen <= 4
    assert plan.ticks.font_px == PROJECTOR_FONT_PX  # one size: 24 px on the screen
    # labelled ticks are at least a label's line apart, and the panels fit the screen
    spacing = plan.ticks.step * plan.panel_px / n
    assert spacing >= LABEL_PITCH * PROJECTOR_FONT_PX - 1e-9
    assert plan.per_screen * plan.panel_px <= PROJECTOR_WIDTH_PX
    assert plan.panel_px + TITLE_BAND_PX + plan.ticks.widest_px <= PROJECTOR_HEIGHT_PX


def test_fewer_heads_per_screen_as_the_sentence_grows() -> None:
    per_screen = [screen_plan(_labels(n, "捷"), 4).per_screen for n in (4, 12, 24, 41)]
    assert per_screen == sorted(per_screen, reverse=True)
    assert per_screen[0] == 4 and per_screen[-1] == 1
    # up to 24 tokens every token is named on one axis; 41 thins them by the same rule
    for n in (4, 12, 24):
        plan = screen_plan(_labels(n, "捷"), 4)
        assert plan.every_token_named
        named = set(labelled(plan.ticks, "x")) | set(labelled(plan.ticks, "y"))
        assert named == set(range(n))
