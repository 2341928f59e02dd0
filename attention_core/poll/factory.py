"""Which poll store a server uses, from its environment: Redis when a URL is configured
(replicas on several machines), SQLite otherwise (one file shared by local replicas).

A module of its own because it knows every store (`sqlite.py`, `redis_store.py`), and each
of them builds on the interface in `store.py`.
"""

from __future__ import annotations

import os

from attention_core.poll.redis_store import RedisStore
from attention_core.poll.sqlite import DEFAULT_DB, SQLiteStore
from attention_core.poll.store import PollStore

__all__ = ["ENV_REDIS", "ENV_SQLITE", "store_from_env"]

ENV_REDIS = "ATTENTION_POLL_REDIS_URL"
ENV_SQLITE = "ATTENTION_POLL_DB"


def store_from_env(env: dict[str, str] | None = None) -> PollStore:
    """RedisStore if ATTENTION_POLL_REDIS_URL is set, else SQLiteStore at
    ATTENTION_POLL_DB (default: attention-studio-poll.sqlite3 in the temp folder)."""
    env = dict(os.environ if env is None else env)
    url = env.get(ENV_REDIS, "").strip()
    if url:
        return RedisStore(url)
    return SQLiteStore(env.get(ENV_SQLITE, "").strip() or DEFAULT_DB)
