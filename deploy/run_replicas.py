"""Run N Streamlit replicas of the app and nginx in front of them, on one machine.

    python deploy/run_replicas.py --replicas 3 --listen 0.0.0.0:8080

starts `streamlit run app.py` on 127.0.0.1:8501..8503, waits until each answers
/_stcore/health, warms each one up (`warm_up`: the app script runs once, so torch, jieba
and the default view are loaded before the first student arrives), writes an nginx
configuration (deploy/make_nginx_conf.py) into a scratch directory and runs nginx in the
foreground. Ctrl-C stops everything. The replicas share
one cookie secret so that a browser moved to another replica (after one died) keeps
valid cookies. The functions are also used by tests/browser/test_replicas.py.
"""

from __future__ import annotations

import argparse
import getpass
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_nginx_conf import make_temp_dirs, render

__all__ = ["APP_DIR", "start_nginx", "start_replica", "stop", "wait_healthy", "warm_up"]

APP_DIR = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def start_replica(
    port: int,
    *,
    log: Path,
    address: str = "127.0.0.1",
    cookie_secret: str | None = None,
    app_dir: Path = APP_DIR,
) -> subprocess.Popen:
    """`streamlit run app.py` on `address:port`, output to `log`, in its own process group."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",  # the log is complete when someone reads it
    }
    if cookie_secret:
        env["STREAMLIT_SERVER_COOKIE_SECRET"] = cookie_secret
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.address", address,
        "--server.port", str(port),
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
        "--server.scriptHealthCheckEnabled", "true",  # for warm_up
    ]  # fmt: skip
    out = open(log, "wb")
    return subprocess.Popen(
        cmd, cwd=app_dir, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )


def wait_healthy(url: str, *, timeout: float = 90.0, proc: subprocess.Popen | None = None) -> None:
    """Wait until `url` answers 200 (raise TimeoutError, or RuntimeError if `proc` died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process {proc.pid} exited with {proc.returncode} before {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")


def warm_up(base_url: str, *, timeout: float = 120.0) -> str:
    """Run the app script inside the replica at `base_url` (Streamlit's script health check,
    enabled by `start_replica`) and return its answer, "ok" when it ran cleanly.

    The first session of a fresh server otherwise pays for importing torch (~1.7 s here)
    and loading jieba's dictionary (~1 s) before its first heatmap. Twice: on a fresh
    server the first run restarts itself (pages.common.entry_guard), and the health check
    answers, and ends its session, as soon as that first run is over, cutting the rerun
    that does the imports short; the second check runs the whole script."""
    url = f"{base_url.rstrip('/')}/_stcore/script-health-check"
    answers = []
    for _ in range(2):
        with urllib.request.urlopen(url, timeout=timeout) as response:
            answers.append(response.read().decode("utf-8", "replace").strip())
    return "ok" if answers == ["ok", "ok"] else " / ".join(answers)


def start_nginx(
    ports: Sequence[int], *, listen: str, prefix: Path, debug_upstream_header: bool = False
) -> subprocess.Popen:
    """nginx in the foreground with its configuration, pid, logs and temp files in `prefix`."""
    prefix = Path(prefix).resolve()
    make_temp_dirs(prefix)
    conf = prefix / "nginx.conf"
    # Workers run as the current user (nginx ignores `user` when not started as root).
    user = getpass.getuser() if os.geteuid() == 0 else None
    conf.write_text(
        render(
            ports,
            listen=listen,
            prefix=prefix,
            user=user,
            debug_upstream_header=debug_upstream_header,
        ),
        encoding="utf-8",
    )
    check = subprocess.run(
        [NGINX, "-t", "-q", "-c", str(conf), "-p", str(prefix)], capture_output=True, text=True
    )
    if check.returncode:
        raise RuntimeError(f"nginx rejected {conf}:\n{check.stderr}")
    out = open(prefix / "nginx.out", "wb")
    return subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(prefix)],
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(proc: subprocess.Popen, *, timeout: float = 10.0) -> None:
    """Stop `proc` and its process group (SIGTERM, then SIGKILL); no-op if already gone."""
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
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2, help="number of Streamlit servers")
    parser.add_argument("--base-port", type=int, default=8501, help="first replica port")
    parser.add_argument("--listen", default="0.0.0.0:8080", help="nginx listen address")
    args = parser.parse_args(argv)
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    ports = [args.base_port + i for i in range(args.replicas)]
    scratch = Path(tempfile.mkdtemp(prefix="attention-studio-"))
    secret = secrets.token_hex(32)
    procs: list[subprocess.Popen] = []
    try:
        for port in ports:
            procs.append(
                start_replica(port, log=scratch / f"replica-{port}.log", cookie_secret=secret)
            )
        for port, proc in zip(ports, procs, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc=proc)
            print(f"replica {port} warm-up: {warm_up(f'http://127.0.0.1:{port}')}")
        nginx = start_nginx(ports, listen=args.listen, prefix=scratch)
        procs.append(nginx)
        print(f"{len(ports)} replicas on {ports}; nginx on {args.listen}; logs in {scratch}")
        nginx.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for proc in reversed(procs):
            stop(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
