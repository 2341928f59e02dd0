"""Plotly figure builders (no streamlit): plain data in, `go.Figure` out.

One module per kind of figure; each first turns arrays into plain data (labels, titles,
float32 matrices) and then builds the figure, as optuna's visualization modules do.
"""

from attention_core.figures.heads import HeadGrid, head_grid, plot_heads, plot_matrix

__all__ = ["HeadGrid", "head_grid", "plot_heads", "plot_matrix"]
