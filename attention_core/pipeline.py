"""Text in, attention out: tokenize → embed → the project's attention module.

`analyze` is what every page calls (through a cache keyed on plain values). It returns
plain NumPy data so results can be cached, pickled and drawn without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from attention_core.attention import build_attention, causal_mask
from attention_core.embedding import embed
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.settings import Settings
from attention_core.tokenize import Token, tokenize

__all__ = ["Analysis", "analyze", "token_labels"]


def token_labels(tokens: list[Token] | list[str]) -> list[str]:
    """`index:token` axis labels, so that repeated tokens never merge on a category axis."""
    return [f"{i}:{getattr(t, 'label', t)}" for i, t in enumerate(tokens)]


@dataclass(frozen=True)
class Analysis:
    """One view's worth of results: tokens, every head's weights and (optionally) the trace."""

    settings: Settings
    text: str  # the text actually tokenized (cut at MAX_TEXT_CHARS)
    tokens: list[Token]  # at most MAX_TOKENS
    total_tokens: int  # before truncation
    text_cut: bool  # the text was longer than MAX_TEXT_CHARS
    weights: np.ndarray  # (H, n, n) float32; H = 1 for single-head
    trace: dict[str, np.ndarray] = field(default_factory=dict)  # AttentionTrace.numpy()
    divisor: float = 1.0

    @property
    def truncated(self) -> bool:
        return self.text_cut or self.total_tokens > len(self.tokens)

    @property
    def labels(self) -> list[str]:
        return token_labels(self.tokens)


def analyze(
    settings: Settings,
    *,
    with_trace: bool = False,
    divisor: float | None = None,
    max_tokens: int = MAX_TOKENS,
) -> Analysis:
    """Run `settings` through tokenizer, embedding and attention.

    `divisor` overrides √d_k (see `AttentionTrace`). With `with_trace` every step's
    array is kept (larger; only the teaching pages need it).
    """
    text = settings.text[:MAX_TEXT_CHARS]
    all_tokens = tokenize(text, settings.tokenizer)
    tokens = all_tokens[:max_tokens]
    module = build_attention(
        settings.attention, settings.embed_dim, settings.heads, seed=settings.seed
    )
    x = embed(tokens, settings.embed_dim, seed=settings.seed, positional=settings.positional)
    n = len(tokens)
    mask = causal_mask(n) if settings.causal else None
    with torch.inference_mode():
        t = module.trace(x, mask, divisor=divisor)
    arrays = t.numpy() if with_trace else {}
    return Analysis(
        settings=settings,
        text=text,
        tokens=tokens,
        total_tokens=len(all_tokens),
        text_cut=len(settings.text) > MAX_TEXT_CHARS,
        weights=t.weights[0].numpy().astype(np.float32, copy=False),  # (H, n, n)
        trace=arrays,
        divisor=t.divisor,
    )
