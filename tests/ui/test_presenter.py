"""Presenter mode with AppTest: `?present=1` switches every page, page switches keep it,
the button leaves it, and the QR code encodes the share link (decoded by zxing-cpp, an
independent reader, from the PNG the page shows)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest import APP, TIMEOUT
from tests.support.qr import read_qr
from ui.presenter import qr_png

ROOT = Path(__file__).resolve().parents[2]
PAGES = re.findall(r'st\.Page\(\s*"(pages/\w+\.py)"', (ROOT / "app.py").read_text())


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
    (decoded,) = read_qr(qr_png(link))
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


@pytest.fixture
def lan(monkeypatch: pytest.MonkeyPatch) -> str:
    """The machine has one LAN address (ui.address reads the interfaces)."""
    import ui.address

    monkeypatch.setattr(ui.address, "lan_addresses", lambda: ["192.168.1.20"])
    monkeypatch.delenv("ATTENTION_STUDIO_PUBLIC_URL", raising=False)
    return "192.168.1.20"


@pytest.fixture
def listen_on_localhost() -> Iterator[None]:
    """`streamlit run app.py --server.address localhost`."""
    from streamlit import config

    before = config.get_option("server.address")
    config.set_option("server.address", "localhost")
    yield
    config.set_option("server.address", before)


def _presenter_link_from(url: str) -> tuple[AppTest, str]:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"present": "1", "text": "永和有一個中和路"})
    at.context = {"url": url}
    at.run()
    assert not at.exception
    (decoded,) = read_qr(qr_png(at.session_state["_presenter_link"]))
    return at, decoded


def test_a_teacher_on_localhost_gets_a_qr_code_of_the_lan_address(lan: str) -> None:
    at, decoded = _presenter_link_from("http://localhost:8501/")
    parts = urlsplit(decoded)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", f"{lan}:8501", "/")
    assert parse_qs(parts.query)["text"] == ["永和有一個中和路"]
    assert not at.warning  # a phone can open it: nothing to warn about


def test_a_localhost_only_server_warns_with_the_command_that_fixes_it(
    lan: str, listen_on_localhost: None
) -> None:
    at, decoded = _presenter_link_from("http://localhost:8501/")
    assert urlsplit(decoded).netloc == "localhost:8501"  # the only address there is
    from attention_core.i18n import t

    assert t("address_loopback_only", "en") in [w.value for w in at.warning]
    # in the corner beside the QR code it concerns (ui/presenter.py), not above the chart
    corner = next(b for b in at.main.children.values() if b.key == "presenter_corner")
    assert [w.value for w in corner.warning] == [t("address_loopback_only", "en")]
    at.session_state["lang"] = "zh-TW"
    at.run()
    assert t("address_loopback_only", "zh-TW") in [w.value for w in at.warning]


def test_the_qr_code_leaves_out_settings_at_their_defaults_and_can_be_shown_large() -> None:
    """A long sentence's link was QR version 15 (~1.8 px a module in the corner): settings
    at their defaults are left out (the link opens the same view), and "Larger QR code"
    shows the same code large."""
    import segno

    from attention_core.settings import Settings

    text = "捷運板南線今天早上因為號誌故障延誤了二十分鐘。"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"present": "1", "text": text, "tokenizer": "char"})
    at.context = {"url": "http://192.168.1.20:8501/"}
    at.run()
    assert not at.exception
    link = at.session_state["_presenter_link"]
    query = parse_qs(urlsplit(link).query)
    assert query["text"] == [text] and query["tokenizer"] == ["char"]
    defaults = Settings().to_query_params()
    for name in ("attention", "embed_dim", "num_heads", "seed", "causal", "positional"):
        assert name not in query and name in defaults  # the view's default: the same view
    full = link + "&attention=multi&embed_dim=16&num_heads=4&seed=0&causal=false&positional=false"
    assert segno.make(link, error="m").version < segno.make(full, error="m").version
    at.button(key="presenter_qr_larger").click().run()
    large = next(b for b in at.main.children.values() if b.key == "presenter_qr_large")
    assert len(large.get("image")) == 1
    at.button(key="presenter_qr_close").click().run()
    assert all(b.key != "presenter_qr_large" for b in at.main.children.values())
