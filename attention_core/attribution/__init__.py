"""Attribution beside attention: which input tokens moved a prediction, measured with
Captum, and how far each head's attention agrees with it.

    result.py      Attribution (one score per token, pooled to characters and words),
                   AttributionRefused, METHODS
    subjects.py    a model and a text as a function of the input embeddings: the reader,
                   a causal transformers model, an encoder's sentence similarity
    run.py         attribute(): integrated gradients, input × gradient, occlusion
    views.py       the attention views of the same target: raw rows, norm-weighted,
                   rollout, each head's ablation effect
    side_by_side.py  agreement(): rank agreement (Spearman, Kendall, permutation p) of each
                   view with each attribution, per head; the table, sinks named

Names are imported on first use, so importing the package loads no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

__all__ = [
    "METHODS",
    "VIEWS",
    "Agreement",
    "AttentionViews",
    "Attribution",
    "AttributionRefused",
    "HeadRow",
    "agreement",
    "attribute",
    "head_table",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "METHODS": "result",
        "VIEWS": "side_by_side",
        "Agreement": "side_by_side",
        "AttentionViews": "views",
        "HeadRow": "side_by_side",
        "agreement": "side_by_side",
        "head_table": "side_by_side",
        "Attribution": "result",
        "AttributionRefused": "result",
        "attribute": "run",
    },
)

if TYPE_CHECKING:
    from attention_core.attribution.result import METHODS, Attribution, AttributionRefused
    from attention_core.attribution.run import attribute
    from attention_core.attribution.side_by_side import (
        VIEWS,
        Agreement,
        HeadRow,
        agreement,
        head_table,
    )
    from attention_core.attribution.views import AttentionViews
