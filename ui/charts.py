"""Charts: every Plotly figure of the app is drawn here, with the toolbar in the
interface's language (attention_core/figures/toolbar.py) and one config for all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from attention_core.figures.toolbar import chart_config
from ui.common import lang

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["show_chart"]


def show_chart(
    figure: go.Figure,
    *,
    key: str,
    where: Any = st,
    filename: str | None = None,
    **kwargs: Any,
) -> None:
    """A Plotly chart with the toolbar in the interface's language (in `where`, a column
    or placeholder, when given); `filename` names the PNG download."""
    where.plotly_chart(figure, key=key, config=chart_config(lang(), filename=filename), **kwargs)
