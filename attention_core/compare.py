"""Comparing attention heads: differences, sorted statistics, pretrained layers, and the
project's untrained module run on a pretrained model's own tokens.

Feeds the "Compare heads" and "Pretrained attention" pages. Everything takes and returns
plain NumPy / Python data (head weights are row-stochastic (H, n, n) arrays, rows =
queries, columns = keys), so the functions work in a notebook as well as in the app.

The trained-vs-untrained contrast (`untrained_attention`) is the point the article ends on:
a freshly initialised module already produces rows that sum to 1, but "因為只是宣告沒有訓練，
所以目前的attentation score出來沒有意義" — without training the scores mean nothing yet.

Shape legend: L layers, H heads, n tokens, m tokens left after hiding special tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.pooling import readable_pieces
from attention_core.settings import ModelSettings
from attention_core.stats import STAT_NAMES, HeadStats, head_stats
from attention_core.tokenize import token_labels

if TYPE_CHECKING:  # only for hints: the module itself does not need torch or transformers
    from attention_core.pretrained import PretrainedAttention

__all__ = [
    "all_layers",
    "difference_peak",
    "diverging_limit",
    "head_difference",
    "layer_view",
    "most_focused_head",
    "pretrained_labels",
    "readable_result",
    "same_tokens",
    "sort_heads",
    "stack_heads",
    "stats_rows",
    "unknown_pieces",
    "untrained_attention",
    "visible_tokens",
]


def head_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A − B of two heads' weights, (n, n) each → (n, n) float32.

    Positive where head A puts more weight than head B. Only defined when both heads
    look at the same tokens, i.e. the matrices have the same shape.
    """
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"head A must be an (n, n) matrix, got shape {a.shape}")
    if a.shape != b.shape:
        raise ValueError(
            f"heads A and B must have the same shape to be subtracted, got {a.shape} and "
            f"{b.shape}; compare configurations that produce the same tokens"
        )
    return a - b


def difference_peak(diff: np.ndarray) -> float:
    """max |diff| (0.0 for an empty or all-zero difference): how far apart two heads get."""
    d = np.asarray(diff, dtype=np.float64)
    return float(np.nanmax(np.abs(d))) if d.size else 0.0


def diverging_limit(diff: np.ndarray) -> float:
    """The symmetric colour limit ±max|diff| for a difference map centred on 0.

    1.0 when the difference is all zero (or empty), so an all-zero map is drawn in the
    neutral middle colour instead of stretching a zero-width range.
    """
    peak = difference_peak(diff)
    return peak if peak > 0 else 1.0


def same_tokens(a: Sequence[str], b: Sequence[str]) -> bool:
    """Do two configurations' token lists match exactly (same pieces, same order)?"""
    return list(a) == list(b)


