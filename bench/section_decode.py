"""Section "decode": a decoder watched writing (attention_core.decode), on one core.

* the shipped reader after a 24-unit prompt: the first step (the prompt read into the
  cache, then its row in every layer × head, the top-5, the cache's size and the logit
  lens) and each further step (one new query against the cache, the same per step);
  the issue's target: a step ≤ 30 ms on one core;
* 64 greedy steps of a 6-layer tiny Llama (width 64, 4 query heads sharing 2 key/value
  heads) held at transformers' default SDPA, as a user holds it: `decode` reads it through
  its eager twin (`from_model`, its probe included); the target: ≤ 3 s.

Median of several runs; CPU seconds beside the wall clock (a loaded machine's neighbours
show in the wall clock only).
"""

from __future__ import annotations

from bench.measure import timed, tiny_llama
from bench.tables import Table

__all__ = ["run"]

PROMPT_UNITS = 24  # with [BOS] and 1 + FURTHER_STEPS steps: within the reader's 64
FURTHER_STEPS = 32
LLAMA_STEPS = 64


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    import torch

    from attention_core.decode import decode
    from attention_core.reader import load_shipped

    torch.set_num_threads(1)
    repeats = 3 if quick else 7
    reader = load_shipped()
    han = [u for u in reader.vocab.tokens[2:] if "\u4e00" <= u <= "\u9fff"]
    prompt = "".join(han[i * 37 % len(han)] for i in range(PROMPT_UNITS))
    decode(reader, prompt, 2)  # warm-up: first kernels
    one_wall, one_cpu, _ = timed(lambda: decode(reader, prompt, 1), repeats)
    many_wall, many_cpu, many = timed(lambda: decode(reader, prompt, 1 + FURTHER_STEPS), repeats)
    further = len(many.steps) - 1  # the context could stop a run early: count what ran
    further_wall = (many_wall - one_wall) / further
    further_cpu = (many_cpu - one_cpu) / further

    model, tokenizer = tiny_llama(6, stops=False)
    llama_wall, llama_cpu, written = timed(
        lambda: decode(model, "the cat sat on the mat", LLAMA_STEPS, tokenizer=tokenizer),
        max(2, repeats // 2),
    )
    last = written.steps[-1]

    table = Table(
        "Watch it write (attention_core.decode), one thread",
        ["what", "wall", "CPU", "target", "cache at the end"],
    )
    table.add(
        f"reader, first step after {PROMPT_UNITS} units (prompt read, rows, top-5, cache, lens)",
        f"{one_wall * 1e3:.1f} ms",
        f"{one_cpu * 1e3:.1f} ms",
        "",
        f"{many.steps[0].cache.total_bytes / 1024:.0f} KiB",
    )
    table.add(
        f"reader, each further step (mean of {further})",
        f"{further_wall * 1e3:.1f} ms",
        f"{further_cpu * 1e3:.1f} ms",
        "≤ 30 ms",
        f"{many.steps[-1].cache.total_bytes / 1024:.0f} KiB at {many.steps[-1].positions} "
        "positions",
    )
    table.add(
        f"tiny Llama, 6 layers, {LLAMA_STEPS} steps (eager twin and probe included)",
        f"{llama_wall:.2f} s",
        f"{llama_cpu:.2f} s",
        "≤ 3 s",
        f"{last.cache.total_bytes / 1024:.0f} KiB at {last.positions} positions "
        f"({last.cache.kv_heads} KV heads for {last.cache.heads})",
    )
    table.notes.append(
        f"median of {repeats} runs (the Llama: {max(2, repeats // 2)}); torch threads: 1"
    )
    raw = {
        "reader_first_step_s": one_wall,
        "reader_further_step_s": further_wall,
        "llama_64_steps_s": llama_wall,
        "cpu": {"reader_first": one_cpu, "reader_further": further_cpu, "llama": llama_cpu},
    }
    return [table], raw
