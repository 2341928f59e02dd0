"""The app's Streamlit server for the browser tests: started, logged, checked for tracebacks.

`serve_app` is the one way these tests start a server (through deploy/app_server.py); the
`app_server` fixture (conftest.py) is one shared instance of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from deploy.app_server import HEALTH_PATH, free_port, start_app, stop, wait_healthy

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "tests" / "artifacts"  # the same folder as the artifacts_dir fixture
SERVER_START_S = 60.0


@dataclass
class ServerLog:
    """The server's combined stdout/stderr, checked for Python tracebacks."""

    path: Path
    reported: bool = False  # a traceback already failed some test: do not repeat it

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def text(self, since: int = 0) -> str:
        with self.path.open("rb") as f:
            f.seek(since)
            return f.read().decode("utf-8", errors="replace")

    def wait_for(self, text: str, *, timeout: float = 60.0) -> str:
        """The first line of the log that holds `text`, waiting for it up to `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            for line in self.text().splitlines():
                if text in line:
                    return line
            if time.monotonic() > deadline:
                pytest.fail(f"{text!r} not in the server's log within {timeout} s:\n{self.text()}")
            time.sleep(0.1)

    def assert_no_traceback(self, since: int = 0, *, what: str = "the app") -> None:
        """Fail if the server printed a traceback after byte `since`."""
        new = self.text(since)
        if "Traceback" in new:
            self.reported = True
            start = new.index("Traceback")
            excerpt = new[max(0, start - 200) : start + 3000]
            pytest.fail(f"server-side exception while running {what} (see {self.path}):\n{excerpt}")


@contextmanager
def serve_app(log_name: str = "server") -> Iterator[tuple[str, ServerLog]]:
    """Run `streamlit run app.py` from the repo root on a free port until the block ends.

    Yields (base URL, its log at tests/artifacts/<log_name>.log). The `app_server` fixture
    is one shared instance; use this directly only for a cold server of your own (e.g. to
    test what the first visitor after a restart sees). The process group is always ended.
    """
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    log = ServerLog(ARTIFACTS_DIR / f"{log_name}.log")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # deploy/app_server.py: the one way the app's server is started (offline environment,
    # fixed flags, its own process group, output to the log)
    process = start_app(port, log=log.path, app_dir=REPO_ROOT)
    try:
        try:
            wait_healthy(url + HEALTH_PATH, timeout=SERVER_START_S, proc=process)
        except (RuntimeError, TimeoutError) as error:
            pytest.fail(f"streamlit did not start: {error}\n{log.text()}")
        yield url, log
    finally:
        stop(process)


@contextmanager
def own_log_name(name: str) -> Iterator[str]:
    """`name`, or `name-<pid>` while another test session (another pytest process) holds
    `name`: two servers writing one log would truncate each other's output, and one
    session's traceback would fail the other's tests."""
    import fcntl

    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS_DIR / f".{name}.lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield f"{name}-{os.getpid()}"
            return
        yield name  # the lock ends with the file's closing
