"""Single- and multi-head self-attention, as in the article (../shared/seed) and
Vaswani et al. 2017, "Attention Is All You Need", section 3.2.

The modules keep the article's names (`query_linear`, `key_linear`, `value_linear`,
`out`) and its five steps. Unlike the fused fast path of `F.scaled_dot_product_attention`,
they always materialise the attention weights, and `trace()` returns every intermediate
step from the very same code path that `forward()` uses.

Shape legend used in the comments:
    B batch, n tokens, C embed_dim, H num_heads, D head_dim (= C // H)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_core.limits import valid_num_heads

__all__ = [
    "AttentionTrace",
    "MultiHeadAttention",
    "SingleHeadAttention",
    "build_attention",
    "causal_mask",
    "valid_num_heads",
]


def _check_dims(embed_dim: object, num_heads: object) -> None:
    if not isinstance(embed_dim, int) or isinstance(embed_dim, bool) or embed_dim < 1:
        raise ValueError(f"embed_dim must be an integer >= 1, got {embed_dim!r}")
    if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads < 1:
        raise ValueError(f"num_heads must be an integer >= 1, got {num_heads!r}")
    if embed_dim % num_heads:
        valid = ", ".join(map(str, valid_num_heads(embed_dim)))
        raise ValueError(
            f"embed_dim={embed_dim} is not divisible by num_heads={num_heads}; "
            f"valid num_heads: {valid}"
        )


def causal_mask(n: int) -> Tensor:
    """(n, n) boolean mask, True where query i may attend to key j (j <= i): a decoder's mask."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return torch.ones(n, n, dtype=torch.bool).tril()


