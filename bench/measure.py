"""What the benchmark sections measure with: the repository, texts of exactly n tokens,
the CPU time of every process a benchmark started, a call's median wall and CPU time, and
a tiny random Llama of a given depth."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["REPO", "cpu_seconds", "sentence", "timed", "tiny_llama"]

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


def timed(call: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of `call` over `repeats` runs, and its last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def tiny_llama(layers: int, *, stops: bool = True) -> tuple[Any, Any]:
    """A random Llama (64 wide, 4 heads sharing 2 key/value heads, 4 096 positions, seed 0,
    transformers' default attention) with the zoo's tokenizer; `stops=False`: no end token,
    so a run writes every step it is asked for."""
    import torch
    import transformers

    from attention_core.pretrained import tiny_family

    _, tokenizer = tiny_family("llama", context=4096)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        **({} if stops else {"eos_token_id": None}),
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(config)
    return model.eval(), tokenizer
