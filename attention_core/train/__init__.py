"""Train the project's own attention module on toy tasks, live, and watch its heads learn.

A student presses Train and, within a second or two on a small CPU, watches attention go
from noise to a sharp pattern that explains the task. The model is deliberately tiny and
has exactly one place where positions exchange information, the attention layer:

    tokens (B, n) ─► [token embedding | position embedding] (B, n, C)
                 ─► SingleHeadAttention / MultiHeadAttention   (B, n, C), weights (B, H, n, n)
                 ─► linear read-out, applied to each position on its own   (B, n, K)

No residual connection, no MLP, no second layer: whatever a position outputs must have
come through its attention weights, so a solved task is a solved attention pattern.

The package, one job per module (each docstring has the design choices and measurements
behind its part):

- `tasks`  the toy tasks (`TASKS`: reverse, previous, match, sort), the settings of a run
           (`TrainConfig`, `default_config`) and the data rules (targets, answers, the
           held-out split, the example sequence, the attention mask)
- `model`  `ToyAttentionModel` and `build_model`
- `loop`   `train` (snapshot by snapshot), `evaluate` (held-out accuracy, head focus), `fit`
- `live`   `LiveRun`, a run that can be interrupted between snapshots and resumed, and the
           plain data a caller draws from it (not re-exported here: import it from
           `attention_core.train.live`)

Usage (drive it from a UI one snapshot at a time, or all at once with `fit`):

    config = default_config("reverse")
    model = build_model(config)
    for snap in train(config, model=model):      # step 0, every snapshot_every, the end
        draw(snap.weights)                       # (H, n, n) on example_sequence(config)
    result = evaluate(model, config)             # held-out accuracy, best head, focus

Shape legend: B batch, n seq_len, C embed_dim, H num_heads, K output classes.
"""

from __future__ import annotations

from attention_core.train.loop import Evaluation, Snapshot, TrainResult, evaluate, fit, train
from attention_core.train.model import ToyAttentionModel, build_model
from attention_core.train.tasks import (
    MAX_TRAIN_BATCH,
    MAX_TRAIN_EMBED_DIM,
    MAX_TRAIN_SEQ_LEN,
    MAX_TRAIN_VOCAB,
    TASKS,
    SettingError,
    TaskInfo,
    TrainConfig,
    attention_mask,
    default_config,
    example_sequence,
    is_held_out,
    sample_sequences,
    target_positions,
    task_outputs,
)

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
