"""The teacher's laptop on a classroom network, for real, in headless Chromium.

The laptop and the classroom network are two network namespaces of this test's own, joined
by a veth pair: the laptop has its loopback and one LAN address (198.18.41.2; 198.18.0.0/15
is reserved for such benchmarks), the network 198.18.41.1. The app runs on the laptop as the
README says (`streamlit run app.py`, every interface). The teacher's Chromium runs on the
laptop and opens http://localhost:PORT; a student's phone is a Chromium on the network
(390 × 844). The class's QR code (decoded by zxing-cpp) and the presenter corner's must give
the phone an address it can open — and the phone opens it, joins and answers. A server that
listens on localhost only shows the warning with the command that fixes it, in both languages.

The machine's own network is left alone: both ends of the pair are made inside their
namespaces, without IPv6 link-local addresses (they arrive seconds later). Chromium aborts
the requests in flight of every page when the network it sees changes (net::ERR_NETWORK_CHANGED),
so a change on the machine broke the pages of tests running beside this one.

Needs root and `ip` (iproute2) for the namespaces: skipped locally without them, failed
under CI. Screenshots: tests/artifacts/reachable-*.png.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from attention_core.i18n import t
from deploy.app_server import HEALTH_PATH, free_port, start_app, stop

from .checks import assert_no_exception, collect_page_errors, decode_qr, screenshot, wait_for_qr
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .chromium import CHROMIUM, CHROMIUM_ARGS, configure
from .server import ARTIFACTS_DIR, REPO_ROOT, ServerLog
from .waits import expect_rerun, open_page
from .widgets import set_language

pytestmark = pytest.mark.browser
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
NETWORK_IP, LAPTOP_IP = "198.18.41.1", "198.18.41.2"


@dataclass(frozen=True)
class Laptop:
    namespace: str
    address: str  # its LAN address, what a phone on the network opens
    network: str  # the namespace of the classroom network, where the phones are


def _ip(*args: str, netns: str | None = None) -> None:
    prefix = ["-n", netns] if netns else []
    subprocess.run(["ip", *prefix, *args], check=True, capture_output=True, timeout=20)


def _can_make_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("ip") is None:
        return "ip (iproute2) is missing"
    return None


@pytest.fixture(scope="module")
def laptop() -> Iterator[Laptop]:
    problem = _can_make_namespaces()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"cannot make the laptop's network namespace: {problem} (CI is set)")
        pytest.skip(f"cannot make a network namespace: {problem}")
    laptop, network = f"studio-laptop-{os.getpid()}", f"studio-net-{os.getpid()}"
    ends = {laptop: (f"sl{os.getpid()}l", LAPTOP_IP), network: (f"sl{os.getpid()}n", NETWORK_IP)}
    # what the machine's own network sees meanwhile: nothing, or the pages beside this test
    # lose their requests in flight
    monitor = subprocess.Popen(
        ["ip", "monitor", "link", "address"], stdout=subprocess.PIPE, text=True
    )
    time.sleep(0.1)  # subscribed before the first change
    try:
        for namespace in ends:
            _ip("netns", "add", namespace)
        (laptop_end, _), (network_end, _) = ends.values()
        pair = ["type", "veth", "peer", "name", network_end, "netns", network]
        _ip("link", "add", laptop_end, "netns", laptop, *pair)
        for namespace, (end, address) in ends.items():
            _ip("link", "set", end, "addrgenmode", "none", netns=namespace)  # no IPv6 link-local
            _ip("addr", "add", f"{address}/30", "dev", end, netns=namespace)
            _ip("link", "set", end, "up", netns=namespace)
        _ip("link", "set", "lo", "up", netns=laptop)
        time.sleep(0.2)
        monitor.terminate()
        seen, _ = monitor.communicate(timeout=20)
        assert not seen, f"making the namespaces changed the machine's own network:\n{seen}"
        yield Laptop(laptop, LAPTOP_IP, network)
    finally:
        monitor.kill()
        for namespace in ends:  # deleting a namespace deletes its end of the pair
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=20)


@contextmanager
def _serve_on_laptop(laptop: Laptop, address: str, name: str) -> Iterator[tuple[int, ServerLog]]:
    """`streamlit run app.py --server.address <address>` inside the laptop's namespace."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    log = ServerLog(ARTIFACTS_DIR / f"{name}.log")
    port = free_port()
    prefix = ["ip", "netns", "exec", laptop.namespace]
    process = start_app(port, log=log.path, address=address, app_dir=REPO_ROOT, prefix=prefix)
    try:
        check = ["ip", "netns", "exec", laptop.namespace, "python", "-c"]
        probe = f"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}{HEALTH_PATH}')"
        for _ in range(240):  # the health check from inside the laptop (any address)
            if process.poll() is not None:
                pytest.fail(f"streamlit exited:\n{log.text()}")
            if subprocess.run([*check, probe], capture_output=True, timeout=30).returncode == 0:
                break
        else:
            pytest.fail(f"streamlit did not start on the laptop:\n{log.text()}")
        yield port, log
        log.assert_no_traceback(what="the laptop's server")
    finally:
        stop(process)


@pytest.fixture(scope="module")
def everywhere(laptop: Laptop) -> Iterator[int]:
    """The README's `streamlit run app.py`: every interface (0.0.0.0)."""
    with _serve_on_laptop(laptop, "0.0.0.0", "reachable-everywhere") as (port, _log):
        yield port


