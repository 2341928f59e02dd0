"""Head ablation on the project's own trained toy model (attention_core.train): each head
knocked out alone, measured by held-out accuracy.

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attention_core.pretrained.parts import temporary_hooks, this_thread_only


@dataclass(frozen=True)
class ToyEffects:
    """The project's trained toy model (attention_core.train) with each head knocked out
    alone: held-out accuracy before (`accuracy`) and after (`knocked`, (L, H); NaN where a
    layer has fewer heads), and the drop (`drop` = accuracy − knocked)."""

    accuracy: float
    knocked: np.ndarray  # (L, H)

    @property
    def drop(self) -> np.ndarray:
        return self.accuracy - self.knocked  # (L, H)


def _toy_layers(model: Any) -> list[Any]:
    """The toy model's attention modules in order (attention_core.attention's modules:
    query_linear … and `out`, whose input is the concatenated heads)."""
    layers = [m for m in model.modules() if hasattr(m, "query_linear") and hasattr(m, "out")]
    if not layers:
        raise ValueError("no attention layer of attention_core.attention in this model")
    return layers


def toy_accuracy(
    model: Any,
    config: Any,
    heads: Sequence[tuple[int, int]] = (),
    *,
    num_sequences: int = 512,
    seed: int = 12345,
) -> float:
    """Held-out accuracy (attention_core.train.loop.evaluate) of a toy model with the
    (layer, head) pairs in `heads` knocked out: their slice of the concatenated heads is
    zeroed before the output projection. No heads: exactly `evaluate`'s accuracy."""
    import torch

    from attention_core.train.loop import evaluate

    layers = _toy_layers(model)
    masks = []
    for index, layer in enumerate(layers):
        keep = torch.ones(layer.num_heads)
        for at, head in heads:
            if at == index:
                if not 0 <= head < layer.num_heads:
                    raise ValueError(f"layer {index} has heads 0..{layer.num_heads - 1}")
                keep[head] = 0.0
        masks.append(keep)
    for at, _ in heads:
        if not 0 <= at < len(layers):
            raise ValueError(f"the model has layers 0..{len(layers) - 1}, got {at}")

    def knock_out(index: int) -> Callable[..., Any]:
        layer = layers[index]

        def hook(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
            x = args[0]  # (B, n, H·D)
            gate = masks[index].to(x.dtype)[:, None]  # (H, 1)
            x = (x.view(*x.shape[:-1], layer.num_heads, layer.head_dim) * gate).view(x.shape)
            return (x, *args[1:])

        return hook

    handles = [
        layer.out.register_forward_pre_hook(this_thread_only(knock_out(i)))
        for i, layer in enumerate(layers)
        if (masks[i] == 0).any()
    ]
    with temporary_hooks(handles):
        return evaluate(model, config, num_sequences=num_sequences, seed=seed).accuracy


def toy_head_effects(
    model: Any, config: Any, *, num_sequences: int = 512, seed: int = 12345
) -> ToyEffects:
    """Every head of a toy model knocked out alone, its held-out accuracy (ToyEffects)."""
    layers = _toy_layers(model)
    widest = max(layer.num_heads for layer in layers)
    knocked = np.full((len(layers), widest), np.nan)
    for index, layer in enumerate(layers):
        for head in range(layer.num_heads):
            knocked[index, head] = toy_accuracy(
                model, config, [(index, head)], num_sequences=num_sequences, seed=seed
            )
    base = toy_accuracy(model, config, num_sequences=num_sequences, seed=seed)
    return ToyEffects(accuracy=base, knocked=knocked)
