"""A notebook's picture as HTML that needs nothing from the network.

`View` shows itself in Jupyter, JupyterLab, VS Code and Colab (`_repr_html_`) and saves a
standalone HTML file. Every script is inline: the head view's renderer
(`figures.headview`) and, for Plotly figures, the app's own plotly.js bundle
(data/plotly). No CDN, no require.js: BertViz loads require.js, d3 and jQuery from one
and draws nothing offline.

Scripts find their own box through `document.currentScript`, not a global id, so an output
rendered twice (a notebook reopened, an HTML export) still draws each copy. Data goes into
the page as JSON with every "<" escaped, so no token can close a script element.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from attention_core.resources import DATA_DIR

__all__ = ["View", "figure_body", "json_for_script", "plotly_script"]

PLOTLY_BUNDLE = DATA_DIR / "plotly" / "plotly-cartesian.min.js"
_CONFIG = {"displaylogo": False, "responsive": True}


def json_for_script(value: Any) -> str:
    """`value` as JSON that is safe inside <script>: "<" only ever occurs inside JSON
    strings, where "\\u003c" means the same character."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


@lru_cache(maxsize=1)
def plotly_script() -> str:
    """The plotly.js bundle as one inline script that sets window.Plotly once.

    `define`, `module` and `exports` are hidden from the bundle's UMD header, so it sets
    the global even under the classic notebook's require.js."""
    bundle = PLOTLY_BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")
    return (
        "<script>(function () { if (window.Plotly) return; "
        "var define, module, exports;\n" + bundle + "\n})();</script>"
    )


def figure_body(figure: go.Figure, *, bundle: bool = True) -> str:
    """A Plotly figure as a box that draws itself with the inline plotly.js (`bundle`:
    inlined here; a view of several figures inlines it with its first only)."""
    spec = json_for_script({"figure": json.loads(figure.to_json()), "config": _CONFIG})
    return (
        '<div class="studio-nb-figure"><div></div>'
        f"{plotly_script() if bundle else ''}"
        "<script>(function () {"
        " const box = document.currentScript.parentElement;"
        f" const spec = {spec};"
        " window.Plotly.newPlot(box.firstElementChild, spec.figure.data,"
        " spec.figure.layout, spec.config);"
        "})();</script></div>"
    )


class View:
    """A picture in a notebook: displays itself, saves as standalone HTML.

    `data` is the HTML fragment, as on IPython.display.HTML (what BertViz's
    `html_action="return"` gives); `figure` is the Plotly figure where the view is one
    (`figure.write_image` then saves PNG or SVG, with kaleido installed), `figures` the
    named figures where it is several (an encoder-decoder's model view)."""

    def __init__(
        self,
        body: str,
        *,
        title: str,
        figure: go.Figure | None = None,
        figures: dict[str, go.Figure] | None = None,
    ) -> None:
        self.data = body
        self.title = title
        self.figure = figure
        self.figures = figures or ({} if figure is None else {"all": figure})

    def _repr_html_(self) -> str:
        return self.data

    def to_html(self) -> str:
        """The view as a whole HTML document (UTF-8, every script inline)."""
        return (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title></head>"
            f"<body>{self.data}</body></html>\n"
        )

    def save_html(self, path: str | Path) -> Path:
        """Write `to_html()` to `path`; returns the path."""
        target = Path(path)
        target.write_text(self.to_html(), encoding="utf-8")
        return target

    def __repr__(self) -> str:
        return f"<attention_core.notebook view: {self.title}>"
