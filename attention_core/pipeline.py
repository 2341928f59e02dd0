"""Text in, attention out: tokenize → embed → the project's attention module.

The one forward path of the app. `forward` embeds token lists and runs the seeded module
that a `ModelSettings` describes, or, with `weights="trained"`, runs them through the
project's trained reader up to the chosen layer and that layer's own module
(`attention_core.reader.run`); every page and lesson that runs the project's own attention
goes through it (`analyze` for a sentence, `compare.untrained_attention` for a pretrained
model's tokens, `masking` for a padded batch, `positions` for a shuffled sentence).
`analyze` returns plain NumPy data, so results can be cached, pickled and drawn without
torch.

Shape legend: B sentences, n tokens, C embed_dim, H heads (1 for single-head).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import torch
from torch import Tensor

from attention_core.attention import (
    AttentionTrace,
    MultiHeadAttention,
    SingleHeadAttention,
    build_attention,
    causal_mask,
)
from attention_core.embedding import embed
from attention_core.i18n import t
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.pooling import pool_weights, word_groups
from attention_core.settings import ModelSettings, Settings, parse_settings
from attention_core.tokenize import Token, token_labels, tokenize

__all__ = [
    "Analysis",
    "analyze",
    "build_module",
    "forward",
    "model_settings",
    "queries_keys",
    "token_labels",
]


def build_module(settings: ModelSettings) -> SingleHeadAttention | MultiHeadAttention:
    """The seeded (untrained) module `settings` describe: its weights depend only on
    attention, embed_dim, heads and seed."""
    return build_attention(
        settings.attention, settings.embed_dim, settings.heads, seed=settings.seed
    )


def forward(
    sentences: Sequence[Sequence[Token | str]],
    settings: ModelSettings,
    *,
    module: SingleHeadAttention | MultiHeadAttention | None = None,
    mask: Tensor | None = None,
    divisor: float | None = None,
) -> AttentionTrace:
    """Embed B sentences of equal length n and run them through the module as one batch.

    `settings` give the embedding (embed_dim, seed, positional) and, unless `module` is
    passed, the module. `mask` (bool, broadcastable to (B, H, n, n), True = may attend)
    replaces the causal mask `settings.causal` implies. `divisor` overrides √d_k.
    Returns the trace: weights (B, H, n, n), H = 1 for single-head.
    """
    settings = settings.effective
    if settings.trained:
        if module is not None:
            raise ValueError("the trained reader runs its own layer's module; pass no module")
        from attention_core.reader import load_shipped
        from attention_core.reader.run import layer_trace

        layer = settings.layer or 0
        return layer_trace(load_shipped(), sentences, layer, mask=mask, divisor=divisor)
    module = module or build_module(settings)
    x = _embedded(sentences, settings)  # (B, n, C)
    n = x.shape[1]
    if mask is None and settings.causal:
        mask = causal_mask(n)  # (n, n)
    with torch.inference_mode():
        return module.trace(x, mask, divisor=divisor)


def _embedded(sentences: Sequence[Sequence[Token | str]], settings: ModelSettings) -> Tensor:
    """The sentences' embeddings as `settings` describe them: (B, n, C)."""
    dim, seed, positional = settings.embed_dim, settings.seed, settings.positional
    return torch.cat([embed(list(s), dim, seed=seed, positional=positional) for s in sentences])


def queries_keys(
    tokens: Sequence[Token | str], settings: ModelSettings
) -> tuple[Tensor, Tensor, float]:
    """The untrained module's queries and keys of one sentence, (H, n, D) each, and the
    divisor of its scores (√D): what `forward` computes before the scores, without them."""
    settings = settings.effective
    if settings.trained:
        raise ValueError("queries_keys runs the untrained module; the reader runs its own")
    module = build_module(settings)
    with torch.inference_mode():
        q, k = module.queries_keys(_embedded([tokens], settings))  # (1, H, n, D) each
    return q[0], k[0], module.scale  # (H, n, D) each


@dataclass(frozen=True)
class Analysis:
    """One view's worth of results: tokens, every head's weights and (optionally) the trace."""

    settings: ModelSettings
    text: str  # the text actually tokenized (cut at MAX_TEXT_CHARS)
    tokens: list[Token]  # at most MAX_TOKENS
    total_tokens: int  # the model's tokens in the whole text, before truncation
    text_cut: bool  # the text was longer than MAX_TEXT_CHARS
    weights: np.ndarray  # (H, n, n) float32; H = 1 for single-head
    trace: dict[str, np.ndarray] = field(default_factory=dict)  # AttentionTrace.numpy()
    divisor: float = 1.0
    # trained weights: the tokens the reader's vocabulary does not hold (read as [UNK]),
    # and whether the reader's characters were pooled to jieba words
    unknown: tuple[int, ...] = ()
    pooled: bool = False
    read: int = -1  # tokens the model read (before any pooling); -1: len(tokens)

    @property
    def read_tokens(self) -> int:
        return len(self.tokens) if self.read < 0 else self.read

    @property
    def truncated(self) -> bool:
        return self.text_cut or self.total_tokens > self.read_tokens

    @property
    def labels(self) -> list[str]:
        return token_labels(self.tokens)


