"""Run N Streamlit replicas of the app and nginx in front of them, on one machine.

    python deploy/run_replicas.py --replicas 3 --listen 0.0.0.0:8080

starts `streamlit run app.py` on 127.0.0.1:8501..8503, waits until each answers
/_stcore/health, warms each one up (`warm_up`: the app script runs once, so torch, jieba
and the default view are loaded before the first student arrives), writes an nginx
configuration (deploy/make_nginx_conf.py) into a scratch directory and runs nginx in the
foreground. Ctrl-C stops everything. The replicas share one cookie secret so that a
browser moved to another replica (after one died) keeps valid cookies.

One replica is started, checked, warmed up and stopped by deploy/app_server.py; this
module adds nginx in front. tests/browser/test_replicas.py drives a cluster through it.
"""

from __future__ import annotations

import argparse
import getpass
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

if not __package__:  # run as a script, or loaded from its path (tests/browser/test_replicas.py)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from deploy.app_server import APP_DIR, HEALTH_PATH, stop, wait_healthy, warm_up
from deploy.app_server import start_app as start_replica
from deploy.make_nginx_conf import make_temp_dirs, render

# start_replica, stop, wait_healthy and warm_up live in deploy/app_server.py; they are
# re-exported because the tests drive a cluster through this module.
__all__ = ["APP_DIR", "start_nginx", "start_replica", "stop", "wait_healthy", "warm_up"]

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


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
    with open(prefix / "nginx.out", "wb") as out:  # nginx keeps its own descriptor
        return subprocess.Popen(
            [NGINX, "-c", str(conf), "-p", str(prefix)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so that `stop` ends nginx and its workers
        )


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
            log = scratch / f"replica-{port}.log"
            wait_healthy(f"http://127.0.0.1:{port}{HEALTH_PATH}", proc=proc, log=log)
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
