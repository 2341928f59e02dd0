"""What the two toy models share: the token | position embedding and their first weights.

Both `ToyAttentionModel` (attention_core.train.model) and `InductionModel`
(attention_core.train.induction) put the token and the position embedding side by side
(C - C//2 token dimensions, C//2 position dimensions; why: attention_core.train.model)
and draw their embeddings and read-out from one private stream of the config's seed.

Shape legend: B batch, n seq_len, C embed_dim, K output classes.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from attention_core.train.tasks.config import INIT_STREAM, TrainConfig

__all__ = ["embed", "init_weights", "new_embeddings"]


def new_embeddings(config: TrainConfig) -> tuple[nn.Embedding, nn.Embedding]:
    """The token (vocab_size → C - C//2) and position (seq_len → C//2) embeddings, with
    PyTorch's default init (drawn from the global RNG: create them inside a fork)."""
    C = config.embed_dim
    position_dim = C // 2
    return (
        nn.Embedding(config.vocab_size, C - position_dim),
        nn.Embedding(config.seq_len, position_dim),
    )


def init_weights(
    config: TrainConfig,
    token_embedding: nn.Embedding,
    position_embedding: nn.Embedding,
    readout: nn.Linear,
) -> None:
    """Draw both embeddings from N(0, embed_init_std²) and the read-out (C → K) as
    nn.Linear's own default, U(-1/√C, 1/√C), in that order, from a generator of their own.

    A stream of its own: seeded with config.seed itself, it would replay the very bits
    build_attention draws W_q from, and correlate the embeddings with W_q. Private
    generators make the model a function of the config even when several callers build
    models in parallel threads that share the global RNG.
    """
    init_seed = np.random.default_rng([INIT_STREAM, config.seed]).integers(2**63)
    gen = torch.Generator().manual_seed(int(init_seed))
    bound = 1.0 / config.embed_dim**0.5
    with torch.no_grad():
        nn.init.normal_(token_embedding.weight, std=config.embed_init_std, generator=gen)
        nn.init.normal_(position_embedding.weight, std=config.embed_init_std, generator=gen)
        nn.init.uniform_(readout.weight, -bound, bound, generator=gen)
        nn.init.uniform_(readout.bias, -bound, bound, generator=gen)


def embed(
    tokens: Tensor, token_embedding: nn.Embedding, position_embedding: nn.Embedding
) -> Tensor:
    """tokens (B, n) int64 → x0 (B, n, C): token and position embedding side by side.

    Raises ValueError unless tokens are (batch, seq_len), seq_len being the number of
    positions the position embedding has."""
    seq_len = position_embedding.num_embeddings
    if tokens.dim() != 2 or tokens.shape[1] != seq_len:
        raise ValueError(
            f"tokens must have shape (batch, seq_len={seq_len}), got {tuple(tokens.shape)}"
        )
    B, n = tokens.shape
    what = token_embedding(tokens)  # (B, n, C - C//2)
    where = position_embedding.weight.expand(B, n, -1)  # (B, n, C//2)
    return torch.cat([what, where], dim=-1)  # (B, n, C)
