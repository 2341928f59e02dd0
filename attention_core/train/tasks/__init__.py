"""The toy tasks and their rules: what a training run of `attention_core.train` learns.

One job per module, all of it importable from here:

- `config`  the task table (`TASKS`), the settings of a run (`TrainConfig`, validated with
            errors that name the valid values, and `default_config` with each task's
            measured defaults)
- `data`    the data rules, written once in NumPy and used for training, evaluation, the
            pictures and the tests (targets, answers, the held-out split, the example
            sequence, the attention mask)

The titles and explanations people read are in the string catalog
(data/i18n/train.toml: train_task_<name>, train_task_<name>_explain); this package
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

Every row has a defined target and held-out sequences are never trained on: see
`attention_core.train.tasks.data`.
"""

from __future__ import annotations

from attention_core.train.tasks.config import (
    MAX_INDUCTION_SEQ_LEN,
    MAX_TRAIN_BATCH,
    MAX_TRAIN_EMBED_DIM,
    MAX_TRAIN_SEQ_LEN,
    MAX_TRAIN_VOCAB,
    MIN_PERIOD,
    TASKS,
    SettingError,
    TaskInfo,
    TrainConfig,
    default_config,
    max_seq_len,
)
from attention_core.train.tasks.data import (
    attention_mask,
    example_sequence,
    is_held_out,
    sample_sequences,
    target_positions,
    task_outputs,
)

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
