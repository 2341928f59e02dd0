"""The data rules of the toy tasks, written once in NumPy and used for training, evaluation,
the pictures and the tests: targets, answers, the held-out split, sampling, the example
sequence and the attention mask (the rules themselves: `attention_core.train.tasks`).

Every row has a defined target (`target_positions`), so the focus metric averages over all
rows. Held-out sequences are a fixed 1-in-5 slice of all possible sequences (by a hash of
the tokens) that training never draws, so held-out accuracy is on truly unseen inputs.

Shape legend: B batch, n seq_len.
"""

from __future__ import annotations

import numpy as np

from attention_core.train.tasks.config import (
    EXAMPLE_STREAM,
    HELD_OUT_EVERY,
    MIN_PERIOD,
    TASKS,
    TrainConfig,
)

__all__ = [
    "attention_mask",
    "example_sequence",
    "is_held_out",
    "sample_sequences",
    "target_positions",
    "task_outputs",
]


def _as_batch(task: str, seq: np.ndarray) -> np.ndarray:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(TASKS)}")
    arr = np.asarray(seq)
    if arr.ndim not in (1, 2) or arr.shape[-1] < 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"seq must be integer tokens of shape (n,) or (B, n), got {arr.shape}")
    return arr.reshape(-1, arr.shape[-1]).astype(np.int64)  # (B, n)


def target_positions(task: str, seq: np.ndarray) -> np.ndarray:
    """The key position that carries the answer, for every query position.

    seq: (n,) or (B, n) integer tokens; returns int64 of the same shape. Every position
    has a target (for `previous`, position 0 is its own target), except in `induction`:
    there a position whose token has not occurred before has none (-1).
    Raises ValueError if `seq` breaks the task's rule (`match`: every token exactly
    twice; `sort`: distinct tokens).
    """
    x = _as_batch(task, seq)  # (B, n)
    B, n = x.shape
    idx = np.arange(n)
    if task == "reverse":
        tp = np.broadcast_to(idx[::-1], (B, n))
    elif task == "previous":
        tp = np.broadcast_to(np.maximum(idx - 1, 0), (B, n))
    elif task == "match":
        same = (x[:, :, None] == x[:, None, :]) & ~np.eye(n, dtype=bool)  # (B, n query, n key)
        if not (same.sum(-1) == 1).all():
            raise ValueError("task 'match' needs every token to appear exactly twice")
        tp = same.argmax(-1)
    elif task == "induction":
        # key j+1 after the latest earlier occurrence j of the query's token
        earlier = (x[:, :, None] == x[:, None, :]) & (idx[None, :] < idx[:, None])  # (B, n, n)
        latest = n - 1 - earlier[:, :, ::-1].argmax(-1)  # (B, n) last True along keys
        tp = np.where(earlier.any(-1), latest + 1, -1)
    else:  # sort
        if (np.sort(x, axis=1)[:, 1:] == np.sort(x, axis=1)[:, :-1]).any():
            raise ValueError("task 'sort' needs distinct tokens")
        larger = x[:, None, :] > x[:, :, None]  # (B, n query, n key): key > query
        big = np.iinfo(np.int64).max
        nearest = np.where(larger, x[:, None, :], big).argmin(-1)  # (B, n)
        smallest = np.broadcast_to(x.argmin(-1)[:, None], (B, n))  # wrap-round target
        tp = np.where(larger.any(-1), nearest, smallest)
    return np.ascontiguousarray(tp, dtype=np.int64).reshape(np.shape(seq))


def task_outputs(task: str, seq: np.ndarray) -> np.ndarray:
    """The correct answer at every position: a token, or a position for `match`; -1 where
    there is none (`induction`, a token seen for the first time).

    seq: (n,) or (B, n); returns int64 of the same shape.
    """
    tp = target_positions(task, seq)
    if TASKS[task].output == "position":
        return tp
    x = _as_batch(task, seq)
    tp2 = tp.reshape(x.shape)  # (B, n)
    answers = np.take_along_axis(x, np.maximum(tp2, 0), axis=1)  # (B, n)
    return np.where(tp2 >= 0, answers, -1).reshape(np.shape(seq))


