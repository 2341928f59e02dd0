"""Every cut says what cut it: the view's bound, the model's context, the tokenizer's
model_max_length (below the model's context), the characters — in the library's results."""

from __future__ import annotations

import pytest

from attention_core.long.pretrained import run_model_long
from attention_core.pretrained import from_model, run_model, tiny_family
from tests.support.availability import needs_minilm

pytestmark = needs_minilm

TEXT = "the cat sat on the mat and then it slept. " * 150  # ~1 650 tokens


@pytest.fixture(scope="module")
def llama():
    model, tokenizer = tiny_family("llama", context=4096)  # its position table: 4 096
    return model, tokenizer


def test_a_tokenizer_limit_below_the_models_context_is_named(llama) -> None:
    model, tokenizer = llama
    tokenizer.model_max_length = 512  # a generic tokenizer paired with a long model
    loaded = from_model(model, tokenizer)
    result = run_model_long(loaded, TEXT)
    assert (result.cut_by, result.limit, result.n) == ("tokenizer", 512, 512)
    assert result.total_tokens > 1_600


def test_the_models_context_and_the_views_bound_are_named(llama) -> None:
    model, tokenizer = llama
    tokenizer.model_max_length = 4096
    loaded = from_model(model, tokenizer)
    assert run_model(loaded, TEXT).cut_by == "max_tokens"  # the exact views' 512
    assert run_model_long(loaded, TEXT).cut_by is None  # all ~1 650 tokens read
    small, small_tok = tiny_family("llama", context=256)
    assert run_model_long(from_model(small, small_tok), TEXT).cut_by == "model"


def test_each_tiny_models_tokenizer_is_its_own() -> None:
    """A caller that changes one tiny model's tokenizer (TransformerLens's bridge sets its
    bos_token) leaves the next one as the packaged tokenizer made it."""
    _, first = tiny_family("llama")
    first.bos_token = "<|endoftext|>"  # not in the vocabulary: [UNK]
    first.model_max_length = 7
    _, second = tiny_family("llama")
    assert second.bos_token is None and second.bos_token_id is None
    assert second.model_max_length == 4096
