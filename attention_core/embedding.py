"""Token embeddings for untrained attention: the same token always gets the same vector.

A real model looks vectors up in a learned table; here there is no training, so each
token's vector is drawn from N(0, 1) with a generator seeded by a hash of
(token text, seed). A repeated word therefore behaves identically wherever it stands
unless positions are added — the point the "positions and word order" page makes.
Positional encoding is the sinusoidal one of Vaswani et al. 2017, section 3.5.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import torch
from torch import Tensor

__all__ = ["embed", "sinusoidal_positions", "token_vector"]


@lru_cache(maxsize=8192)
def _token_vector(text: str, embed_dim: int, seed: int) -> Tensor:
    digest = hashlib.blake2b(f"{seed}\x00{text}".encode(), digest_size=8).digest()
    gen = torch.Generator().manual_seed(int.from_bytes(digest, "little") % (2**63))
    return torch.randn(embed_dim, generator=gen)  # (C,)


def token_vector(text: str, embed_dim: int, *, seed: int = 0) -> Tensor:
    """The (embed_dim,) vector of one token text: a pure function of (text, embed_dim, seed)."""
    if embed_dim < 1:
        raise ValueError(f"embed_dim must be >= 1, got {embed_dim}")
    return _token_vector(text, embed_dim, int(seed)).clone()


def sinusoidal_positions(n: int, embed_dim: int) -> Tensor:
    """(n, embed_dim) sinusoidal positional encoding: PE[p, 2i] = sin(p / 10000^(2i/C)),
    PE[p, 2i+1] = cos(p / 10000^(2i/C))."""
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)  # (n, 1)
    i = torch.arange(0, embed_dim, 2, dtype=torch.float32)  # (ceil(C/2),)
    angles = pos / torch.pow(10000.0, i / embed_dim)  # (n, ceil(C/2))
    pe = torch.zeros(n, embed_dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : embed_dim // 2])
    return pe


def embed(
    tokens: Sequence[object], embed_dim: int, *, seed: int = 0, positional: bool = False
) -> Tensor:
    """(1, n, embed_dim) embeddings of `tokens` (strings, or Tokens: their `.label` is used).

    With `positional=True` the sinusoidal encoding of each position is added.
    """
    if embed_dim < 1:
        raise ValueError(f"embed_dim must be >= 1, got {embed_dim}")
    labels = [getattr(t, "label", t) for t in tokens]
    if labels:
        x = torch.stack([_token_vector(str(s), embed_dim, int(seed)) for s in labels])  # (n, C)
    else:
        x = torch.zeros(0, embed_dim)
    if positional:
        x = x + sinusoidal_positions(len(labels), embed_dim)
    return x.unsqueeze(0)  # (1, n, C)
