"""Masks: what an encoder (BERT) and a decoder (GPT) let each token see, and padding.

The article opens with the two halves of the Transformer: the encoder (BERT: bidirectional,
representation learning) lets every token attend to every token; the decoder (GPT, LLaMA:
autoregressive generation) lets token i attend only to tokens j <= i, the causal mask.

Padding: sentences of unequal length are batched by appending a [PAD] token until all have
the same length n. A key-padding mask (True = may attend) keeps every query off the padded
keys, so they get exactly zero weight and the real tokens' weights are the same as when the
sentence runs alone. Padded *queries* are left unmasked here, as in BERT/HuggingFace: they
attend to the real keys like any token, but nothing downstream reads their rows (the page
greys them out). Masking them too would give all-zero rows (see attention.py).

Shape legend: B sentences, H heads, n padded length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from attention_core.attention import causal_mask
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.pipeline import build_module, forward
from attention_core.settings import ModelSettings
from attention_core.tokenize import token_labels, tokenize

__all__ = [
    "PAD_TOKEN",
    "PaddedBatch",
    "future_share",
    "padded_batch_attention",
    "padding_mask",
]

PAD_TOKEN = "[PAD]"


def _real_keys(lengths: Sequence[int], n: int) -> Tensor:
    """(B, n) bool, True where position < the sentence's length (a real token)."""
    length = torch.tensor(list(lengths), dtype=torch.long)  # (B,)
    return torch.arange(n)[None, :] < length[:, None]  # (B, n)


def padding_mask(lengths: Sequence[int], n: int, *, causal: bool = False) -> Tensor:
    """Boolean mask for a padded batch, True = this query may attend to this key.

    Without `causal`: (B, 1, 1, n), the key-padding mask alone (broadcasts over heads and
    queries). With `causal`: (B, 1, n, n), key padding AND the lower triangle.
    """
    if any(not 0 <= length <= n for length in lengths):
        raise ValueError(f"every length must be between 0 and n={n}, got {list(lengths)}")
    mask = _real_keys(lengths, n)[:, None, None, :]  # (B, 1, 1, n)
    if causal:
        mask = mask & causal_mask(n)[None, None]  # (B, 1, n, n)
    return mask


@dataclass(frozen=True)
class PaddedBatch:
    """A batch of sentences padded with [PAD] and run through one attention module."""

    texts: list[str]
    tokens: list[list[str]]  # (B, n) token labels, [PAD] at the end of shorter sentences
    lengths: list[int]  # real tokens per sentence
    key_mask: np.ndarray  # (B, n) bool, True = a real token (a key that may be attended to)
    allowed: np.ndarray  # (B, n, n) bool, the full mask: key padding (and causal if chosen)
    weights: np.ndarray  # (B, H, n, n) float32
    alone: list[np.ndarray]  # per sentence (H, len, len): the same module, no batch, no padding
    causal: bool

    @property
    def n(self) -> int:
        return self.key_mask.shape[1]

    def labels(self, b: int) -> list[str]:
        """`index:token` labels of sentence b, [PAD] included."""
        return token_labels(self.tokens[b])

    def view(self, b: int, head: int | None = None) -> np.ndarray:
        """(n, n) weights of sentence b: one head, or the mean over heads when head is None
        (a mean of rows that sum to 1 still sums to 1, and stays 0 on padded keys)."""
        w = self.weights[b]  # (H, n, n)
        return w.mean(axis=0) if head is None else w[head]

    @property
    def pad_weight(self) -> float:
        """The largest total weight any query gives to padded keys (0.0 when the mask works)."""
        pad = ~self.key_mask[:, None, None, :]  # (B, 1, 1, n)
        return float(np.where(pad, self.weights, 0.0).sum(axis=-1).max(initial=0.0))

    @property
    def max_difference(self) -> float:
        """Largest |batched - alone| over every real query and key of every sentence."""
        diffs = [
            float(np.abs(self.weights[b, :, :k, :k] - alone).max(initial=0.0))
            for b, (k, alone) in enumerate(zip(self.lengths, self.alone, strict=True))
        ]
        return max(diffs, default=0.0)


def padded_batch_attention(
    texts: Sequence[str], settings: ModelSettings, *, max_tokens: int = MAX_TOKENS
) -> PaddedBatch:
    """Tokenize `texts` with `settings.tokenizer`, pad to a common length with [PAD], and run
    them as one batch (B, n, C) through the module `settings` describe, with the key-padding
    mask (and the causal mask if `settings.causal`).

    Each sentence is also run alone, unpadded, for comparison. A text without tokens is
    allowed: all its keys are padding, so its rows come out all zero.
    """
    if not texts:
        raise ValueError("texts must hold at least one sentence")
    tokens = [tokenize(t[:MAX_TEXT_CHARS], settings.tokenizer)[:max_tokens] for t in texts]
    labels = [[tok.label for tok in sentence] for sentence in tokens]
    lengths = [len(sentence) for sentence in labels]
    n = max(lengths)
    padded = [sentence + [PAD_TOKEN] * (n - len(sentence)) for sentence in labels]

    module = build_module(settings)
    mask = padding_mask(lengths, n, causal=settings.causal)  # (B, 1, 1 or n, n)
    weights = forward(padded, settings, module=module, mask=mask).weights  # (B, H, n, n)
    alone = [  # each (H, k, k), k its own length
        forward([sentence], settings, module=module).weights[0].numpy().astype(np.float32)
        for sentence in labels
    ]
    allowed = torch.broadcast_to(mask, (len(texts), 1, n, n))[:, 0]  # (B, n, n)
    return PaddedBatch(
        texts=list(texts),
        tokens=padded,
        lengths=lengths,
        key_mask=_real_keys(lengths, n).numpy(),
        allowed=allowed.numpy(),
        weights=weights.numpy().astype(np.float32, copy=False),
        alone=alone,
        causal=settings.causal,
    )


def future_share(weights: np.ndarray) -> float:
    """Mean, over heads and query rows, of the weight a token gives to LATER tokens
    (above the diagonal): 0 under a causal mask. weights: (H, n, n) or (n, n)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]  # (1, n, n)
    if w.ndim != 3 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must have shape (H, n, n) or (n, n), got {w.shape}")
    if w.shape[-1] == 0:
        return 0.0
    upper = np.triu(np.ones(w.shape[-2:], dtype=bool), k=1)  # (n, n)
    return float(np.where(upper, w, 0.0).sum(axis=-1).mean())
