"""Figures of the long lens (attention_core/long/lens.py): values over a long text's positions,
one line per series (a head's received attention, a query's rollout), from plain arrays.

Lines, not heatmaps: 4 096 positions × a few series are a few hundred kB of JSON, drawn with
WebGL (Scattergl) so a phone pans them smoothly; the hover names the position's token.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from attention_core.figures.style import FONT
from attention_core.figures.text import literal, literals

__all__ = ["plot_positions"]

LINE_COLOURS = ("#0068C9", "#FF2B2B", "#29B09D", "#FF8700", "#7D353B", "#6D3FC0", "#D5DAE5")


def plot_positions(
    series: Mapping[str, np.ndarray],
    labels: Sequence[str],
    *,
    y_title: str = "",
    hover: str = "%{customdata} · %{y:.4f}",
    height: int = 320,
    log: bool = False,
    last: int | None = None,
) -> go.Figure:
    """Each named series (n,) as a line over the positions 0..n−1; `labels` (n) name the
    tokens in the hover (escaped: a token is text, never markup); `log`: a log y axis, where
    a long text's small values (1/n) and its sinks (near 1) both show; `last`: the x axis
    opens on positions 0..last (a causal row sees no later token), the rest a pan away."""
    names = list(series)
    values = [np.asarray(series[name], dtype=np.float64) for name in names]
    n = len(labels)
    if not values or any(v.shape != (n,) for v in values):
        raise ValueError(f"every series must have one value per label ({n})")
    tokens = literals(labels)
    x = np.arange(n)
    fig = go.Figure(
        [
            go.Scattergl(
                x=x,
                y=v,
                name=literal(name),
                mode="lines",
                line={"width": 1.2, "color": LINE_COLOURS[i % len(LINE_COLOURS)]},
                customdata=tokens,
                hovertemplate=hover + f"<extra>{literal(name)}</extra>",
            )
            for i, (name, v) in enumerate(zip(names, values, strict=True))
        ]
    )
    fig.update_layout(
        height=height,
        font=FONT,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        xaxis={"title": None, "rangemode": "tozero"}
        | ({} if last is None else {"range": [-0.5, max(1, last) + 0.5]}),
        yaxis={"title": literal(y_title), "type": "log" if log else "linear"},
        hovermode="closest",
    )
    return fig
