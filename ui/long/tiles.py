"""Tiles of long attention maps over plain HTTP, not through script reruns.

A long map (attention_core.long.run, 4 096 tokens × 8 heads) is far too large to send whole:
the page sends each head's pooled overview, and the browser asks for the rectangle it zooms
to, `GET /_studio/tile?map=<id>&layer=&head=&r0=&r1=&c0=&c1=&size=&reduce=&scale=`, answered here
in front of Streamlit (ASGI middleware, like ui/server.py's StaticAssets) from one
process-wide `MapStore` (attention_core.long.store: least recently used maps evicted within
LONG_STORE_BYTES). A rerun would cost the whole script and a websocket round trip; a tile is
one `AttentionMap.region` call (a few ms exact, ≤ ~0.1 s for a pooled 4 096² head).

The map id is an unguessable random token (`secrets.token_urlsafe`) made when a page
publishes the map, so one visitor cannot read tiles of a text they were not shown. Every
bad request gets a small JSON answer, never an exception or a traceback: unknown or evicted
id → 404 {"error": "gone"} (the page builds the map again on its next run), bad numbers →
400, a rectangle outside the map → 404 {"error": "outside"}.

The answer (`tile_payload`): values as base64 little-endian float32 (R × C, row-major), the
row and column edges (tokens where each cell starts, then the end), block, reduce, exact;
with `scale=relative`, a causal map's pooled "max" cells also carry their values relative to
an even share (`relative`, attention_core.long.scale: the browser computes the others).
torch and the store load on the first tile or publish, not when the server starts.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ui.web import ASGIApp, Receive, Scope, Send
from ui.web import base_path as server_base_path

if TYPE_CHECKING:
    import numpy as np

    from attention_core.long.map import AttentionMap, Tile
    from attention_core.long.store import MapStore

__all__ = ["TILE_PATH", "TileRoute", "publish", "store", "tile_payload", "tile_url"]

TILE_PATH = "/_studio/tile"
_INT = re.compile(r"\d{1,9}")  # no sign, no spaces: a row, a column, a size
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
# the request's numbers and their defaults (None: required)
_NUMBERS = {"layer": 0, "head": None, "r0": None, "r1": None, "c0": None, "c1": None, "size": 256}
_CACHE = b"private, max-age=600"  # a map's tiles never change while its id lives


@cache
def store() -> MapStore:
    """The process-wide store every session's long maps are kept in."""
    from attention_core.long.store import MapStore

    return MapStore()


def publish(maps: Sequence[AttentionMap], map_id: str | None = None) -> str:
    """Keep `maps` (one per layer) in `store()` and return the id tiles are asked for with:
    `map_id` again when given (a map evicted meanwhile comes back under its old id), else a
    new unguessable token."""
    key = map_id or secrets.token_urlsafe(18)
    store().put(key, maps)
    return key


def tile_url(base_path: str | None = None) -> str:
    """The tile route below `server.baseUrlPath` (read from Streamlit's config by default)."""
    base = (server_base_path() if base_path is None else base_path).strip("/")
    return f"{'/' + base if base else ''}{TILE_PATH}"


def tile_payload(tile: Tile, relative: np.ndarray | None = None) -> dict[str, Any]:
    """A tile as plain JSON data (see the module docstring); `relative` (R, C): its values
    relative to an even share (attention_core.long.scale), sent as "relative" the same way."""
    values = _base64(tile.values)  # (R, C)
    extra = {} if relative is None else {"relative": _base64(relative)}
    return {
        "head": int(tile.head),
        "values": values,
        **extra,
        "shape": list(tile.values.shape),
        "rows": tile.row_edges.tolist(),
        "cols": tile.col_edges.tolist(),
        "block": int(tile.block),
        "reduce": tile.reduce,
        "exact": bool(tile.exact),
    }


def _base64(array: np.ndarray) -> str:
    """float32 little-endian bytes, row-major, as base64 text."""
    import numpy as np

    return base64.b64encode(np.ascontiguousarray(array, dtype="<f4").tobytes()).decode("ascii")


def answer(query: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body for a tile request's query string; never raises."""
    from attention_core.limits import MAX_TILE_SIZE
    from attention_core.long.map import REDUCES
    from attention_core.long.scale import relative_values, sends_relative

    params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
    map_id = params.get("map", "")
    if not _ID.fullmatch(map_id):
        return 400, {"error": "map: expected the id the page was given"}
    numbers: dict[str, int] = {}
    for name, default in _NUMBERS.items():
        raw = params.get(name)
        if raw is None and default is not None:
            numbers[name] = default
        elif raw is None or not _INT.fullmatch(raw):
            return 400, {"error": f"{name}: expected a whole number >= 0"}
        else:
            numbers[name] = int(raw)
    reduce = params.get("reduce", "mean")
    if reduce not in REDUCES:
        return 400, {"error": f"reduce: one of {', '.join(REDUCES)}"}
    if not 1 <= numbers["size"] <= MAX_TILE_SIZE:
        return 400, {"error": f"size: 1..{MAX_TILE_SIZE}"}
    maps = store().get(map_id)
    if maps is None:
        return 404, {"error": "gone"}
    if numbers["layer"] >= len(maps):
        return 404, {"error": "outside"}
    tile = maps[numbers["layer"]].region(
        numbers["head"],
        slice(numbers["r0"], numbers["r1"]),
        slice(numbers["c0"], numbers["c1"]),
        size=numbers["size"],
        reduce=reduce,
    )
    if tile is None:
        return 404, {"error": "outside"}
    relative = None
    layer = maps[numbers["layer"]]
    if not tile.exact and sends_relative(reduce, params.get("scale", ""), causal=layer.causal):
        relative = relative_values(layer, tile)
    return 200, {**tile_payload(tile, relative), "layer": numbers["layer"]}


def _safe_answer(query: str) -> tuple[int, dict[str, Any]]:
    try:
        return answer(query)
    except Exception as error:  # a bug must not send a traceback to a browser
        from streamlit.logger import get_logger

        get_logger(__name__).warning("tile request failed: %r", error)
        return 500, {"error": "failed"}


class TileRoute:
    """ASGI middleware: answers GET `tile_url()` from `store()`; the rest goes on."""

    def __init__(self, app: ASGIApp, path: str | None = None) -> None:
        self.app = app
        self.path = path if path is not None else tile_url()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        if scope["method"] != "GET":
            status, body = 405, {"error": "GET only"}
        else:
            query = scope.get("query_string", b"").decode("latin-1")
            # off the event loop: a pooled tile of a 4 096² head takes ~0.1 s of CPU
            status, body = await asyncio.to_thread(_safe_answer, query)
        data = json.dumps(body, separators=(",", ":")).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            (b"cache-control", _CACHE if status == 200 else b"no-store"),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})
