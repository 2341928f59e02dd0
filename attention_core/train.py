"""Train the project's own attention module on toy tasks, live: the library behind the
"Train attention live" page.

A student presses Train and, within a second or two on a small CPU, watches attention go
from noise to a sharp pattern that explains the task. The model is deliberately tiny and
has exactly one place where positions exchange information, the attention layer:

    tokens (B, n) ─► [token embedding | position embedding] (B, n, C)
                 ─► SingleHeadAttention / MultiHeadAttention   (B, n, C), weights (B, H, n, n)
                 ─► linear read-out, applied to each position on its own   (B, n, K)

No residual connection, no MLP, no second layer: whatever a position outputs must have
come through its attention weights, so a solved task is a solved attention pattern.

Three choices, each measured over 16-36 seeds per task, make the patterns sharp:

- The token and position embeddings are *concatenated* (C - C//2 token dimensions, C//2
  position dimensions) rather than added, so "what" and "where" live in separate
  coordinates and a head can match on one without noise from the other.
- Both embeddings start at N(0, σ²) with σ = `embed_init_std` = 3 rather than 1. Larger
  inputs give larger initial query·key scores, so heads commit to one key early. With
  σ = 1 (and no self-mask) `match` was still solved (accuracy ≈ 100 %), but by diffuse
  "attend to everything except the answer" codes with under 10 % of the mass on the
  answer. `sort` is the exception (σ = 1, embed_dim 64): committing early there can
  freeze a wrong order of the numbers, and about 1 seed in 8 then stalled near 80 %.
- In `match` and `sort` the answer is never the query's own position, so those tasks mask
  the diagonal (`attention_mask`; the attention module's mask, True = may attend): a
  token cannot be its own twin or its own successor. Unmasked, the query's own key is
  the best token match there is, and in `match` about 1 seed in 18 (even with 4 heads)
  settled on an accurate code spread over all heads with < 0.1 of the mass on the twin;
  masked, 36 seeds of 36 with 2 heads put >= 0.98 on it.

The tasks (`TASKS`, with titles and explanations in English and zh-TW for the page):

- `reverse`  answer at i = token at n-1-i                        (anti-diagonal)
- `previous` answer at i = token at i-1; position 0 answers its own token (sub-diagonal)
- `match`    every token appears exactly twice; answer at i = the position of the other
             copy of its token                                   (content matching)
- `sort`     tokens are distinct; answer at i = the next larger token in the sequence,
             the largest wrapping round to the smallest           (content comparison)

`sort` is the pointer form of sorting: following the answers from the smallest token
spells the sorted sequence. The literal form "answer at i = the i-th smallest token" has
no sharp one-layer solution: a query knows only its own token and position, and which key
holds rank i depends on all the others. Measured, one head reaches ≈ 70 % accuracy, and
two heads ≈ 99 % but through blurred mixtures (under 0.55 of the mass on the answer):
nothing to watch, so it is not offered.

Every row has a defined target (`target_positions`), so the focus metric averages over all
rows. Held-out sequences are a fixed 1-in-5 slice of all possible sequences (by a hash of
the tokens) that training never draws, so held-out accuracy is on truly unseen inputs.

Usage (drive it from a UI one snapshot at a time, or all at once with `fit`):

    config = default_config("reverse")
    model = build_model(config)
    for snap in train(config, model=model):      # step 0, every snapshot_every, the end
        draw(snap.weights)                       # (H, n, n) on example_sequence(config)
    result = evaluate(model, config)             # held-out accuracy, best head, focus

Shape legend: B batch, n seq_len, C embed_dim, H num_heads, K output classes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_core.attention import build_attention, valid_num_heads
from attention_core.limits import MAX_TRAIN_STEPS

__all__ = [
    "MAX_TRAIN_BATCH",
    "MAX_TRAIN_EMBED_DIM",
    "MAX_TRAIN_SEQ_LEN",
    "MAX_TRAIN_VOCAB",
    "TASKS",
    "Evaluation",
    "SettingError",
    "Snapshot",
    "TaskInfo",
    "ToyAttentionModel",
    "TrainConfig",
    "TrainResult",
    "attention_mask",
    "build_model",
    "default_config",
    "evaluate",
    "example_sequence",
    "fit",
    "is_held_out",
    "sample_sequences",
    "target_positions",
    "task_outputs",
    "train",
]

MAX_TRAIN_SEQ_LEN = 16
MAX_TRAIN_VOCAB = 64
MAX_TRAIN_EMBED_DIM = 128
MAX_TRAIN_BATCH = 1024
HELD_OUT_EVERY = 5  # 1 in 5 sequences is reserved for evaluation

# Independent random streams, all derived from config.seed (or the evaluation seed).
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
}


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
    lr: float = 3e-3
    batch_size: int = 64
    seed: int = 0
    snapshot_every: int = 10
    embed_init_std: float = 3.0  # σ of both embeddings at init; see the module docstring

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
        _check_int("seq_len", self.seq_len, 2, MAX_TRAIN_SEQ_LEN)
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
    def num_classes(self) -> int:
        """K, the read-out's number of classes: positions for `match`, tokens otherwise."""
        return self.seq_len if TASKS[self.task].output == "position" else self.vocab_size


