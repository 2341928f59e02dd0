"""Attention maps of long prompts (4 096 tokens and beyond), computed on demand, never held whole.

At 4 096 tokens × 8 heads one layer's weights are 8 × 4096² float32 = 537 MB. An
`AttentionMap` keeps what they are made of instead: each head's queries and keys and each
query row's log-sum-exp (the softmax denominator), so any rectangle of weights is exact on
demand, w_ij = exp(q_i·k_j·scale − lse_i), zero above the diagonal for a causal map. The row
offset is folded into the matmul: q̂ = [q·scale, −lse], k̂ = [k, 1], w_ij = exp(q̂_i·k̂_j).
Soft-capped scores (Gemma 2) are not linear in q: such a map keeps q·scale, k and −lse apart
and caps each block of scores before the offset (`attention_core.long.scores`).

A browser gets only what it can show: `Tile`s of pooled cells. `overview` pools a whole head
into at most size × size cells; `region` pools any rectangle at the resolution that fits
`size` cells a side, and gives the weights themselves (`exact`, block 1) once the rectangle
is no larger; `tile` addresses a fixed pyramid (level 0 the whole map, each level halving the
block down to exact cells) whose tiles a client can cache. A cell is `block` consecutive rows
× `block` consecutive columns (the last of a side shorter): every row and column falls into
exactly one cell, none is dropped or sampled. What a cell holds (`reduce`):

    "mean"  the mean of the cell's rows × columns weights: an average weight, not a share
            of attention. On a row-stochastic map a pooled row's cells times their widths sum
            to 1, so the cells themselves to ≈ 1/block (the last, narrower cell counts fuller).
    "max"   the largest weight in the cell: a sharp head's single peaks survive pooling.
    "mass"  summed over the cell's columns, averaged over its rows: the share of attention the
            cell's query rows give the cell's keys, so a pooled row of the whole map sums to 1.
            `block_aggregate` uses it for sentences and paragraphs.

Memory: a map stores 4·H·n·(D + 1) bytes twice (q̂ and k̂; `nbytes`), ≈ 17 MB for one layer of
8 heads × 4 096 tokens × D = 64, against 537 MB of weights. Every computation streams over
row blocks holding at most `scratch` floats of weights (LONG_SCRATCH_FLOATS, 8 MB) plus its
result (a tile's cells, rollout's r × n rows): no call holds n² floats of a head, except
`exact()` asked for the whole head, which returns what it is asked for. Tile requests out of
range or empty return None, never raise (and so do requests for a map that is gone:
`attention_core.long.store.MapStore`).

Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", as in
`attention_core.lens.combine.rollout`): R = Ã_L ⋯ Ã_1, Ã = 0.5·I + 0.5·mean_h A, rows
renormalised. `rollout_rows` needs a few rows of R, so it carries row vectors backward,
v ← v·Ã_l from the last layer to the first, computing only the rows of Ã that v reaches
(after one layer: all rows, or rows ≤ the query for a causal map): (L − 1)·H·n²·D
multiply-adds, never an n × n product. Measured on the shared 2-core machine, one torch
thread, 6 layers × 8 heads × 4 096 tokens × D = 64: 8 rows in 0.7 s (causal) or 1.1 s (not),
of which the q̂·k̂ᵀ matmul is ~60 %, exp ~15 %, v times the weights ~20 %; building a layer
(its log-sum-exp pass) 0.25–0.35 s; an overview of one head 50–130 ms.

Shape legend: H heads, n tokens, D head size, r requested rows, b rows of a block, L layers,
R × C pooled cells.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from attention_core.limits import LONG_SCRATCH_FLOATS, MAX_LONG_TOKENS, MAX_TILE_SIZE
from attention_core.long.scores import capped, hide_future_, row_lse, rows_per_block

__all__ = ["REDUCES", "AttentionMap", "Tile", "as_map", "block_aggregate", "row_blocks"]

REDUCES = ("mean", "max", "mass")


@dataclass(frozen=True, eq=False)
class Tile:
    """One head's weights over a rectangle, pooled into cells (or exact: block = 1)."""

    head: int
    values: np.ndarray  # (R, C) float32
    row_edges: np.ndarray  # (R + 1,) int: the token where each cell row starts, then the end
    col_edges: np.ndarray  # (C + 1,) int: the same for the columns
    block: int  # tokens a cell side covers (the last cell of a side may be shorter)
    reduce: str  # "mean", "max" or "mass" (all three agree when exact)
    exact: bool  # block == 1: values are the weights themselves


