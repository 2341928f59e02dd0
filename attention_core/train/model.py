"""The toy model of `attention_core.train`: embeddings, one attention layer, a read-out.

The model is deliberately tiny and has exactly one place where positions exchange
information, the attention layer:

    tokens (B, n) ─► [token embedding | position embedding] (B, n, C)
                 ─► SingleHeadAttention / MultiHeadAttention   (B, n, C), weights (B, H, n, n)
                 ─► linear read-out, applied to each position on its own   (B, n, K)

No residual connection, no MLP, no second layer: whatever a position outputs must have
come through its attention weights, so a solved task is a solved attention pattern.

Two choices, each measured over 16-36 seeds per task, make the patterns sharp (the third,
masking the diagonal in `match` and `sort`, is a rule of the task: see
`attention_core.train.tasks`):

- The token and position embeddings are *concatenated* (C - C//2 token dimensions, C//2
  position dimensions) rather than added, so "what" and "where" live in separate
  coordinates and a head can match on one without noise from the other.
- Both embeddings start at N(0, σ²) with σ = `embed_init_std` = 3 rather than 1. Larger
  inputs give larger initial query·key scores, so heads commit to one key early. With
  σ = 1 (and no self-mask) `match` was still solved (accuracy ≈ 100 %), but by diffuse
  "attend to everything except the answer" codes with under 10 % of the mass on the
  answer. `sort` is the exception (σ = 1, embed_dim 64): committing early there can
  freeze a wrong order of the numbers, and about 1 seed in 8 then stalled near 80 %.
- W_q starts at QUERY_INIT_SCALE = 0.1 of its usual size, so the step-0 scores are small
  and every head starts near uniform: the class watches a pattern emerge from noise
  rather than one that was there at step 0. With σ = 3 and the usual W_q, the most
  focused head of `reverse`, `previous` and `match` already put 0.6-0.9 of each row on one
  key (mean row maximum) before training; scaled, 0.21-0.30 over 6 seeds per task, and
  all 24 runs still reached 100 % held-out accuracy with focus >= 0.88.
  `STEP0_ROW_MAX` states the bound the tests hold every task to.

Shape legend: B batch, n seq_len, C embed_dim, H num_heads, K output classes.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attention_core.attention import build_attention
from attention_core.train.embed import embed, init_weights, new_embeddings
from attention_core.train.induction import InductionModel
from attention_core.train.tasks import TASKS, TrainConfig, attention_mask

__all__ = ["QUERY_INIT_SCALE", "STEP0_ROW_MAX", "ToyAttentionModel", "build_model"]

QUERY_INIT_SCALE = 0.1  # W_q (and b_q) start this much smaller: near-uniform attention
STEP0_ROW_MAX = 0.4  # at step 0 no head's mean row maximum is above this (every task)


class ToyAttentionModel(nn.Module):
    """Embeddings → one attention layer → a per-position linear read-out (see the module
    docstring). forward(tokens (B, n)) → logits (B, n, K), weights (B, H, n, n)."""

    mask: Tensor | None

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        config.validate()
        self.config = config
        C = config.embed_dim
        with torch.random.fork_rng(devices=[]):
            # Creating nn.Embedding/nn.Linear (here and inside build_attention) draws a
            # default init from the global RNG; the fork gives the caller its state back.
            self.token_embedding, self.position_embedding = new_embeddings(config)
            self.readout = nn.Linear(C, config.num_classes)
            kind = "single" if config.num_heads == 1 else "multi"
            self.attention = build_attention(kind, C, config.num_heads, seed=config.seed)
        # Every weight is then drawn from private generators (build_attention has its own,
        # `init_weights` the embeddings' and the read-out's), so the model is a function
        # of the config even when several callers build models in parallel threads.
        init_weights(config, self.token_embedding, self.position_embedding, self.readout)
        with torch.no_grad():
            query = self.attention.query_linear
            query.weight.mul_(QUERY_INIT_SCALE)
            if query.bias is not None:
                query.bias.mul_(QUERY_INIT_SCALE)
        # (n, n) bool, or None where nothing is masked (then no masking work at all)
        mask = torch.from_numpy(attention_mask(config)) if TASKS[config.task].mask_self else None
        self.register_buffer("mask", mask, persistent=False)
        self.train()  # build_attention returns eval mode; there is no dropout either way

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """tokens: (B, n) int64 in 0..vocab_size-1. Returns logits (B, n, K) and weights
        (B, H, n, n) (H = 1 for single-head)."""
        x = embed(tokens, self.token_embedding, self.position_embedding)  # (B, n, C)
        out, weights = self.attention(x, self.mask)  # (B, n, C), (B, H, n, n) or (B, n, n)
        if weights.dim() == 3:
            weights = weights.unsqueeze(1)  # (B, 1, n, n)
        return self.readout(out), weights  # (B, n, K), (B, H, n, n)


def build_model(config: TrainConfig) -> ToyAttentionModel | InductionModel:
    """A freshly initialised model, a pure function of `config` (its seed and sizes): the
    one-layer `ToyAttentionModel`, or the 2-layer `InductionModel` for `induction`."""
    config.validate()
    if TASKS[config.task].layers == 2:
        return InductionModel(config)
    return ToyAttentionModel(config)
