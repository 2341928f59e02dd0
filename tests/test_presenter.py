"""Presenter mode with AppTest: `?present=1` switches every page, page switches keep it,
the button leaves it, and the QR code encodes the share link (decoded by zxing-cpp, an
independent reader, from the PNG the page shows)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import APP, TIMEOUT
from ui.presenter import qr_png

ROOT = Path(__file__).resolve().parent.parent
PAGES = re.findall(r'st\.Page\(\s*"(pages/\w+\.py)"', (ROOT / "app.py").read_text())


def _decode(png: bytes) -> list[str]:
    zxingcpp = pytest.importorskip("zxingcpp")  # requirements-dev.txt
    from PIL import Image

    return [r.text for r in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))]


def _presenting(at: AppTest) -> bool:
    keys = [b.key for b in at.button]
    return "presenter_leave" in keys and "presenter_enter" not in keys


def test_every_page_switches_to_presenter_mode_and_keeps_it_across_pages() -> None:
    assert len(PAGES) >= 12, PAGES
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["present"] = "1"
    at.run()
    for page in PAGES:
        at.switch_page(page)
        at.run()
        assert not at.exception, (page, at.exception)
        assert _presenting(at), page
        assert at.query_params.get("present") in ("1", ["1"]), page
        assert any("stSidebar" in h.proto.body for h in at.get("html")), page  # the CSS
    at.button(key="presenter_leave").click().run()
    assert not at.exception
    assert "present" not in at.query_params
    assert "presenter_enter" in [b.key for b in at.button]
    assert not any("stSidebar" in h.proto.body for h in at.get("html"))
    assert any("max-width: 640px" in h.proto.body for h in at.get("html"))  # phones
    at.button(key="presenter_enter").click().run()
    assert _presenting(at)


def test_the_qr_code_encodes_the_share_link_without_present() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"present": "1", "text": "the cat sat", "seed": "7"})
    at.context = {"url": "http://class.example:8080/steps"}
    at.run()
    at.switch_page("pages/steps.py")
    at.run()
    assert not at.exception
    link = at.session_state["_presenter_link"]
    (decoded,) = _decode(qr_png(link))
    parts = urlsplit(decoded)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "class.example:8080", "/steps")
    query = parse_qs(parts.query)
    assert query["text"] == ["the cat sat"] and query["seed"] == ["7"]
    assert "present" not in query


def test_off_means_off() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["present"] = "0"
    at.run()
    assert not at.exception
    assert not _presenting(at)
