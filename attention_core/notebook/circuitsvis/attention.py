"""CircuitsVis's `circuitsvis.attention` call shapes, drawn by the project's views.

`attention` is one layer as CircuitsVis takes it: [num_heads × dest_tokens × src_tokens]
(a TransformerLens `cache["pattern", layer][0]`), or [dest × src] for `attention_pattern`;
a tensor or an array. `tokens` are the n token strings (`model.to_str_tokens(text)`).
CircuitsVis's colour and naming options are accepted so its calls run unchanged; the
views draw in the project's own colours and names.

Shape legend: H heads, n tokens (dest = src = n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attention_core.i18n import DEFAULT_LANG
from attention_core.notebook.inputs import NotebookInputError
from attention_core.notebook.views import head_view, heads_grid

__all__ = ["attention_heads", "attention_pattern", "attention_patterns"]


def _one_layer(attention: Any, ndim: int, name: str) -> Any:
    shape = tuple(getattr(attention, "shape", ()))
    if len(shape) != ndim:
        want = "[num_heads, dest, src]" if ndim == 3 else "[dest, src]"
        raise NotebookInputError(
            f"{name} takes one layer's attention shaped {want}, got shape {shape}: for a "
            'TransformerLens cache pass cache["pattern", layer][0]'
        )
    return attention[None]  # (1, H, n, n): one layer


def attention_patterns(
    tokens: Sequence[str],
    attention: Any,
    attention_head_names: Sequence[str] | None = None,
    *,
    widget: bool | None = None,
    lang: str = DEFAULT_LANG,
    **_circuitsvis_options: Any,
) -> Any:
    """Every head's pattern of one layer, side by side (the heads grid); `attention`
    (H, n, n). A click on a row sets the widget's `selected`."""
    del attention_head_names  # the grid names heads by number
    layer = _one_layer(attention, 3, "attention_patterns")  # (1, H, n, n)
    return heads_grid(layer, tokens, 0, prettify_tokens=False, lang=lang, widget=widget)


def attention_heads(
    attention: Any,
    tokens: Sequence[str],
    attention_head_names: Sequence[str] | None = None,
    max_value: float | None = None,
    min_value: float | None = None,
    *,
    widget: bool | None = None,
    lang: str = DEFAULT_LANG,
    **_circuitsvis_options: Any,
) -> Any:
    """One layer's heads as the head view (lines from each query to its keys, a head's
    square switches it); `attention` (H, n, n)."""
    del attention_head_names, max_value, min_value
    layer = _one_layer(attention, 3, "attention_heads")  # (1, H, n, n)
    return head_view(layer, tokens, prettify_tokens=False, lang=lang, widget=widget)


def attention_pattern(
    tokens: Sequence[str],
    attention: Any,
    *,
    widget: bool | None = None,
    lang: str = DEFAULT_LANG,
    **_circuitsvis_options: Any,
) -> Any:
    """One head's pattern as a heatmap; `attention` (n, n)."""
    layer = _one_layer(attention, 2, "attention_pattern")[None]  # (1, 1, n, n)
    return heads_grid(layer, tokens, 0, prettify_tokens=False, lang=lang, widget=widget)