@dataclass(frozen=True)
class AttentionTrace:
    """Every step of one forward pass, for teaching. Tensors are detached.

    Multi-head tensors carry a head axis; for single-head attention H = 1 and D = C.
    """

    x: Tensor  # (B, n, C)     input embeddings X
    q: Tensor  # (B, H, n, D)  queries, split into heads
    k: Tensor  # (B, H, n, D)  keys
    v: Tensor  # (B, H, n, D)  values
    scores: Tensor | None  # (B, H, n, n)  raw scores Q Kᵀ (None outside trace())
    scaled: Tensor  # (B, H, n, n)  scores / divisor (masked entries are -inf)
    weights: Tensor  # (B, H, n, n)  softmax(scaled), every allowed row sums to 1
    head_outputs: Tensor  # (B, H, n, D)  weights @ V per head
    concat: Tensor  # (B, n, C)     heads concatenated
    output: Tensor  # (B, n, C)     after the output projection (= concat for single-head)
    divisor: float  # what the scores were divided by (√d_k unless overridden)

    @property
    def num_heads(self) -> int:
        return self.q.shape[1]

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Name → shape of every tensor in the trace."""
        return {
            f.name: tuple(getattr(self, f.name).shape)
            for f in fields(self)
            if isinstance(getattr(self, f.name), Tensor)
        }

    def numpy(self, batch: int = 0) -> dict[str, np.ndarray]:
        """Name → float32 array of one batch element (the batch axis dropped)."""
        return {
            f.name: getattr(self, f.name)[batch].numpy().astype(np.float32, copy=False)
            for f in fields(self)
            if isinstance(getattr(self, f.name), Tensor)
        }


class _SelfAttention(nn.Module):
    """The code both modules share: project, split, score, scale, softmax, mix, merge."""

    embed_dim: int
    num_heads: int
    head_dim: int
    out: nn.Module

    def __init__(self, embed_dim: int, num_heads: int, *, bias: bool) -> None:
        super().__init__()
        _check_dims(embed_dim, num_heads)
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        # (1) the three projections W_q, W_k, W_v of the article
        self.query_linear = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.key_linear = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.value_linear = nn.Linear(embed_dim, embed_dim, bias=bias)

    @property
    def scale(self) -> float:
        """√d_k: the divisor of step (3)."""
        return math.sqrt(self.head_dim)

    def _check_input(self, x: Tensor) -> None:
        if not isinstance(x, Tensor):
            raise ValueError(f"x must be a torch.Tensor of shape (B, n, {self.embed_dim})")
        if x.dim() != 3 or x.shape[-1] != self.embed_dim:
            raise ValueError(
                f"x must have shape (batch, seq_len, embed_dim={self.embed_dim}), "
                f"got {tuple(x.shape)}"
            )

    def _split(self, t: Tensor) -> Tensor:
        """A projection (B, n, C) split into heads: (B, H, n, D)."""
        B, n, _ = t.shape
        return t.view(B, n, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, n, D)

    def _queries_keys(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self._split(self.query_linear(x)), self._split(self.key_linear(x))

    @torch.no_grad()
    def queries_keys(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Step (1)'s queries and keys of `x` (B, n, C), split into heads: (B, H, n, D) each,
        exactly as `forward` computes them (a long prompt's map is built from these alone,
        attention_core.long.run). Scale them by 1 / `scale` to get step (3)'s scores."""
        self._check_input(x)
        return self._queries_keys(x)

    def _run(
        self, x: Tensor, mask: Tensor | None, divisor: float | None, *, keep_scores: bool = False
    ) -> AttentionTrace:
        self._check_input(x)
        B, n, C = x.shape
        divisor = self.scale if divisor is None else float(divisor)
        if not divisor > 0:
            raise ValueError(f"divisor must be > 0, got {divisor}")

        # (1) project to queries, keys and values, then split C into H heads of D
        q, k = self._queries_keys(x)  # (B, H, n, D) each
        v = self._split(self.value_linear(x))  # (B, H, n, D)
        # (2) raw scores and (3) scaling. Dividing q (n·C numbers) rather than the scores
        # (H·n² numbers) is the same maths and what torch.nn.MultiheadAttention does; it
        # keeps this manual path as fast as torch's. The raw scores are only materialised
        # when a trace asks for them.
        scaled = (q / divisor) @ k.transpose(-2, -1)  # (B, H, n, n)
        scores = q @ k.transpose(-2, -1) if keep_scores else None  # (B, H, n, n)
        if mask is not None:
            allowed = self._broadcast_mask(mask, B, n)  # (B or 1, H or 1, n, n)
            scaled = scaled.masked_fill(~allowed, float("-inf"))
        # (4) softmax over keys; a row with no allowed key is 0/0 = NaN → all-zero weights
        weights = F.softmax(scaled, dim=-1)  # (B, H, n, n)
        if mask is not None:
            weights = weights.nan_to_num(nan=0.0)
        # (5) weighted sum of values, then heads side by side again
        head_outputs = weights @ v  # (B, H, n, D)
        concat = head_outputs.transpose(1, 2).reshape(B, n, C)  # (B, n, C)
        output = self.out(concat)  # (B, n, C)
        return AttentionTrace(
            x=x,
            q=q,
            k=k,
            v=v,
            scores=scores,
            scaled=scaled,
            weights=weights,
            head_outputs=head_outputs,
            concat=concat,
            output=output,
            divisor=divisor,
        )

    def _weights_shape(self, B: int, n: int, mask_dims: int) -> tuple[int, ...]:
        """The weights shape a mask of `mask_dims` dimensions is broadcast against."""
        return (B, self.num_heads, n, n)

    def _broadcast_mask(self, mask: Tensor, B: int, n: int) -> Tensor:
        """Broadcast `mask` to the weights shape, returned as (B, H, n, n)."""
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
            raise ValueError("mask must be a boolean tensor (True = this query may attend)")
        shape = self._weights_shape(B, n, mask.dim())
        try:
            mask = torch.broadcast_to(mask, shape)
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the weights {shape}"
            ) from None
        return mask.view(B, -1, n, n)  # (B, H, n, n); H = 1 for single-head

    @torch.no_grad()
    def trace(
        self, x: Tensor, mask: Tensor | None = None, *, divisor: float | None = None
    ) -> AttentionTrace:
        """Run `forward`'s computation and return every intermediate step.

        `divisor` overrides √d_k (1.0 = no scaling; √d_k·T = softmax temperature T).
        """
        return self._run(x, mask, divisor, keep_scores=True)


