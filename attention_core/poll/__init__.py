"""A live class poll: a teacher opens a class, students join by a short code and answer
"which key does this query attend to most?" on their phones; the counts are shared by
every replica of the app through one store (SQLite by default, Redis when configured).

The interface, its plain data and its checks are in `store.py` (their names are its
`__all__`); one module per store: `sqlite.py` (SQLiteStore), `redis_store.py` (RedisStore).
"""

from attention_core.poll import store
from attention_core.poll.redis_store import RedisStore
from attention_core.poll.sqlite import SQLiteStore
from attention_core.poll.store import *  # noqa: F403  (the interface: store.__all__)

__all__ = [*store.__all__, "RedisStore", "SQLiteStore"]
