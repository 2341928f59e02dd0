"""The toy tasks and their rules: what a training run of `attention_core.train` learns.

Here are the task table (`TASKS`), the settings of a run (`TrainConfig`, validated with
errors that name the valid values, and `default_config` with each task's measured
defaults), and the data rules, written once in NumPy and used for training, evaluation,
the pictures and the tests. The titles and explanations people read are in the string
catalog (assets/i18n/train.toml: train_task_<name>, train_task_<name>_explain); this module
knows only the rules.

The tasks:

- `reverse`  answer at i = token at n-1-i                        (anti-diagonal)
- `previous` answer at i = token at i-1; position 0 answers its own token (sub-diagonal)
- `match`    every token appears exactly twice; answer at i = the position of the other
             copy of its token                                   (content matching)
- `sort`     tokens are distinct; answer at i = the next larger token in the sequence,
             the largest wrapping round to the smallest           (content comparison)
- `induction` a segment of c distinct random tokens repeated (c varies per sequence);
             answer at i = the token that followed the previous occurrence of token i,
             i.e. the next token (Olsson et al. 2022, "In-context learning and induction
             heads"). Positions whose token has not occurred before have no answer (-1)
             and are left out of the loss and the accuracy. Solved by a 2-layer
             attention-only model (`attention_core.train.induction`), causal.

`induction` varies the period c (MIN_PERIOD … n/2) so that no fixed offset answers it: a
head that reads "c-1 back" would need to know c. Only content does: a previous-token head
in layer 0 writes "the token before me" into every position, and a layer-1 head matches
its own token against that (an induction head) and copies the token it finds. With one
copy of a segment, a random prefix and a varying segment length instead, 2 x 2 heads sat
on a plateau near 16 % for 8000 steps ("a token of the segment not repeated yet");
repeated periodic segments give every position after the first period an answer, and the
circuit forms within ~150 steps (bench/section_train.py).

`sort` is the pointer form of sorting: following the answers from the smallest token
spells the sorted sequence. The literal form "answer at i = the i-th smallest token" has
no sharp one-layer solution: a query knows only its own token and position, and which key
holds rank i depends on all the others. Measured, one head reaches ≈ 70 % accuracy, and
two heads ≈ 99 % but through blurred mixtures (under 0.55 of the mass on the answer):
nothing to watch, so it is not offered.

In `match` and `sort` the answer is never the query's own position, so those tasks mask
the diagonal (`attention_mask`; the attention module's mask, True = may attend): a token
cannot be its own twin or its own successor. Unmasked, the query's own key is the best
token match there is, and in `match` about 1 seed in 18 (even with 4 heads) settled on an
accurate code spread over all heads with < 0.1 of the mass on the twin; masked, 36 seeds
of 36 with 2 heads put >= 0.98 on it.

Every row has a defined target (`target_positions`), so the focus metric averages over all
rows. Held-out sequences are a fixed 1-in-5 slice of all possible sequences (by a hash of
the tokens) that training never draws, so held-out accuracy is on truly unseen inputs.

Shape legend: B batch, n seq_len.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.limits import MAX_TRAIN_STEPS, valid_num_heads

__all__ = [
    "MAX_INDUCTION_SEQ_LEN",
    "MAX_TRAIN_BATCH",
    "MAX_TRAIN_EMBED_DIM",
    "MAX_TRAIN_SEQ_LEN",
    "MAX_TRAIN_VOCAB",
    "MIN_PERIOD",
    "TASKS",
    "SettingError",
    "TaskInfo",
    "TrainConfig",
    "attention_mask",
    "default_config",
    "example_sequence",
    "is_held_out",
    "max_seq_len",
    "sample_sequences",
    "target_positions",
    "task_outputs",
]

MAX_TRAIN_SEQ_LEN = 16
MAX_INDUCTION_SEQ_LEN = 32  # the induction task needs room for its segment to repeat
MIN_PERIOD = 4  # shortest repeated segment of the induction task
MAX_TRAIN_VOCAB = 64
MAX_TRAIN_EMBED_DIM = 128
MAX_TRAIN_BATCH = 1024
HELD_OUT_EVERY = 5  # 1 in 5 sequences is reserved for evaluation

# Independent random streams, all derived from config.seed (or the evaluation seed), kept
# here in one place so no two can collide: training batches (loop), the example sequence
# (here), the model's initial weights (model).
_TRAIN_STREAM = 1
_EXAMPLE_STREAM = 2
_INIT_STREAM = 3


@dataclass(frozen=True)
class TaskInfo:
    """A toy task. Its title and explanation for people are in the app's catalog
    (assets/i18n/train.toml: train_task_<name>, train_task_<name>_explain)."""

    name: str
    output: str  # "token": the read-out predicts a token; "position": a position index
    pattern: str  # one-line English name of the attention pattern a solution shows
    # True when the answer is never the query's own position: the diagonal is then masked
    mask_self: bool = False
    # 2: the 2-layer attention-only model of attention_core.train.induction (causal), with
    # num_heads heads in layer 0 and one in layer 1
    layers: int = 1


TASKS: dict[str, TaskInfo] = {
    "reverse": TaskInfo(
        name="reverse",
        output="token",
        pattern="anti-diagonal",
    ),
    "previous": TaskInfo(
        name="previous",
        output="token",
        pattern="sub-diagonal",
    ),
    "match": TaskInfo(
        name="match",
        output="position",
        pattern="content match (a permutation that pairs equal tokens)",
        mask_self=True,
    ),
    "sort": TaskInfo(
        name="sort",
        output="token",
        pattern="next larger key (the sorted order as a chain of pointers)",
        mask_self=True,
    ),
    "induction": TaskInfo(
        name="induction",
        output="token",
        pattern="previous-token head (layer 0), then induction head (layer 1)",
        layers=2,
    ),
}


def max_seq_len(task: str) -> int:
    """The longest sequence `task` trains on."""
    if task in TASKS and TASKS[task].layers == 2:
        return MAX_INDUCTION_SEQ_LEN
    return MAX_TRAIN_SEQ_LEN


class SettingError(ValueError):
    """A TrainConfig value that cannot be trained. The message says which values are valid;
    `reason` and `params` let an app say the same in its own words and language."""

    def __init__(self, message: str, reason: str, **params: object) -> None:
        super().__init__(message)
        self.reason = reason
        self.params = params


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if not isinstance(value, int | np.integer) or isinstance(value, bool):
        raise SettingError(
            f"{name} must be an integer in {low}..{high}, got {value!r}",
            "integer",
            name=name,
            low=low,
            high=high,
            value=value,
        )
    if not low <= value <= high:
        raise SettingError(
            f"{name} must be in {low}..{high}, got {value}",
            "range",
            name=name,
            low=low,
            high=high,
            value=value,
        )


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run depends on; the same config gives bit-identical runs.

    `default_config(task)` returns the measured defaults of each task.
    """

    task: str = "reverse"
    seq_len: int = 6
    vocab_size: int = 10
    embed_dim: int = 32
    num_heads: int = 2
    steps: int = 300
    # 3e-4 (sort 1e-3): 95 % held-out accuracy after ~100 of the 300 steps, so a class
    # watching at the default pace sees the pattern form over a third of the run. With
    # 3e-3 it took 20 steps, 2 of 31 snapshots: 0.7 s of a 10 s run (bench/section_train.py)
    lr: float = 3e-4
    batch_size: int = 64
    seed: int = 0
    snapshot_every: int = 10
    embed_init_std: float = 3.0  # σ of both embeddings at init; see attention_core.train.model

    def validate(self) -> None:
        """Raise ValueError naming the valid values if any field is out of range."""
        if self.task not in TASKS:
            raise SettingError(
                f"unknown task {self.task!r}; valid tasks: {', '.join(TASKS)}",
                "task",
                task=self.task,
                valid=", ".join(TASKS),
            )
        _check_int("steps", self.steps, 1, MAX_TRAIN_STEPS)
        low_n = 2 * MIN_PERIOD if self.task == "induction" else 2
        _check_int("seq_len", self.seq_len, low_n, max_seq_len(self.task))
        _check_int("vocab_size", self.vocab_size, 2, MAX_TRAIN_VOCAB)
        # >= 2 so both the token and the position part of the embedding get a dimension
        _check_int("embed_dim", self.embed_dim, 2, MAX_TRAIN_EMBED_DIM)
        _check_int("num_heads", self.num_heads, 1, self.embed_dim)
        if self.embed_dim % self.num_heads:
            valid = ", ".join(map(str, valid_num_heads(self.embed_dim)))
            raise SettingError(
                f"embed_dim={self.embed_dim} is not divisible by num_heads={self.num_heads}; "
                f"valid num_heads: {valid}",
                "heads",
                embed_dim=self.embed_dim,
                num_heads=self.num_heads,
                valid=valid,
            )
        _check_int("batch_size", self.batch_size, 1, MAX_TRAIN_BATCH)
        _check_int("seed", self.seed, 0, 2**63 - 1)
        _check_int("snapshot_every", self.snapshot_every, 1, MAX_TRAIN_STEPS)
        lr = self.lr
        if isinstance(lr, bool) or not isinstance(lr, int | float) or not 0 < lr <= 1:
            raise SettingError(f"lr must be a number in (0, 1], got {lr!r}", "lr", value=lr)
        std = self.embed_init_std
        if isinstance(std, bool) or not isinstance(std, int | float) or not 0 < std <= 10:
            raise SettingError(
                f"embed_init_std must be a number in (0, 10], got {std!r}", "std", value=std
            )
        n, v = self.seq_len, self.vocab_size
        if self.task == "match":
            if n % 2:
                raise SettingError(
                    f"task 'match' puts every token in the sequence twice, so seq_len must "
                    f"be even, got {n}",
                    "match_even",
                    n=n,
                )
            if v < n // 2:
                raise SettingError(
                    f"task 'match' needs seq_len/2 = {n // 2} distinct tokens; "
                    f"vocab_size must be >= {n // 2}, got {v}",
                    "match_vocab",
                    need=n // 2,
                    vocab=v,
                )
        if self.task == "induction" and v < n // 2:
            raise SettingError(
                f"task 'induction' repeats a segment of up to seq_len/2 = {n // 2} distinct "
                f"tokens; vocab_size must be >= {n // 2}, got {v}",
                "induction_vocab",
                need=n // 2,
                vocab=v,
            )
        if self.task == "sort" and v <= n:
            # with vocab_size == seq_len every sequence is a shuffle of 0..n-1 and the next
            # larger number is always token + 1: no comparison needed, nothing to see
            raise SettingError(
                f"task 'sort' needs distinct tokens and more tokens than positions; "
                f"vocab_size must be > seq_len={n}, got {v}",
                "sort_vocab",
                n=n,
                vocab=v,
            )

    @property
    def total_heads(self) -> int:
        """Heads of the whole model: num_heads, plus layer 1's one head for `induction`."""
        return self.num_heads + (1 if TASKS[self.task].layers == 2 else 0)

    @property
    def num_classes(self) -> int:
        """K, the read-out's number of classes: positions for `match`, tokens otherwise."""
        return self.seq_len if TASKS[self.task].output == "position" else self.vocab_size