def stack_heads(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Heads of two configurations on the same tokens as one stack: (Ha, n, n) and
    (Hb, n, n) → (Ha + Hb, n, n), e.g. for one similarity matrix across both."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    if a.ndim != 3 or b.ndim != 3 or a.shape[1:] != b.shape[1:]:
        raise ValueError(
            f"both stacks must be (H, n, n) with the same n, got {a.shape} and {b.shape}"
        )
    return np.concatenate([a, b])  # (Ha + Hb, n, n)


def sort_heads(stats: Sequence[HeadStats], metric: str, *, descending: bool = True) -> list[int]:
    """Positions into `stats` ordered by `metric`, one of STAT_NAMES, or "head" for the
    order given (e.g. configuration A's heads, then B's; `descending` is then ignored).

    Ties keep the original order (a stable sort), so the result is deterministic.
    """
    if metric == "head":
        return list(range(len(stats)))
    if metric not in STAT_NAMES:
        raise ValueError(f"metric must be 'head' or one of {', '.join(STAT_NAMES)}; got {metric!r}")
    values = [float(getattr(s, metric)) for s in stats]
    # negate the key rather than reverse the list, so ties keep their original order
    sign = -1.0 if descending else 1.0
    return sorted(range(len(values)), key=lambda i: sign * values[i])


def stats_rows(
    stats: Sequence[HeadStats], names: Sequence[str], labels: Sequence[str]
) -> list[dict[str, float | str]]:
    """One table row per head: its name, every statistic, and the label of its top key."""
    if len(names) != len(stats):
        raise ValueError(f"need one name per head: {len(stats)} heads, {len(names)} names")
    rows: list[dict[str, float | str]] = []
    for s, name in zip(stats, names, strict=True):
        row: dict[str, float | str] = {"head": name}
        row.update({metric: float(getattr(s, metric)) for metric in STAT_NAMES})
        row["top_key"] = labels[s.top_key] if 0 <= s.top_key < len(labels) else ""
        rows.append(row)
    return rows


def untrained_attention(
    tokens: Sequence[str], model: ModelSettings | None = None, /, **fields: Any
) -> np.ndarray:
    """The project's own (untrained, seeded) module on a given token list → (H, n, n).

    `pipeline.forward`, on tokens chosen by the caller, e.g. a pretrained model's WordPiece
    tokens, so a trained head and an untrained one can be compared on identical axes.
    The module is the one `model` describes (its text and tokenizer are not used; default
    `ModelSettings()`), with any `ModelSettings` field given as a keyword in its place:
    `untrained_attention(tokens, embed_dim=8, seed=3)`. H = 1 for "single".
    """
    from attention_core.pipeline import forward

    settings = replace(model or ModelSettings(), **fields)
    weights = forward([list(tokens)], settings).weights  # (1, H, n, n)
    return weights[0].numpy().astype(np.float32, copy=False)  # (H, n, n)


def readable_result(result: PretrainedAttention, tokenizer: Any) -> PretrainedAttention:
    """`result` as text: the byte pieces of a byte-level BPE tokenizer (GPT-2, Llama 3,
    Qwen) joined into the characters they make, "Ġ"/"▁" as spaces, every attention pooled
    to them (`pooling.readable_pieces`: keys summed, queries averaged, rows still sum to
    1). `result` itself when no label joins pieces (BERT's WordPiece, most English)."""
    ids = tokenizer.convert_tokens_to_ids(result.tokens)
    text = readable_pieces(tokenizer, ids)  # the text's pieces (and what a decoder wrote)
    written = None
    if result.decoder_tokens is not None:
        written = readable_pieces(tokenizer, tokenizer.convert_tokens_to_ids(result.decoder_tokens))
    if not text.merged and not (written is not None and written.merged):
        return replace(result, tokens=text.labels)

    def any_of(flags: list[bool] | None) -> list[bool] | None:
        return None if flags is None else [any(flags[i] for i in run) for run in text.groups]

    changes: dict[str, Any] = {
        "tokens": text.labels,
        "offsets": text.spans(result.offsets),
        "special": text.special,
        "unknown": any_of(result.unknown),
        "generated": any_of(result.generated),
        "attentions": text.pool(result.attentions).astype(np.float32),  # (L, H, m, m)
    }
    if written is not None:
        changes["decoder_tokens"] = written.labels
        if result.decoder_attentions is not None:
            changes["decoder_attentions"] = written.pool(result.decoder_attentions).astype(
                np.float32
            )
        if result.cross_attentions is not None:
            changes["cross_attentions"] = written.pool(result.cross_attentions, text).astype(
                np.float32
            )
    return replace(result, **changes)


def visible_tokens(result: PretrainedAttention, *, hide_special: bool = False) -> list[str]:
    """The model's tokens as shown: all of them, or without [CLS]/[SEP] when hidden."""
    return [
        token
        for token, special in zip(result.tokens, result.special, strict=True)
        if not (hide_special and special)
    ]


def pretrained_labels(result: PretrainedAttention, *, hide_special: bool = False) -> list[str]:
    """`index:token` labels of a pretrained result, without [CLS]/[SEP] when hidden.

    Indices count the tokens shown, so they match the rows of `layer_view`.
    """
    return token_labels(visible_tokens(result, hide_special=hide_special))


def layer_view(
    result: PretrainedAttention, layer: int, *, hide_special: bool = False
) -> np.ndarray:
    """One layer's heads, (H, n, n), or (H, m, m) with special tokens hidden.

    Hiding drops [CLS]/[SEP] rows and columns and renormalises each row to sum 1
    (`pretrained.hide_special`): the numbers are then shares of the attention that went to
    ordinary tokens, no longer the model's raw weights.
    """
    from attention_core.pretrained import hide_special as drop_special

    L = result.attentions.shape[0]
    if not 0 <= layer < L:
        raise ValueError(f"layer must be between 0 and {L - 1}, got {layer}")
    w = result.attentions[layer]  # (H, n, n)
    if hide_special:
        w = drop_special(w, result.special)  # (H, m, m)
    return np.ascontiguousarray(w, dtype=np.float32)


def all_layers(result: PretrainedAttention, *, hide_special: bool = False) -> np.ndarray:
    """Every layer's heads, (L, H, n, n), or (L, H, m, m) with special tokens hidden."""
    from attention_core.pretrained import hide_special as drop_special

    w = result.attentions  # (L, H, n, n)
    if hide_special:
        w = drop_special(w, result.special)  # (L, H, m, m)
    return np.asarray(w, dtype=np.float32)


def most_focused_head(attentions: np.ndarray) -> tuple[int, int]:
    """(layer, head) of the head whose rows are most concentrated (lowest mean entropy).

    `attentions` (L, H, n, n). A trained model's most focused head is a clear example of a
    learned pattern (e.g. "look at the previous token"), the opposite of an untrained head's
    nearly uniform rows. Ties go to the lowest layer, then the lowest head.
    """
    w = np.asarray(attentions)
    if w.ndim != 4 or w.shape[0] * w.shape[1] == 0:
        raise ValueError(f"attentions must be (L, H, n, n) with L, H >= 1, got {w.shape}")
    L, H = w.shape[:2]
    entropy = np.array([[s.entropy for s in head_stats(w[layer])] for layer in range(L)])  # (L, H)
    layer, head = np.unravel_index(int(np.argmin(entropy)), (L, H))
    return int(layer), int(head)


def unknown_pieces(result: PretrainedAttention, text: str) -> list[str]:
    """The stretches of `text` that the model's vocabulary turned into its unknown token.

    Taken from the token offsets, so "中和有一個永和路" through an English WordPiece model
    gives ["個", "路"]; a token without an offset shows as the token itself ("[UNK]").
    """
    pieces = []
    for token, (start, end), unknown in zip(
        result.tokens, result.offsets, result.unknown, strict=True
    ):
        if unknown:
            pieces.append(text[start:end] if end > start else token)
    return pieces
