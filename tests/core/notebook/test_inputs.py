"""attention_core.notebook.inputs: what a notebook hands the views is named in the error
when it cannot be shown — None (a model run without output_attentions), a tuple of None (an
attention implementation that returns no weights) — and NumPy integers count as integers."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.notebook import NotebookInputError, as_attention, head_view


@pytest.mark.parametrize(
    ("attention", "words"),
    [
        (None, "the attention is None"),
        ((None, None, None), "a tuple of 3 None"),
        ([], "the attention is empty"),
    ],
)
def test_what_the_model_returned_is_named(attention: object, words: str) -> None:
    with pytest.raises(NotebookInputError, match=words) as caught:
        head_view(attention, ["a", "b"])
    assert "attn_implementation='eager'" in str(caught.value)
    assert "shape" not in str(caught.value)


def test_numpy_integers_pick_layers_and_heads() -> None:
    weights = np.full((3, 2, 4, 4), 0.25, dtype=np.float32)  # (L, H, n, n)
    kept = as_attention(weights, list("abcd"), include_layers=[np.int64(2), np.int32(0)])
    assert kept.layers == [2, 0]
    view = head_view(weights, list("abcd"), layer=np.int64(2), heads=[np.int64(1)])
    assert "abcd"[3] in view.to_html()