@contextmanager
def _chromium_in(namespace: str, browser: Browser) -> Iterator[Browser]:
    """Chromium inside `namespace`: the session's Playwright launches it through
    `ip netns exec`."""
    folder = Path(tempfile.mkdtemp(prefix="netns-chromium-"))
    wrapper = folder / "chromium"
    wrapper.write_text(f'#!/bin/sh\nexec ip netns exec {namespace} {CHROMIUM} "$@"\n')
    wrapper.chmod(0o755)
    inside = browser.browser_type.launch(executable_path=str(wrapper), args=CHROMIUM_ARGS)
    try:
        yield inside
    finally:
        inside.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def teacher_browser(laptop: Laptop, browser: Browser) -> Iterator[Browser]:
    """Chromium on the laptop: it reaches the app on localhost."""
    with _chromium_in(laptop.namespace, browser) as inside:
        yield inside


@pytest.fixture(scope="module")
def phone_browser(laptop: Laptop, browser: Browser) -> Iterator[Browser]:
    """Chromium on the classroom network: only the laptop's LAN address reaches the app."""
    with _chromium_in(laptop.network, browser) as inside:
        yield inside


def _teacher(browser: Browser) -> Page:
    context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 1000})
    return configure(context).new_page()


def _qr_links(page: Page) -> list[str]:
    """The links of the page's QR codes, read until two equal ones or WAIT_MS: a QR code
    replaced while it is read is read again."""
    images = page.locator('[data-testid="stImage"] img')
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        try:
            found = sorted(decode_qr(images.nth(i)) for i in range(images.count()))
        except Exception:  # an image replaced under the reader (playwright or the decoder)
            found = []
        if (len(found) == 2 and found[0] == found[1]) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_a_phone_on_the_network_opens_the_qr_code_of_a_teacher_on_localhost(
    laptop: Laptop, everywhere: int, teacher_browser: Browser, phone_browser: Browser
) -> None:
    port = everywhere
    teacher = _teacher(teacher_browser)
    errors = collect_page_errors(teacher)
    open_page(teacher, f"http://localhost:{port}", "classroom", {"present": "1"})
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="Open a class").click()
    code_box = teacher.locator(".st-key-poll_code h1")
    expect(code_box).to_have_text(re.compile(r"^\s*[A-Z2-9]{4}\s*$"), timeout=WAIT_MS)
    code = code_box.inner_text().strip()
    join = f"http://{laptop.address}:{port}/classroom?class={code}&lang=en"
    # both QR codes (the class's and presenter mode's corner) carry the join link; the
    # corner's is redrawn once the class exists, which a loaded machine can show a moment
    # after the code (seen once in a clean-clone run: still the share link without it)
    assert _qr_links(teacher) == [join, join]
    corner = teacher.locator(".st-key-presenter_corner img")
    assert wait_for_qr(corner, join) == join  # presenter mode's QR: the join link, with the code
    expect(teacher.get_by_text(t("address_loopback_only", "en"))).to_have_count(0)
    screenshot(teacher, "reachable-teacher")

    phone_context = configure(phone_browser.new_context(locale="en-US", **PHONE))
    phone = phone_context.new_page()
    try:
        open_page(phone, join)  # outside the laptop: only its LAN address reaches it
        phone.get_by_label("Your name (optional)", exact=True).fill("陳小明")
        with expect_rerun(phone):
            phone.get_by_role("button", name="Join").click()
        with expect_rerun(teacher):
            teacher.get_by_role("button", name="Push a question").click()
        button = phone.locator(".st-key-poll_answer_1_0 button").first
        expect(button).to_be_visible(timeout=WAIT_MS)
        button.tap()
        expect(phone.get_by_text("Your answer:")).to_be_visible(timeout=WAIT_MS)
        phone.screenshot(path=str(ARTIFACTS_DIR / "reachable-phone.png"))
        expect(teacher.get_by_text("陳小明")).to_be_visible(timeout=WAIT_MS)
        assert_no_exception(phone)
    finally:
        phone_context.close()

    # mid-lesson: out of presenter mode (the sidebar), another language, back in
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="Leave presenter mode").click()
    set_language(teacher, "zh-TW")
    zh_join = join.replace("lang=en", "lang=zh-TW")
    expect(teacher.locator('[data-testid="stCode"]').first).to_contain_text(zh_join)
    with expect_rerun(teacher):
        teacher.get_by_role("button", name="簡報模式").click()
    expect(corner).to_be_visible(timeout=WAIT_MS)
    assert wait_for_qr(corner, zh_join) == zh_join  # redrawn after the rerun: read until it is
    assert_no_exception(teacher)
    assert not errors, errors


def test_a_localhost_only_server_says_how_to_let_phones_in(
    laptop: Laptop, teacher_browser: Browser
) -> None:
    with _serve_on_laptop(laptop, "127.0.0.1", "reachable-localhost") as (port, _log):
        teacher = _teacher(teacher_browser)
        open_page(teacher, f"http://localhost:{port}", "classroom")
        with expect_rerun(teacher):
            teacher.get_by_role("button", name="Open a class").click()
        warning = teacher.get_by_text("streamlit run app.py --server.address 0.0.0.0")
        expect(warning).to_be_visible(timeout=WAIT_MS)
        screenshot(teacher, "reachable-localhost-warning")
        set_language(teacher, "zh-TW")
        expect(teacher.get_by_text("學生的手機打不開這個連結")).to_be_visible(timeout=WAIT_MS)
        assert_no_exception(teacher)
