"""Start, check, warm up and stop one `streamlit run app.py` server of the app.

Servers of the app start here: the replicas of deploy/run_replicas.py (which the browser
tests' test_replicas.py and test_load.py use) and the benchmarks' (bench/app_server.py).
One command (headless; file watcher off, so that edits elsewhere in the tree do not rerun
the app; usage statistics off; script health check on, for `warm_up`), one offline
environment (the packaged MiniLM model, no Hugging Face requests), one way to stop (the
whole process group: Streamlit may have started children).

    port, log = free_port(), Path("server.log")
    proc = start_app(port, log=log)
    try:
        wait_healthy(f"http://127.0.0.1:{port}{HEALTH_PATH}", proc=proc, log=log)
        warm_up(f"http://127.0.0.1:{port}")  # "ok": the app script ran once
    finally:
        stop(proc)

or, the same in one block: `with serving(log=Path("server.log")) as app: app.url`.
Streamlit's options: https://docs.streamlit.io/develop/api-reference/configuration/config.toml
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "APP_DIR",
    "HEALTH_PATH",
    "RunningApp",
    "app_env",
    "free_port",
    "serving",
    "start_app",
    "stop",
    "streamlit_command",
    "wait_healthy",
    "warm_up",
]

APP_DIR = Path(__file__).resolve().parent.parent  # the checkout whose app.py is served
HEALTH_PATH = "/_stcore/health"  # answers 200 "ok" once the server accepts sessions
_LOG_TAIL = 3000  # characters of the server's log quoted when it died before answering


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def streamlit_command(port: int, *, address: str = "127.0.0.1") -> list[str]:
    """The `streamlit run app.py` command line, with this interpreter, on `address:port`."""
    return [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.address", address,
        "--server.port", str(port),
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
        "--server.scriptHealthCheckEnabled", "true",  # for warm_up
    ]  # fmt: skip


def app_env(*, cookie_secret: str | None = None) -> dict[str, str]:
    """This process's environment, offline, unbuffered, and with `cookie_secret` if given
    (replicas behind one load balancer share it, so cookies survive a move)."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",  # the log is complete when someone reads it
    }
    if cookie_secret:
        env["STREAMLIT_SERVER_COOKIE_SECRET"] = cookie_secret
    return env


def start_app(
    port: int,
    *,
    log: Path,
    address: str = "127.0.0.1",
    cookie_secret: str | None = None,
    app_dir: Path = APP_DIR,
    prefix: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """`streamlit run app.py` from `app_dir` on `address:port`, output to the file `log`
    (a file, not a pipe: a pipe nobody reads blocks a chatty server), in its own process
    group so that `stop` ends its children too. Returns at once; see `wait_healthy`.
    `prefix` runs the command through another one (`ip netns exec NAME`: a test's own
    network namespace, as another machine on the classroom's network)."""
    with open(log, "wb") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [*prefix, *streamlit_command(port, address=address)],
            cwd=app_dir,
            env=app_env(cookie_secret=cookie_secret),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_healthy(
    url: str,
    *,
    timeout: float = 90.0,
    proc: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Wait until `url` (e.g. base + HEALTH_PATH) answers 200.

    Raises TimeoutError after `timeout` seconds, or RuntimeError as soon as `proc` has
    exited (quoting the end of `log` if given). Polls every 50 ms: fine enough to time a
    server's start, and a refused connection costs nothing.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = ""
            if log is not None and Path(log).exists():
                tail = ":\n" + Path(log).read_text(errors="replace")[-_LOG_TAIL:]
            raise RuntimeError(
                f"process {proc.pid} exited with {proc.returncode} before {url} answered{tail}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")


def warm_up(base_url: str, *, timeout: float = 120.0) -> str:
    """Run the app script inside the server at `base_url` (Streamlit's script health check,
    enabled by `streamlit_command`) and return its answer, "ok" when it ran cleanly.

    The first session of a fresh server otherwise pays for importing torch (~1.7 s here)
    and loading jieba's dictionary (~1 s) before its first heatmap. Twice: on a fresh
    server the first run restarts itself (ui.common.entry_guard), and the health check
    answers, and ends its session, as soon as that first run is over, cutting the rerun
    that does the imports short; the second check runs the whole script."""
    url = f"{base_url.rstrip('/')}/_stcore/script-health-check"
    answers = []
    for _ in range(2):
        with urllib.request.urlopen(url, timeout=timeout) as response:
            answers.append(response.read().decode("utf-8", "replace").strip())
    return "ok" if answers == ["ok", "ok"] else " / ".join(answers)


def stop(proc: subprocess.Popen, *, timeout: float = 10.0) -> None:
    """Stop `proc` and its process group (SIGTERM, then SIGKILL); no-op if already gone.

    `proc` must lead its own group (`start_app` and `start_new_session=True` do that):
    the signals go to that group, by its id, and to nothing else."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()


@dataclass(frozen=True)
class RunningApp:
    """A server started by `serving`: its base URL (no trailing slash), process and log."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def serving(
    *,
    log: Path,
    app_dir: Path = APP_DIR,
    cookie_secret: str | None = None,
    timeout: float = 90.0,
    wait: bool = True,
) -> Iterator[RunningApp]:
    """The app on a free port of 127.0.0.1 for the duration of the block, stopped after.

    With `wait` (the default) the block starts once HEALTH_PATH answers (TimeoutError or
    RuntimeError otherwise, see `wait_healthy`); without, right after the launch.
    """
    port = free_port()
    process = start_app(port, log=log, cookie_secret=cookie_secret, app_dir=app_dir)
    try:
        url = f"http://127.0.0.1:{port}"
        if wait:
            wait_healthy(url + HEALTH_PATH, timeout=timeout, proc=process, log=log)
        yield RunningApp(url=url, process=process, log=log)
    finally:
        stop(process)
