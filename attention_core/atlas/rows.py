"""One sentence's rows of the index: per layer and head, the statistics the app names, and
the head's strongest (query, key) pairs.

Every number comes from the function the app calls for the same thing, on the same
weights, so a head's row here is what the app shows on the fly for that sentence:

    entropy, max_weight (mean row max), previous, first (the sink: [CLS] / [BOS]),
    diagonal, distance      `attention_core.stats.head_stats`
    pattern                 `attention_core.stats.head_patterns` ("" when none is clear)
    same_word, same_word_shuffled   the reader only: `reader.words.sentence_same_word`
                            (jieba's words over its characters, causal partners); NULL
                            elsewhere or when no word has two characters
    induction               causal models only: `train.induction.detector_scores` (Olsson
                            et al. 2022) with equal token ids as "the same token"; NULL when
                            no token repeats or the model is not causal
    agreement               the reader only: Spearman ρ of the head's last row with the
                            integrated-gradients attribution of the reader's own next token
                            (`attribution.side_by_side.head_agreement`; Jain & Wallace
                            2019); NULL elsewhere, for a cut text or under four keys

Pairs: for each head, the PAIRS strongest weights whose key is not a special token
([CLS], [SEP], [BOS] take most of many heads' mass and say nothing about the sentence),
each with `key_pos`, jieba's part-of-speech tag of the word the key token starts in ("n"
noun, "v" verb, "r" pronoun, …; `char_tags`), so a search can ask for "from 它 to a noun".

Shape legend: L layers, H heads, n tokens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attention_core.atlas.models import Reading
from attention_core.atlas.sentences import language, sentence_id
from attention_core.stats import head_patterns, head_stats

__all__ = ["METRICS", "PAIRS", "char_tags", "sentence_rows"]

METRICS = (
    "entropy",
    "max_weight",
    "previous",
    "first",
    "diagonal",
    "distance",
    "same_word",
    "induction",
    "agreement",
)
PAIRS = 2


_TAGGER: Any = None


def char_tags(text: str) -> list[str]:
    """jieba's part-of-speech tag of the word each character of `text` is in ("" for a
    space). Cut and tagged on the Simplified copy (one code point each, so the offsets
    hold), with the project's jieba dictionary, as every word view cuts."""
    global _TAGGER
    from attention_core.tokenize import shared_jieba, simplified_table

    if _TAGGER is None:
        from jieba import posseg

        _TAGGER = posseg.POSTokenizer(shared_jieba())
    simplified = text.translate(simplified_table())
    tags = [""] * len(text)
    at = 0
    for pair in _TAGGER.cut(simplified):
        at = simplified.find(pair.word, at)
        if at < 0:  # jieba changed the text: leave the rest untagged
            break
        if pair.word.strip():
            tags[at : at + len(pair.word)] = [pair.flag] * len(pair.word)
        at += len(pair.word)
    return tags


def _number(value: float) -> float | None:
    """NaN is stored as NULL, so DuckDB's averages leave it out."""
    return None if np.isnan(value) else float(value)


def _induction(weights: np.ndarray, ids: list[int]) -> np.ndarray:
    """(H,) induction score of one layer's (H, n, n) weights, NaN when no token repeats."""
    from attention_core.train.induction import detector_scores

    x = np.asarray(ids)
    n = len(x)
    earlier = (x[:, None] == x[None, :]) & (np.arange(n)[None, :] < np.arange(n)[:, None])
    if not earlier[:, :-1].any():  # (n, n): no repeat with a key after it
        return np.full(weights.shape[0], np.nan)
    return detector_scores(weights[None], x[None])[1]  # (2, H) → (H,)


def sentence_rows(
    reading: Reading, *, causal: bool, same_word: bool
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(the sentence's row, its L·H head rows, its pair rows) for `reading`."""
    sid = sentence_id(reading.text)
    a = reading.attentions  # (L, H, n, n)
    L, H, n, _ = a.shape
    sentence = {
        "sentence": sid,
        "text": reading.text,
        "lang": language(reading.text),
        "n": n,
        "tokens": list(reading.tokens),
        "truncated": reading.truncated,
    }
    heads: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []
    keys_ok = ~np.asarray(reading.special, dtype=bool)  # (n,)
    tags = char_tags(reading.text)
    offsets = reading.offsets or [(0, 0)] * n
    key_pos = [tags[a] if b > a and a < len(tags) else "" for a, b in offsets]  # (n,)
    for layer in range(L):
        w = a[layer]  # (H, n, n)
        stats = head_stats(w)
        patterns = head_patterns(w, stats)
        words = None
        if same_word:
            from attention_core.reader.words import sentence_same_word

            words = sentence_same_word(w, reading.text)
        induction = _induction(w, reading.ids) if causal else np.full(H, np.nan)
        for h, s in enumerate(stats):
            heads.append(
                {
                    "sentence": sid,
                    "layer": layer,
                    "head": h,
                    "entropy": s.entropy,
                    "max_weight": s.max_weight,
                    "previous": s.previous,
                    "first": s.first,
                    "diagonal": s.diagonal,
                    "distance": s.distance,
                    "same_word": _number(words[h].observed) if words else None,
                    "same_word_shuffled": _number(words[h].shuffled) if words else None,
                    "induction": _number(induction[h]),
                    "agreement": None
                    if reading.agreement is None
                    else _number(reading.agreement[layer, h]),
                    "pattern": patterns[h][0] if patterns[h] else "",
                }
            )
            masked = np.where(keys_ok[None, :], w[h], -1.0)  # (n, n): special keys out
            flat = np.argsort(masked, axis=None)[::-1][:PAIRS]
            for rank, index in enumerate(flat):
                q, k = divmod(int(index), n)
                if masked[q, k] < 0:
                    break
                pairs.append(
                    {
                        "sentence": sid,
                        "layer": layer,
                        "head": h,
                        "rank": rank,
                        "query": q,
                        "key": k,
                        "query_token": reading.tokens[q],
                        "key_token": reading.tokens[k],
                        "key_pos": key_pos[k],
                        "weight": float(w[h, q, k]),
                    }
                )
    return sentence, heads, pairs
