"""Shared helpers of the teaching-page tests (steps, scaling, quiz): open a page, read its
charts by key, and an independent torch reference of the attention the pages show.

Builds on tests/support/apptest.py (decode, texts); HF_HUB_OFFLINE is set by conftest.py."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from streamlit.testing.v1 import AppTest

from attention_core.attention import build_attention, causal_mask
from attention_core.embedding import embed
from attention_core.tokenize import tokenize
from tests.support.apptest import APP, TIMEOUT, charts, decode, texts

__all__ = [
    "EXAMPLE_LINK",
    "LONG_TEXT",
    "charts",
    "decode",
    "open_page",
    "reference",
    "reference_from_params",
    "reference_weights",
    "texts",
]

LONG_TEXT = " ".join(f"w{i}" for i in range(120))  # 120 word tokens
# the example as URL parameters: the article's sentence cut by jieba into four
# words, two heads of four dimensions each
EXAMPLE_LINK = {
    "text": "中和有一個永和路",
    "tokenizer": "jieba",
    "attention": "multi",
    "embed_dim": "8",
    "num_heads": "2",
}


def open_page(
    page: str, params: dict[str, str] | None = None, state: dict[str, Any] | None = None
) -> AppTest:
    """AppTest of app.py on pages/<page>.py after ONE run, with URL params and state set.

    The page is chosen before the first run (the st.Page url paths are the file names, so
    the file name identifies it).
    """
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(params or {})
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    return at


def reference(
    text: str,
    *,
    attention: str = "multi",
    embed_dim: int = 16,
    num_heads: int = 4,
    seed: int = 0,
    causal: bool = False,
    positional: bool = False,
    tokenizer: str = "auto",
    divisor: float | None = None,
) -> dict[str, np.ndarray]:
    """forward()'s output and weights, plus scores recomputed by hand from the nn.Linear layers.

    weights (H, n, n), output (n, C), scores (H, n, n), q_full / k_full (n, C), labels,
    head_dim, and `custom`: softmax(scores / divisor), masked, computed here with torch, not
    by the module; `divisor` defaults to √head_dim, the one the module uses.
    """
    tokens = tokenize(text, tokenizer)
    heads = 1 if attention == "single" else num_heads
    module = build_attention(attention, embed_dim, heads, seed=seed)
    x = embed(tokens, embed_dim, seed=seed, positional=positional)  # (1, n, C)
    n = x.shape[1]
    mask = causal_mask(n) if causal else None
    with torch.no_grad():
        output, weights = module(x, mask)
        if weights.dim() == 3:
            weights = weights.unsqueeze(1)  # (1, n, n) → (1, 1, n, n)
        D = embed_dim // heads
        q = module.query_linear(x)[0].view(n, heads, D).transpose(0, 1)  # (H, n, D)
        k = module.key_linear(x)[0].view(n, heads, D).transpose(0, 1)  # (H, n, D)
        scores = q @ k.transpose(-2, -1)  # (H, n, n)
        result = {
            "q_full": module.query_linear(x)[0].numpy(),  # (n, C)
            "k_full": module.key_linear(x)[0].numpy(),  # (n, C)
            "output": output[0].numpy(),
            "weights": weights[0].numpy(),
            "scores": scores.numpy(),
            "labels": [f"{i}:{t.label}" for i, t in enumerate(tokens)],
            "head_dim": D,
        }
        logits = scores / (math.sqrt(D) if divisor is None else divisor)
        if mask is not None:
            logits = logits.masked_fill(~mask, -math.inf)
        result["custom"] = torch.softmax(logits, dim=-1).numpy()
    return result


def reference_weights(text: str, **module: Any) -> np.ndarray:
    """(H, n, n) attention weights recomputed here: softmax(q·kᵀ / √head_dim), masked.

    Not the module's forward() nor the pipeline: q and k come from the nn.Linear layers
    and the scaling, mask and softmax are done by `reference` (its `custom`) with √d_k,
    the divisor the module uses (d_k = embed_dim for single-head, embed_dim / H else).
    `module`: `reference`'s keywords (attention, embed_dim, num_heads, seed, ...).
    """
    return reference(text, **module)["custom"]


def reference_from_params(params: dict[str, str], *, divisor: float | None = None) -> dict:
    """`reference` for settings given as URL query parameters (defaults as in Settings)."""
    flag = {"true": True, "false": False}
    return reference(
        params.get("text", "中和有一個永和路"),
        attention=params.get("attention", "multi"),
        embed_dim=int(params.get("embed_dim", 16)),
        num_heads=int(params.get("num_heads", 4)),
        seed=int(params.get("seed", 0)),
        causal=flag[params.get("causal", "false")],
        positional=flag[params.get("positional", "false")],
        tokenizer=params.get("tokenizer", "auto"),
        divisor=divisor,
    )
