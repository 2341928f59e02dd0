"""The app's server: what `streamlit run app.py` does besides running the script.

app.py defines `app = st.App("app.py", lifespan=lifespan, middleware=MIDDLEWARE)`;
`streamlit run app.py` finds it (Streamlit's ASGI app discovery) and serves the same
script, pages and settings as before, with two additions for a class that arrives at once
(https://docs.streamlit.io/develop/api-reference/app/st.app):

1. **Warm at start** (`lifespan`): the script runs once as soon as the server is up
   (Streamlit's own script check, the one behind `server.scriptHealthCheckEnabled`), so
   torch and the default view are loaded while the first browser is still loading its
   JavaScript, not after it asks for a page (the default sentence's jieba cut ships:
   attention_core/known_cuts.py); 4 s after the start, once that first browser has its
   heatmaps, pandas (for the pages with tables) and jieba's dictionary. deploy/ warmed its
   servers from outside; a teacher's plain `streamlit run app.py` now does it by itself.
2. **Static files from memory, compressed once** (`StaticAssets`): a phone's first visit
   asks for ~120 files (Streamlit's JavaScript, CSS and fonts, and plotly.js). Streamlit
   reads each from disk in a worker thread through its whole middleware stack (~1.9 ms of
   the one process's CPU a file, 0.23 s a visit) and sends its JavaScript uncompressed
   (3.8 MB a visit) because compressing on every request would cost more. Here each file
   is read and gzipped once, then answered from memory in front of that stack: the bytes
   Streamlit would send, kept by browsers for a year as Streamlit's own (their names carry
   their hash; plotly.js's URL carries its hash, ui/charts.py), an ETag (304 on a
   revisit), and gzip when the browser accepts it. Only files that exist below the two folders are
   answered; everything else (the page itself, the websocket, health checks, media, any
   path with `..`) goes to Streamlit untouched.
3. **plotly.js asked for with the page** (`plotly_preload`): the page Streamlit sends
   (its index.html, for every page's URL) gets one small script that starts loading
   plotly.js at once, without blocking anything, and leaves the promise where ui/charts.py
   looks for it. Otherwise the browser asks for it only once the first chart has been
   built, after Streamlit's own start, its websocket and the script run (a new phone
   painted ~0.1 s sooner, bench visit).
4. **Tiles of long maps** (ui/long/tiles.py): `GET /_studio/tile?…` answered from the process's
   store of long attention maps, for the landing page's zoomable map.
5. **No phoning home** (`no_external_ip_lookup`): a headless Streamlit asks a web service for
   the machine's public address to print an "External URL"; offline (a classroom, this
   project's rule) that is a one-second wait and a warning in the first lines a teacher
   reads. Share links and QR codes find the LAN address themselves (ui/address.py).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import mimetypes
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit
from starlette.middleware import Middleware
from streamlit.logger import get_logger

from attention_core.tokenize import warm_up as load_jieba
from ui.long.tiles import TileRoute
from ui.web import (
    PLOTLY_DIR,
    PLOTLY_ROUTE,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    base_path,
    plotly_url,
)

__all__ = [
    "MIDDLEWARE",
    "WARM_UP_LOG",
    "Asset",
    "StaticAssets",
    "lifespan",
    "no_external_ip_lookup",
    "plotly_preload",
    "print_urls",
    "server_urls",
    "warm_up",
]

_LOG = get_logger(__name__)
WARM_UP_LOG = "Attention Studio warm-up:"  # then "ok" or what failed, in the server's log


STREAMLIT_STATIC = Path(streamlit.__file__).resolve().parent / "static" / "static"
IMMUTABLE = b"public, immutable, max-age=31536000"  # what Streamlit sends for hashed files
GZIP_MIN = 1024
_NOT_COMPRESSED = {".woff2", ".woff", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico"}
# While the warm-up run imports torch the event loop waits for the interpreter lock at
# each switch; a shorter switch interval keeps the first browser's file requests flowing.
_WARM_SWITCH_S = 0.001
_REST_AFTER_S = 4.0  # from the warm-up's start: what the first heatmaps do not need


@dataclass(frozen=True)
class Asset:
    """One file, read once: its bytes, gzipped bytes (None when not worth it), headers."""

    plain: bytes
    gzipped: bytes | None
    content_type: bytes
    etag: bytes

    @classmethod
    def read(cls, path: Path) -> Asset:
        plain = path.read_bytes()
        squeeze = len(plain) >= GZIP_MIN and path.suffix.lower() not in _NOT_COMPRESSED
        gzipped = gzip.compress(plain, compresslevel=6, mtime=0) if squeeze else None
        if gzipped is not None and len(gzipped) >= len(plain):
            gzipped = None
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind.endswith(("javascript", "json")):
            kind += "; charset=utf-8"
        etag = '"' + hashlib.sha256(plain).hexdigest()[:32] + '"'
        return cls(plain, gzipped, kind.encode(), etag.encode())


class StaticAssets:
    """ASGI middleware: Streamlit's static files and plotly.js from memory (see above)."""

    def __init__(
        self, app: ASGIApp, roots: dict[str, Path] | None = None, head: bytes | None = None
    ) -> None:
        """`head`: put before the </head> of every HTML page (default: `plotly_preload`)."""
        self.app = app
        self.roots = roots if roots is not None else _roots()
        self.head = head if head is not None else plotly_preload(plotly_url(base_path()))
        self._assets: dict[str, Asset | None] = {}
        self._lock = threading.Lock()

    def asset(self, path: str) -> Asset | None:
        """The file behind URL path `path`, or None when it is not one of ours to answer."""
        found = self._assets.get(path, False)
        if found is not False:
            return found
        with self._lock:
            if path not in self._assets:
                self._assets[path] = self._find(path)
            return self._assets[path]

    def _find(self, path: str) -> Asset | None:
        for prefix, root in self.roots.items():
            if not path.startswith(prefix):
                continue
            name = path[len(prefix) :]
            parts = name.split("/")
            if not name or any(p in ("", ".", "..") or "\\" in p for p in parts):
                return None
            file = root.joinpath(*parts)
            try:
                inside = file.resolve().is_relative_to(root.resolve())
            except OSError:
                return None
            return Asset.read(file) if inside and file.is_file() else None
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asset = None
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            asset = self.asset(scope.get("path", ""))
        headers = dict(scope.get("headers", ())) if asset is not None else {}
        if asset is None and scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, self._into_pages(send, head=scope["method"] == "HEAD"))
            return
        if asset is None or b"range" in headers:
            await self.app(scope, receive, send)
            return
        out = [
            (b"content-type", asset.content_type),
            (b"cache-control", IMMUTABLE),
            (b"etag", asset.etag),
            (b"vary", b"Accept-Encoding"),
        ]
        if asset.etag in headers.get(b"if-none-match", b""):
            await send({"type": "http.response.start", "status": 304, "headers": out})
            await send({"type": "http.response.body", "body": b""})
            return
        body = asset.plain
        if asset.gzipped is not None and b"gzip" in headers.get(b"accept-encoding", b""):
            body = asset.gzipped
            out.append((b"content-encoding", b"gzip"))
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send(
            {"type": "http.response.body", "body": body if scope["method"] == "GET" else b""}
        )

    def _into_pages(self, send: Send, *, head: bool = False) -> Send:
        """`send`, with `self.head` put before the </head> of an HTML page (uncompressed,
        as Streamlit sends it; a HEAD request gets the length a GET's page has); any other
        answer passes as it is."""
        start: Message | None = None
        chunks: list[bytes] = []

        async def patched(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                found = dict(message.get("headers", ()))
                html = found.get(b"content-type", b"").startswith(b"text/html")
                if html and b"content-encoding" not in found and message.get("status") == 200:
                    if head and b"content-length" in found:
                        length = int(found[b"content-length"]) + len(self.head)
                        kept = [(k, v) for k, v in message["headers"] if k != b"content-length"]
                        message = {
                            **message,
                            "headers": [*kept, (b"content-length", b"%d" % length)],
                        }
                    else:
                        start = message  # held until the body is whole
                        return
            elif message["type"] == "http.response.body" and start is not None:
                chunks.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                body = b"".join(chunks).replace(b"</head>", self.head + b"</head>", 1)
                kept = [(k, v) for k, v in start.get("headers", ()) if k != b"content-length"]
                length = (b"content-length", str(len(body)).encode())
                await send({**start, "headers": [*kept, length]})
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        return patched


def plotly_preload(url: str) -> bytes:
    """The script put into the page's <head>: loads plotly.js `url` without blocking and
    keeps the promise in `window.__studioPlotly` (ui/charts.py's plotlyLoaded waits on it
    instead of loading the file twice; after a failure it tries again)."""
    return (
        "<script>window.__studioPlotly=new Promise(function(ok,no){"
        'var s=document.createElement("script");s.src='
        + json.dumps(url).replace("<", "\\u003c")  # never a "</script>" inside
        + ";s.async=true;"
        "s.onload=function(){ok(window.Plotly)};"
        "s.onerror=function(){window.__studioPlotly=undefined;"
        'no(new Error("plotly.js did not load from "+s.src))};'
        "document.head.appendChild(s)});window.__studioPlotly.catch(function(){});</script>"
    ).encode()


def _roots() -> dict[str, Path]:
    base = base_path()
    prefix = f"/{base}" if base else ""
    return {
        f"{prefix}/static/": STREAMLIT_STATIC,
        f"{prefix}{PLOTLY_ROUTE}": PLOTLY_DIR,
    }


async def warm_up() -> str:
    """Run the app script once in the server (twice: on a fresh server the first run
    leaves Streamlit's legacy pages mode and restarts itself, ui.common.entry_guard).
    Returns "ok" when both ran cleanly, and says so in the server's log (WARM_UP_LOG)."""
    from streamlit.runtime import Runtime

    runtime = Runtime.instance()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(_WARM_SWITCH_S)
    start = time.perf_counter()
    try:
        answers = [(await runtime.does_script_run_without_error())[1] for _ in range(2)]
    finally:
        sys.setswitchinterval(interval)
    answer = "ok" if answers == ["ok", "ok"] else " / ".join(answers)
    # The rest after the teacher's first heatmaps (a first visit on a fresh server is ~3 s
    # from the process start): pandas, for the pages with tables (the landing page skips
    # it), and jieba's dictionary for sentences other than the app's own (known_cuts).
    await asyncio.sleep(max(0.0, _REST_AFTER_S - (time.perf_counter() - start)))
    # imported here, not with this module: app.py imports this module before Streamlit's
    # runtime exists, and a module of cached functions imported then logs "No runtime found"
    # once per function (Streamlit's ASGI guidance: import cached functions in the lifespan)
    from ui.cache import import_ui_stack

    await asyncio.to_thread(import_ui_stack)
    await asyncio.to_thread(load_jieba)
    _LOG.info("%s %s (%.1f s)", WARM_UP_LOG, answer, time.perf_counter() - start)
    return answer


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """Say where the app is, and start warming up; the server answers meanwhile."""
    print_urls()
    task = asyncio.get_running_loop().create_task(warm_up(), name="attention-studio-warm-up")
    try:
        yield
    finally:
        task.cancel()


MIDDLEWARE = [Middleware(StaticAssets), Middleware(TileRoute)]


def no_external_ip_lookup() -> None:
    """Tell Streamlit there is no external address to look up (see the module docstring):
    its websocket-origin check then asks no web service. Its own start-up banner is off
    (.streamlit/config.toml: logger.hideWelcomeMessage, since it looks the address up before
    this module is imported); `server_urls` prints the Local and Network URLs instead."""
    from streamlit import net_util

    net_util._external_ip = ""  # Streamlit's memo of the lookup: "" is "looked, none"


def server_urls() -> list[tuple[str, str]]:
    """The addresses this server answers on, as Streamlit's banner names them: Local, then
    one Network URL per LAN address (the ones phones reach, ui/address.py); a server bound
    to one address has just that URL."""
    from streamlit import config

    from ui.address import lan_addresses

    port = config.get_option("server.port")
    path = (config.get_option("server.baseUrlPath") or "").strip("/")
    path = f"/{path}" if path else ""
    bound = config.get_option("server.address")
    if bound and bound not in ("0.0.0.0", "::"):
        return [("URL", f"http://{bound}:{port}{path}")]
    urls = [("Local URL", f"http://localhost:{port}{path}")]
    urls += [("Network URL", f"http://{ip}:{port}{path}") for ip in lan_addresses()]
    return urls


def print_urls() -> None:
    """The start-up banner: where to open the app (no external address is looked up)."""
    lines = ["", "  Attention Studio is running. Open it in a browser:", ""]
    lines += [f"  {name}: {url}" for name, url in server_urls()]
    print("\n".join([*lines, ""]), flush=True)
