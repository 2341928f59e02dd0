"""attention_core.notebook.inputs: what a notebook hands the views is named in the error
when it cannot be shown — None (a model run without output_attentions), a tuple of None (an
attention implementation that returns no weights) — and NumPy integers count as integers."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.notebook import NotebookInputError, as_attention, head_view
from tests.support.availability import needs_minilm


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


@needs_minilm
def test_a_neuron_view_of_a_long_text_says_what_cut_it() -> None:
    """No silent 512: the title names the view's bound and the query it leaves."""
    from attention_core.notebook import neuron_view
    from tests.support.models import minilm_tokenizer, tiny_decoder

    tokenizer = minilm_tokenizer()
    model = tiny_decoder("LlamaConfig", tokenizer.vocab_size, num_key_value_heads=2)
    text = "the cat sat on the mat. " * 120  # ~840 tokens
    view = neuron_view(model, text, layer=1, head=0, tokenizer=tokenizer)
    title = view.figure.layout.title.text
    assert "only the text's first 512 tokens are read" in title
    assert "the view's bound, max_tokens=512" in title and "the query is token 511" in title
    short = neuron_view(model, "the cat sat", layer=1, head=0, tokenizer=tokenizer)
    assert "are read" not in short.figure.layout.title.text
