"""The real corpus, built once per test run from the installed packages and shared by the
tests that read it (the corpus builder's own checks and the reader's figures measured again).

One build takes about 25 s on the 2-core machine; the workers of one run share it through a
folder of the run and a file lock: the first worker to ask builds, a second one waits for
that build and reads it. The folder is in the run's temporary folder (a worker's `basetemp`
is one of its folders), which pytest prunes. Without the packages: skipped locally, a
failure under CI (`availability.unavailable`).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from .availability import unavailable

__all__ = ["real_corpus"]


def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # basetemp is <the run's folder>/popen-gwN
        base = base.parent
    return base / "real-corpus"


def real_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(folder, manifest) of this run's build of the real corpus (see the module's doc)."""
    from attention_core.train.corpus import CorpusError, build

    base = _shared_folder(tmp_path_factory)
    base.mkdir(parents=True, exist_ok=True)
    folder, done = base / "corpus", base / "built"
    with (base / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                try:
                    build(folder)
                except CorpusError as error:
                    unavailable(str(error))
                done.write_text("ok\n", encoding="utf-8")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return folder, manifest
