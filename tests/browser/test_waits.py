"""The waits' own failure: a page whose app never mounts is reloaded once, with a warning,
and the failure names what went wrong under the page (here a script that cannot load)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page

from deploy.app_server import free_port

from . import waits

# A page with no Streamlit app: its one script is on a port nothing listens on.
_NO_APP = """<!doctype html><html><body><p>no app here</p>
<script src="http://127.0.0.1:{port}/static/js/index.js"></script></body></html>"""


@pytest.fixture
def no_app() -> Iterator[str]:
    closed = free_port()
    body = _NO_APP.format(port=closed).encode()
    loads: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/":
                loads.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
        assert loads == ["/", "/"], f"expected one load and one reload, saw {loads}"
    finally:
        server.shutdown()


def test_a_page_that_never_mounts_is_reloaded_once_and_the_failure_says_why(
    page: Page, no_app: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(waits, "MOUNT_MS", 1_500)
    with (
        pytest.warns(UserWarning, match="did not mount within 2 s .* reloaded once"),
        pytest.raises(AssertionError, match=r"no finished run .*request failed: http://127"),
    ):
        waits.open_page(page, no_app, timeout_ms=3_000)
