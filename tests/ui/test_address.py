"""Tests for ui/address.py: which address share links and QR codes give a student's phone."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from ui.address import is_loopback, lan_addresses, reachable_base

LAN = ["192.168.1.20"]


@pytest.mark.parametrize(
    ("host", "loop"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("app.localhost", True),
        ("192.168.1.20", False),
        ("10.0.0.5", False),
        ("class.example", False),
        ("0.0.0.0", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loop: bool) -> None:
    assert is_loopback(host) is loop


def test_a_public_url_wins_over_everything() -> None:
    got = reachable_base(
        "http://localhost:8501/classroom",
        public_url="https://studio.school.example/attention/",
        server_address="127.0.0.1",
        lan=LAN,
    )
    assert (got.base, got.source, got.problem) == (
        "https://studio.school.example/attention",
        "public",
        None,
    )
    assert reachable_base("", public_url="studio.example:9000").base == "http://studio.example:9000"


def test_streamlit_browser_server_address_is_used_when_set() -> None:
    got = reachable_base(
        "http://localhost:8501/", browser_address="lab-pc.school", browser_port=80, lan=LAN
    )
    assert (got.base, got.source, got.problem) == ("http://lab-pc.school:80", "configured", None)
    # its default, localhost, says nothing
    default = reachable_base("http://localhost:8501/", browser_address="localhost", lan=LAN)
    assert default.source == "lan"


def test_a_browser_that_reached_a_real_address_keeps_it() -> None:
    got = reachable_base("http://10.1.2.3:8501/steps?x=1", lan=["192.168.1.20"])
    assert (got.base, got.source, got.problem) == ("http://10.1.2.3:8501", "browser", None)
    behind_nginx = reachable_base("https://studio.example/quiz", server_port=8502, lan=LAN)
    assert behind_nginx.base == "https://studio.example"


def test_localhost_on_a_server_listening_everywhere_links_the_lan_address() -> None:
    """`streamlit run app.py` listens on every interface: the teacher's localhost tab
    links the machine's LAN address, on the port the teacher's browser used."""
    for listen in (None, "", "0.0.0.0", "::"):
        got = reachable_base("http://localhost:8501/classroom", server_address=listen, lan=LAN)
        assert (got.base, got.source, got.problem) == ("http://192.168.1.20:8501", "lan", None)
    prefixed = reachable_base("http://127.0.0.1:9000/app/", base_path="/app/", lan=LAN)
    assert prefixed.base == "http://192.168.1.20:9000/app"
    assert reachable_base("", server_port=8600, lan=LAN).base == "http://192.168.1.20:8600"


def test_a_server_on_one_real_address_links_that_address() -> None:
    got = reachable_base("http://localhost:8501/", server_address="192.168.7.7", lan=LAN)
    assert (got.base, got.problem) == ("http://192.168.7.7:8501", None)
    v6 = reachable_base("http://[::1]:8501/", server_address="fd00::5", lan=LAN)
    assert v6.base == "http://[fd00::5]:8501"


def test_a_localhost_only_server_warns_with_the_fix() -> None:
    for listen in ("localhost", "127.0.0.1", "::1"):
        got = reachable_base("http://localhost:8501/classroom", server_address=listen, lan=LAN)
        assert (got.base, got.source, got.problem) == (
            "http://localhost:8501",
            "loopback",
            "address_loopback_only",
        )


def test_no_network_at_all_warns() -> None:
    got = reachable_base("http://localhost:8501/", lan=[])
    assert (got.base, got.problem) == ("http://localhost:8501", "address_no_network")


def test_the_warnings_name_the_exact_fix() -> None:
    from attention_core.i18n import t

    for lang in ("en", "zh-TW"):
        loop = t("address_loopback_only", lang)
        assert "streamlit run app.py --server.address 0.0.0.0" in loop
        assert "ATTENTION_STUDIO_PUBLIC_URL" in loop
        assert "ATTENTION_STUDIO_PUBLIC_URL" in t("address_no_network", lang)


def _nic(address_: str, family: int = socket.AF_INET) -> SimpleNamespace:
    return SimpleNamespace(family=family, address=address_)


def test_lan_addresses_skip_loopback_bridges_link_local_and_down_interfaces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psutil

    addrs = {
        "lo": [_nic("127.0.0.1")],
        "docker0": [_nic("172.17.0.1")],
        "veth12": [_nic("10.9.9.9")],
        "eth0": [_nic("8.20.30.40"), _nic("fe80::1", socket.AF_INET6)],
        "wlan0": [_nic("192.168.1.20"), _nic("169.254.3.4")],
        "eth1": [_nic("10.0.0.8")],
    }
    up = {name: SimpleNamespace(isup=name != "eth1") for name in addrs}
    monkeypatch.setattr(psutil, "net_if_addrs", lambda: addrs)
    monkeypatch.setattr(psutil, "net_if_stats", lambda: up)
    assert lan_addresses() == ["192.168.1.20", "8.20.30.40"]  # private first; eth1 is down


def test_lan_addresses_on_this_machine_are_never_loopback() -> None:
    for found in lan_addresses():
        assert not is_loopback(found)
        assert not found.startswith("169.254.")
