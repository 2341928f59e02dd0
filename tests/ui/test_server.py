"""Tests for ui/server.py: the st.App that `streamlit run app.py` serves.

The static-file middleware is driven as an ASGI app with a stub behind it (what it does
not answer must reach Streamlit untouched), then for real: a served app answers
Streamlit's own files with the bytes on disk (gzipped when asked), and warms itself up
with no browser attached.
"""

from __future__ import annotations

import asyncio
import gzip
import importlib.util
import mimetypes
import threading
import urllib.request
from pathlib import Path

import pytest
import streamlit as st
from streamlit.web.server.app_discovery import discover_asgi_app

from attention_core.resources import DATA_DIR
from tests.browser.server import serve_app
from ui.server import STREAMLIT_STATIC, WARM_UP_LOG, StaticAssets, plotly_preload
from ui.web import PLOTLY_ROUTE, plotly_url

REPO = Path(__file__).resolve().parents[2]
JS = sorted((STREAMLIT_STATIC / "js").glob("index.*.js"))[0]


class Behind:
    """The app behind the middleware (Streamlit): records what reached it."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append(scope.get("path", ""))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"streamlit"})


def _call(
    app: StaticAssets, path: str, *, method: str = "GET", headers: dict[str, str] | None = None
):
    """One request through the middleware → (status, headers, body)."""
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    # in a thread of its own: a browser test's Playwright may hold this thread's event loop
    worker = threading.Thread(target=asyncio.run, args=(app(scope, receive, send),))
    worker.start()
    worker.join(timeout=30)
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


@pytest.fixture
def assets() -> tuple[StaticAssets, Behind]:
    behind = Behind()
    roots = {"/static/": STREAMLIT_STATIC, PLOTLY_ROUTE: DATA_DIR / "plotly"}
    return StaticAssets(behind, roots), behind


def test_a_streamlit_file_is_answered_with_its_bytes(assets) -> None:
    app, behind = assets
    status, headers, body = _call(app, f"/static/js/{JS.name}")
    assert (status, body) == (200, JS.read_bytes())
    assert headers["content-type"] == f"{mimetypes.guess_type(JS.name)[0]}; charset=utf-8"
    assert headers["cache-control"] == "public, immutable, max-age=31536000"
    assert int(headers["content-length"]) == len(body)
    assert "content-encoding" not in headers
    assert behind.paths == []


def test_gzip_when_the_browser_accepts_it(assets) -> None:
    app, _ = assets
    status, headers, body = _call(
        app, f"/static/js/{JS.name}", headers={"Accept-Encoding": "gzip, deflate, br"}
    )
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(body) == JS.read_bytes()
    assert len(body) < JS.stat().st_size / 2
    assert headers["vary"] == "Accept-Encoding"


def test_a_font_is_not_gzipped_again(assets) -> None:
    app, _ = assets
    font = sorted((STREAMLIT_STATIC / "media").glob("*.woff2"))[0]
    _, headers, body = _call(app, f"/static/media/{font.name}", headers={"Accept-Encoding": "gzip"})
    assert body == font.read_bytes() and "content-encoding" not in headers


def test_plotly_is_answered_from_its_component_route(assets) -> None:
    app, _ = assets
    plotly = DATA_DIR / "plotly" / "plotly-cartesian.min.js"
    _, _, body = _call(app, PLOTLY_ROUTE + plotly.name, headers={"Accept-Encoding": "gzip"})
    assert gzip.decompress(body) == plotly.read_bytes()


def test_a_revisit_with_the_etag_gets_304_and_head_gets_no_body(assets) -> None:
    app, _ = assets
    _, headers, _ = _call(app, f"/static/js/{JS.name}")
    status, _, body = _call(
        app, f"/static/js/{JS.name}", headers={"If-None-Match": headers["etag"]}
    )
    assert (status, body) == (304, b"")
    status, head, body = _call(app, f"/static/js/{JS.name}", method="HEAD")
    assert (status, body) == (200, b"") and int(head["content-length"]) == JS.stat().st_size


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/masks",
        "/_stcore/health",
        "/static/",
        "/static/js",  # a folder
        "/static/js/no-such-file.js",
        "/static/../../../etc/passwd",
        "/static/js/../../index.html",
        "/static//etc/passwd",
        "/static/js/..\\..\\x.js",
        PLOTLY_ROUTE + "../plotly_js.py",
        "/component/other.component/x.js",
    ],
)
def test_anything_else_goes_to_streamlit(assets, path: str) -> None:
    app, behind = assets
    status, _, body = _call(app, path)
    assert (status, body, behind.paths) == (299, b"streamlit", [path])


@pytest.mark.parametrize(("method", "headers"), [("POST", {}), ("GET", {"Range": "bytes=0-10"})])
def test_posts_and_ranges_go_to_streamlit(assets, method: str, headers: dict) -> None:
    app, behind = assets
    status, _, _ = _call(app, f"/static/js/{JS.name}", method=method, headers=headers)
    assert status == 299 and len(behind.paths) == 1


def test_a_symlink_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "ok.txt").write_text("ok")
    behind = Behind()
    app = StaticAssets(behind, {"/static/": root})
    assert _call(app, "/static/ok.txt")[2] == b"ok"
    assert _call(app, "/static/link.txt")[0] == 299


def test_streamlit_finds_the_server_in_app_py() -> None:
    found = discover_asgi_app(REPO / "app.py")
    assert found.is_asgi_app and found.app_name == "app"
    spec = importlib.util.spec_from_file_location("app_as_a_module", REPO / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # as `streamlit run` imports it: no script run
    assert isinstance(module.app, st.App)


@pytest.mark.slow
class Page:
    """Streamlit answering a page's URL: its index.html, in two pieces."""

    def __init__(self, content_type: bytes = b"text/html", encoding: bytes | None = None):
        self.headers = [(b"content-type", content_type), (b"content-length", b"56")]
        if encoding:
            self.headers.append((b"content-encoding", encoding))

    async def __call__(self, scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.headers})
        await send(
            {
                "type": "http.response.body",
                "body": b"<html><head><title>x</title>",
                "more_body": True,
            }
        )
        await send({"type": "http.response.body", "body": b"</head><body></body></html>"})


