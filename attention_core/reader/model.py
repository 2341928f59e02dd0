"""The trained reader: the landing page's own `MultiHeadAttention` inside a small GPT.

    ids (B, n) ─► token embedding + learned position embedding      (B, n, C)
              ─► L blocks:  x + MHA(LN(x), causal)   →   x + MLP(LN(x))   (pre-LN, GPT-2)
              ─► LN ─► logits over the vocabulary (the token embedding, tied)   (B, n, V)

Each block's attention is `attention_core.attention.MultiHeadAttention`, the module the
landing page draws, unchanged: what the page shows for the trained weights is what it shows
for the untrained ones, computed by the same five steps.

**Causal** (each unit predicts the next): every position of every window is a training
signal (a masked model learns from the 15 % it hides), which on two CPU cores is the
difference between a model that has seen the corpus a few times and one that has not; and
a causal model's heads can be read as "what did this character look back at", which is
what the teaching pages and the induction test ask.

**A second target while training** (`attention_core.reader.fit.train`): does the next unit
start a new jieba word? One linear read-out of the final state, dropped after training. A
causal reader can only answer it if it knows where the current word began. On its own it
lifted the best same-word head only to about 1.4 × its shuffled baseline on everyday
sentences, so one head (layer 1, head 0) is also taught to look at the earlier characters
of its word: 2.48 × on everyday sentences (docs/guide/reader.md has the runs).

Shape legend: B batch, n units (≤ context), C embed_dim, H num_heads, V vocabulary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_core.attention import MultiHeadAttention, causal_mask

__all__ = ["Block", "ReaderConfig", "ReaderLM"]


@dataclass(frozen=True)
class ReaderConfig:
    vocab_size: int
    context: int = 64  # positions the model has embeddings for (a classroom sentence: < 40)
    embed_dim: int = 128
    num_heads: int = 4
    num_layers: int = 4
    mlp_ratio: int = 4

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, object]) -> ReaderConfig:
        names = set(cls.__dataclass_fields__)
        if set(values) != names:
            raise ValueError(f"a reader config has exactly {sorted(names)}, got {sorted(values)}")
        ints = {k: int(v) for k, v in values.items()}  # type: ignore[call-overload]
        if min(ints.values()) < 1 or ints["embed_dim"] % ints["num_heads"]:
            raise ValueError(f"impossible reader config: {ints}")
        return cls(**ints)


class Block(nn.Module):
    """x + MHA(LN(x)) then x + MLP(LN(x)); returns the new x and the heads' weights."""

    def __init__(self, config: ReaderConfig) -> None:
        super().__init__()
        C = config.embed_dim
        self.ln1 = nn.LayerNorm(C)
        self.attention = MultiHeadAttention(C, config.num_heads)
        self.ln2 = nn.LayerNorm(C)
        self.mlp = nn.Sequential(
            nn.Linear(C, config.mlp_ratio * C), nn.GELU(), nn.Linear(config.mlp_ratio * C, C)
        )

    def forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        out, weights = self.attention(self.ln1(x), mask)  # (B, n, C), (B, H, n, n)
        x = x + out
        x = x + self.mlp(self.ln2(x))
        return x, weights


class ReaderLM(nn.Module):
    """forward(ids (B, n)) → logits (B, n, V) and every layer's weights [(B, H, n, n)] * L."""

    def __init__(self, config: ReaderConfig) -> None:
        super().__init__()
        self.config = config
        C = config.embed_dim
        self.token_embedding = nn.Embedding(config.vocab_size, C)
        self.position_embedding = nn.Embedding(config.context, C)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.num_layers))
        self.ln_f = nn.LayerNorm(C)
        self.apply(self._init)

    @staticmethod
    def _init(module: nn.Module) -> None:
        # GPT-2's initialisation: N(0, 0.02) for every matrix and embedding, zero biases
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def get_input_embeddings(self) -> nn.Embedding:
        """The token embedding (V, C), under transformers' name: what attribution reads."""
        return self.token_embedding

    def hidden(self, ids: Tensor) -> tuple[Tensor, list[Tensor]]:
        """The final hidden states (B, n, C) after ln_f, and each layer's weights."""
        if ids.dim() != 2:
            raise ValueError(f"ids must have shape (batch, n), got {tuple(ids.shape)}")
        return self.hidden_from_embeddings(self.token_embedding(ids))  # (B, n, C) in

    def hidden_from_embeddings(self, embeds: Tensor) -> tuple[Tensor, list[Tensor]]:
        """`hidden` from the token embeddings (B, n, C) instead of ids (the position
        embeddings are added here, as transformers' `inputs_embeds` are)."""
        n = embeds.shape[1]
        if n > self.config.context:
            raise ValueError(
                f"{n} units are more than the model's context of {self.config.context}"
            )
        positions = torch.arange(n, device=embeds.device)
        x = embeds + self.position_embedding(positions)  # (B, n, C)
        mask = causal_mask(n).to(embeds.device)  # (n, n), broadcast to every batch and head
        weights = []
        for block in self.blocks:
            x, w = block(x, mask)
            weights.append(w)  # (B, H, n, n)
        return self.ln_f(x), weights

    def forward(self, ids: Tensor) -> tuple[Tensor, list[Tensor]]:
        h, weights = self.hidden(ids)
        logits = h @ self.token_embedding.weight.T  # (B, n, V), the embedding tied
        return logits, weights

    def loss(self, ids: Tensor, targets: Tensor) -> Tensor:
        """Mean cross-entropy (nats) of predicting `targets` (B, n); -100 = not counted."""
        logits, _ = self(ids)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