def is_held_out(seq: np.ndarray) -> np.ndarray:
    """True for the fixed 1-in-HELD_OUT_EVERY slice of sequences reserved for evaluation.

    seq: (n,) or (B, n) tokens; returns bool () or (B,). A hash of the tokens, so the split
    is the same for every seed and training never sees an evaluation sequence.
    """
    arr = np.asarray(seq)
    # always 2-D: numpy warns when a uint64 *scalar* wraps, and here wrapping is intended
    x = arr.reshape(-1, arr.shape[-1]).astype(np.uint64)  # (B, n)
    h = np.zeros(len(x), dtype=np.uint64)  # (B,)
    for j in range(x.shape[1]):
        # FNV-1a style mixing; uint64 arithmetic wraps modulo 2**64 by design
        h = (h ^ x[:, j]) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
    return ((h % np.uint64(HELD_OUT_EVERY)) == 0).reshape(arr.shape[:-1])


def _draw(config: TrainConfig, num: int, rng: np.random.Generator) -> np.ndarray:
    """(num, n) sequences that obey the task's rule, from either split."""
    n, v = config.seq_len, config.vocab_size
    if config.task in ("reverse", "previous"):
        return rng.integers(0, v, size=(num, n), dtype=np.int64)
    if config.task == "sort":
        return rng.permuted(np.tile(np.arange(v), (num, 1)), axis=1)[:, :n]  # (num, n)
    if config.task == "induction":
        period = rng.integers(MIN_PERIOD, n // 2 + 1, size=num)  # (num,)
        tokens = rng.permuted(np.tile(np.arange(v), (num, 1)), axis=1)[:, : n // 2]  # (num, n/2)
        where = np.arange(n)[None, :] % period[:, None]  # (num, n) index into the segment
        return np.take_along_axis(tokens, where, axis=1)  # (num, n)
    # match: n/2 distinct tokens, each written twice, shuffled
    tokens = rng.permuted(np.tile(np.arange(v), (num, 1)), axis=1)[:, : n // 2]  # (num, n/2)
    return rng.permuted(np.concatenate([tokens, tokens], axis=1), axis=1)  # (num, n)


def sample_sequences(
    config: TrainConfig, num: int, *, rng: np.random.Generator, held_out: bool = False
) -> np.ndarray:
    """(num, n) int64 random sequences of the task, from the training or held-out split."""
    if num < 0:
        raise ValueError(f"num must be >= 0, got {num}")
    chunks, have = [], 0
    while have < num:
        # each draw keeps ~1/5 (held-out) or ~4/5 (training); over-draw so one pass is usual
        want = (num - have) * (HELD_OUT_EVERY + 1 if held_out else 2)
        seqs = _draw(config, want, rng)
        seqs = seqs[is_held_out(seqs) == held_out]
        chunks.append(seqs)
        have += len(seqs)
    if not chunks:
        return np.zeros((0, config.seq_len), dtype=np.int64)
    return np.concatenate(chunks)[:num]


def example_sequence(config: TrainConfig) -> np.ndarray:
    """(n,) the fixed sequence every snapshot shows: a held-out one (never trained on).

    Depends on the task, seq_len and vocab_size only, so changing the seed or the learning
    rate keeps the same picture to compare.
    """
    config.validate()
    task_index = list(TASKS).index(config.task)
    rng = np.random.default_rng([EXAMPLE_STREAM, task_index, config.seq_len, config.vocab_size])
    return sample_sequences(config, 1, rng=rng, held_out=True)[0]


def attention_mask(config: TrainConfig) -> np.ndarray:
    """(n, n) bool, True where query i may attend to key j: all True, except the diagonal
    for the tasks whose answer is never the query itself (`TaskInfo.mask_self`), and
    j <= i (causal) for the 2-layer `induction` model."""
    config.validate()
    n = config.seq_len
    if TASKS[config.task].layers == 2:
        return np.tril(np.ones((n, n), dtype=bool))
    if TASKS[config.task].mask_self:
        return ~np.eye(n, dtype=bool)
    return np.ones((n, n), dtype=bool)
