"""Fixtures the page tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The class poll's store: a fresh SQLite file of this test's own (never Redis)."""
    path = tmp_path / "poll.sqlite3"
    monkeypatch.setenv("ATTENTION_POLL_DB", str(path))
    monkeypatch.delenv("ATTENTION_POLL_REDIS_URL", raising=False)
    return path
