"""Start the app with `streamlit run` on a free local port, for the browser benchmarks.

The server is a child process of the benchmark: started headless, bound to 127.0.0.1, with
usage statistics and the file watcher off (a watcher would rerun the app while other people
edit files in the tree), and stopped by its own process id when the `with` block ends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO", "Server", "free_port", "streamlit_server"]

REPO = Path(__file__).resolve().parent.parent
# the checkout whose app.py the browser benchmarks serve; `python -m bench --app-repo DIR`
# points it at another one (e.g. a git worktree of an older commit) for before/after numbers
APP_REPO = REPO
HEALTH_PATH = "/_stcore/health"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Server:
    """A running app: its base URL, when it was launched and when it first answered."""

    url: str
    process: subprocess.Popen[bytes]
    launched: float  # time.perf_counter() just before the process was started
    healthy: float  # time.perf_counter() when /_stcore/health first answered "ok"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + HEALTH_PATH, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def streamlit_server(
    *,
    app: str = "app.py",
    repo: Path | None = None,
    timeout_s: float = 60.0,
    wait_healthy: bool = True,
) -> Iterator[Server]:
    """Run `streamlit run <app>` in `repo` (default APP_REPO) for the duration of the block.

    Another checkout as `repo` (a git worktree of an older commit) gives A/B numbers.

    With `wait_healthy=False` the block starts right after launch (to time a cold start
    from the browser's side); `healthy` is then the launch time.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        app,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.scriptHealthCheckEnabled",  # for warm-ups, as deploy/run_replicas.py does
        "true",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # a file, not a pipe: a pipe nobody reads would block a chatty server
    log = tempfile.TemporaryFile()
    launched = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=repo or APP_REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        healthy = launched
        if wait_healthy:
            deadline = launched + timeout_s
            while not _healthy(url):
                if process.poll() is not None:
                    log.seek(0)
                    err = log.read().decode(errors="replace")
                    raise RuntimeError(f"streamlit exited with {process.returncode}: {err[-2000:]}")
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"streamlit did not answer on {url} in {timeout_s:.0f} s")
                time.sleep(0.05)
            healthy = time.perf_counter()
        yield Server(url=url, process=process, launched=launched, healthy=healthy)
    finally:
        process.terminate()  # this process only, by its handle
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()
