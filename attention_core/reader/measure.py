"""What the card says the reader does, beyond its loss: measured on text it never trained on.

- `reference`: every layer's weights on REFERENCE_TEXTS, so a test can tell the shipped
  files still compute what they computed when they were made;
- `same_word`: each head's attention on the earlier characters of its own word, against
  the same head with the words shuffled (`attention_core.stats.same_word`), over
  sentences and a segmentation of each (jieba's, or a human's);
- `heldout_heads`: each head's mean weight on the previous unit, the start, itself, far
  back and punctuation;

`attention_core.reader.fit.everyday` runs them, with bits per character against the n-gram
baselines, on the everyday held-out set (graded learner sentences in no training file).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np
import torch

from attention_core.reader.model import ReaderLM
from attention_core.reader.vocab import Vocab
from attention_core.reader.words import word_lengths
from attention_core.stats import same_word as same_word_heads
from attention_core.train.corpus import HAN

__all__ = [
    "FAR",
    "REFERENCE_TEXTS",
    "SAME_WORD_SENTENCES",
    "describe",
    "heldout_heads",
    "heldout_same_word",
    "reference",
    "same_word",
]

FAR = 3  # a key more than this many units before its query is "far back"
SAME_WORD_SENTENCES = 500  # held-out Chinese sentences the card's same-word figure reads

# sentences whose attention the card stores, so a test can tell the shipped files still
# compute what they computed when they were made (the article's and a classroom's)
REFERENCE_TEXTS = (
    "中和有一個永和路",
    "老師在教室裡用投影機講解注意力機制，學生們都聽得非常認真喔。",
)


@torch.no_grad()
def reference(model: ReaderLM, vocab: Vocab) -> list[dict]:
    """Each reference sentence's ids and every layer's weights (L, H, n, n), rounded to 7
    decimals (below the float32 tolerance EXACT of the comparison)."""
    out = []
    for text in REFERENCE_TEXTS:
        ids = vocab.encode(text).ids
        _, weights = model(torch.tensor([ids]))
        stacked = torch.stack([w[0] for w in weights])  # (L, H, n, n)
        out.append({"text": text, "ids": ids, "weights": stacked.numpy().round(7).tolist()})
    return out


def _is_cjk(unit: str) -> bool:
    return len(unit) == 1 and bool(HAN.fullmatch(unit))


@torch.no_grad()
def same_word(
    model: ReaderLM,
    vocab: Vocab,
    sentences: Iterable[tuple[str, Sequence[int] | None]],
    *,
    min_cjk: int = 6,
    limit: int = SAME_WORD_SENTENCES,
) -> dict:
    """Each head's same-word attention (causal partners) over `sentences`: (text, word
    lengths over its units, or None for jieba's words). Sentences of fewer than `min_cjk`
    Chinese characters (or under 80 % Chinese), longer than the context, or with no word of
    two characters are skipped; the first `limit` others count. Mean observed and mean
    shuffled mass over them, and their ratio."""
    L, H = model.config.num_layers, model.config.num_heads
    observed, shuffled = np.zeros((L, H)), np.zeros((L, H))
    used = 0
    for text, given in sentences:
        encoded = vocab.encode(text)
        cjk = sum(_is_cjk(u.text) for u in encoded.units)
        too_long = len(encoded.ids) > model.config.context
        if cjk < min_cjk or cjk < 0.8 * len(encoded.units) or too_long:
            continue
        lengths = list(given) if given is not None else word_lengths(text, encoded.units)
        if sum(lengths) != len(encoded.units) or max(lengths) < 2:
            continue
        _, weights = model(torch.tensor([encoded.ids]))
        for layer, w in enumerate(weights):
            for head in same_word_heads(w[0].numpy(), lengths, offset=1, causal=True):
                observed[layer, head.head] += head.observed
                shuffled[layer, head.head] += head.shuffled
        used += 1
        if used == limit:
            break
    ratio = observed / np.maximum(shuffled, 1e-12)
    return {
        "sentences": used,
        "observed": (observed / max(used, 1)).round(4).tolist(),
        "shuffled": (shuffled / max(used, 1)).round(4).tolist(),
        "ratio": ratio.round(3).tolist(),
    }


def heldout_same_word(model: ReaderLM, vocab: Vocab, lines: Sequence[str]) -> dict:
    """`same_word` on held-out lines with jieba's words."""
    return same_word(model, vocab, ((line, None) for line in lines))


def _is_sign(unit: str) -> bool:
    """A punctuation mark (Unicode category P*): ，。、「」 as much as , . ( )."""
    return unicodedata.category(unit[0]).startswith("P")


@torch.no_grad()
def heldout_heads(
    model: ReaderLM, vocab: Vocab, lines: Sequence[str], *, limit: int = SAME_WORD_SENTENCES
) -> dict:
    """Each head's mean weight on held-out text (rows 2 …, whose query has two or more
    earlier tokens to choose from): on the previous unit, on [BOS] (the sentence start), on
    itself, far back (units more than FAR places before the query, [BOS] not counted), and
    — over the rows with an earlier punctuation mark — on those marks. The card's head
    names are read from these (`attention_core.reader.card.head_facts`)."""
    L, H = model.config.num_layers, model.config.num_heads
    sums = {k: np.zeros((L, H)) for k in ("previous", "start", "self", "far", "punctuation")}
    rows_seen = punct_rows = used = 0
    for line in lines:
        encoded = vocab.encode(line)
        n = len(encoded.ids)
        if n < 5 or n > model.config.context:
            continue
        _, weights = model(torch.tensor([encoded.ids]))
        w = torch.stack([x[0] for x in weights]).numpy()  # (L, H, n, n)
        rows = np.arange(2, n)
        sums["previous"] += w[:, :, rows, rows - 1].sum(-1)
        sums["start"] += w[:, :, rows, 0].sum(-1)
        sums["self"] += w[:, :, rows, rows].sum(-1)
        far_back = np.tril(np.ones((n, n), dtype=bool), -FAR - 1)  # (n, n) key < query - FAR
        far_back[:, 0] = False  # [BOS] is the start, not a far unit
        sums["far"] += (w[:, :, rows] * far_back[rows]).sum((-1, -2))
        rows_seen += len(rows)
        sign = np.array([False] + [_is_sign(u.text) for u in encoded.units])  # (n,)
        for i in rows:
            earlier = np.flatnonzero(sign[1:i]) + 1  # punctuation keys before the query
            if len(earlier):
                sums["punctuation"] += w[:, :, i, earlier].sum(-1)
                punct_rows += 1
        used += 1
        if used == limit:
            break
    means = {
        k: v / max(punct_rows if k == "punctuation" else rows_seen, 1) for k, v in sums.items()
    }
    return {
        "sentences": used,
        "rows": rows_seen,
        "punctuation_rows": punct_rows,
        **{k: v.round(4).tolist() for k, v in means.items()},
    }


def describe(model: ReaderLM, vocab: Vocab, heldout_lines: Sequence[str]) -> dict:
    """Reference rows, same-word and each head's pattern masses on the held-out split."""
    return {
        "reference": reference(model, vocab),
        "same_word": heldout_same_word(model, vocab, heldout_lines),
        "heads": heldout_heads(model, vocab, heldout_lines),
    }
