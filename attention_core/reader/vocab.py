"""The trained reader's units and vocabulary: a Chinese character, an English word, a sign.

The model reads Chinese by the character (every character of the training corpus has its
own id) and English by the word (lower-cased; a word seen at least `MIN_WORD_COUNT` times
in the corpus has an id). Digits are one unit each; any other non-space character is a
unit of its own; spaces only separate units. What the vocabulary does not hold becomes
`[UNK]`, and `encode` says which units those were, so a page can flag and count them
exactly as it counts a pretrained tokenizer's [UNK]s: nothing is dropped silently.

`[BOS]` starts every sentence (a line of the corpus); the heads may use it as a place to
put attention that has nowhere better to go, as real models use their first token.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BOS", "MIN_WORD_COUNT", "UNK", "Encoded", "Unit", "Vocab", "units"]

UNK = "[UNK]"
BOS = "[BOS]"
MIN_WORD_COUNT = 10  # English words rarer than this in the corpus are [UNK] (95.8 % covered)
# a Latin word (letters, inner apostrophes/hyphens not included), one digit, or any other
# single non-space character (a Chinese character, a punctuation mark, an emoji's code point)
_UNIT_RE = re.compile(r"[A-Za-z]+|\S")
_WORD_RE = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Unit:
    """One unit of the text: what it says, where it is (text[start:end]), its vocabulary key."""

    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        """The vocabulary entry: English words lower-cased, everything else as written."""
        return self.text.lower() if _WORD_RE.fullmatch(self.text) else self.text

    @property
    def is_word(self) -> bool:
        return bool(_WORD_RE.fullmatch(self.text))


def units(text: str) -> list[Unit]:
    """The text cut into the reader's units (see the module docstring)."""
    return [Unit(m.group(), m.start(), m.end()) for m in _UNIT_RE.finditer(text)]


@dataclass(frozen=True)
class Encoded:
    """A text as the model reads it: ids start with [BOS]; `unknown` indexes into `units`."""

    ids: list[int]  # [BOS] + one id per unit
    units: list[Unit]
    unknown: list[int]  # positions (in `units`) the vocabulary does not hold

    @property
    def unknown_share(self) -> float:
        return len(self.unknown) / len(self.units) if self.units else 0.0


class Vocab:
    """Unit ↔ id. Ids 0 and 1 are [UNK] and [BOS]; the rest in the order of `tokens`."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self.tokens = [UNK, BOS, *(t for t in tokens if t not in (UNK, BOS))]
        self.index = {t: i for i, t in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            raise ValueError("the vocabulary holds a token twice")

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def unk_id(self) -> int:
        return 0

    @property
    def bos_id(self) -> int:
        return 1

    def encode(self, text: str) -> Encoded:
        pieces = units(text)
        ids = [self.bos_id]
        unknown = []
        for i, unit in enumerate(pieces):
            token_id = self.index.get(unit.key)
            if token_id is None:
                unknown.append(i)
                token_id = self.unk_id
            ids.append(token_id)
        return Encoded(ids, pieces, unknown)

    @classmethod
    def from_corpus(cls, lines: Iterable[str], *, min_word_count: int = MIN_WORD_COUNT) -> Vocab:
        """Every non-word unit of `lines`, and the words seen `min_word_count` times or more;
        ordered by count (most frequent first), ties by the unit itself: deterministic."""
        counts: Counter[str] = Counter()
        for line in lines:
            counts.update(u.key for u in units(line))
        kept = [
            (token, n)
            for token, n in counts.items()
            if n >= min_word_count or not _WORD_RE.fullmatch(token)
        ]
        kept.sort(key=lambda item: (-item[1], item[0]))
        return cls(token for token, _ in kept)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.tokens, ensure_ascii=False, indent=0) + "\n", "utf-8")

    @classmethod
    def load(cls, path: Path) -> Vocab:
        tokens = json.loads(path.read_text("utf-8"))
        if not isinstance(tokens, list) or tokens[:2] != [UNK, BOS]:
            raise ValueError(f"{path} is not a reader vocabulary (it must start [UNK], [BOS])")
        if not all(isinstance(t, str) for t in tokens):
            raise ValueError(f"{path} holds an entry that is not a string")
        return cls(tokens)
