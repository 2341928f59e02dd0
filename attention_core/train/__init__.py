"""Train the project's own attention module on toy tasks, live, and watch its heads learn.

A student presses Train and, within a second or two on a small CPU, watches attention go
from noise to a sharp pattern that explains the task. The model is deliberately tiny and
has exactly one place where positions exchange information, the attention layer:

    tokens (B, n) ─► [token embedding | position embedding] (B, n, C)
                 ─► SingleHeadAttention / MultiHeadAttention   (B, n, C), weights (B, H, n, n)
                 ─► linear read-out, applied to each position on its own   (B, n, K)

No residual connection, no MLP, no second layer: whatever a position outputs must have
come through its attention weights, so a solved task is a solved attention pattern.

One task needs two layers: `induction` (Olsson et al. 2022) trains a 2-layer attention-only
model with residual connections and a causal mask (`induction`), where a previous-token
head in layer 0 and an induction head in layer 1 form during training; a detector scores
every head for both behaviours at every snapshot (`Snapshot.detector`).

The package, one job per module (each docstring has the design choices and measurements
behind its part):

- `tasks`  the toy tasks (`TASKS`: reverse, previous, match, sort, induction), the settings of a run
           (`TrainConfig`, `default_config`: `tasks.config`) and the data rules (targets,
           answers, the held-out split, the example sequence, the attention mask:
           `tasks.data`)
- `model`  `ToyAttentionModel` and `build_model` (which builds the induction model too)
- `embed`  the token | position embedding and the first weights both models share
- `induction` `InductionModel`, the head detector (`detector_scores`, `head_roles`) and the
           ablation (`accuracy_without`); not re-exported: import it from
           `attention_core.train.induction`
- `loop`   `train` (snapshot by snapshot), `evaluate` (held-out accuracy, head focus), `fit`
- `live`   `LiveRun`, a run that can be interrupted between snapshots, stopped and
           continued, the pace a UI shows it at, and the plain data a caller draws from it
           (`example_trace`: one layer's every step on the example sequence); not
           re-exported here: import it from `attention_core.train.live`

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
    attention_mask,
    default_config,
    example_sequence,
    is_held_out,
    max_seq_len,
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
    "max_seq_len",
    "sample_sequences",
    "target_positions",
    "task_outputs",
    "train",
]
