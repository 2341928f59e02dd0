"""What the shipped reader is, read from its card alone (JSON; no torch, no weights).

The sidebar needs the checkpoint's shape (embed_dim, heads, layers) and the layer a view
starts on before anything heavy is imported; the URL validator needs the layer count. Both
come from data/reader/card.json. The weights themselves, and the hash check that pins
them to this card, are `attention_core.reader.weights`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from attention_core.resources import DATA_DIR

__all__ = [
    "CARD",
    "HEAD_PATTERNS",
    "RETRAIN",
    "SHIPPED_DIR",
    "HeadFact",
    "ReaderError",
    "ReaderShape",
    "head_facts",
    "measured",
    "shipped_shape",
]

SHIPPED_DIR = DATA_DIR / "reader"
CARD = "card.json"
RETRAIN = "python -m attention_core.reader.fit"


class ReaderError(RuntimeError):
    """The reader's files are missing, corrupted or do not belong together."""


@dataclass(frozen=True)
class ReaderShape:
    """The checkpoint's fixed sizes, and the layer whose heads show the clearest pattern."""

    embed_dim: int
    num_heads: int
    num_layers: int
    context: int  # positions, [BOS] included
    default_layer: int


def read_card(folder: Path) -> dict[str, Any]:
    """The card in `folder` as a dict (ReaderError when it is missing or not JSON)."""
    try:
        card = json.loads((Path(folder) / CARD).read_text("utf-8"))
    except FileNotFoundError:
        raise ReaderError(f"no trained reader in {folder} (make one with `{RETRAIN}`)") from None
    except (ValueError, OSError) as error:
        raise ReaderError(f"{Path(folder) / CARD} is not a reader card: {error}") from None
    if not isinstance(card, dict):
        raise ReaderError(f"{Path(folder) / CARD} is not a reader card")
    return card


def measured(card: dict[str, Any]) -> dict[str, Any]:
    """The card's head measurements a page shows: on the everyday held-out set when the
    card has them (what a class types), else on the corpus's held-out split; a dict with
    "same_word" and "heads" (fit.py's `everyday` / `describe`)."""
    everyday = card.get("everyday")
    if isinstance(everyday, dict) and "same_word" in everyday and "heads" in everyday:
        return everyday
    return card


def _clearest_layer(card: dict[str, Any], layers: int) -> int:
    """The layer holding the head with the highest held-out same-word ratio (fit.py's
    measurement); layer 0 when the card does not have it."""
    ratio = measured(card).get("same_word", {}).get("ratio")
    try:
        best = max((r, layer) for layer, row in enumerate(ratio) for r in row)[1]
    except (TypeError, ValueError):
        return 0
    return best if 0 <= best < layers else 0


@lru_cache(maxsize=1)
def shipped_shape() -> ReaderShape | None:
    """The shipped checkpoint's shape, or None when its card cannot be read (the app then
    says so when the trained weights are asked for; the untrained module is unaffected)."""
    try:
        card = read_card(SHIPPED_DIR)
        config = {k: int(card["config"][k]) for k in ("embed_dim", "num_heads", "num_layers")}
        context = int(card["config"]["context"])
    except (ReaderError, KeyError, TypeError, ValueError):
        return None
    return ReaderShape(
        **config, context=context, default_layer=_clearest_layer(card, config["num_layers"])
    )


# --- what each head does, measured on held-out text (fit.py's `heldout_heads`) ------------
HEAD_PATTERNS = ("previous", "start", "self", "punctuation", "far")
NAME_MASS = 0.3  # a head is named after a pattern its rows put this much weight on, on average
WORD_RATIO = 1.25  # …or after its word, when its same-word attention beats shuffled words so


@dataclass(frozen=True)
class HeadFact:
    """One head of the shipped reader on held-out text: its plain name and the numbers."""

    layer: int
    head: int
    name: str | None  # one of HEAD_PATTERNS, "word", "taught", or None (no clear pattern)
    value: float  # the statistic behind the name: a mean weight, or the same-word ratio
    masses: dict[str, float]  # HEAD_PATTERNS (those the card measured) → mean weight
    word_observed: float  # mean weight on the earlier characters of its own jieba word
    word_shuffled: float  # the same, against shuffled word boundaries (lengths kept)
    taught: bool = False  # trained to look within its word (fit.py's word head), not found

    @property
    def far(self) -> float:
        """Mean weight on units more than FAR places back (0 on a card without it)."""
        return self.masses.get("far", 0.0)

    @property
    def word_ratio(self) -> float:
        return self.word_observed / self.word_shuffled if self.word_shuffled > 0 else 0.0


def _name(masses: dict[str, float], observed: float, ratio: float) -> tuple[str | None, float]:
    """A head's plain name: its word when it beats shuffled words and its rows put more on
    the earlier characters of their word than on any one pattern (a word head's previous
    character is often in its word); else its pattern when clear; else its word; else none.
    The head fit.py taught its word is named "taught" whatever it measures."""
    pattern, mass = max(masses.items(), key=lambda kv: kv[1])
    if ratio >= WORD_RATIO and observed > mass:
        return "word", ratio
    if mass >= NAME_MASS:
        return pattern, mass
    if ratio >= WORD_RATIO:
        return "word", ratio
    return None, mass


@lru_cache(maxsize=1)
def head_facts() -> tuple[tuple[HeadFact, ...], ...] | None:
    """Per layer, per head, what the shipped card measured; None when the card lacks it."""
    try:
        card = read_card(SHIPPED_DIR)
        figures = measured(card)
        heads, words = figures["heads"], figures["same_word"]
        taught = tuple(card.get("word_head") or ())
        layers = len(words["observed"])
        facts = []
        for layer in range(layers):
            row = []
            for head in range(len(words["observed"][layer])):
                masses = {k: float(heads[k][layer][head]) for k in HEAD_PATTERNS if k in heads}
                observed = float(words["observed"][layer][head])
                shuffled = float(words["shuffled"][layer][head])
                ratio = observed / shuffled if shuffled > 0 else 0.0
                is_taught = taught == (layer, head)
                name, value = ("taught", ratio) if is_taught else _name(masses, observed, ratio)
                row.append(
                    HeadFact(layer, head, name, value, masses, observed, shuffled, is_taught)
                )
            facts.append(tuple(row))
    except (ReaderError, KeyError, TypeError, ValueError, IndexError):
        return None
    return tuple(facts)
