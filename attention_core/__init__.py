"""attention_core: self-attention you can see. A pure library (no streamlit).

    import attention_core
    a = attention_core.analyze("中和有一個永和路", embed_dim=8, num_heads=2)
    a.tokens, a.weights.shape                         # 中和 / 有 / 一個 / 永和路, (2, 4, 4)

    from attention_core import MultiHeadAttention, tokenize, embed
    tokens = tokenize("中和有一個永和路")            # 中和 / 有 / 一個 / 永和路
    x = embed(tokens, 8, seed=0)                      # (1, 4, 8)
    out, w = MultiHeadAttention(8, 2)(x)              # (1, 4, 8), (1, 2, 4, 4)

Names are imported lazily (PEP 562, `attention_core.lazy`), so `import attention_core.settings`
in the app's first paint does not wait for torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

# tokenize is light (standard library only until first use), and importing it here means
# the name `tokenize` is the function even after the submodule has been imported.
from attention_core.tokenize import TOKENIZER_MODES, Token, tokenize

__all__ = [
    "TOKENIZER_MODES",
    "Analysis",
    "AttentionTrace",
    "HeadStats",
    "MultiHeadAttention",
    "Settings",
    "SingleHeadAttention",
    "Token",
    "analyze",
    "build_attention",
    "causal_mask",
    "embed",
    "head_similarity",
    "head_stats",
    "similarity_order",
    "sinusoidal_positions",
    "tokenize",
    "valid_num_heads",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SingleHeadAttention": "attention",
        "MultiHeadAttention": "attention",
        "AttentionTrace": "attention",
        "build_attention": "attention",
        "causal_mask": "attention",
        "valid_num_heads": "attention",
        "embed": "embedding",
        "sinusoidal_positions": "embedding",
        "HeadStats": "stats",
        "head_stats": "stats",
        "head_similarity": "stats",
        "similarity_order": "stats",
        "Analysis": "pipeline",
        "analyze": "pipeline",
        "Settings": "settings",
        "parse_settings": "settings",
    },
)

if TYPE_CHECKING:
    from attention_core.attention import (
        AttentionTrace,
        MultiHeadAttention,
        SingleHeadAttention,
        build_attention,
        causal_mask,
        valid_num_heads,
    )
    from attention_core.embedding import embed, sinusoidal_positions
    from attention_core.pipeline import Analysis, analyze
    from attention_core.settings import Settings
    from attention_core.stats import HeadStats, head_similarity, head_stats, similarity_order
