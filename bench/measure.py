"""What the benchmark sections measure with: the repository, texts of exactly n tokens,
and the CPU time of every process a benchmark started."""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPO", "cpu_seconds", "sentence"]

REPO = Path(__file__).resolve().parent.parent

# CJK Unified Ideographs U+4E00..U+9FFF: with the `char` tokenizer each is exactly one token,
# so n of them make a sentence of n tokens, all distinct (no equal embeddings).
_CJK_FIRST, _CJK_COUNT = 0x4E00, 20_902


def sentence(n: int, *, variant: int = 0) -> str:
    """A text of exactly `n` tokens under the `char` tokenizer; each `variant` is another
    text of the same length (so it misses every cache)."""
    if not 1 <= n <= _CJK_COUNT:
        raise ValueError(f"n must be between 1 and {_CJK_COUNT}, got {n}")
    offset = variant * 1009  # a prime step: variants do not repeat for a long while
    return "".join(chr(_CJK_FIRST + (offset + i) % _CJK_COUNT) for i in range(n))


def cpu_seconds() -> float:
    """User + system CPU seconds used so far by every process this benchmark started
    (the Streamlit server, Playwright's driver, Chromium and its renderers): all the
    descendants of this process, which itself only waits."""
    import psutil

    total = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
        except psutil.Error:  # ended between listing and reading
            continue
        total += t.user + t.system
    return total
