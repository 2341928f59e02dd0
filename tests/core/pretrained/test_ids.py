"""run_model with token ids (attention_core/pretrained/ids.py): one sentence, a padded batch
with its attention mask, an encoder (the packaged MiniLM) and a decoder (a tiny GPT-2),
each sentence against the same sentence run alone, by this project and by transformers
directly; bad ids refused with a message.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.pretrained import LoadedModel, build_tiny_model, load_model, run_model
from tests.support.availability import needs_minilm

pytestmark = needs_minilm
SENTENCES = ["The cat sat on the mat.", "It was tired because it had walked all day long."]


def test_ids_of_a_sentence_are_the_text_run(loaded: LoadedModel) -> None:
    text_run = run_model(loaded, SENTENCES[0])
    ids = loaded.tokenizer(SENTENCES[0])["input_ids"]
    ids_run = run_model(loaded, ids)
    assert ids_run.tokens == text_run.tokens and ids_run.special == text_run.special
    np.testing.assert_allclose(ids_run.attentions, text_run.attentions, atol=EXACT)


@pytest.mark.parametrize("family", ["encoder", "decoder"])
def test_a_padded_batch_is_each_sentence_alone(loaded: LoadedModel, tmp_path, family: str) -> None:
    """Right padding: every sentence's kept rows equal transformers on that sentence alone."""
    model = loaded if family == "encoder" else load_model(str(build_tiny_model(family, tmp_path)))
    tokenizer = model.tokenizer
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    assert (batch["attention_mask"] == 0).any()  # the first sentence is padded
    results = run_model(model, batch["input_ids"], attention_mask=batch["attention_mask"])
    assert isinstance(results, list) and len(results) == 2
    for sentence, result in zip(SENTENCES, results, strict=True):
        alone = tokenizer(sentence, return_tensors="pt")
        with torch.no_grad():
            own = model.model(**alone, output_attentions=True).attentions  # L × (1, H, m, m)
        assert result.tokens == tokenizer.convert_ids_to_tokens(alone["input_ids"][0])
        np.testing.assert_allclose(result.attentions, torch.cat(own).numpy(), atol=EXACT)
        np.testing.assert_allclose(result.attentions.sum(-1), 1.0, atol=EXACT)
        assert result.generated == ([False] * len(result.tokens) if family == "decoder" else None)


def test_a_batch_of_one_is_a_list(loaded: LoadedModel) -> None:
    ids = loaded.tokenizer(SENTENCES[:1], return_tensors="pt")["input_ids"]  # (1, n)
    (only,) = run_model(loaded, ids)
    assert only.tokens[0] == "[CLS]" and not only.truncated


@pytest.mark.parametrize(
    ("ids", "mask", "message"),
    [
        ([], None, "no tokens"),
        ([[101, 102], [101]], None, "padding and a mask"),
        ([101, 10**9, 102], None, "vocabulary"),
        ([101, -1, 102], None, "vocabulary"),
        ([101.5, 102], None, "integers"),
        ([[101, 102]], [[1, 1, 1]], "shape"),
        ([[101, 102]], [[0, 0]], "at least one 1"),
        ([[101, 102]], [[2, 1]], "0 or 1"),
        ([101] * 600, None, "at most 512"),
        ("not ids but text", None, None),  # text still works
    ],
)
def test_bad_ids_are_refused_with_a_message(loaded: LoadedModel, ids, mask, message) -> None:
    if message is None:
        assert run_model(loaded, ids).tokens[0] == "[CLS]"
        return
    with pytest.raises(ValueError, match=message):
        run_model(loaded, ids, attention_mask=mask)


def test_ids_and_text_options_do_not_mix(loaded: LoadedModel, tmp_path) -> None:
    with pytest.raises(ValueError, match="attention_mask goes with token ids"):
        run_model(loaded, "hello", attention_mask=[1, 1, 1])
    with pytest.raises(ValueError, match="generate is taken with text"):
        run_model(loaded, [101, 102], generate=2)
    seq2seq = load_model(str(build_tiny_model("encoder-decoder", tmp_path)))
    with pytest.raises(ValueError, match="give this model text"):
        run_model(seq2seq, [101, 102])
