"""The class poll's store in Redis, for replicas on several machines (`redis://host:6379/0`).

Chosen by `store_from_env` when ATTENTION_POLL_REDIS_URL is set. One answer per student per
question is HSETNX inside one Lua script that also checks the question and counts, so two
replicas racing cannot count anyone twice. The `redis` package is imported only when a
store is made.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import asdict, replace

from attention_core.poll.guard import HOLD_S, Clock
from attention_core.poll.store import ClassInfo, PollError, PollStore, Question, normalise_code

__all__ = ["RedisStore"]

TTL_S = 12 * 3600  # a class's Redis keys expire this long after its last change

# Keys of a class hang off its id: poll:c:<id> (hash: code, teacher_key, open, number,
# question, revealed), poll:c:<id>:students (hash id → name), poll:c:<id>:joined (zset by
# time), poll:c:<id>:a:<n> (hash student → choice), poll:c:<id>:n:<n> (hash choice → count).
# poll:code:<code> → the id of the open class with that code (SET NX: one per code).
_ANSWER_LUA = """
local meta = KEYS[1]
if redis.call('HGET', meta, 'open') ~= '1' then return 0 end
if redis.call('HGET', meta, 'number') ~= ARGV[1] then return 0 end
if redis.call('HGET', meta, 'revealed') == '1' then return 0 end
local options = tonumber(redis.call('HGET', meta, 'options') or '0')
local choice = tonumber(ARGV[3])
if choice == nil or choice < 0 or choice >= options then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 1
"""


# KEYS[1] the seat's hold {holder, seen ms}; ARGV: holder, HOLD_S in ms, now in ms ("":
# the server's TIME). Held while the holder was seen within HOLD_S; the key expires then too.
_HOLD_LUA = """
local hold = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local held = redis.call('HMGET', KEYS[1], 'holder', 'seen')
if held[1] and held[1] ~= ARGV[1] and tonumber(held[2]) > now - hold then return 0 end
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'seen', string.format('%d', now))
redis.call('PEXPIRE', KEYS[1], hold)
return 1
"""


class RedisStore(PollStore):
    """The store in Redis, for replicas on several machines (`redis://host:6379/0`)."""

    def __init__(self, url: str, *, clock: Clock | None = None) -> None:
        """`clock`: what a seat's hold is timed by (guard.py); None: the Redis server's."""
        import redis  # only when configured

        self.clock = clock
        self.redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)
        self.redis.ping()
        self._answer = self.redis.register_script(_ANSWER_LUA)
        self._hold = self.redis.register_script(_HOLD_LUA)

    @staticmethod
    def _meta(class_id: str) -> str:
        return f"poll:c:{class_id}"

    def _class_id(self, code: str) -> str | None:
        return self.redis.get(f"poll:code:{code}")

    def _teacher(self, code: str, key: str) -> str:
        class_id = self._class_id(code)
        stored = self.redis.hget(self._meta(class_id), "teacher_key") if class_id else None
        if stored is None or not secrets.compare_digest(stored, str(key)):
            raise PollError(f"no open class {code!r} with this teacher key")
        return class_id  # type: ignore[return-value]

    def _touch(self, class_id: str) -> None:
        for suffix in ("", ":students", ":joined"):
            self.redis.expire(self._meta(class_id) + suffix, TTL_S)

    def open_class(self) -> tuple[str, str]:
        key, class_id = secrets.token_urlsafe(16), secrets.token_hex(16)
        code = self._claim_code(
            lambda free: bool(self.redis.set(f"poll:code:{free}", class_id, nx=True, ex=TTL_S))
        )
        self.redis.hset(
            self._meta(class_id),
            mapping={"code": code, "teacher_key": key, "open": "1", "number": "0",
                     "question": "", "revealed": "0", "options": "0"},
        )  # fmt: skip
        self._touch(class_id)
        self.redis.set(f"poll:last:{code}", class_id, ex=TTL_S)
        return code, key

    def info(self, code: str, *, with_names: bool = False) -> ClassInfo | None:
        code = normalise_code(code) or ""
        class_id = self._class_id(code) or self.redis.get(f"poll:last:{code}")
        if not class_id:
            return None
        meta = self.redis.hgetall(self._meta(class_id))
        if not meta:
            return None
        names: tuple[str, ...] = ()
        if with_names:
            students = self.redis.hgetall(self._meta(class_id) + ":students")
            order = self.redis.zrange(self._meta(class_id) + ":joined", 0, -1)
            names = tuple(students.get(s, "") for s in order)
        return ClassInfo(
            code=code,
            class_id=class_id,
            open=meta.get("open") == "1",
            question=Question.from_json(meta["question"]) if meta.get("question") else None,
            revealed=meta.get("revealed") == "1",
            students=int(self.redis.hlen(self._meta(class_id) + ":students")),
            names=names,
        )

    def hold(self, class_id: str, student: str, holder: str) -> bool:
        key = f"{self._meta(str(class_id))}:holder:{student}"  # expires HOLD_S after a renewal
        now = "" if self.clock is None else str(int(self.clock() * 1000))
        return bool(self._hold(keys=[key], args=[str(holder), str(int(HOLD_S * 1000)), now]))

    def _stored_secret(self) -> str:
        self.redis.set("poll:secret", secrets.token_hex(32), nx=True)  # the first one wins
        return str(self.redis.get("poll:secret"))

    def _allow(self, key: str, limit: int) -> bool:
        counter = f"poll:rate:{key}:{int(time.time())}"
        pipe = self.redis.pipeline()
        pipe.incr(counter)
        pipe.expire(counter, 2)
        n, _ = pipe.execute()
        return int(n) <= limit

    def join(self, code: str, student: str = "", name: str = "") -> ClassInfo | None:
        code = normalise_code(code) or ""
        if student:
            student = self._check_student(student)
        class_id = self._class_id(code)
        if not class_id or self.redis.hget(self._meta(class_id), "open") != "1":
            return None
        student = self._seat(class_id, student)
        seats = self._meta(class_id) + ":students"
        self._check_join(class_id, student)
        # not atomic with the write below: two replicas may seat a student or two past
        # MAX_CLASS_SIZE at once (SQLite checks and writes in one transaction)
        self._check_size(bool(self.redis.hexists(seats, student)), int(self.redis.hlen(seats)))
        pipe = self.redis.pipeline()
        name = self._check_name(name)
        if name:
            pipe.hset(self._meta(class_id) + ":students", student, name)
        else:  # joining again after a reconnect: keep the name given before
            pipe.hsetnx(self._meta(class_id) + ":students", student, "")
        pipe.zadd(self._meta(class_id) + ":joined", {student: time.time()}, nx=True)
        pipe.execute()
        self._touch(class_id)
        info = self.info(code)
        return None if info is None else replace(info, student=student)

    def push(self, code: str, teacher_key: str, question: Question) -> Question:
        class_id = self._teacher(code, teacher_key)
        number = int(self.redis.hincrby(self._meta(class_id), "number", 1))
        numbered = Question(**{**asdict(question), "number": number})
        self.redis.hset(
            self._meta(class_id),
            mapping={"question": numbered.to_json(), "revealed": "0",
                     "options": str(len(numbered.options))},
        )  # fmt: skip
        self._touch(class_id)
        return Question.from_json(numbered.to_json())

    def answer(self, class_id: str, number: int, student: str, choice: int) -> bool:
        student = self._check_answer(class_id, student)
        meta = self._meta(str(class_id))
        keys = [meta, f"{meta}:a:{int(number)}", f"{meta}:n:{int(number)}"]
        args = [str(int(number)), student, str(int(choice)), str(TTL_S)]
        return bool(self._answer(keys=keys, args=args))

    def counts(self, class_id: str, number: int) -> dict[int, int]:
        raw = self.redis.hgetall(f"{self._meta(str(class_id))}:n:{int(number)}")
        return {int(c): int(k) for c, k in raw.items() if int(k) > 0}

    def my_answer(self, class_id: str, number: int, student: str) -> int | None:
        raw = self.redis.hget(f"{self._meta(str(class_id))}:a:{int(number)}", str(student))
        return None if raw is None else int(raw)

    def is_teacher(self, code: str, teacher_key: str) -> bool:
        try:
            self._teacher(normalise_code(code) or "", teacher_key)
        except PollError:
            return False
        return True

    def reveal(self, code: str, teacher_key: str) -> None:
        self.redis.hset(self._meta(self._teacher(code, teacher_key)), "revealed", "1")

    def reset(self, code: str, teacher_key: str) -> None:
        class_id = self._teacher(code, teacher_key)
        meta = self._meta(class_id)
        number = int(self.redis.hget(meta, "number") or 0)
        # the question first: from here on no answer to it is accepted
        self.redis.hset(meta, mapping={"question": "", "revealed": "0", "options": "0"})
        stale = [f"{meta}:{kind}:{n}" for n in range(1, number + 1) for kind in ("a", "n")]
        for start in range(0, len(stale), 500):
            self.redis.delete(*stale[start : start + 500])

    def close(self, code: str, teacher_key: str) -> None:
        class_id = self._teacher(code, teacher_key)
        self.redis.hset(self._meta(class_id), "open", "0")
        # the code is free again only if it still names this class
        self.redis.eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
            "end return 0",
            1,
            f"poll:code:{code}",
            class_id,
        )
