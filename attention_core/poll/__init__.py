"""A live class poll: a teacher opens a class, students join by a short code and answer
"which key does this query attend to most?" on their phones; the counts are shared by
every replica of the app through one store (SQLite by default, Redis when configured).
See `store.py`."""

from attention_core.poll.store import (
    ClassInfo,
    PollError,
    PollStore,
    Question,
    RedisStore,
    SQLiteStore,
    clean_name,
    normalise_code,
    question_from_round,
    store_from_env,
)

__all__ = [
    "ClassInfo",
    "PollError",
    "PollStore",
    "Question",
    "RedisStore",
    "SQLiteStore",
    "clean_name",
    "normalise_code",
    "question_from_round",
    "store_from_env",
]