@dataclass(frozen=True, eq=False)
class AttentionMap:
    """One layer's attention weights, (H, n, n), recomputed exactly from queries and keys.

    Build with `from_qk` (long prompts) or `from_weights` (a small array already in hand).
    """

    num_heads: int
    n: int
    causal: bool
    scratch: int = LONG_SCRATCH_FLOATS  # floats of weights a computation holds at once
    softcap: float | None = None  # scores capped at ±softcap by tanh (Gemma 2)
    _qhat: Tensor | None = field(default=None, repr=False)  # (H, n, D + 1) [q·scale, −lse]
    _khat: Tensor | None = field(default=None, repr=False)  # (H, n, D + 1) [k, 1]
    _w: Tensor | None = field(default=None, repr=False)  # (H, n, n) from_weights' weights
    _lse: Tensor | None = field(default=None, repr=False)  # (H, n) soft-capped maps' −lse

    @classmethod
    @torch.no_grad()
    def from_qk(
        cls,
        q: Tensor | np.ndarray,
        k: Tensor | np.ndarray,
        *,
        causal: bool,
        scale: float | None = None,
        softcap: float | None = None,
        max_tokens: int = MAX_LONG_TOKENS,
        scratch: int = LONG_SCRATCH_FLOATS,
    ) -> AttentionMap:
        """Weights softmax(q·kᵀ·scale) of queries and keys `q`, `k` (H, n, D) (or (1, H, n, D)
        from `AttentionTrace`); `scale` multiplies the scores, 1/√D by default (as
        `F.scaled_dot_product_attention`); `softcap`: the scores are capped first,
        softcap·tanh(s / softcap) (Gemma 2; `long.scores`). `causal`: query i sees keys j ≤ i
        only. One pass over the scores computes each row's log-sum-exp, `scratch` floats at
        a time."""
        qs, kt = _heads(q, "q"), _heads(k, "k")
        if qs.shape != kt.shape:
            raise ValueError(f"q and k must have the same shape, got {qs.shape} and {kt.shape}")
        H, n, D = qs.shape
        if n > max_tokens:
            raise ValueError(
                f"{n} tokens is more than max_tokens={max_tokens}: cut the text, or raise "
                "max_tokens knowing that building and rollout take time ∝ n²"
            )
        scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
        for name, value in (("scale", scale), ("softcap", softcap)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value}")
        cap = None if softcap is None else float(softcap)
        qs = qs * scale  # (H, n, D)
        lse = row_lse(qs, kt, causal=causal, softcap=cap, scratch=scratch)  # (H, n)
        if cap is not None:  # not linear: the offset is added after the cap (long.scores)
            fields = {"_qhat": qs.contiguous(), "_khat": kt.contiguous(), "_lse": -lse}
            return cls(H, n, bool(causal), int(scratch), softcap=cap, **fields)
        qhat = torch.cat([qs, -lse[..., None]], dim=-1).contiguous()  # (H, n, D + 1)
        khat = torch.cat([kt, torch.ones(H, n, 1)], dim=-1).contiguous()  # (H, n, D + 1)
        return cls(H, n, bool(causal), int(scratch), _qhat=qhat, _khat=khat)

    @classmethod
    def from_weights(
        cls, weights: Tensor | np.ndarray, *, scratch: int = LONG_SCRATCH_FLOATS
    ) -> AttentionMap:
        """A map over weights already computed, (H, n, n) or (n, n), copied as float32."""
        w = weights.detach().cpu().numpy() if isinstance(weights, Tensor) else weights
        w = np.array(w, dtype=np.float32)  # a copy: the caller's array may change later
        if w.ndim == 2:
            w = w[None]  # (n, n) → (1, n, n)
        if w.ndim != 3 or w.shape[1] != w.shape[2] or w.shape[1] == 0:
            raise ValueError(f"weights must have shape (H, n, n) or (n, n), got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("weights must be finite and >= 0 (softmax outputs)")
        return cls(w.shape[0], w.shape[1], False, int(scratch), _w=torch.from_numpy(w))

    @property
    def nbytes(self) -> int:
        """Bytes this map holds (its tensors; scratch comes and goes with each call)."""
        held = (t for t in (self._qhat, self._khat, self._w, self._lse) if t is not None)
        return sum(t.element_size() * t.nelement() for t in held)

    def _weights(self, heads: slice, rows: slice | Tensor, c0: int, c1: int) -> Tensor:
        """Exact weights of `heads` × `rows` × keys [c0, c1): (h, b, c1 − c0) float32."""
        if self._w is not None:
            return self._w[heads, rows, c0:c1]  # (h, b, c); a view when rows is a slice
        assert self._qhat is not None and self._khat is not None
        s = self._qhat[heads, rows] @ self._khat[heads, c0:c1].transpose(1, 2)  # (h, b, c)
        if self._lse is not None:  # soft-capped: cap, then each row's offset
            s = capped(s, self.softcap).add_(self._lse[heads, rows][..., None])
        if self.causal:
            r = torch.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
            hide_future_(s, r, c0)
        return s.exp_()

    def exact(self, head: int, rows: slice, cols: slice) -> np.ndarray:
        """The weights w[head, rows, cols] as float32 (r, c), exactly as numpy would slice the
        full (H, n, n) array (negative indices count from the end; step 1 only)."""
        h = range(self.num_heads)[head]  # IndexError out of range, as numpy
        r0, r1 = _span(rows, self.n)
        c0, c1 = _span(cols, self.n)
        if r1 == r0 or c1 == c0:
            return np.zeros((r1 - r0, c1 - c0), dtype=np.float32)
        w = self._weights(slice(h, h + 1), slice(r0, r1), c0, c1)[0].numpy()  # (r, c)
        return w.copy() if self._w is not None else w

    def overview(self, head: int, *, size: int, reduce: str = "mean") -> Tile | None:
        """The whole of `head` in at most size × size cells of ⌈n / size⌉ tokens a side."""
        return self.region(head, slice(0, self.n), slice(0, self.n), size=size, reduce=reduce)

    def region(
        self, head: int, rows: slice, cols: slice, *, size: int, reduce: str = "mean"
    ) -> Tile | None:
        """Rows × cols of `head` in at most size cells a side: square cells of
        ⌈max(r, c) / size⌉ tokens starting at rows.start and cols.start; the weights
        themselves (exact) when r, c ≤ size. A rectangle overhanging the map is clipped to it;
        one outside it, empty, negative, or a head out of range gives None."""
        _check_tile(size, reduce)
        r, c = _request(rows, self.n), _request(cols, self.n)
        if r is None or c is None or not _is_index(head, self.num_heads):
            return None
        block = -(-max(r[1] - r[0], c[1] - c[0]) // size)
        return self._tile(head, r, c, block, reduce)

    def levels(self, *, size: int) -> int:
        """How many levels `tile`'s pyramid has for tiles of `size` cells a side."""
        _check_tile(size, "mean")
        return _top_block(self.n, size).bit_length()

    def tile(
        self, head: int, level: int, row: int, col: int, *, size: int, reduce: str = "mean"
    ) -> Tile | None:
        """Tile (row, col) of pyramid level `level`. Level 0 covers the map with cells of
        B₀ tokens, the least power of two with n ≤ size·B₀; each level halves the block, and
        the last (`levels() − 1`) is exact. A tile spans size·block tokens a side (clipped at
        the map's end), so tile (i, j) of a level is tiles (2i…2i+1, 2j…2j+1) of the next.
        Anything out of range gives None."""
        _check_tile(size, reduce)
        top = _top_block(self.n, size)
        if not (_is_index(head, self.num_heads) and _is_index(level, top.bit_length())):
            return None
        block = top >> level
        span = size * block
        if not (_is_index(row, self.n) and _is_index(col, self.n)):
            return None
        r0, c0 = row * span, col * span
        if r0 >= self.n or c0 >= self.n:
            return None
        return self._tile(
            head, (r0, min(self.n, r0 + span)), (c0, min(self.n, c0 + span)), block, reduce
        )

    def _tile(
        self, head: int, rows: tuple[int, int], cols: tuple[int, int], block: int, reduce: str
    ) -> Tile:
        row_edges, col_edges = _edges(*rows, block), _edges(*cols, block)
        if block == 1:
            values = self.exact(head, slice(*rows), slice(*cols))  # (R, C)
        else:
            values = self._pool(head, row_edges, col_edges, reduce).astype(np.float32)  # (R, C)
        return Tile(head, values, row_edges, col_edges, block, reduce, block == 1)

    @torch.no_grad()
    def _pool(
        self, head: int, row_edges: np.ndarray, col_edges: np.ndarray, reduce: str
    ) -> np.ndarray:
        """`head`'s weights reduced over the cells [row_edges[a], row_edges[a + 1]) ×
        [col_edges[b], col_edges[b + 1]): (R, C) float64, streamed over row blocks. Cells may
        span blocks: block partials are combined (added, or their max taken)."""
        r0, r1, c0, c1 = (
            int(e) for e in (row_edges[0], row_edges[-1], col_edges[0], col_edges[-1])
        )
        acc = np.zeros((len(row_edges) - 1, len(col_edges) - 1))  # (R, C); weights ≥ 0
        ufunc = np.maximum if reduce == "max" else np.add
        step = rows_per_block(self.scratch, 1, c1 - c0)
        for a in range(r0, r1, step):
            b = min(r1, a + step)
            hi = min(c1, b) if self.causal else c1  # causal: keys ≥ b are 0 for these rows
            if hi <= c0:
                continue
            w = self._weights(slice(head, head + 1), slice(a, b), c0, hi)[0].numpy()  # (b−a, ·)
            cells = int(np.searchsorted(col_edges[:-1], hi))  # column cells starting before hi
            cols = ufunc.reduceat(w, col_edges[:cells] - c0, axis=1, dtype=np.float64)
            first = int(np.searchsorted(row_edges, a, side="right")) - 1  # the cell of row a
            last = int(np.searchsorted(row_edges, b - 1, side="right")) - 1
            starts = np.concatenate([[a], row_edges[first + 1 : last + 1]]) - a
            part = ufunc.reduceat(cols, starts, axis=0)  # (last − first + 1, cells)
            view = acc[first : last + 1, :cells]
            ufunc(view, part, out=view)
        if reduce != "max":
            acc /= np.diff(row_edges)[:, None]  # mean over the cell's rows
        if reduce == "mean":
            acc /= np.diff(col_edges)[None, :]  # and over its columns
        return acc

    @torch.no_grad()
    def propagate(self, v: Tensor, alpha: float, head_reduce: str) -> Tensor:
        """v·Ã for Ã = alpha·I + (1 − alpha)·A, A the heads' mean (or max), rows renormalised:
        (r, n) → (r, n). Only the rows of Ã where v is non-zero are computed."""
        out = torch.zeros_like(v)  # (r, n)
        support = torch.nonzero(v.any(dim=0)).flatten()  # rows of Ã that v reaches, ascending
        H = self.num_heads
        step = rows_per_block(self.scratch, H, self.n)
        for s in range(0, len(support), step):
            idx = support[s : s + step]  # (b,)
            hi = int(idx[-1]) + 1 if self.causal else self.n  # causal: later keys are 0
            w = self._weights(slice(None), idx, 0, hi)  # (H, b, hi)
            if head_reduce == "max":
                a = w.amax(dim=0)  # (b, hi)
                sums = a.sum(dim=-1)  # (b,)
            elif self._w is not None:
                sums = w.sum(dim=(0, 2)) / H  # (b,) rows of the heads' mean
            else:
                sums = torch.ones(len(idx))  # softmax rows sum to 1
            denom = alpha + (1.0 - alpha) * sums  # (b,) Ã's row sums before renormalising
            u = torch.where(denom > 0, v[:, idx] / denom, 0.0)  # (r, b)
            if head_reduce == "max":
                out[:, :hi] += ((1.0 - alpha) * u) @ a
            else:  # Σ_h u·A_h / H as one product: (r, H·b) @ (H·b, hi)
                stacked = w.reshape(H * len(idx), hi)  # (H·b, hi)
                out[:, :hi] += ((1.0 - alpha) / H * u).repeat(1, H) @ stacked
            out[:, idx] += alpha * u
        return out


def block_aggregate(
    source: AttentionMap | np.ndarray | Tensor, head: int, boundaries: Sequence[int]
) -> np.ndarray:
    """Attention between consecutive spans (sentences, paragraphs) of one head: (S, S) float32.

    `boundaries` are the tokens where spans start (0 and n are added when missing), strictly
    increasing. value[a, b] = mean over span a's query rows of the summed weights on span b's
    keys ("mass"), so every row sums to 1, causal maps included. `source`: an AttentionMap
    (streamed), or weights (H, n, n) or (n, n).
    """
    m = as_map(source)
    if not _is_index(head, m.num_heads):
        raise ValueError(f"head must be an integer in 0..{m.num_heads - 1}, got {head!r}")
    edges = [int(b) for b in boundaries]
    edges = ([0] if not edges or edges[0] != 0 else []) + edges
    edges += [] if edges[-1] == m.n else [m.n]
    if any(b <= a for a, b in itertools.pairwise(edges)):
        raise ValueError(
            f"boundaries must increase strictly within 0..{m.n} (span starts), got {boundaries}"
        )
    e = np.asarray(edges, dtype=np.int64)
    return m._pool(head, e, e, "mass").astype(np.float32)  # (S, S)


def row_blocks(
    m: AttentionMap, head: int, rows: tuple[int, int], cols: tuple[int, int]
) -> Iterator[tuple[int, int, np.ndarray]]:
    """`head`'s exact weights over rows × cols ((start, stop) each) of `m`, block by block:
    yields (a, hi, w), w (b, k) float32 the weights of rows [a, a + b) on keys [c0, hi),
    k = hi − c0. Blocks with no key (above a causal diagonal) are skipped."""
    (r0, r1), (c0, c1) = rows, cols
    step = max(1, m.scratch // max(1, c1 - c0))  # rows a block holds within scratch floats
    for a in range(r0, r1, step):
        b = min(r1, a + step)
        hi = min(c1, b) if m.causal else c1  # causal: keys ≥ b are 0 for these rows
        if hi > c0:
            yield a, hi, m.exact(head, slice(a, b), slice(c0, hi))  # (b − a, hi − c0)


def as_map(x: AttentionMap | np.ndarray | Tensor) -> AttentionMap:
    """`x` itself if it is a map, else weights (H, n, n) or (n, n) as one."""
    return x if isinstance(x, AttentionMap) else AttentionMap.from_weights(x)


def _heads(x: Tensor | np.ndarray, name: str) -> Tensor:
    """`x` as a float32 (H, n, D) tensor of its own; (1, H, n, D) loses its batch axis."""
    t = x.detach().cpu() if isinstance(x, Tensor) else torch.from_numpy(np.array(x))
    t = t.to(torch.float32)
    if t.dim() == 4 and t.shape[0] == 1:
        t = t[0]  # (1, H, n, D) → (H, n, D)
    if t.dim() != 3 or t.shape[1] == 0 or t.shape[2] == 0:
        raise ValueError(f"{name} must have shape (H, n, D) with n, D ≥ 1, got {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} has NaN or infinite values")
    return t


def _span(s: slice, n: int) -> tuple[int, int]:
    if not isinstance(s, slice) or s.step not in (None, 1):
        raise ValueError(f"expected a slice with step 1, got {s!r}")
    start, stop, _ = s.indices(n)
    return start, max(start, stop)


def _is_index(x: object, n: int) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool) and 0 <= x < n


def _request(s: object, n: int) -> tuple[int, int] | None:
    """A tile request's slice as (start, stop) clipped to [0, n), or None when it is not one."""
    if not isinstance(s, slice) or s.step not in (None, 1):
        return None
    start = 0 if s.start is None else s.start
    stop = n if s.stop is None else s.stop
    if not (_is_index(start, n) and isinstance(stop, int | np.integer)) or stop <= start:
        return None
    return int(start), int(min(stop, n))


def _check_tile(size: object, reduce: str) -> None:
    if not _is_index(size, MAX_TILE_SIZE + 1) or size == 0:
        raise ValueError(f"size must be an integer in 1..{MAX_TILE_SIZE}, got {size!r}")
    if reduce not in REDUCES:
        raise ValueError(f"reduce must be one of {', '.join(REDUCES)}; got {reduce!r}")


def _edges(start: int, stop: int, block: int) -> np.ndarray:
    """(cells + 1,) int: start, start + block, …, then stop (the last cell may be shorter)."""
    return np.append(np.arange(start, stop, block), stop).astype(np.int64)


def _top_block(n: int, size: int) -> int:
    """The least power of two B with n ≤ size·B: level 0's block."""
    return 1 << (-(-n // size) - 1).bit_length()