def test_every_page_starts_loading_plotly_from_its_head() -> None:
    head = plotly_preload(plotly_url())
    status, headers, body = _call(StaticAssets(Page(), {}), "/classroom")
    assert status == 200
    assert body == b"<html><head><title>x</title>" + head + b"</head><body></body></html>"
    assert headers["content-length"] == str(len(body))
    assert plotly_url() in head.decode() and "window.__studioPlotly" in head.decode()
    assert plotly_url("/course/") == "/course" + plotly_url()  # server.baseUrlPath


def test_head_of_a_page_says_the_length_a_get_receives() -> None:
    head = plotly_preload(plotly_url())
    status, headers, _ = _call(StaticAssets(Page(), {}), "/", method="HEAD")
    assert (status, headers["content-length"]) == (200, str(56 + len(head)))


def test_the_preload_cannot_close_its_script_early() -> None:
    script = plotly_preload("/x</script><script>alert(1)//").decode()
    assert script.count("</script>") == 1 and script.endswith("</script>")


@pytest.mark.parametrize("page", [Page(b"application/json"), Page(encoding=b"gzip")])
def test_other_answers_pass_as_they_are(page: Page) -> None:
    _, headers, body = _call(StaticAssets(page, {}), "/")
    assert b"studioPlotly" not in body and headers["content-length"] == "56"


def test_the_preloaded_url_is_the_one_charts_load_and_it_is_answered(assets) -> None:
    from ui.charts import served_plotly_url

    app, behind = assets
    url = plotly_url()
    assert served_plotly_url() == url
    status, headers, _ = _call(app, url.split("?")[0], headers={"Accept-Encoding": "gzip"})
    assert (status, headers["content-encoding"], behind.paths) == (200, "gzip", [])


def test_a_served_app_warms_up_alone_and_answers_files_from_memory() -> None:
    with serve_app("server") as (url, log):
        request = urllib.request.Request(
            f"{url}/static/js/{JS.name}", headers={"Accept-Encoding": "gzip"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(response.read()) == JS.read_bytes()
        with urllib.request.urlopen(url + "/", timeout=30) as response:
            page = response.read()
            assert b'<div id="root">' in page and plotly_preload(plotly_url()) in page
        line = log.wait_for(WARM_UP_LOG, timeout=120)  # no browser, no session: by itself
        assert line.split(WARM_UP_LOG, 1)[1].split()[0] == "ok", line
        log.assert_no_traceback(what="the warm-up")
        # a clean start: where to open the app, then the warm-up, and nothing else (no cache
        # warning per cached function, no failed look-up of a public address)
        lines = [s.strip() for s in log.text().splitlines() if s.strip()]
        before = lines[: next(i for i, s in enumerate(lines) if WARM_UP_LOG in s)]
        assert before == [
            "Attention Studio is running. Open it in a browser:",
            f"URL: http://127.0.0.1:{url.rsplit(':', 1)[1]}",
        ], before


def test_the_banner_names_the_local_and_every_lan_address(monkeypatch) -> None:
    """Bound to every interface: localhost and each LAN address (what phones open); bound
    to one address: that one."""
    from streamlit import config

    from ui.server import server_urls

    monkeypatch.setattr("ui.address.lan_addresses", lambda: ["192.168.1.20", "10.0.0.7"])
    saved = {k: config.get_option(k) for k in ("server.port", "server.address")}
    try:
        config.set_option("server.port", 8765)
        config.set_option("server.address", "0.0.0.0")
        assert server_urls() == [
            ("Local URL", "http://localhost:8765"),
            ("Network URL", "http://192.168.1.20:8765"),
            ("Network URL", "http://10.0.0.7:8765"),
        ]
        config.set_option("server.address", "127.0.0.1")
        assert server_urls() == [("URL", "http://127.0.0.1:8765")]
    finally:
        for key, value in saved.items():
            config.set_option(key, value)
