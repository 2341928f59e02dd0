"""Watch a decoder write: `decode(model, prompt, steps)` writes one token at a time and
keeps, per step, the row of attention that chose it (from the key/value cache), the
alternatives, the cache's size and a logit lens.

    result.py         DecodeResult, Step, CacheSize, DecodeRefused, MAX_DECODE_STEPS
    run.py            decode(): the prompt, the steps, greedy / sampled / forced tokens
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
    "CacheSize",
    "DecodeRefused",
    "DecodeResult",
    "Step",
    "decode",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "MAX_DECODE_STEPS": "result",
        "CacheSize": "result",
        "DecodeRefused": "result",
        "DecodeResult": "result",
        "Step": "result",
        "decode": "run",
    },
)

if TYPE_CHECKING:
    from attention_core.decode.result import (
        MAX_DECODE_STEPS,
        CacheSize,
        DecodeRefused,
        DecodeResult,
        Step,
    )
    from attention_core.decode.run import decode
