"""Section 1, core: the attention module against PyTorch's, and tokenizer throughput.

The project's `MultiHeadAttention` always materialises its weights (that is the point of
the app), so its reference is `torch.nn.MultiheadAttention(batch_first=True)` called with
`need_weights=True, average_attn_weights=False`, which does the same work, on the same
input with the same weights copied in. Both run under `torch.inference_mode()`; calls are
interleaved (ours, theirs, theirs, ours, ...) so a burst of load on a shared machine hits
both alike, and the medians are compared.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from attention_core.resources import DATA_DIR
from bench.tables import Table, fmt_ms, median

__all__ = ["mixed_text", "run"]

EMBED_DIM = 768
HEADS = 12
TOKENS = (16, 128, 512)
TOKENIZER_MODES = ("jieba", "char", "word", "wordpiece")
TEXT_CHARS = 5_000
BUDGET_S = 3.0  # per sequence length (both modules together), after warm-up
MAX_ROUNDS = 400


def _modules(seed: int = 0):
    """(ours, torch's) with identical weights, both in eval mode."""
    from attention_core.attention import build_attention

    ours = build_attention("multi", EMBED_DIM, HEADS, seed=seed)
    return ours, ours.to_torch()


def _interleaved(
    a: Callable[[], object], b: Callable[[], object], budget_s: float
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Alternate a and b (ABBA order) until `budget_s` has passed.

    Returns each one's (wall, CPU) seconds per call; CPU = this process, all threads.
    """
    ta: list[tuple[float, float]] = []
    tb: list[tuple[float, float]] = []
    start = time.perf_counter()
    rounds = 0
    while rounds < MAX_ROUNDS and (rounds < 5 or time.perf_counter() - start < budget_s):
        order = ((a, ta), (b, tb)) if rounds % 2 == 0 else ((b, tb), (a, ta))
        for fn, out in order:
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            out.append((time.perf_counter() - w0, time.process_time() - c0))
        rounds += 1
    return ta, tb


def attention_table(budget_s: float = BUDGET_S) -> tuple[Table, dict]:
    import torch

    ours, ref = _modules()
    table = Table(
        f"Core: MultiHeadAttention vs torch.nn.MultiheadAttention "
        f"(embed_dim {EMBED_DIM}, {HEADS} heads, batch 1, CPU, {torch.get_num_threads()} threads)",
        [
            "tokens",
            "ours ms",
            "torch ms",
            "ratio ours/torch",
            "CPU ratio",
            "max abs Δ output",
            "max abs Δ weights",
        ],
    )
    raw = {}
    gen = torch.Generator().manual_seed(0)
    for n in TOKENS:
        x = torch.randn(1, n, EMBED_DIM, generator=gen)
        with torch.inference_mode():
            out_a, w_a = ours(x)
            out_b, w_b = ref(x, x, x, need_weights=True, average_attn_weights=False)
            d_out = float((out_a - out_b).abs().max())
            d_w = float((w_a - w_b).abs().max())
            for _ in range(3):  # warm-up: allocator, thread pool
                ours(x)
                ref(x, x, x, need_weights=True, average_attn_weights=False)
            ta, tb = _interleaved(
                lambda x=x: ours(x),
                lambda x=x: ref(x, x, x, need_weights=True, average_attn_weights=False),
                budget_s,
            )
        ma, mb = median(w for w, _ in ta), median(w for w, _ in tb)
        ca, cb = median(c for _, c in ta), median(c for _, c in tb)
        raw[n] = {"ours": ta, "torch": tb}
        table.add(
            n,
            fmt_ms(ma),
            fmt_ms(mb),
            f"{ma / mb:.2f}",
            f"{ca / cb:.2f}" if cb > 0 else "—",
            f"{d_out:.1e}",
            f"{d_w:.1e}",
        )
    table.notes += [
        "medians of interleaved calls (≥ 5 rounds, about "
        f"{budget_s:g} s per length), torch.inference_mode; CPU ratio = the same with "
        "process CPU time (all threads), steadier on a loaded machine; Δ columns: the two "
        "modules agree (parity check).",
        "target: ratio <= 1.1 at 512 tokens.",
    ]
    return table, raw


def mixed_text(chars: int = TEXT_CHARS) -> str:
    """About `chars` characters of the app's example sentences (Chinese, English, mixed)."""
    examples = json.loads((DATA_DIR / "examples.json").read_text(encoding="utf-8"))
    sentences = [s for group in examples.values() for s in group]
    parts: list[str] = []
    total = 0
    while total < chars:
        for s in sentences:
            parts.append(s)
            total += len(s) + 1
    return " ".join(parts)[:chars]


def tokenizer_table() -> tuple[Table, dict]:
    from attention_core.tokenize import tokenize

    text = mixed_text()
    table = Table(
        f"Core: tokenizer throughput ({len(text):,} mixed Chinese/English characters)",
        ["mode", "tokens", "first call s", "median ms", "tokens/s", "chars/s"],
    )
    raw = {}
    for mode in TOKENIZER_MODES:
        t0 = time.perf_counter()
        tokens = tokenize(text, mode)  # loads jieba's dictionary / the WordPiece vocabulary
        first = time.perf_counter() - t0
        times = []
        start = time.perf_counter()
        while len(times) < 3 or (time.perf_counter() - start < 2.0 and len(times) < 50):
            t0 = time.perf_counter()
            tokenize(text, mode)
            times.append(time.perf_counter() - t0)
        m = median(times)
        raw[mode] = {"tokens": len(tokens), "first": first, "times": times}
        table.add(
            mode,
            len(tokens),
            f"{first:.2f}",
            fmt_ms(m),
            f"{len(tokens) / m:,.0f}",
            f"{len(text) / m:,.0f}",
        )
    table.notes.append(
        "first call includes loading jieba's dictionary (cached on disk after the first "
        "run ever) or the WordPiece vocabulary; later calls are the median of ≥ 3 runs."
    )
    return table, raw


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    a, raw_a = attention_table(0.5 if quick else BUDGET_S)
    t, raw_t = tokenizer_table()
    return [a, t], {"attention": raw_a, "tokenizers": raw_t}
