"""A live class poll: a teacher opens a class, students join by a short code and answer
"which key does this query attend to most?" on their phones; the counts are shared by
every replica of the app through one store (SQLite by default, Redis when configured).

The interface, its plain data and its checks are in `store.py` (their names are its
`__all__`); one module per store: `sqlite.py` (SQLiteStore), `redis_store.py` (RedisStore);
`factory.py` picks one from the environment (`store_from_env`); `where.py` builds the
"where does this head look?" question from a reader's attention row (`question_where`).
"""

from __future__ import annotations

from attention_core.poll.factory import ENV_REDIS, ENV_SQLITE, store_from_env
from attention_core.poll.redis_store import RedisStore
from attention_core.poll.sqlite import SQLiteStore
from attention_core.poll.store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_NAME,
    QUESTION_KINDS,
    ClassInfo,
    PollError,
    PollRefused,
    PollStore,
    Question,
    clean_name,
    name_was_cut,
    normalise_code,
    question_from_round,
    question_next,
)
from attention_core.poll.where import question_where

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "ENV_REDIS",
    "ENV_SQLITE",
    "MAX_NAME",
    "QUESTION_KINDS",
    "ClassInfo",
    "PollError",
    "PollRefused",
    "PollStore",
    "Question",
    "RedisStore",
    "SQLiteStore",
    "clean_name",
    "name_was_cut",
    "normalise_code",
    "question_from_round",
    "question_next",
    "question_where",
    "store_from_env",
]
