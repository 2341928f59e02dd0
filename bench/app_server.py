"""The app served for the browser benchmarks, with the times a cold start is measured by.

The server is started, checked and stopped by deploy/app_server.py, as every server of
the app is (same command, same offline environment); this module adds when it was
launched and when it first answered, and which checkout it serves.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.measure import REPO
from deploy.app_server import serving

__all__ = ["APP_REPO", "Server", "streamlit_server", "wait_warm"]

# the checkout whose app.py the browser benchmarks serve; `python -m bench --app-repo DIR`
# points it at another one (e.g. a git worktree of an older commit) for before/after numbers
APP_REPO = REPO


@dataclass(frozen=True)
class Server:
    """A running app: its base URL, when it was launched and when it first answered."""

    url: str
    process: subprocess.Popen[bytes]
    launched: float  # time.perf_counter() just before the process was started
    healthy: float  # time.perf_counter() when /_stcore/health first answered "ok"
    log: Path | None = None  # the server's output

    def wait_warm(self, timeout_s: float = 60.0) -> None:
        """Until the app says its warm-up has finished: see `wait_warm`."""
        if self.log is None:
            raise ValueError("this server was started without a log")
        wait_warm(self.log, timeout_s)


def wait_warm(log: Path, timeout_s: float = 60.0) -> None:
    """Until a server's `log` says its warm-up has finished (ui/server.py's WARM_UP_LOG): a
    warm server, as a class finds it after the teacher opened the page."""
    from ui.server import WARM_UP_LOG

    deadline = time.perf_counter() + timeout_s
    while not log.exists() or WARM_UP_LOG not in log.read_text(errors="replace"):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"no {WARM_UP_LOG!r} in {log}")
        time.sleep(0.1)


@contextmanager
def streamlit_server(
    *,
    repo: Path | None = None,
    timeout_s: float = 60.0,
    wait_healthy: bool = True,
) -> Iterator[Server]:
    """Run `streamlit run app.py` in `repo` (default APP_REPO) for the duration of the block.

    Another checkout as `repo` (a git worktree of an older commit) gives A/B numbers.

    With `wait_healthy=False` the block starts right after launch (to time a cold start
    from the browser's side); `healthy` is then the launch time.
    """
    with tempfile.TemporaryDirectory(prefix="bench-server-") as scratch:
        launched = time.perf_counter()
        with serving(
            log=Path(scratch) / "server.log",
            app_dir=repo or APP_REPO,
            timeout=timeout_s,
            wait=wait_healthy,
        ) as app:
            healthy = time.perf_counter() if wait_healthy else launched
            yield Server(
                url=app.url,
                process=app.process,
                launched=launched,
                healthy=healthy,
                log=Path(scratch) / "server.log",
            )
