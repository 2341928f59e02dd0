"""Tests for attention_core/attribution/run.py and subjects.py, against references outside
the code under test:

- integrated gradients and input × gradient: Captum's LayerIntegratedGradients and
  LayerGradientXActivation on the model's own embedding layer and its own forward from ids
  (ReaderLM.forward, a transformers model's logits), with a zero baseline made by a deep
  copy whose unused embedding row is zeroed;
- completeness: Σ scores against f(x) − f(0) on the reader at the default steps;
- occlusion: the model's own forward rerun by hand with one token replaced by that zero row;
- pooling: characters' and words' totals are the pieces' totals;
- bad input: a clear message, and the model as it was.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from captum.attr import LayerGradientXActivation, LayerIntegratedGradients

from attention_core.attribution import AttributionRefused, attribute
from attention_core.limits import EXACT
from attention_core.reader.weights import load_shipped
from tests.support.availability import needs_minilm

TEXT = "中和有一個永和路"
ENGLISH = "the cat sat on the mat"


@pytest.fixture(scope="module")
def reader():
    return load_shipped()


@pytest.fixture(scope="module")
def llama():
    pytest.importorskip("transformers")
    from attention_core.pretrained.zoo import tiny_family

    return tiny_family("llama")


def _zero_row_copy(model, row: int):
    """A deep copy of `model` whose embedding row `row` is zero: its id is the baseline."""
    twin = copy.deepcopy(model)
    with torch.no_grad():
        twin.get_input_embeddings().weight[row] = 0.0
    return twin


def _reader_logit(model, position: int, target: int):
    return lambda ids: model(ids)[0][:, position, target]  # ReaderLM.forward: (B, n, V)


def test_integrated_gradients_equal_captums_own_run_on_the_reader(reader):
    ours = attribute(reader, TEXT, steps=16)
    unk = reader.vocab.index["[UNK]"]  # not in the text, not the target
    assert unk not in ours.ids and ours.target != unk
    twin = _zero_row_copy(reader.model, unk)
    forward = _reader_logit(twin, ours.position, ours.target)
    ids = torch.tensor([ours.ids])
    lig = LayerIntegratedGradients(forward, twin.token_embedding)
    theirs = lig.attribute(ids, baselines=torch.full_like(ids, unk), n_steps=16)
    expected = theirs[0].detach().double().sum(-1).numpy()
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(ours.scores, expected, rtol=0, atol=EXACT * scale * 10)


def test_input_x_gradient_equals_captums_own_run_on_the_reader(reader):
    ours = attribute(reader, TEXT, method="input_x_gradient")
    forward = _reader_logit(reader.model, ours.position, ours.target)
    theirs = LayerGradientXActivation(forward, reader.model.token_embedding).attribute(
        torch.tensor([ours.ids])
    )
    expected = theirs[0].detach().double().sum(-1).numpy()
    np.testing.assert_allclose(ours.scores, expected, rtol=0, atol=EXACT * 10)


def test_integrated_gradients_equal_captums_own_run_on_a_causal_transformers_model(llama):
    model, tokenizer = llama
    ours = attribute(model, ENGLISH, tokenizer=tokenizer, target=2000, position=3, steps=8)
    unused = tokenizer.convert_tokens_to_ids("[unused5]")
    twin = _zero_row_copy(model, unused)
    ids = torch.tensor([ours.ids])

    def forward(x):
        return twin(input_ids=x).logits[:, 3, 2000]

    lig = LayerIntegratedGradients(forward, twin.get_input_embeddings())
    theirs = lig.attribute(ids, baselines=torch.full_like(ids, unused), n_steps=8)
    expected = theirs[0].detach().double().sum(-1).numpy()
    np.testing.assert_allclose(ours.scores, expected, rtol=0, atol=EXACT * 10)
    assert ours.scores[4:].tolist() == [0.0] * (len(ours.ids) - 4)  # causal: later tokens


def test_integrated_gradients_complete_within_five_percent_on_the_reader(reader):
    result = attribute(reader, "中和有一個永和路，永和有一個中和路")  # the default 32 steps
    change = result.output - result.baseline_output
    assert abs(result.scores.sum() - change) <= 0.05 * abs(change)
    assert result.completeness_gap <= 0.05


def test_occlusion_equals_a_rerun_with_the_token_replaced(reader):
    result = attribute(reader, TEXT, method="occlusion")
    unk = reader.vocab.index["[UNK]"]
    twin = _zero_row_copy(reader.model, unk)
    forward = _reader_logit(twin, result.position, result.target)
    with torch.no_grad():
        whole = float(forward(torch.tensor([result.ids]))[0])
        for i in range(len(result.ids)):
            ids = list(result.ids)
            ids[i] = unk
            expected = whole - float(forward(torch.tensor([ids]))[0])
            assert result.scores[i] == pytest.approx(expected, abs=EXACT * 10)


def test_the_default_target_is_the_models_own_top_next_token(reader):
    result = attribute(reader, TEXT, method="input_x_gradient", position=3)
    with torch.no_grad():
        logits = reader.model(torch.tensor([result.ids]))[0][0, 3]
    assert result.target == int(logits.argmax()) and result.position == 3
    assert result.tokens[0] == "[BOS]" and result.special[0]


def test_pooling_to_characters_and_words_keeps_the_total(reader, llama):
    for result in (
        attribute(reader, "永和路上有人", method="input_x_gradient"),
        attribute(*llama[:1], "中和有一個永和路 ok", tokenizer=llama[1], method="input_x_gradient"),
    ):
        for level in ("characters", "words"):
            labels, sums = result.pooled(level)
            assert len(labels) == len(sums)
            assert sums.sum() == pytest.approx(result.scores.sum(), abs=EXACT)
    labels, _ = attribute(reader, "永和路上有人", method="occlusion").pooled("words")
    assert "永和路" in labels


@needs_minilm
def test_an_encoder_explains_its_sentence_similarity(loaded):
    result = attribute(loaded, ENGLISH, target="a dog lay on the rug", steps=16)
    assert result.kind == "encoder" and result.target is None
    assert 0 < result.output < 1 and result.completeness_gap < 0.05
    with pytest.raises(AttributionRefused, match="second sentence"):
        attribute(loaded, ENGLISH)


def test_bad_input_is_refused_with_a_message_and_the_model_is_left_as_it_was(reader, llama):
    model, tokenizer = llama
    model.train()
    grads = [p.grad for p in model.parameters()]
    with pytest.raises(ValueError, match="reads at most 64"):
        attribute(reader, "字" * 64)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        attribute(reader, TEXT, target=10**6)
    with pytest.raises(ValueError, match="never predicts"):
        attribute(reader, TEXT, target="[BOS]")
    with pytest.raises(ValueError, match="padding token"):
        attribute(model, ENGLISH, tokenizer=tokenizer, target=tokenizer.pad_token_id)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        attribute(model, ENGLISH, tokenizer=tokenizer, target=-1)
    with pytest.raises(ValueError, match="method must be"):
        attribute(reader, TEXT, method="saliency")
    with pytest.raises(AttributionRefused, match="pass 'reader'"):
        attribute("gpt2", TEXT)
    attribute(model, ENGLISH, tokenizer=tokenizer, method="input_x_gradient")
    assert model.training and all(m.training for m in model.modules())
    assert [p.grad for p in model.parameters()] == grads
    model.eval()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_a_model_without_gradients_is_refused(llama):
    model, tokenizer = llama
    quantised = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear})
    with pytest.raises(AttributionRefused, match="not differentiable"):
        attribute(quantised, ENGLISH, tokenizer=tokenizer, target=2000)

    class NoGrad(torch.nn.Module):  # a forward that turns gradients off
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, e, position):
            with torch.no_grad():
                return self.inner(e, position)

    from attention_core.attribution.run import attribute_subject
    from attention_core.attribution.subjects import subject_for

    subject = subject_for(model, ENGLISH, tokenizer, None)
    frozen = type(subject)(**{**subject.__dict__, "run": NoGrad(subject.run)})
    with pytest.raises(AttributionRefused, match="does not depend differentiably"):
        attribute_subject(frozen, target=2000)
