"""What `attribute` returns: one score per input token for one target, and how to read it
as characters or jieba words.

Shape legend: n input tokens (special tokens included), m characters or words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attention_core.pooling import ReadablePieces

__all__ = ["METHODS", "Attribution", "AttributionRefused"]

# integrated gradients (Sundararajan et al. 2017), input × gradient (Shrikumar et al. 2016),
# occlusion: each token's embedding set to the baseline alone (Zeiler & Fergus 2014)
METHODS = ("integrated_gradients", "input_x_gradient", "occlusion")


class AttributionRefused(ValueError):
    """The model or the input cannot be attributed: the message says why and what to do."""


@dataclass(frozen=True)
class Attribution:
    """Scores over the model's input embeddings (`get_input_embeddings()`'s output, summed
    over the embedding dimension) for one target: a decoder's logit of `target` at
    `position`, or an encoder's sentence-embedding similarity to `target_text`.

    Integrated gradients keep their completeness: `scores.sum()` ≈ `output` −
    `baseline_output`; `completeness_gap` is the difference as a fraction of that change.
    Occlusion's score of token i is `output` minus the output with token i's embedding set
    to the baseline (zeros), every other token as it was.
    """

    method: str  # one of METHODS
    model: str  # "reader" or the model's name
    text: str
    tokens: list[str]  # (n,) each token as the model's tokenizer writes it
    ids: list[int]  # (n,)
    special: list[bool]  # (n,) [BOS], [CLS], [SEP]…
    scores: np.ndarray  # (n,) float64
    position: int  # the row the target is read at, from 0 (a decoder); n − 1 for an encoder
    target: int | None  # the token id whose logit is explained; None for an encoder
    target_token: str  # that token as text, or the second sentence of an encoder's target
    output: float  # f(x): the target's logit (or similarity) for the text as it is
    baseline_output: float | None  # f(baseline), integrated gradients only
    steps: int | None  # integrated gradients' steps along the path
    kind: str  # "reader", "decoder" or "encoder"
    characters: ReadablePieces = field(repr=False)  # the pieces as the characters they make
    words: ReadablePieces = field(repr=False)  # the same pieces grouped by jieba word

    @property
    def completeness_gap(self) -> float | None:
        """|Σ scores − (f(x) − f(baseline))| / |f(x) − f(baseline)| for integrated
        gradients (Sundararajan et al. 2017, "completeness"); None for the other methods."""
        if self.baseline_output is None:
            return None
        change = self.output - self.baseline_output
        return abs(float(self.scores.sum()) - change) / max(abs(change), 1e-12)

    def pooled(self, level: str = "words") -> tuple[list[str], np.ndarray]:
        """(labels, scores (m,)): the pieces' scores summed per character ("characters") or
        per jieba word ("words"); the total is the pieces' total."""
        if level not in ("characters", "words"):
            raise ValueError(f"level must be 'characters' or 'words', got {level!r}")
        pieces = self.characters if level == "characters" else self.words
        sums = np.array([self.scores[run].sum() for run in pieces.groups], dtype=np.float64)
        return list(pieces.labels), sums
