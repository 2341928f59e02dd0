"""Watch a decoder write: `decode(model, prompt, steps)` writes one token at a time and
keeps, per step, the row of attention that chose it (from the key/value cache), the
alternatives, the cache's size and a logit lens.

    result.py         DecodeResult, Step, CacheSize, DecodeRefused, MAX_DECODE_STEPS
    run.py            decode(): the prompt, the steps, greedy / sampled / forced tokens
    branch.py         parting(): where a forced branch's attention leaves the run it left
    passes.py         Pass and Stepper: what a model gives per cached pass
    reader_steps.py   the shipped reader with a cache of its own keys and values
    hf_steps.py       a transformers causal LM with its own past_key_values (eager twin)

Names are imported on first use, so importing the package loads no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

__all__ = [
    "MAX_DECODE_STEPS",
    "PARTING_TOL",
    "CacheSize",
    "DecodeRefused",
    "DecodeResult",
    "Parting",
    "Step",
    "decode",
    "parting",
    "step_differences",
    "written_text",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "MAX_DECODE_STEPS": "result",
        "PARTING_TOL": "branch",
        "Parting": "branch",
        "parting": "branch",
        "step_differences": "branch",
        "written_text": "branch",
        "CacheSize": "result",
        "DecodeRefused": "result",
        "DecodeResult": "result",
        "Step": "result",
        "decode": "run",
    },
)

if TYPE_CHECKING:
    from attention_core.decode.branch import (
        PARTING_TOL,
        Parting,
        parting,
        step_differences,
        written_text,
    )
    from attention_core.decode.result import (
        MAX_DECODE_STEPS,
        CacheSize,
        DecodeRefused,
        DecodeResult,
        Step,
    )
    from attention_core.decode.run import decode
