"""Plotly figure builders (no streamlit): plain data in, `go.Figure` out.

One module per kind of figure; each first turns arrays into plain data (labels, titles,
float32 matrices) and then builds the figure, as optuna's visualization modules do. Every
text a builder draws goes through `literal` once, so Plotly shows tokens as typed.
"""

from attention_core.figures.heads import HeadGrid, head_grid, plot_heads, plot_matrix
from attention_core.figures.text import literal, literals

__all__ = ["HeadGrid", "head_grid", "literal", "literals", "plot_heads", "plot_matrix"]
