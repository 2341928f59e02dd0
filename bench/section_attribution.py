"""Section "attribution": is attention an explanation? (attention_core.attribution)

* integrated gradients, 32 steps in one batch, on the shipped reader at 64 tokens ([BOS]
  and 63 units), MiniLM at 128 tokens (the similarity of its sentence embedding to a
  second sentence's) and a 6-layer tiny Llama at 128 tokens (a next-token logit);
* the agreement table for every head beyond that (the attention views: the model's own
  weights, norm-weighted rows, rollout, each head knocked out from a cached pass of the
  layers below it (`lens.ablation.branched`); Spearman, Kendall and a permutation p-value
  per view, method and head), whose target is 1 s beyond the integrated gradients;
* each beside a reference measured in the same run, one plain forward pass of the same
  model on the same text, so the ratio says what the figure costs whatever the machine.

Median of several runs; CPU seconds beside the wall clock; one torch thread and one
NumPy/BLAS thread (threadpoolctl), as the decode section: on a shared 2-core machine two
threads wait on each other (the reader's integrated gradients at 64 tokens took ~10 ×
longer with two threads under load 5).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.measure import sentence, timed, tiny_llama
from bench.tables import Table

__all__ = ["run"]

STEPS = 32


def _cases() -> list[tuple[str, Any, str, Any, str]]:
    """(label, model, text, tokenizer, target): each at its issue's length."""
    from attention_core.pretrained import from_model, load_model
    from attention_core.reader import load_shipped

    reader = load_shipped()
    han = [u for u in reader.vocab.tokens[2:] if "\u4e00" <= u <= "\u9fff"]
    reader_text = "".join(han[i * 37 % len(han)] for i in range(63))
    minilm = load_model()
    english = " ".join(["word"] * 126)  # [CLS] + 126 + [SEP] = 128 WordPiece tokens
    llama, tokenizer = tiny_llama(6)
    loaded = from_model(llama, tokenizer, name="tiny Llama, 6 layers")
    return [
        ("reader, 64 tokens", reader, reader_text, None, None),
        ("MiniLM, 128 tokens (sentence similarity)", minilm, english, None, sentence(4)),
        ("tiny Llama 6 layers, 128 tokens", loaded, english, None, None),
    ]


def _forward(subject: Any) -> Callable[[], Any]:
    """One plain forward pass of the subject's model on its text: the reference."""
    import torch

    def once() -> Any:
        with torch.no_grad():
            if subject.kind == "encoder":
                return subject.run(subject.embeds)
            return subject.run(subject.embeds, len(subject.ids) - 1)

    return once


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            return _measure(quick=quick)
    finally:
        torch.set_num_threads(threads)


def _measure(*, quick: bool) -> tuple[list[Table], dict]:
    from attention_core.attribution.run import attribute_subject
    from attention_core.attribution.side_by_side import compare
    from attention_core.attribution.subjects import subject_for
    from attention_core.attribution.views import attention_views

    repeats = 2 if quick else 5
    table = Table(
        "Attribution beside attention (attention_core.attribution)",
        [
            "model",
            "IG, 32 steps",
            "CPU",
            "× a forward",
            "agreement table",
            "CPU",
            "× a forward",
            "IG gap",
            "target",
        ],
    )
    raw: dict[str, Any] = {}
    for label, model, text, tokenizer, target in _cases():
        subject = subject_for(model, text, tokenizer, target)
        forward = _forward(subject)
        forward()  # warm-up
        f_wall, _, _ = timed(forward, repeats * 2)

        def ig(subject: Any = subject, target: Any = target) -> Any:
            return attribute_subject(subject, target=target, steps=STEPS)

        ig()
        ig_wall, ig_cpu, result = timed(ig, repeats)

        def table_only(subject: Any = subject, result: Any = result) -> Any:
            return compare({"integrated_gradients": result}, attention_views(subject, result))

        table_only()
        ag_wall, ag_cpu, agreed = timed(table_only, repeats)
        n = len(subject.ids)
        table.add(
            label if n == int(label.split(",")[1].split()[0]) else f"{label} (n = {n})",
            f"{ig_wall:.2f} s",
            f"{ig_cpu:.2f} s",
            f"{ig_wall / f_wall:.0f} ×",
            f"{ag_wall:.2f} s",
            f"{ag_cpu:.2f} s",
            f"{ag_wall / f_wall:.0f} ×",
            f"{result.completeness_gap * 100:.2g} %",
            "table ≤ 1 s",
        )
        raw[label] = {
            "tokens": n,
            "forward_s": f_wall,
            "ig_s": ig_wall,
            "ig_cpu_s": ig_cpu,
            "agreement_s": ag_wall,
            "agreement_cpu_s": ag_cpu,
            "completeness_gap": result.completeness_gap,
            "agreeing_heads": len(agreed.agreeing()),
            "sinks": len(agreed.sinks()),
            "heads": len(agreed.table),
        }
    table.notes.append(
        f"one torch thread; median of {repeats} runs; the forward pass is the median of "
        f"{repeats * 2}; the "
        "agreement table is one attribution's (the views, every head knocked out, the "
        "statistics with 999 permutations); the target of the agreement table is ≤ 1 s"
    )
    return [table], raw
