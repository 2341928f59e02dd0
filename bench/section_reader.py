"""Section "reader": the trained reader (attention_core/reader) against the untrained module.

* training: the reader's optimiser steps per second on this machine (`fit.train`, the
  shipped configuration, batch 32 × context 64, the threads the card was trained with),
  timed over a short run after two warm-up steps;
* in Chromium, the landing page at 32 tokens and 4 heads: typed sentence (Ctrl+Enter) →
  every heatmap repainted, for the untrained module (embed_dim 128, the reader's width)
  and for `?weights=trained` (the reader's layers up to the chosen one, its own module),
  median of several new sentences; the target: trained ≤ untrained + 20 %.

Sentences are made of characters the reader's vocabulary holds (every one a cache miss).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bench.app_server import streamlit_server
from bench.chromium import chromium
from bench.section_browser import measure_page, typed_update
from bench.tables import Table, fmt_s

__all__ = ["run"]

TOKENS = 32  # units typed; the trained view adds [BOS]
HEADS = 4
TRAIN_STEPS = 12


def known_sentence(n: int, *, variant: int = 0) -> str:
    """n Chinese characters the shipped reader knows, another set for each variant."""
    from attention_core.reader import load_shipped

    han = [u for u in load_shipped().vocab.tokens[2:] if "\u4e00" <= u <= "\u9fff"]
    start = (variant * 613) % len(han)
    return "".join(han[(start + i) % len(han)] for i in range(n))


def steps_per_second(steps: int) -> dict[str, float]:
    """Optimiser steps per second of the shipped configuration on a random id stream (with
    the shipped run's second target, on random word starts, when its card has one)."""
    import torch

    from attention_core.reader import load_shipped
    from attention_core.reader.fit import train
    from attention_core.reader.model import ReaderConfig

    reader = load_shipped()
    torch.set_num_threads(int(reader.card.get("threads", 2)))
    config = ReaderConfig.from_dict(reader.card["config"])
    rng = np.random.default_rng(0)
    ids = rng.integers(2, config.vocab_size, 200_000)
    weight = float(reader.card.get("boundary_weight", 0.0))
    starts = rng.integers(0, 2, ids.size).astype(np.int8) if weight > 0 else None
    second = {"starts": starts, "boundary_weight": weight}

    class Quiet:
        def write(self, _: str) -> None: ...

        def flush(self) -> None: ...

    train(ids, config, steps=2, out=Quiet(), **second)  # warm-up: allocations, first kernels
    start = time.perf_counter()
    train(ids, config, steps=steps, out=Quiet(), **second)
    elapsed = time.perf_counter() - start
    shipped = int(reader.card.get("steps", 3000))
    return {"steps": steps, "seconds": elapsed, "steps_per_s": steps / elapsed, "shipped": shipped}


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    repeats = 2 if quick else 5
    raw: dict[str, Any] = {"train": steps_per_second(4 if quick else TRAIN_STEPS)}
    with chromium() as browser, streamlit_server() as server:
        measure_page(browser, server.url, 8, 4)  # imports and jieba's dictionary
        common = {"embed_dim": 128, "tokenizer": "char"}
        for name, params in (("untrained", {}), ("trained", {"weights": "trained"})):
            raw[name] = typed_update(
                browser,
                server,
                TOKENS,
                HEADS,
                repeats,
                params={**common, **params},
                text=known_sentence,
            )
    shipped = raw["train"]["shipped"]
    train_table = Table(
        "Reader: training speed", ["steps", "seconds", "steps/s", f"{shipped} steps"]
    )
    t = raw["train"]
    train_table.add(t["steps"], fmt_s(t["seconds"]), f"{t['steps_per_s']:.2f}",
                    f"{shipped / t['steps_per_s'] / 60:.0f} min")  # fmt: skip
    train_table.notes.append(
        f"batch 32 × 64 units, AdamW; the shipped run: {shipped} steps, ≤ 60 min."
    )
    table = Table(
        f"Reader: typed → painted, {TOKENS} characters, {HEADS} heads (Chromium)",
        ["weights", "typed → painted s", "typed CPU s", "vs untrained"],
    )
    base = raw["untrained"]["typed"]
    for name in ("untrained", "trained"):
        v = raw[name]
        table.add(name, fmt_s(v["typed"]), fmt_s(v["typed_cpu"]), f"{v['typed'] / base:.2f} ×")
    table.notes.append(f"median of {repeats} new sentences; target: trained ≤ 1.20 × untrained.")
    return [train_table, table], raw
