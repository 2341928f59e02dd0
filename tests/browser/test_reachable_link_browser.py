"""The teacher's laptop on a classroom network, for real, in headless Chromium.

The laptop is a network namespace of this test's own with one LAN address (198.18.41.2, a
veth pair; 198.18.0.0/15 is reserved for such benchmarks) and its loopback. The app runs
there as the README says (`streamlit run app.py`, every interface). The teacher's Chromium
runs inside it and opens http://localhost:PORT, as on the laptop; a student's phone is a
Chromium outside it (390 × 844), on "the network". The class's QR code (decoded by
zxing-cpp) and the presenter corner's must give the phone an address it can open — and the
phone opens it, joins and answers. A server that listens on localhost only shows the
warning with the command that fixes it, in both languages.

Needs root and `ip` (iproute2) for the namespace: skipped locally without them, failed
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
HOST_IP, LAPTOP_IP = "198.18.41.1", "198.18.41.2"


@dataclass(frozen=True)
class Laptop:
    namespace: str
    address: str  # its LAN address, what a phone on the network opens


def _ip(*args: str, netns: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True, timeout=20)


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
    name, host_end, ns_end = (f"studio-lan-{os.getpid()}", f"sl{os.getpid()}h", f"sl{os.getpid()}n")
    _ip("netns", "add", name)
    try:
        _ip("link", "add", host_end, "type", "veth", "peer", "name", ns_end)
        _ip("link", "set", ns_end, "netns", name)
        _ip("addr", "add", f"{HOST_IP}/30", "dev", host_end)
        _ip("link", "set", host_end, "up")
        _ip("addr", "add", f"{LAPTOP_IP}/30", "dev", ns_end, netns=name)
        _ip("link", "set", ns_end, "up", netns=name)
        _ip("link", "set", "lo", "up", netns=name)
        yield Laptop(name, LAPTOP_IP)
    finally:
        subprocess.run(["ip", "link", "del", host_end], capture_output=True, timeout=20)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=20)


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


@pytest.fixture(scope="module")
def teacher_browser(laptop: Laptop, browser: Browser) -> Iterator[Browser]:
    """Chromium inside the laptop's namespace (the session's Playwright launches it through
    `ip netns exec`): it reaches the app on localhost."""
    folder = Path(tempfile.mkdtemp(prefix="laptop-chromium-"))
    wrapper = folder / "chromium"
    wrapper.write_text(f'#!/bin/sh\nexec ip netns exec {laptop.namespace} {CHROMIUM} "$@"\n')
    wrapper.chmod(0o755)
    inside = browser.browser_type.launch(executable_path=str(wrapper), args=CHROMIUM_ARGS)
    yield inside
    inside.close()
    shutil.rmtree(folder, ignore_errors=True)


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
    laptop: Laptop, everywhere: int, teacher_browser: Browser, browser: Browser
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

    phone_context = configure(browser.new_context(locale="en-US", **PHONE))
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
