"""What the app's web layer names in several places: the ASGI types, the server's base
path, and where plotly.js is served from (ui/server.py serves it from memory, ui/charts.py
registers the route, ui/long/tiles.py answers beside it). A leaf: it imports no other
ui module, so the server, the charts and the tiles can all import it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, MutableMapping
from functools import cache
from typing import Any

from attention_core.resources import DATA_DIR

__all__ = [
    "PLOTLY_DIR",
    "PLOTLY_JS",
    "PLOTLY_ROUTE",
    "ASGIApp",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "base_path",
    "plotly_url",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# ui/charts.py serves plotly.js through a components-v1 route of this name
PLOTLY_ROUTE = "/component/ui.charts.plotly_js/"
PLOTLY_DIR = DATA_DIR / "plotly"
# plotly.js's cartesian bundle (heatmap, scatter, bar: all the app draws), the version
# the plotly package ships: a third of the full bundle a phone would download and parse
PLOTLY_JS = "plotly-cartesian.min.js"


@cache
def _plotly_version() -> str:
    return hashlib.sha256((PLOTLY_DIR / PLOTLY_JS).read_bytes()).hexdigest()[:12]


def plotly_url(base_path: str = "") -> str:
    """Where pages load plotly.js from (below `server.baseUrlPath` `base_path`). The file's
    own hash is in the query: browsers keep it for a year (IMMUTABLE), and another plotly.js
    under the same name must not be taken for the old one."""
    base = base_path.strip("/")
    return f"{'/' + base if base else ''}{PLOTLY_ROUTE}{PLOTLY_JS}?v={_plotly_version()}"


def base_path() -> str:
    """`server.baseUrlPath`, without slashes at either end ("" when the app is at the root)."""
    from streamlit import config

    return str(config.get_option("server.baseUrlPath") or "").strip("/")