def analyze(
    settings: ModelSettings | str,
    *,
    with_trace: bool = False,
    divisor: float | None = None,
    max_tokens: int = MAX_TOKENS,
    **options: object,
) -> Analysis:
    """Run a sentence through tokenizer, embedding and attention.

        >>> a = analyze("中和有一個永和路", embed_dim=8, num_heads=2)
        >>> [t.text for t in a.tokens], a.weights.shape   # (H, n, n): heads, queries, keys
        (['中和', '有', '一個', '永和路'], (2, 4, 4))

    `settings` is the text, with any of `ModelSettings`'s fields as keywords (the app's
    defaults otherwise: tokenizer="auto", attention="multi", embed_dim=16, num_heads=4,
    seed=0, causal=False, positional=False, weights="untrained"), or a `ModelSettings`.
    Every row of `weights` sums to 1.

    `divisor` overrides √d_k (see `AttentionTrace`). With `with_trace` every step's
    array is kept (larger; only the teaching pages need it).

    Trained weights read the reader's units ([BOS], then a character or an English word
    each) up to its context; with the jieba tokenizer and no trace, the characters'
    attention is pooled to jieba words (`attention_core.pooling`).
    """
    settings = model_settings(settings, **options).effective
    text = settings.text[:MAX_TEXT_CHARS]
    unknown: list[int] = []
    if settings.trained:
        from attention_core.reader import load_shipped
        from attention_core.reader.run import reader_tokens

        reader = load_shipped()
        read = reader_tokens(text, reader.vocab)
        all_tokens, unknown = read.tokens, read.unknown
        max_tokens = min(max_tokens, reader.config.context)
    else:
        all_tokens = tokenize(text, settings.tokenizer)
    tokens = all_tokens[:max_tokens]
    t = forward([tokens], settings, divisor=divisor)
    weights = t.weights[0].numpy().astype(np.float32, copy=False)  # (H, n, n)
    unknown = [i for i in unknown if i < len(tokens)]
    pooled = settings.trained and settings.tokenizer == "jieba" and not with_trace
    if pooled:
        tokens, weights, unknown = _pool_to_words(tokens, weights, unknown, text)
    return Analysis(
        settings=settings,
        text=text,
        tokens=tokens,
        total_tokens=len(all_tokens),
        text_cut=len(settings.text) > MAX_TEXT_CHARS,
        weights=weights,
        trace=t.numpy() if with_trace else {},
        divisor=t.divisor,
        unknown=tuple(unknown),
        pooled=pooled,
        read=t.weights.shape[-1],
    )


def model_settings(settings: ModelSettings | str, **options: object) -> ModelSettings:
    """`settings`, or a text with keyword settings checked by the app's one validator
    (`settings.parse_settings`): a ValueError names each value that is wrong and why."""
    if isinstance(settings, ModelSettings):
        if options:
            raise ValueError(f"keyword settings go with a text, not a ModelSettings: {options}")
        return settings
    if not isinstance(settings, str):
        raise ValueError(f"a text or a ModelSettings, not {type(settings).__name__}")
    names = {f.name for f in fields(ModelSettings)} - {"text"}
    if unknown := sorted(set(options) - names):
        raise ValueError(f"unknown settings {unknown}: choose from {sorted(names)}")
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}
    parsed, problems = parse_settings({**params, "text": settings}, base=Settings())
    if problems:
        raise ValueError(
            "; ".join(f"{p.key}={p.value}: {t(p.reason, 'en', **p.params)}" for p in problems)
        )
    values = {f.name: getattr(parsed, f.name) for f in fields(ModelSettings)}
    return ModelSettings(**values)


def _pool_to_words(
    tokens: list[Token], weights: np.ndarray, unknown: list[int], text: str
) -> tuple[list[Token], np.ndarray, list[int]]:
    """Characters → jieba words: (word tokens, (H, m, m) weights, the words holding an
    unknown character)."""
    groups = word_groups([(t.start, t.end) for t in tokens], [t.special for t in tokens], text)
    words = [
        Token(text[a:b], a, b) if joined else tokens[int(np.argmax(groups.group == w))]
        for w, ((a, b), joined) in enumerate(zip(groups.spans, groups.joined, strict=True))
    ]
    pooled = pool_weights(weights, groups.group).astype(np.float32)  # (H, m, m)
    return words, pooled, sorted({int(groups.group[i]) for i in unknown})
