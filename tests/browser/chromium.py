"""The browser the tests drive: Debian's Chromium, its flags, and a test's browser contexts.

Also the one decision whether the browser tests can run at all: skipped locally when
Chromium or playwright is missing, failed under CI (`require_browser_tools`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bench.chromium import CHROMIUM as CHROMIUM_PATH
from bench.chromium import FLAGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext

CHROMIUM = Path(CHROMIUM_PATH)
CHROMIUM_ARGS = FLAGS  # Debian's Chromium, offline, the same flags as the benchmarks
VIEWPORT = {"width": 1400, "height": 1000}  # wide enough for four heatmaps in a row
# The first run of a cold server imports torch and loads jieba's dictionary (~20 s here).
APP_TIMEOUT_MS = 90_000


# --- availability: skip locally, fail under CI ------------------------------------------------
def _missing_browser_tools() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


def require_browser_tools() -> None:
    """Skip the test when Chromium or playwright is missing; under CI, fail instead.

    The one place that decides: a CI run must never pass by skipping its browser tests.
    """
    problem = _missing_browser_tools()
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run: {problem} (CI is set, so this is a failure)")
    pytest.skip(f"browser tests skipped: {problem}")


# --- browser contexts -------------------------------------------------------------------------
def configure(context: BrowserContext) -> BrowserContext:
    """`context` waiting as long as a cold app may take (APP_TIMEOUT_MS) by default."""
    context.set_default_timeout(APP_TIMEOUT_MS)
    return context


def new_context(browser: Browser) -> BrowserContext:
    """A fresh context: its own empty profile (cookies, storage), 1400×1000, en-US."""
    return configure(browser.new_context(viewport=VIEWPORT, locale="en-US"))
