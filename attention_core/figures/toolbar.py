"""The Plotly config every chart of the app is drawn with: the toolbar in the interface's
language, no Plotly logo, and a PNG name that says what was drawn."""

from __future__ import annotations

__all__ = ["chart_config"]


def chart_config(lang: str, *, filename: str | None = None) -> dict[str, object]:
    """The `config` of st.plotly_chart for interface language `lang`."""
    config: dict[str, object] = {"displaylogo": False}
    if filename:
        config["toImageButtonOptions"] = {"filename": filename, "scale": 2}
    return config
