"""Resource bounds shared by the library and the app: one place, one number each."""

from __future__ import annotations

# Exact (n, n) weights held and drawn per head: the heatmaps, the head view, the lessons, the
# lens. Longer inputs are truncated with a visible warning, except on the landing page, whose
# untrained module shows up to MAX_LONG_TOKENS as a long map (attention_core.long.run).
MAX_TOKENS = 512
# Every weight of a model's run (`pretrained.run_model`), L·H·n² float32 at once: 2²⁸ = 1 GB.
# MiniLM (6 × 12 heads) at 512 tokens holds 75 MB; a 32 × 32-head model reaches it at 512.
# Above MAX_TOKENS a run that could pass it is refused; `run_model_long` keeps maps instead.
MAX_DENSE_FLOATS = 1 << 28
MAX_TEXT_CHARS = 20_000  # characters tokenized at most; the rest is cut before tokenizing
# characters accepted at all: a longer text (a pasted book) is refused before anything is cut
# or tokenized, with a message, rather than held in the session and silently cut to its start
MAX_INPUT_CHARS = 200_000
MAX_EMBED_DIM = 1024
MAX_HEADS = 64  # num_heads offered; embed_dim's divisors above this are not
# embed_dim x n² bounds the work of one forward pass (and the size of the scores tensor
# times H): 1024 x 512² ≈ 2.7e8 multiply-adds, a fraction of a second on 2 cores.
MAX_WORK = MAX_EMBED_DIM * MAX_TOKENS * MAX_TOKENS
MAX_TRAIN_STEPS = 5_000


def valid_num_heads(embed_dim: int) -> list[int]:
    """The head counts that divide `embed_dim` evenly (the only valid ones)."""
    return [h for h in range(1, embed_dim + 1) if embed_dim % h == 0]


EXACT = 1e-5  # a difference below this is floating-point rounding, not a real change
# attention rows handed in (a model's probe, a notebook's tensors) must sum to 1 within this:
# float16 and bfloat16 models round a row's weights to ~3 digits; an implementation that
# returns no weights (SDPA, flash) sums to 0
ROW_SUM_TOLERANCE = 1e-2
# a rebuilt weight of a bfloat16 / float16 model (rebuilt in float32) against the model's own:
# its projections, norms and softmax each round to 8 (bfloat16) or 11 (float16) bits, and a
# weight of 0.3 can then move by ~0.01-0.02 (measured on every family of pretrained.zoo)
HALF_TOLERANCE = 3e-2

# Long prompts (attention_core.long.map): maps kept as queries and keys, weights recomputed on
# demand. The longest prompt a long map is built for. Memory grows with n, time with n²:
# measured at 4 096 tokens × 8 heads × D = 64 on one core of the 2-core machine, building a
# layer takes ~0.3 s and a rollout of a few rows through 6 layers 0.7 s (causal) to 1.1 s.
MAX_LONG_TOKENS = 4096
# weights one long-map computation holds at once (2²¹ float32 = 8 MB): bounds a request's
# scratch memory whatever n is (a 4 096-token head is 64 MB), and keeps a block in cache while
# it is exp'd and reduced
LONG_SCRATCH_FLOATS = 1 << 21
# cells per side of one tile sent to a browser: 512² float32 = 1 MB per tile at most
MAX_TILE_SIZE = 512
# bytes of long maps one server keeps (attention_core.long.store.MapStore), least recently
# used evicted first: a 6-layer × 8-head × 4 096-token view holds ~100 MB, so ~5 texts at once
LONG_STORE_BYTES = 512 << 20
# The long map's build (attention_core.long.run) costs (C + H)·n² and needs no bound of its
# own beyond MAX_LONG_TOKENS: measured at 4 096 tokens on one core, 0.26 s at embed_dim 64 ×
# 8 heads, 0.44 s at 1 024 × 8, 1.9 s at the largest settings (1 024 × 64 heads).
# Pooled cells of one long-map overview sent to the browser, all heads together: 4 B each,
# 2²⁰ cells = 4 MB (5.6 MB as base64), so the overview of 8 heads is 256² cells a head
LONG_OVERVIEW_CELLS = 1 << 20