class SingleHeadAttention(_SelfAttention):
    """The article's single-head self-attention: softmax(QKᵀ / √C) V, no output projection."""

    def __init__(self, embed_dim: int, *, bias: bool = True) -> None:
        super().__init__(embed_dim, 1, bias=bias)
        self.out = nn.Identity()

    def _weights_shape(self, B: int, n: int, mask_dims: int) -> tuple[int, ...]:
        # The public weights have no head axis (B, n, n); a 4-D mask is in the library's
        # own shape (B, H, n, n) with H = 1, like every trace.
        return (B, 1, n, n) if mask_dims == 4 else (B, n, n)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """x: (B, n, C), mask: bool broadcastable to (B, n, n), True = may attend.

        Returns output (B, n, C) and weights (B, n, n).
        """
        t = self._run(x, mask, None)
        return t.output, t.weights.squeeze(1)  # (B, 1, n, n) → (B, n, n)


class MultiHeadAttention(_SelfAttention):
    """The article's multi-head self-attention: H heads of size C // H, concat, then `out`."""

    def __init__(self, embed_dim: int, num_heads: int, *, bias: bool = True) -> None:
        super().__init__(embed_dim, num_heads, bias=bias)
        # (4) of the multi-head part: project the concatenated heads back to C
        self.out = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """x: (B, n, C), mask: bool broadcastable to (B, H, n, n), True = may attend.

        Returns output (B, n, C) and per-head weights (B, H, n, n).
        """
        t = self._run(x, mask, None)
        return t.output, t.weights

    def to_torch(self) -> nn.MultiheadAttention:
        """torch's own nn.MultiheadAttention holding exactly these weights, in eval mode: the
        reference this module is checked and measured against (batch_first, so it takes
        the same (B, n, C) input)."""
        bias = self.out.bias is not None
        ref = nn.MultiheadAttention(self.embed_dim, self.num_heads, bias=bias, batch_first=True)
        projections = (self.query_linear, self.key_linear, self.value_linear)
        with torch.no_grad():
            # in_proj packs W_q, W_k, W_v into one (3C, C) matrix, in that order
            ref.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
            ref.out_proj.weight.copy_(self.out.weight)
            if bias:
                ref.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
                ref.out_proj.bias.copy_(self.out.bias)
        return ref.eval()


def _seeded_init(module: nn.Module, seed: int) -> None:
    """nn.Linear's default init, U(-1/√fan_in, 1/√fan_in), from a private generator.

    Independent of torch's global RNG, so the weights are a pure function of the
    sizes and the seed, bit-identical across runs and processes.
    """
    gen = torch.Generator().manual_seed(int(seed) % (2**63))
    with torch.no_grad():
        for name in ("query_linear", "key_linear", "value_linear", "out"):
            layer = getattr(module, name, None)
            if not isinstance(layer, nn.Linear):
                continue
            bound = 1.0 / math.sqrt(layer.in_features)
            layer.weight.copy_(torch.rand(layer.weight.shape, generator=gen) * 2 * bound - bound)
            if layer.bias is not None:
                layer.bias.copy_(torch.rand(layer.bias.shape, generator=gen) * 2 * bound - bound)


def build_attention(
    kind: str, embed_dim: int, num_heads: int = 1, *, seed: int = 0, bias: bool = True
) -> SingleHeadAttention | MultiHeadAttention:
    """A seeded module: `kind` is "single" or "multi" (num_heads is ignored for "single").

    Its weights are a pure function of (kind, embed_dim, num_heads, seed, bias), and
    building it leaves torch's global random state as it was (nn.Linear's own default
    initialisation draws from it before `_seeded_init` replaces those weights)."""
    if kind not in ("single", "multi"):
        raise ValueError(f"kind must be 'single' or 'multi', got {kind!r}")
    with torch.random.fork_rng(devices=[]):  # restores the global CPU generator on exit
        module: SingleHeadAttention | MultiHeadAttention = (
            SingleHeadAttention(embed_dim, bias=bias)
            if kind == "single"
            else MultiHeadAttention(embed_dim, num_heads, bias=bias)
        )
    _seeded_init(module, seed)
    return module.eval()
