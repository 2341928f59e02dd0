"""The address a student's phone can open: what share links and QR codes must say.

The browser that shows a QR code often reached the app at `http://localhost:8501/` (the
app on the teacher's laptop), an address no phone can open. `reachable_base` decides, in
this order:

    1. ATTENTION_STUDIO_PUBLIC_URL (a proxy or a public name)            → that URL
    2. Streamlit's `browser.serverAddress`, when set and not a loopback   → that host
    3. the browser's own address, when it is not a loopback (a LAN IP, a
       name behind nginx)                                                  → that address
    4. the server listens on every interface (Streamlit's default) and the
       machine has a LAN address                                           → that address
    5. otherwise (`--server.address localhost`, or no network at all)     → the browser's
       address, with a warning that says how to fix it

The decision is a pure function of plain values (tested without a server); `lan_addresses`
reads the machine's interfaces (psutil), never the network.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "PUBLIC_URL_ENV",
    "Reachable",
    "is_loopback",
    "lan_addresses",
    "reachable_base",
    "served_base",
]

PUBLIC_URL_ENV = "ATTENTION_STUDIO_PUBLIC_URL"  # e.g. https://studio.school.example/
_ALL_INTERFACES = {"", "0.0.0.0", "::", "[::]"}
# Interfaces no phone reaches: containers' and VMs' bridges and their virtual ends.
_VIRTUAL = ("lo", "docker", "br-", "veth", "virbr", "vboxnet", "vmnet", "cni", "flannel")


@dataclass(frozen=True)
class Reachable:
    """Where links should point. `base` is scheme://host[:port][/prefix], no trailing /.

    `problem` is None when a phone on the same network can open `base`; otherwise the
    catalog key of the warning: "address_loopback_only" (the server listens on this
    computer only) or "address_no_network" (it listens everywhere, but the computer has
    no address other than loopback)."""

    base: str
    source: str  # "public" | "configured" | "browser" | "lan" | "loopback"
    problem: str | None = None


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (with or without brackets)."""
    host = host.strip().strip("[]").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses that another machine on its network can reach:
    interfaces that are up, not loopback, link-local or a container bridge; private
    ranges (10/8, 172.16/12, 192.168/16) first. Read from the interfaces, not by sending
    anything."""
    import socket

    import psutil

    stats = psutil.net_if_stats()
    found: list[tuple[int, str, str]] = []
    for name, addresses in sorted(psutil.net_if_addrs().items()):
        if name.startswith(_VIRTUAL) or not (stats.get(name) and stats[name].isup):
            continue
        for entry in addresses:
            if entry.family != socket.AF_INET:
                continue
            ip = ipaddress.ip_address(entry.address)
            if ip.is_loopback or ip.is_link_local or ip.is_unspecified:
                continue
            found.append((0 if ip.is_private else 1, name, entry.address))
    return [address for _, _, address in sorted(found)]


def _host_port(host: str, port: int | None) -> str:
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"{host}:{port}" if port else host


def reachable_base(
    seen_url: str,
    *,
    public_url: str = "",
    server_address: str | None = None,
    server_port: int = 8501,
    browser_address: str | None = None,
    browser_port: int | None = None,
    base_path: str = "",
    lan: list[str] | None = None,
) -> Reachable:
    """The base of every link a student opens (see the module docstring for the order).

    `seen_url` is the browser's own address (st.context.url); `server_address` and
    `server_port` are what the server listens on (`server.address`, `server.port`);
    `browser_address`/`browser_port` are `browser.serverAddress`/`browser.serverPort`
    when set by the user (None otherwise); `lan` is `lan_addresses()`."""
    public = public_url.strip()
    if public:
        parts = urlsplit(public if "//" in public else f"http://{public}")
        return Reachable(
            urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", "")), "public"
        )
    seen = urlsplit(seen_url or f"http://localhost:{server_port}/")
    scheme = seen.scheme or "http"
    prefix = f"/{base_path.strip('/')}" if base_path.strip("/") else ""
    if browser_address and not is_loopback(browser_address):
        netloc = _host_port(browser_address, browser_port or seen.port or server_port)
        return Reachable(urlunsplit((scheme, netloc, prefix, "", "")), "configured")
    here = urlunsplit((scheme, seen.netloc, prefix, "", ""))
    if seen.hostname and not is_loopback(seen.hostname):
        return Reachable(here, "browser")
    listen = (server_address or "").strip()
    if listen and listen not in _ALL_INTERFACES:
        if is_loopback(listen):
            return Reachable(here, "loopback", "address_loopback_only")
        return Reachable(urlunsplit((scheme, _host_port(listen, seen.port), prefix, "", "")), "lan")
    addresses = lan_addresses() if lan is None else lan
    if not addresses:
        return Reachable(here, "loopback", "address_no_network")
    netloc = _host_port(addresses[0], seen.port or server_port)
    return Reachable(urlunsplit((scheme, netloc, prefix, "", "")), "lan")


def served_base() -> Reachable:
    """`reachable_base` for the running Streamlit server and the current session."""
    import streamlit as st
    from streamlit import config

    def manual(name: str) -> object | None:
        return config.get_option(name) if config.is_manually_set(name) else None

    browser_port = manual("browser.serverPort")
    return reachable_base(
        st.context.url or "",
        public_url=os.environ.get(PUBLIC_URL_ENV, ""),
        server_address=config.get_option("server.address"),
        server_port=int(config.get_option("server.port") or 8501),
        browser_address=manual("browser.serverAddress"),  # type: ignore[arg-type]
        browser_port=int(browser_port) if browser_port else None,
        base_path=str(config.get_option("server.baseUrlPath") or ""),
    )
