"""A real model's heads knocked out, together (`ablate`) or each alone (`head_effects`),
measured by how far the final hidden states move (cosine distance); and every head knocked
out alone, each from a cached pass of the layers below it (`branched`).

A head is knocked out by zeroing its slice of the output projection's input, i.e. its
whole contribution to the residual stream.

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.limits import MAX_TOKENS
from attention_core.pretrained.parts import (
    AttentionLayer,
    attention_layers,
    layers_and_heads,
    model_inputs,
    temporary_hooks,
    this_thread_only,
)

if TYPE_CHECKING:
    import torch

    from attention_core.pretrained import LoadedModel

# head_effects runs copies of the sentence in batches: one pass of 73 copies of 32 tokens
# takes about as long as 3 passes of one copy on 2 cores. A batch's attention scores hold
# rows × H × n² floats per layer; past a few tens of MB a larger batch is slower, not faster
# (every head of MiniLM, 2 cores: at 512 tokens 16 rows a batch 33 s, 7 rows 18 s, 4 rows
# 12 s, 2 rows 19 s; at 128 tokens 73 rows 1.2 s, 16 rows 0.9 s). So a batch holds at most
# ~50 MB of scores (4 rows at 512 tokens) and 16 rows, which also reports progress often.
_ABLATION_FLOATS = 12_600_000
_ABLATION_ROWS = 16

Progress = Callable[[int, int], None]  # (heads done, heads in all), after each batch


def batch_rows(num_heads: int, n: int) -> int:
    """Rows one ablation batch carries for `num_heads` heads over `n` tokens: at most ~50 MB
    of attention scores and 16 rows (see above)."""
    return min(_ABLATION_ROWS, max(2, _ABLATION_FLOATS // (num_heads * n * n)))


@dataclass(frozen=True)
class AblationResult:
    """The model's output with some heads zeroed, beside the untouched output."""

    hidden: np.ndarray  # (n, C) final hidden states with the heads knocked out
    original: np.ndarray  # (n, C) without
    token_distance: float  # mean over tokens of 1 − cos(hidden_i, original_i)
    pooled_distance: float  # 1 − cos of the mean-pooled sentence embeddings


@dataclass(frozen=True)
class HeadEffects:
    """Every head knocked out alone: (L, H) cosine distances from the untouched output."""

    token_distance: np.ndarray  # (L, H) mean over tokens of 1 − cos
    pooled_distance: np.ndarray  # (L, H) 1 − cos of the mean-pooled sentence embedding

    def ranking(self, *, by: str = "pooled") -> list[tuple[int, int]]:
        """(layer, head) pairs, largest effect first."""
        values = self.pooled_distance if by == "pooled" else self.token_distance
        order = np.argsort(-values, axis=None, kind="stable")
        return [tuple(int(v) for v in np.unravel_index(i, values.shape)) for i in order]


def _cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """1 − cos along the last axis, never below 0."""
    import torch

    cos = torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1)
    return (1.0 - cos).clamp_min(0.0)  # rounding can put cos of equal vectors a hair above 1