# Measured over 16 (reverse, previous) or 36 (match, sort) seeds: every seed reached >= 95 %
# held-out accuracy (sort: 100 %) with a best-head focus >= 0.88. `sort` uses 1 head (with
# 2 or 4 the heads split the comparison and none is sharp), σ = 1 and more room (embed_dim
# 64): with the shared defaults about 1 seed in 12 stalled near 80 % accuracy.
_TASK_DEFAULTS: dict[str, dict[str, float]] = {
    "reverse": {},
    "previous": {},
    "match": {},
    "sort": {"embed_dim": 64, "num_heads": 1, "embed_init_std": 1.0},
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
    has a target (for `previous`, position 0 is its own target), so no row is excluded.
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
    """The correct answer at every position: a token, or a position for `match`.

    seq: (n,) or (B, n); returns int64 of the same shape.
    """
    tp = target_positions(task, seq)
    if TASKS[task].output == "position":
        return tp
    x = _as_batch(task, seq)
    return np.take_along_axis(x, tp.reshape(x.shape), axis=1).reshape(np.shape(seq))


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
    for the tasks whose answer is never the query itself (`TaskInfo.mask_self`)."""
    config.validate()
    n = config.seq_len
    if TASKS[config.task].mask_self:
        return ~np.eye(n, dtype=bool)
    return np.ones((n, n), dtype=bool)


# ---------------------------------------------------------------------------------------
# The model


class ToyAttentionModel(nn.Module):
    """Embeddings → one attention layer → a per-position linear read-out (see the module
    docstring). forward(tokens (B, n)) → logits (B, n, K), weights (B, H, n, n)."""

    mask: Tensor | None

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        config.validate()
        self.config = config
        C, n = config.embed_dim, config.seq_len
        position_dim = C // 2
        with torch.random.fork_rng(devices=[]):
            # Creating nn.Embedding/nn.Linear (here and inside build_attention) draws a
            # default init from the global RNG; the fork gives the caller its state back.
            self.token_embedding = nn.Embedding(config.vocab_size, C - position_dim)
            self.position_embedding = nn.Embedding(n, position_dim)
            self.readout = nn.Linear(C, config.num_classes)
            kind = "single" if config.num_heads == 1 else "multi"
            self.attention = build_attention(kind, C, config.num_heads, seed=config.seed)
        # Every weight is then drawn from private generators (build_attention has its own),
        # so the model is a function of the config even when app sessions build models in
        # parallel threads that share the global RNG.
        # A stream of its own: seeded with config.seed itself, it would replay the very
        # bits build_attention draws W_q from, and correlate the embeddings with W_q.
        init_seed = np.random.default_rng([_INIT_STREAM, config.seed]).integers(2**63)
        gen = torch.Generator().manual_seed(int(init_seed))
        bound = 1.0 / C**0.5  # nn.Linear's own default: U(-1/√fan_in, 1/√fan_in)
        with torch.no_grad():
            nn.init.normal_(self.token_embedding.weight, std=config.embed_init_std, generator=gen)
            nn.init.normal_(
                self.position_embedding.weight, std=config.embed_init_std, generator=gen
            )
            nn.init.uniform_(self.readout.weight, -bound, bound, generator=gen)
            nn.init.uniform_(self.readout.bias, -bound, bound, generator=gen)
        # (n, n) bool, or None where nothing is masked (then no masking work at all)
        mask = torch.from_numpy(attention_mask(config)) if TASKS[config.task].mask_self else None
        self.register_buffer("mask", mask, persistent=False)
        self.train()  # build_attention returns eval mode; there is no dropout either way

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """tokens: (B, n) int64 in 0..vocab_size-1. Returns logits (B, n, K) and weights
        (B, H, n, n) (H = 1 for single-head)."""
        cfg = self.config
        if tokens.dim() != 2 or tokens.shape[1] != cfg.seq_len:
            raise ValueError(
                f"tokens must have shape (batch, seq_len={cfg.seq_len}), got {tuple(tokens.shape)}"
            )
        B, n = tokens.shape
        what = self.token_embedding(tokens)  # (B, n, C - C//2)
        where = self.position_embedding.weight.expand(B, n, -1)  # (B, n, C//2)
        x = torch.cat([what, where], dim=-1)  # (B, n, C)
        out, weights = self.attention(x, self.mask)  # (B, n, C), (B, H, n, n) or (B, n, n)
        if weights.dim() == 3:
            weights = weights.unsqueeze(1)  # (B, 1, n, n)
        return self.readout(out), weights  # (B, n, K), (B, H, n, n)


def build_model(config: TrainConfig) -> ToyAttentionModel:
    """A freshly initialised model, a pure function of `config` (its seed and sizes)."""
    return ToyAttentionModel(config)


# ---------------------------------------------------------------------------------------
# Training


@dataclass(frozen=True)
class Snapshot:
    """The model after `step` updates.

    loss and accuracy are on a fresh training batch (accuracy per position), weights are
    every head on `example_sequence(config)` (the same sequence in every snapshot), and
    predictions are the model's answers on that sequence.
    """

    step: int
    loss: float
    accuracy: float
    weights: np.ndarray  # (H, n, n) float32, each row sums to 1
    predictions: np.ndarray  # (n,) int64


@dataclass(frozen=True)
class Evaluation:
    """Held-out results: exact per-position accuracy and how sharply each head attends to
    the answer's position (its mass on `target_positions`, averaged over all rows)."""

    accuracy: float
    position_accuracy: np.ndarray  # (n,) accuracy of each output position
    sequence_accuracy: float  # every position right
    head_focus: np.ndarray  # (H,) mean attention mass on the target position
    best_head: int
    focus: float  # head_focus[best_head]
    num_sequences: int


@dataclass(frozen=True)
class TrainResult:
    """What `fit` returns: the trained model, every snapshot and the held-out evaluation."""

    config: TrainConfig
    model: ToyAttentionModel = field(repr=False)
    snapshots: tuple[Snapshot, ...]
    evaluation: Evaluation

    @property
    def stopped_early(self) -> bool:
        return self.snapshots[-1].step < self.config.steps

    @property
    def losses(self) -> np.ndarray:
        """(S,) the loss of every snapshot, in order."""
        return np.array([s.loss for s in self.snapshots], dtype=np.float64)


def _batch(config: TrainConfig, rng: np.random.Generator) -> tuple[Tensor, Tensor]:
    seqs = sample_sequences(config, config.batch_size, rng=rng)  # (B, n)
    answers = task_outputs(config.task, seqs)  # (B, n)
    return torch.from_numpy(seqs), torch.from_numpy(answers)


def _check_model(model: nn.Module, config: TrainConfig) -> None:
    if not isinstance(model, ToyAttentionModel):
        raise ValueError("model must be a ToyAttentionModel made by build_model(config)")
    mc = model.config
    sizes = ("task", "seq_len", "vocab_size", "embed_dim", "num_heads")
    if any(getattr(mc, s) != getattr(config, s) for s in sizes):
        raise ValueError(
            "model was built for a different task or size: "
            + ", ".join(f"{s}={getattr(mc, s)!r} vs {getattr(config, s)!r}" for s in sizes)
        )


def train(
    config: TrainConfig,
    *,
    model: ToyAttentionModel | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[Snapshot]:
    """Train step by step, yielding a Snapshot at step 0 (untrained), every
    `snapshot_every` steps and at the end.

    Pass `model` (from `build_model(config)`) to keep the trained model; it is updated in
    place. `should_stop` is asked before every step; when it returns True the run ends
    with a snapshot of the current step. The config is validated here, before the first
    snapshot is requested. Adam on cross-entropy; the global torch RNG is never touched.
    """
    config.validate()
    if model is None:
        model = build_model(config)
    _check_model(model, config)
    return _train(config, model, should_stop)


def _train(
    config: TrainConfig, model: ToyAttentionModel, should_stop: Callable[[], bool] | None
) -> Iterator[Snapshot]:
    rng = np.random.default_rng([_TRAIN_STREAM, config.seed])
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    example = torch.from_numpy(example_sequence(config))[None]  # (1, n)
    K = config.num_classes
    for step in range(config.steps + 1):
        stop = should_stop is not None and bool(should_stop())
        tokens, answers = _batch(config, rng)  # (B, n), (B, n)
        # grad mode is set per step, never held across a yield: the caller's mode between
        # snapshots stays the caller's
        with torch.enable_grad():
            logits, _ = model(tokens)  # (B, n, K)
            loss = F.cross_entropy(logits.reshape(-1, K), answers.reshape(-1))  # (B·n, K)
        last = stop or step == config.steps
        if last or step % config.snapshot_every == 0:
            with torch.no_grad():
                accuracy = (logits.argmax(-1) == answers).double().mean().item()
                ex_logits, ex_weights = model(example)  # (1, n, K), (1, H, n, n)
            yield Snapshot(
                step=step,
                loss=float(loss.item()),
                accuracy=float(accuracy),
                weights=ex_weights[0].numpy().astype(np.float32),  # (H, n, n)
                predictions=ex_logits[0].argmax(-1).numpy().astype(np.int64),  # (n,)
            )
        if last:
            return
        optimizer.zero_grad(set_to_none=True)
        with torch.enable_grad():
            loss.backward()
        optimizer.step()


def evaluate(
    model: ToyAttentionModel,
    config: TrainConfig,
    *,
    num_sequences: int = 512,
    seed: int = 12345,
) -> Evaluation:
    """Accuracy and attention focus on `num_sequences` fresh held-out sequences.

    Focus of a head = mean over sequences and rows of the weight it puts on the target
    position (`target_positions`); the best head is the one with the highest focus.
    """
    config.validate()
    _check_model(model, config)
    _check_int("num_sequences", num_sequences, 1, 100_000)
    rng = np.random.default_rng(seed)
    seqs = sample_sequences(config, num_sequences, rng=rng, held_out=True)  # (B, n)
    answers = task_outputs(config.task, seqs)  # (B, n)
    targets = target_positions(config.task, seqs)  # (B, n)
    with torch.no_grad():
        logits, weights = model(torch.from_numpy(seqs))  # (B, n, K), (B, H, n, n)
    correct = logits.argmax(-1).numpy() == answers  # (B, n)
    w = weights.numpy().astype(np.float64)
    index = np.broadcast_to(targets[:, None, :, None], (*w.shape[:3], 1))  # (B, H, n, 1)
    mass = np.take_along_axis(w, index, axis=-1)[..., 0]  # (B, H, n)
    head_focus = mass.mean(axis=(0, 2))  # (H,)
    best = int(head_focus.argmax())
    return Evaluation(
        accuracy=float(correct.mean()),
        position_accuracy=correct.mean(axis=0),
        sequence_accuracy=float(correct.all(axis=1).mean()),
        head_focus=head_focus,
        best_head=best,
        focus=float(head_focus[best]),
        num_sequences=num_sequences,
    )


def fit(
    config: TrainConfig,
    *,
    should_stop: Callable[[], bool] | None = None,
    on_snapshot: Callable[[Snapshot], None] | None = None,
    num_sequences: int = 512,
) -> TrainResult:
    """Train to the end (or until `should_stop`), then evaluate on held-out sequences."""
    model = build_model(config)
    snapshots = []
    for snap in train(config, model=model, should_stop=should_stop):
        snapshots.append(snap)
        if on_snapshot is not None:
            on_snapshot(snap)
    evaluation = evaluate(model, config, num_sequences=num_sequences)
    return TrainResult(config, model, tuple(snapshots), evaluation)
