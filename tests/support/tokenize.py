"""What the tokenizer tests share: the offset invariants, token texts and spans, a fresh Python.

test_tokenize.py (every mode, the references) and test_tokenize_jieba.py (Chinese words,
jieba's dictionary and cache) check their tokens with these.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from attention_core.tokenize import Token

REPO = Path(__file__).resolve().parents[2]


def check_invariants(text: str, tokens: list[Token]) -> None:
    prev: Token | None = None
    for t in tokens:
        assert not t.special
        assert text[t.start : t.end] == t.text
        assert t.text.strip() != ""
        if prev is not None:
            # increasing and non-overlapping; only WordPiece may show one character as several
            # pieces (Hangul 두 -> ᄃ ##ᅮ after NFD), and those pieces share the same span
            same_span = (t.start, t.end) == (prev.start, prev.end) and t.piece is not None
            assert t.start >= prev.end or same_span
        prev = t


def texts(tokens: list[Token]) -> list[str]:
    return [t.text for t in tokens]


def spans(tokens: list[Token]) -> list[tuple[int, int]]:
    return [(t.start, t.end) for t in tokens]


def fresh_python(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`script` run by a new interpreter in the repository, `env` added to the environment."""
    command = [sys.executable, "-c", script]
    return subprocess.run(
        command, cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )
