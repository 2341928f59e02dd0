"""The attention views `agreement` sets beside an attribution, for the same text and the
same target, read from the model's own forward pass:

    raw        each head's attention row at the target's position (L, H, n)
    norm       that row weighted by what each key moves, ‖α_ij · f_h(x_j)‖ (Kobayashi
               et al. 2020; `lens.norms`)
    rollout    the row of attention rollout after each layer (L, n) (Abnar & Zuidema 2020;
               `lens.combine`)
    ablation   each head's effect on the target itself: the target with the head knocked
               out (`lens.ablation.branched`) minus the target as it is (L, H)

An encoder's target is its mean-pooled sentence embedding, which reads every position: its
"row" is the mean of all rows. A causal model's row covers the keys up to its position.

Shape legend: L layers, H heads, n tokens, m keys compared (n, or position + 1), B copies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attention_core.attribution.result import Attribution
from attention_core.attribution.subjects import Subject
from attention_core.lens.ablation import batch_rows, branched
from attention_core.lens.combine import rollout
from attention_core.lens.norms import norm_weighted
from attention_core.lens.reader_lens import reader_attention, reader_norm_weighted
from attention_core.limits import MAX_TOKENS

__all__ = ["AttentionViews", "attention_views"]


@dataclass(frozen=True)
class AttentionViews:
    """What attention says about the target's row, beside what knocking heads out does."""

    keys: np.ndarray  # (m,) int, the key positions compared
    attentions: np.ndarray  # (L, H, n, n) float32, the model's own weights
    raw: np.ndarray  # (L, H, m)
    norm: np.ndarray  # (L, H, m)
    rollout: np.ndarray  # (L, m)
    ablation: np.ndarray  # (L, H): target with the head knocked out − target as it is


def attention_views(
    subject: Subject,
    attribution: Attribution,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> AttentionViews:
    """The views of `subject`'s text at `attribution`'s target (see the module's doc)."""
    if subject.reader is not None:
        read = reader_attention(subject.reader, subject.text)
        attentions = read.attentions  # (L, H, n, n)
        weighted = reader_norm_weighted(subject.reader, subject.text)  # (L, H, n, n)
    else:
        attentions = _attentions(subject)
        weighted = norm_weighted(
            subject.loaded, subject.text, attentions=attentions, max_tokens=MAX_TOKENS
        )
    n = attentions.shape[-1]
    if n != len(subject.ids):
        raise ValueError(f"the attention views read {n} tokens, the attribution {len(subject.ids)}")
    if subject.kind == "encoder":
        keys = np.arange(n)
        raw, norm = attentions.mean(axis=2), weighted.mean(axis=2)  # (L, H, n)
        rolled = rollout(attentions).mean(axis=1)  # (L, n)
    else:
        p = attribution.position
        keys = np.arange(p + 1)
        raw, norm = attentions[:, :, p, : p + 1], weighted[:, :, p, : p + 1]  # (L, H, m)
        rolled = rollout(attentions)[:, p, : p + 1]  # (L, m)
    return AttentionViews(
        keys=keys,
        attentions=attentions,
        raw=raw.astype(np.float64),
        norm=norm.astype(np.float64),
        rollout=rolled.astype(np.float64),
        ablation=_ablation(subject, attribution, attentions.shape[:2], progress),
    )


def _attentions(subject: Subject) -> np.ndarray:
    """(L, H, n, n): the eager model's own weights on the subject's ids."""
    import torch

    ids = torch.tensor([subject.ids])  # (1, n)
    base = getattr(subject.module, "base_model", subject.module)
    with torch.no_grad():
        out = base(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
    return torch.cat(out.attentions, dim=0).to(torch.float32).numpy()  # (L, H, n, n)


def _ablation(
    subject: Subject,
    attribution: Attribution,
    shape: tuple[int, int],
    progress: Callable[[int, int], None] | None,
) -> np.ndarray:
    """(L, H): each head knocked out alone, the target's change (`lens.ablation.branched`:
    the layers below each head run once)."""
    n = len(subject.ids)

    def forward(module: Any, copies: int) -> Any:
        embeds = subject.embeds.expand(copies, -1, -1)  # (B, n, C)
        if subject.kind == "encoder":
            return subject.run(embeds, module=module)  # (B,)
        logits = subject.run(embeds, attribution.position, module=module)  # (B, V)
        return logits[:, attribution.target]  # (B,)

    rows = batch_rows(shape[1], n)  # every head of a layer at once, up to ~50 MB of scores
    found = branched(subject.module, forward, rows=rows, progress=progress)
    if found.effects.shape != shape:
        raise ValueError(f"ablation read {found.effects.shape[:2]} heads, the views {shape}")
    return found.effects