# Measured over 16 (reverse, previous) or 36 (match, sort) seeds: every seed reached >= 95 %
# held-out accuracy (sort: 100 %) with a best-head focus >= 0.88. Re-measured over 12 seeds
# with the slower learning rates and the small initial W_q (attention_core.train.model):
# accuracy >= 99.9 % and focus >= 0.96 (reverse), 0.97 (previous), 0.89 (match), 0.85
# (sort). `sort` uses 1 head (with
# 2 or 4 the heads split the comparison and none is sharp), σ = 1 and more room (embed_dim
# 64): with the shared defaults about 1 seed in 12 stalled near 80 % accuracy.
_TASK_DEFAULTS: dict[str, dict[str, float]] = {
    "reverse": {},
    "previous": {},
    "match": {},
    "sort": {"embed_dim": 64, "num_heads": 1, "embed_init_std": 1.0, "lr": 1e-3},
    # measured in bench/section_train.py (see attention_core.train.induction)
    "induction": {
        "seq_len": 24,
        "vocab_size": 16,
        "embed_dim": 32,
        "num_heads": 2,
        "steps": 600,
        "lr": 3e-3,
        "embed_init_std": 1.0,
    },
}


def default_config(task: str = "reverse", **overrides: object) -> TrainConfig:
    """The measured default config of `task`, with `overrides` applied, validated."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid tasks: {', '.join(TASKS)}")
    names = set(TrainConfig.__dataclass_fields__) - {"task"}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown settings {unknown}; valid: {', '.join(sorted(names))}")
    config = TrainConfig(task=task, **{**_TASK_DEFAULTS[task], **overrides})  # type: ignore[arg-type]
    config.validate()
    return config


# ---------------------------------------------------------------------------------------
# Data: the task rules, written once in NumPy and used for training, evaluation and tests.


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
    rng = np.random.default_rng([_EXAMPLE_STREAM, task_index, config.seq_len, config.vocab_size])
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