@contextmanager
def knocked_out(layers: list[AttentionLayer], masks: torch.Tensor) -> Iterator[None]:
    """While inside, a forward pass over B copies of a sentence keeps head h of layer l in
    copy b only if masks[b, l, h] (B, L, H) is 1: a head is knocked out by zeroing its slice
    of the output projection's input, i.e. its whole contribution (this thread only)."""

    def knock_out(index: int) -> Callable[..., Any]:
        layer = layers[index]

        def hook(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
            x = args[0]  # (B, n, H·D)
            shape = x.shape
            gate = masks[:, index].to(x.dtype)[:, None, :, None]  # (B, 1, H, 1)
            x = (x.view(*shape[:-1], layer.num_heads, layer.head_dim) * gate).view(shape)
            return (x, *args[1:])

        return hook

    handles = [
        layer.out_module.register_forward_pre_hook(this_thread_only(knock_out(i)))
        for i, layer in enumerate(layers)
    ]
    with temporary_hooks(handles):
        yield


def _masked_forward(loaded: LoadedModel, inputs: dict[str, Any], masks: torch.Tensor) -> Any:
    """The model on B copies of `inputs` (1, n), heads knocked out as `masks` (B, L, H)
    says (`knocked_out`) → last hidden states (B, n, C)."""
    import torch

    batch = masks.shape[0]
    batched = {k: v.expand(batch, -1) for k, v in inputs.items()}  # each (B, n)
    with knocked_out(attention_layers(loaded.model), masks), torch.no_grad():
        out = _base(loaded.model)(**batched)
    return out.last_hidden_state  # (B, n, C)


def _base(model: Any) -> Any:
    """The transformer under any head (a GPT-2 LM head model's `transformer`): its output
    is the final hidden states, which ablation compares."""
    return getattr(model, "base_model", model)


def kv_groups(loaded: LoadedModel) -> list[list[int]]:
    """The query heads that read each key/value head, for every layer alike (transformers'
    repeat_kv grouping): [[0, 1], [2, 3]] for 4 query heads over 2 key/value heads; one
    head per group without grouped-query attention. Knocking a whole group out
    (`ablate(loaded, text, [(layer, h) for h in group])`) removes that key/value head's
    every contribution, as zeroing its value projection would."""
    first = attention_layers(loaded.model)[0]
    size = first.num_heads // first.num_kv_heads
    return [list(range(g * size, (g + 1) * size)) for g in range(first.num_kv_heads)]


def ablate(
    loaded: LoadedModel,
    text: str,
    heads: Sequence[tuple[int, int]],
    *,
    max_tokens: int = MAX_TOKENS,
) -> AblationResult:
    """Run `text` with the (layer, head) pairs in `heads` knocked out (their output zeroed)."""
    import torch

    num_layers, num_heads = layers_and_heads(loaded)
    masks = torch.ones(1, num_layers, num_heads)  # (1, L, H)
    for layer, head in heads:
        if not (0 <= layer < num_layers and 0 <= head < num_heads):
            raise ValueError(
                f"head ({layer}, {head}) does not exist: the model has {num_layers} layers "
                f"× {num_heads} heads"
            )
        masks[0, layer, head] = 0.0
    inputs = model_inputs(loaded, text, max_tokens)
    with torch.no_grad():
        original = _base(loaded.model)(**inputs).last_hidden_state[0]  # (n, C)
    hidden = _masked_forward(loaded, inputs, masks)[0]  # (n, C)
    return AblationResult(
        hidden=hidden.double().numpy(),
        original=original.double().numpy(),
        token_distance=float(_cosine_distance(hidden, original).mean()),
        pooled_distance=float(_cosine_distance(hidden.mean(0), original.mean(0))),
    )


def head_effects(
    loaded: LoadedModel,
    text: str,
    *,
    max_tokens: int = MAX_TOKENS,
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> HeadEffects:
    """Knock out every head alone and measure how far the output moves (see HeadEffects):
    `branched`, each layer's heads run from a cached pass of the layers below, at most
    `batch_size` rows a batch, each compared with the untouched output. `progress(done,
    total)` is called after each batch (a page draws its bar there, and a cancelled run
    stops there)."""
    import torch

    num_heads = layers_and_heads(loaded)[1]
    inputs = model_inputs(loaded, text, max_tokens)
    n = inputs["input_ids"].shape[1]
    if batch_size is None:
        batch_size = batch_rows(num_heads, n)
    with torch.no_grad():
        clean = _base(loaded.model)(**inputs).last_hidden_state  # (1, n, C)

    def distances(module: Any, copies: int) -> torch.Tensor:
        batch = {k: v.expand(copies, -1) for k, v in inputs.items()}  # each (B, n)
        hidden = _base(module)(**batch).last_hidden_state  # (B, n, C)
        t = _cosine_distance(hidden, clean).mean(dim=-1)  # (B,)
        p = _cosine_distance(hidden.mean(dim=1), clean.mean(dim=1))  # (B,)
        return torch.stack([t, p], dim=-1)  # (B, 2)

    found = branched(loaded.model, distances, rows=batch_size, progress=progress)
    knocked = found.knocked  # (L, H, 2), each already against the untouched output
    return HeadEffects(token_distance=knocked[..., 0], pooled_distance=knocked[..., 1])


# --- every head alone, from the layers below it run once -------------------------------

# (the model or a stand-in sharing its weights, copies of the input) → the output (B, …)
Forward = Callable[[Any, int], "torch.Tensor"]


@dataclass(frozen=True)
class Branched:
    """The output with nothing knocked out, and with each head knocked out alone."""

    clean: np.ndarray  # (…) float64, the output as it is
    knocked: np.ndarray  # (L, H, …) float64, the output with head h of layer l zeroed
    shortcut: bool  # True: each layer's heads ran from the cached pass below them

    @property
    def effects(self) -> np.ndarray:
        """(L, H, …): knocked − clean."""
        return self.knocked - self.clean


class _NoShortcut(Exception):
    """The model's forward cannot carry many rows from one input's masks and positions."""


def _replay(block: Any, output: Any) -> Any:
    """A module standing in for a block below the knocked-out layer: it returns what the
    block returned in the untouched pass, without computing it (attributes the model's
    forward reads from its blocks, such as an `attention_type`, are the block's own)."""
    import torch

    class Replay(torch.nn.Module):
        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return output

        def __getattr__(self, name: str) -> Any:
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(block, name)

    return Replay()


def block_list(model: Any, layers: list[AttentionLayer]) -> tuple[list[str], list[int]] | None:
    """Where each attention layer's block sits: the path of the ModuleList holding the
    blocks (from `model`, e.g. ["encoder", "layer"]) and each layer's index in it; None when
    the layers are not one per block of a single list (then no block can be skipped)."""
    import torch

    names = {id(m): name for name, m in model.named_modules()}
    lists = {name for name, m in model.named_modules() if isinstance(m, torch.nn.ModuleList)}
    found: list[tuple[str, int]] = []
    for layer in layers:
        parts = names.get(id(layer.module), "").split(".")
        spot = next(
            (
                (".".join(parts[:k]), int(parts[k]))
                for k in range(len(parts) - 1, 0, -1)
                if ".".join(parts[:k]) in lists and parts[k].isdigit()
            ),
            None,
        )
        if spot is None:
            return None
        found.append(spot)
    paths = {path for path, _ in found}
    indices = [i for _, i in found]
    if len(paths) != 1 or indices != sorted(set(indices)):
        return None
    return paths.pop().split("."), indices


def _stand_in(model: Any, path: list[str], replaced: dict[int, Any]) -> Any:
    """`model` again with the blocks in `replaced` swapped, by shallow copies of the modules
    on the way to the block list: every weight, buffer and other block is the model's own,
    and the model itself is untouched (other threads keep running it as it is)."""
    root = copy.copy(model)
    node = root
    for name in [*path, None]:
        object.__setattr__(node, "_modules", dict(node._modules))
        if name is None:
            break
        child = copy.copy(node._modules[name])
        node._modules[name] = child
        node = child
    for index, module in replaced.items():
        node._modules[str(index)] = module
    return root


def _spread(layer: AttentionLayer, keep: torch.Tensor) -> Callable[..., Any]:
    """A pre-hook on `layer`'s output projection: its one input (1, n, H·D) becomes B rows,
    row b keeping head h only if keep[b, h] (B, H) is 1."""

    def hook(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        x = args[0]  # (1, n, H·D)
        if x.shape[0] != 1:
            raise ValueError(f"the output projection got {x.shape[0]} rows, not 1")
        gate = keep.to(x.dtype)[:, None, :, None]  # (B, 1, H, 1)
        y = x.view(*x.shape[:-1], layer.num_heads, layer.head_dim) * gate  # (B, n, H, D)
        return (y.reshape(keep.shape[0], *x.shape[1:]), *args[1:])  # (B, n, H·D)

    return hook


def branched(
    model: Any,
    forward: Forward,
    *,
    rows: int = _ABLATION_ROWS,
    progress: Progress | None = None,
) -> Branched:
    """Every head of `model` knocked out alone (its output projection's input slice zeroed),
    exactly as a rerun of the whole model with that head's output-projection columns zeroed,
    at a fraction of the cost.

    `forward(m, B)` runs the model's own forward through `m` (the model, or a stand-in that
    shares its weights) on B copies of the input and returns its output (B, …) (a logit, a
    similarity, hidden states).

    One untouched pass caches what each block returns. Then, layer by layer, a stand-in
    replays the blocks below the layer from that cache, runs the layer's attention once, and
    only from its output projection on carries up to `rows` rows, one head knocked out in
    each (the rows broadcast against the single input's masks and positions). A model
    whose layers are not one per block of a list, or whose forward cannot broadcast so (a
    BLOOM's alibi is built per row), falls back to B whole copies per batch
    (`knocked_out`), each batch beside its own untouched copy. `progress(done, total)`
    follows each batch. The model is never changed.
    """
    import torch

    layers = attention_layers(model)
    num_layers, num_heads = len(layers), layers[0].num_heads
    where = block_list(model, layers)
    if where is not None:
        try:
            return _branched(model, forward, layers, where, rows, progress)
        except _NoShortcut:
            pass  # whole copies below
    pairs = [(layer, head) for layer in range(num_layers) for head in range(num_heads)]
    with torch.no_grad():
        clean = forward(model, 1)[0].double()  # (…)
    knocked = torch.zeros(num_layers, num_heads, *clean.shape, dtype=torch.float64)
    step = max(1, rows - 1)
    for start in range(0, len(pairs), step):
        chunk = pairs[start : start + step]
        masks = torch.ones(len(chunk) + 1, num_layers, num_heads)  # (B, L, H), row 0 untouched
        for row, (layer, head) in enumerate(chunk, start=1):
            masks[row, layer, head] = 0.0
        with knocked_out(layers, masks), torch.no_grad():
            out = forward(model, len(chunk) + 1).double()  # (B, …)
        for row, (layer, head) in enumerate(chunk, start=1):
            knocked[layer, head] = out[row] - out[0] + clean  # beside its own untouched copy
        if progress is not None:
            progress(start + len(chunk), len(pairs))
    return Branched(clean=clean.numpy(), knocked=knocked.numpy(), shortcut=False)


def _branched(
    model: Any,
    forward: Forward,
    layers: list[AttentionLayer],
    where: tuple[list[str], list[int]],
    rows: int,
    progress: Progress | None,
) -> Branched:
    import torch

    path, indices = where
    holder = model.get_submodule(".".join(path))
    blocks = [holder[i] for i in range(len(holder))]
    outputs: dict[int, Any] = {}

    def keep_output(index: int) -> Callable[..., None]:
        def hook(module: Any, args: Any, output: Any) -> None:
            outputs[index] = output

        return hook

    handles = [
        block.register_forward_hook(this_thread_only(keep_output(i)))
        for i, block in enumerate(blocks)
    ]
    with temporary_hooks(handles), torch.no_grad():
        clean = forward(model, 1)[0].double()  # (…)
    num_layers, num_heads = len(layers), layers[0].num_heads
    knocked = torch.zeros(num_layers, num_heads, *clean.shape, dtype=torch.float64)
    total, done = num_layers * num_heads, 0
    size = max(1, min(rows, num_heads))
    for number, (layer, index) in enumerate(zip(layers, indices, strict=True)):
        stand_in = _stand_in(model, path, {j: _replay(blocks[j], outputs[j]) for j in range(index)})
        for first in range(0, num_heads, size):
            heads = list(range(first, min(first + size, num_heads)))
            keep = torch.ones(len(heads), num_heads)  # (B, H)
            keep[torch.arange(len(heads)), torch.tensor(heads)] = 0.0
            hook = layer.out_module.register_forward_pre_hook(
                this_thread_only(_spread(layer, keep))
            )
            try:
                with temporary_hooks([hook]), torch.no_grad():
                    out = forward(stand_in, 1).double()  # (B, …)
            except (RuntimeError, ValueError, IndexError, TypeError) as error:
                raise _NoShortcut(str(error)) from error  # e.g. BLOOM's alibi, built per row
            if out.shape[0] != len(heads):
                raise _NoShortcut(f"{out.shape[0]} rows came out for {len(heads)} heads")
            knocked[number, heads[0] : heads[-1] + 1] = out
            done += len(heads)
            if progress is not None:
                progress(done, total)
    return Branched(clean=clean.numpy(), knocked=knocked.numpy(), shortcut=True)
