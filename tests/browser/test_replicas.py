"""Beyond one machine: several Streamlit replicas behind nginx (deploy/), tested for real.

A Streamlit session lives in one server process, so a class bigger than one process can
serve is spread over replicas behind nginx (deploy/make_nginx_conf.py): websocket upgrade,
long timeouts, and cookie stickiness (a classroom shares one NAT address, so the client
address would put everyone on one replica). Here two replicas and nginx run on loopback,
Chromium drives sessions through nginx, then the replica holding one session is stopped:
sessions on the other replica keep working, and the orphaned student reloads into a fresh
session on the surviving replica with the view restored from the URL, bit for bit.

Also: the Dockerfile uses only real Dockerfile instructions (no Docker engine runs here),
and nginx accepts every configuration the generator writes.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import secrets
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, quote, urljoin, urlsplit

import psutil
import pytest

from attention_core.pipeline import token_labels
from attention_core.tokenize import tokenize
from deploy.app_server import free_port as _free_port

from .checks import alerts, assert_no_exception, screenshot
from .chromium import VIEWPORT, require_browser_tools
from .server import ARTIFACTS_DIR
from .waits import expect_rerun, open_page, wait_for_heatmaps

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
DOCKERFILE_KEYWORDS = {
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK",
    "LABEL", "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
}  # fmt: skip
PARAMS = {"tokenizer": "word", "embed_dim": "12", "num_heads": "3", "seed": "5"}


def _deploy(name: str) -> Any:
    """A module of deploy/ (scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "deploy" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require_nginx() -> None:
    """Skip without nginx; under CI (which installs it, .ci/run) that is a failure."""
    if Path(NGINX).exists():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{NGINX} is missing (CI is set, so this is a failure)")
    pytest.skip(f"{NGINX} is missing (apt-get install nginx)")


# --- the Dockerfile and the generated configuration ---------------------------------------
def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction; continuation lines joined, comments dropped."""
    logical, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        current += " " + stripped.removesuffix("\\").strip()
        if not stripped.endswith("\\"):
            logical.append(current.strip())
            current = ""
    assert not current, "the Dockerfile ends inside a continued line"
    pairs = [w.split(None, 1) for w in logical]
    return [(p[0], p[1] if len(p) > 1 else "") for p in pairs]


def test_dockerfile_is_well_formed():
    steps = dockerfile_instructions((ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8"))
    unknown = [k for k, _ in steps if k.upper() not in DOCKERFILE_KEYWORDS or k != k.upper()]
    assert not unknown, f"not Dockerfile instructions: {unknown}"
    assert steps[0] == ("FROM", "python:3.11-slim")
    args = {k: v for k, v in steps}  # the last of each kind
    assert "-r requirements.txt" in " ".join(v for k, v in steps if k == "RUN")
    assert "chromium" not in (ROOT / "deploy" / "Dockerfile").read_text().lower()
    cmd = json.loads(args["CMD"])  # exec form: a JSON array
    assert cmd[:3] == ["streamlit", "run", "app.py"]
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    # the health check runs the app script, which the server must have enabled
    assert "/_stcore/script-health-check" in args["HEALTHCHECK"] and args["USER"] != "root"
    assert cmd[cmd.index("--server.scriptHealthCheckEnabled") + 1] == "true"
    health = json.loads(args["HEALTHCHECK"].split("CMD", 1)[1])
    assert health[0] == "python"  # the slim image has no curl


@pytest.mark.parametrize("sticky", ["cookie", "ip"])
def test_nginx_accepts_the_generated_configuration(tmp_path: Path, sticky: str):
    require_nginx()
    make = _deploy("make_nginx_conf")
    make.make_temp_dirs(tmp_path)
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        make.render(
            [8501, 8502, 8503], listen=f"127.0.0.1:{_free_port()}", sticky=sticky, prefix=tmp_path
        )
    )
    check = subprocess.run(
        [NGINX, "-t", "-c", str(conf), "-p", str(tmp_path)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    text = conf.read_text()
    assert text.count("server 127.0.0.1:85") == 3
    key = "$st_route" if sticky == "cookie" else "$remote_addr"
    assert f"hash {key} consistent;" in text
    for bad in ([], [0], [70000]):
        with pytest.raises(ValueError, match="port"):
            make.render(bad)
    with pytest.raises(ValueError, match="sticky"):
        make.render([8501], sticky="round-robin")


# --- two replicas behind nginx ------------------------------------------------------------
@dataclass
class Cluster:
    url: str
    replicas: dict[int, subprocess.Popen]  # port → streamlit process
    nginx: subprocess.Popen
    prefix: Path
    stopped: set[int] = field(default_factory=set)

    def upstream(self, response_headers: dict[str, str]) -> int:
        """Which replica served a response (X-Upstream, added for tests only)."""
        # after a failover nginx lists every upstream it tried: "127.0.0.1:A, 127.0.0.1:B"
        return int(response_headers["x-upstream"].split(",")[-1].rsplit(":", 1)[1])

    def websockets(self, port: int) -> int:
        """Established connections to a replica: only websockets stay open (no keepalive)."""
        proc = psutil.Process(self.replicas[port].pid)
        conns = proc.net_connections(kind="tcp")
        return sum(c.status == "ESTABLISHED" and c.laddr.port == port for c in conns)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """Two replicas (one cookie secret) and nginx in front; all stopped afterwards."""
    require_browser_tools()
    require_nginx()
    run = _deploy("run_replicas")
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    ports: list[int] = []
    while len(ports) < 3:
        port = _free_port()
        if port not in ports:
            ports.append(port)
    *replica_ports, listen = ports
    secret = secrets.token_hex(16)
    procs: list[subprocess.Popen] = []
    try:
        replicas = {}
        for port in replica_ports:
            log = ARTIFACTS_DIR / f"replica-{replica_ports.index(port)}.log"
            replicas[port] = run.start_replica(port, log=log, cookie_secret=secret)
            procs.append(replicas[port])
        for port, proc in replicas.items():
            run.wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc=proc)
            # as deploy/run_replicas.py does: the app script runs once in each replica
            assert run.warm_up(f"http://127.0.0.1:{port}") == "ok"
        prefix = tmp_path / "nginx"
        nginx = run.start_nginx(
            replica_ports, listen=f"127.0.0.1:{listen}", prefix=prefix, debug_upstream_header=True
        )
        procs.append(nginx)
        url = f"http://127.0.0.1:{listen}"
        run.wait_healthy(f"{url}/nginx-health", proc=nginx, timeout=20)
        yield Cluster(url, replicas, nginx, prefix)
    finally:
        for proc in reversed(procs):
            run.stop(proc)
        for name in ("access.log", "error.log"):
            if (tmp_path / "nginx" / name).exists():
                shutil.copy(tmp_path / "nginx" / name, ARTIFACTS_DIR / f"nginx-{name}")
    for port in replica_ports:
        log = ARTIFACTS_DIR / f"replica-{replica_ports.index(port)}.log"
        assert "Traceback" not in log.read_text(errors="replace"), log


def _sticky_context(browser, cluster: Cluster, want: int) -> tuple[Any, int]:
    """A fresh browser context whose route cookie sends it to replica `want`.

    Each new visitor gets a random route; a cheap request through nginx shows where it
    lands, so contexts are made until one lands on `want` (1/2 chance each).
    """
    for _ in range(24):
        context = browser.new_context(viewport=VIEWPORT, locale="en-US")
        context.set_default_timeout(90_000)
        response = context.request.get(f"{cluster.url}/_stcore/health")
        assert response.ok and response.text().strip() == "ok"
        if cluster.upstream(response.headers) == want:
            return context, want
        context.close()
    raise AssertionError(f"no route to replica {want} in 24 fresh visitors")


def _type_sentence(page, sentence: str) -> None:
    box = page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(sentence)
    with expect_rerun(page):
        page.keyboard.press("Control+Enter")


def test_health_and_long_links_pass_through_nginx(cluster: Cluster):
    with urllib.request.urlopen(f"{cluster.url}/_stcore/health", timeout=10) as response:
        assert response.read().decode().strip() == "ok"
    # The longest text a link carries (MAX_URL_TEXT CJK characters ≈ 18 kB encoded).
    from attention_core.settings import MAX_URL_TEXT

    link = f"{cluster.url}/?text={quote('字' * MAX_URL_TEXT)}&tokenizer=char"
    assert len(link) > 16_000
    with urllib.request.urlopen(link, timeout=30) as response:
        assert response.status == 200 and b"<html" in response.read().lower()
        page = response.geturl()
    # Streamlit's own bundles come uncompressed from a replica; nginx gzips them for phones
    with urllib.request.urlopen(cluster.url + "/", timeout=10) as response:
        html = response.read().decode()
    script = re.search(r'src="([^"]+\.js)"', html).group(1)
    asked = urllib.request.Request(urljoin(page, script), headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(asked, timeout=10) as response:
        body = response.read()
        assert response.headers.get("Content-Encoding") == "gzip"
    assert len(gzip.decompress(body)) > 2 * len(body)


def test_sessions_survive_a_replica_going_down(cluster: Cluster, browser) -> None:
    doomed, survivor = list(cluster.replicas)
    contexts = []
    try:
        sessions = []  # (page, replica, params, traces)
        for k, want in enumerate([doomed, survivor, survivor]):
            context, port = _sticky_context(browser, cluster, want)
            contexts.append(context)
            page = context.new_page()
            params = {**PARAMS, "text": f"student {k} sees attention", "seed": str(k + 3)}
            with page.expect_response(lambda r: "text=" in r.url) as first:
                open_page(page, cluster.url, params=params)
            assert cluster.upstream(first.value.headers) == port
            traces = wait_for_heatmaps(page, 3)
            assert traces[0]["x"] == token_labels(tokenize(params["text"], "word"))
            sessions.append((page, port, params, traces))
        # every tab's websocket went where its page came from (cookie stickiness)
        assert cluster.websockets(doomed) == 1 and cluster.websockets(survivor) == 2
        screenshot(sessions[0][0], "replicas-before")

        _deploy("run_replicas").stop(cluster.replicas[doomed])

        # Sessions on the surviving replica keep working: they edit and see updates.
        for k, (page, _, _, _) in enumerate(sessions[1:], start=1):
            sentence = f"student {k} keeps working after the failure"
            _type_sentence(page, sentence)
            assert wait_for_heatmaps(page, 3)[0]["x"] == token_labels(tokenize(sentence, "word"))
            assert_no_exception(page)

        # The orphaned student reloads: a fresh session on the survivor, same view from the URL.
        # (Streamlit's frontend also reconnects by itself, through nginx, to the survivor.)
        page, _, params, before = sessions[0]
        address = urlsplit(page.url)  # what the student's address bar holds
        assert parse_qs(address.query)["seed"] == ["3"]
        with page.expect_response(lambda r: "text=" in r.url) as again:
            open_page(page, cluster.url, params=dict(parse_qsl(address.query)))
        assert cluster.upstream(again.value.headers) == survivor
        after = wait_for_heatmaps(page, 3)
        assert [(t["name"], t["x"], t["y"]) for t in after] == [
            (t["name"], t["x"], t["y"]) for t in before
        ]
        assert [t["z"] for t in after] == [t["z"] for t in before]  # bit for bit
        assert alerts(page) == []  # the URL was complete and valid: nothing rejected
        _type_sentence(page, "back at work on the other replica")
        assert wait_for_heatmaps(page, 3)[0]["x"][-1] == "6:replica"
        assert_no_exception(page)
        screenshot(page, "replicas-after-reload")
    finally:
        for context in contexts:
            context.close()
