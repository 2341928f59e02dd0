"""Two runs of one prompt side by side: where a branch (`decode(..., force={step: token})`)
makes the model's attention part from the run it left.

A forced token changes nothing at its own step (the row that chose it read the same
prefix); from the next step on, every row also reads the new token, so the rows differ.
`parting` finds the first step whose rows differ by more than `tol` anywhere (any layer,
head, position) and says where: the position, layer and head of the largest difference.

Shape legend: S steps both runs wrote, L layers, H heads, t positions a step's row met.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.decode.result import DecodeResult

__all__ = ["PARTING_TOL", "Parting", "parting", "step_differences", "written_text"]

PARTING_TOL = 0.05  # a weight that moved by more than this counts as the rows parting


@dataclass(frozen=True)
class Parting:
    """The first step whose rows differ by more than the tolerance, and where."""

    step: int
    position: int  # the key position with the largest difference
    layer: int
    head: int
    difference: float  # |a - b| there


def step_differences(a: DecodeResult, b: DecodeResult, steps: int | None = None) -> np.ndarray:
    """(S,) float32: per step, the largest |a - b| of the two runs' rows over every layer,
    head and position, for the first `steps` steps both wrote (all of them by default).
    The runs must read the same prompt (equal prompt lengths and first rows)."""
    if a.prompt_length != b.prompt_length or a.ids[: a.prompt_length] != b.ids[: b.prompt_length]:
        raise ValueError("the two runs read different prompts: compare branches of one prompt")
    count = min(len(a.steps), len(b.steps))
    count = count if steps is None else max(0, min(count, int(steps)))
    out = np.zeros(count, dtype=np.float32)
    for i in range(count):
        diff = np.abs(a.steps[i].attention - b.steps[i].attention)  # (L, H, t)
        out[i] = float(diff.max()) if diff.size else 0.0
    return out


def parting(
    a: DecodeResult, b: DecodeResult, *, tol: float = PARTING_TOL, steps: int | None = None
) -> Parting | None:
    """Where the rows of `a` and `b` first differ by more than `tol` within the first
    `steps` steps; None while they agree (up to `tol`) everywhere."""
    differences = step_differences(a, b, steps)  # (S,)
    over = np.flatnonzero(differences > tol)
    if not len(over):
        return None
    i = int(over[0])
    diff = np.abs(a.steps[i].attention - b.steps[i].attention)  # (L, H, t)
    layer, head, position = np.unravel_index(int(diff.argmax()), diff.shape)
    return Parting(
        step=i,
        position=int(position),
        layer=int(layer),
        head=int(head),
        difference=float(differences[i]),
    )


def written_text(tokens: list[str]) -> str:
    """Tokens as one line of text: a space only between two tokens that both end and start
    with a letter or digit of a script that spaces its words (`the cat`, `今天`)."""
    out = ""
    for token in tokens:
        if out and _spaced(out[-1]) and token and _spaced(token[0]):
            out += " "
        out += token
    return out


def _spaced(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()
