"""Tests for attention_core/lens/reader_lens.py: the lens on the trained reader, each view
against the reader's own forward pass, never against itself:

- weights: ReaderLM.forward and each layer's own MultiHeadAttention.trace (reader.run);
- rollout: the paper's recursion as explicit loops over the reader's weights;
- norms: the value projection's output seen by forward hooks, times W_o's head columns;
- neuron view: every row of every head equal to the model's own weights; refused when a
  projection's output is not what its weights say;
- ablation: nothing knocked out is the model's own output to the bit; a head knocked out is
  a deep copy of the model with that head's W_o columns (or W_v rows) zeroed.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_core.lens import (
    reader_ablate,
    reader_attention,
    reader_head_effects,
    reader_neuron_view,
    reader_norm_weighted,
    reader_value_norms,
    rollout,
)
from attention_core.limits import EXACT
from attention_core.reader import load_shipped
from attention_core.reader.run import layer_trace

TEXTS = ["中和有一個永和路", "The cat sat on the mat, and 貓 slept."]
UNKNOWN = "貓😀坐ア"  # two units the vocabulary lacks


@pytest.fixture(scope="module")
def reader():
    return load_shipped()


def own(reader, text: str) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """The model's own forward pass: ids (1, n), each layer's weights (1, H, n, n), logits."""
    ids = torch.tensor([reader.vocab.encode(text).ids])  # (1, n)
    with torch.no_grad():
        logits, weights = reader.model(ids)
    return ids, weights, logits


def with_model(reader, model):
    return dataclasses.replace(reader, model=model.eval())


# --- the weights every map, rollout and the head view take --------------------------------
@pytest.mark.parametrize("text", TEXTS)
def test_weights_are_the_models_forward_and_each_layers_own_trace(reader, text: str) -> None:
    got = reader_attention(reader, text)
    ids, weights, _ = own(reader, text)
    assert got.ids == ids[0].tolist() and got.labels[0] == "0:[BOS]"
    assert got.attentions.shape == (4, 4, ids.shape[1], ids.shape[1])
    for layer, w in enumerate(weights):
        np.testing.assert_allclose(got.attentions[layer], w[0].numpy(), atol=EXACT, rtol=0)
        traced = layer_trace(reader, [got.tokens], layer).weights[0].numpy()  # (H, n, n)
        np.testing.assert_allclose(got.attentions[layer], traced, atol=EXACT, rtol=0)
    assert not np.triu(got.attentions, k=1).any()  # causal
    np.testing.assert_allclose(got.attentions.sum(-1), 1.0, atol=EXACT)


def test_unknown_units_are_flagged_and_a_long_text_is_cut_at_the_context(reader) -> None:
    got = reader_attention(reader, UNKNOWN)
    assert [got.tokens[i].text for i in got.unknown] == ["😀", "ア"]
    assert got.ids[2] == got.ids[4] == reader.vocab.unk_id and not got.truncated
    long = reader_attention(reader, "注意力" * 100)
    context = reader.config.context
    assert long.attentions.shape[-1] == len(long.tokens) == context
    assert long.total == 301 and long.truncated


def test_a_text_without_units_is_refused_with_what_to_do(reader) -> None:
    for call in (reader_attention, reader_value_norms, reader_head_effects):
        with pytest.raises(ValueError, match="type a sentence"):
            call(reader, "   ")
    with pytest.raises(ValueError, match=r"layers 0\.\.3 × heads 0\.\.3"):
        reader_ablate(reader, TEXTS[0], [(4, 0)])
    with pytest.raises(ValueError, match="does not exist"):
        reader_neuron_view(reader, TEXTS[0], 0, 4)


# --- rollout -------------------------------------------------------------------------------
def test_rollout_of_the_reader_is_the_papers_recursion_by_loops(reader) -> None:
    a = reader_attention(reader, TEXTS[0]).attentions.astype(np.float64)  # (L, H, n, n)
    layers, heads, n, _ = a.shape
    want, expected = None, []
    for layer in range(layers):
        mixed = [
            [
                0.5 * (i == j) + 0.5 * sum(a[layer, h, i, j] for h in range(heads)) / heads
                for j in range(n)
            ]
            for i in range(n)
        ]
        mixed = [[v / sum(row) for v in row] for row in mixed]
        want = (
            mixed
            if want is None
            else [
                [sum(mixed[i][k] * want[k][j] for k in range(n)) for j in range(n)]
                for i in range(n)
            ]
        )
        expected.append(want)
    got = rollout(a)
    np.testing.assert_allclose(got, np.array(expected), atol=1e-12)
    assert not np.triu(got[-1], k=1).any()  # a causal model's rollout stays causal


# --- norms ----------------------------------------------------------------------------------
def test_norm_weighted_is_weights_times_hooked_values_through_w_o(reader) -> None:
    text = TEXTS[1]
    values: dict[int, torch.Tensor] = {}
    hooks = [
        block.attention.value_linear.register_forward_hook(
            lambda m, args, out, i=i: values.__setitem__(i, out[0].detach())  # (n, C)
        )
        for i, block in enumerate(reader.model.blocks)
    ]
    try:
        _, weights, _ = own(reader, text)
    finally:
        for h in hooks:
            h.remove()
    norms = reader_value_norms(reader, text)
    weighted = reader_norm_weighted(reader, text)
    H, D = 4, 32
    for layer, block in enumerate(reader.model.blocks):
        w_o = block.attention.out.weight.detach()  # (C, H·D)
        for head in range(H):
            cols = slice(head * D, (head + 1) * D)
            f = (values[layer][:, cols] @ w_o[:, cols].T).norm(dim=-1).numpy()  # (n,)
            np.testing.assert_allclose(norms[layer, head], f, atol=EXACT, rtol=0)
            want = weights[layer][0, head].numpy() * f[None, :]
            np.testing.assert_allclose(weighted[layer, head], want, atol=EXACT, rtol=0)


# --- neuron view ----------------------------------------------------------------------------
def test_every_rebuilt_row_of_every_head_is_the_models_own(reader) -> None:
    text = TEXTS[1]
    _, weights, _ = own(reader, text)
    for layer in range(4):
        for head in range(4):
            view = reader_neuron_view(reader, text, layer, head)
            mine = np.stack([view.weights(i) for i in range(view.q.shape[0])])  # (n, n)
            np.testing.assert_allclose(mine, weights[layer][0, head].numpy(), atol=EXACT, rtol=0)
            assert view.scaling == pytest.approx(32**-0.5) and view.kv_head is None


def test_the_neuron_view_refuses_a_head_its_projections_do_not_explain(reader) -> None:
    model = copy.deepcopy(reader.model)
    # the model's queries of layer 2 become twice what query_linear's weights give
    model.blocks[2].attention.query_linear.register_forward_hook(lambda m, a, out: out * 2)
    changed = with_model(reader, model)
    with pytest.raises(ValueError, match=r"cannot rebuild layer 2, head 1 .*\(reader_attention\)"):
        reader_neuron_view(changed, TEXTS[0], 2, 1)
    reader_neuron_view(changed, TEXTS[0], 1, 1)  # the layers below are still rebuilt


# --- ablation -------------------------------------------------------------------------------
def test_nothing_knocked_out_is_the_models_own_output_to_the_bit(reader) -> None:
    ids, _, logits = own(reader, TEXTS[0])
    got = reader_ablate(reader, TEXTS[0], [])
    np.testing.assert_array_equal(got.logits, logits[0].numpy())
    np.testing.assert_array_equal(got.original, logits[0].numpy())
    assert got.kl == 0.0 and got.loss_change == 0.0 and got.top_changed == 0
    with torch.no_grad():
        loss = reader.model.loss(ids[:, :-1], ids[:, 1:])  # the model's own loss
    assert got.original_loss == pytest.approx(float(loss), abs=EXACT)


@pytest.mark.parametrize("where", ["w_o columns", "w_v rows"])
def test_a_knocked_out_head_is_the_model_with_that_heads_slice_zeroed(reader, where) -> None:
    heads = [(0, 2), (3, 1)]
    model = copy.deepcopy(reader.model)
    with torch.no_grad():
        for layer, head in heads:
            attention = model.blocks[layer].attention
            cols = slice(head * 32, (head + 1) * 32)
            if where == "w_o columns":
                attention.out.weight[:, cols] = 0.0
            else:
                attention.value_linear.weight[cols] = 0.0
                attention.value_linear.bias[cols] = 0.0
    ids, _, original = own(reader, TEXTS[1])
    _, _, logits = own(with_model(reader, model), TEXTS[1])
    got = reader_ablate(reader, TEXTS[1], heads)
    np.testing.assert_allclose(got.logits, logits[0].numpy(), atol=EXACT, rtol=0)
    p, q = original[0].double().log_softmax(-1), logits[0].double().log_softmax(-1)
    assert got.kl == pytest.approx(float((p.exp() * (p - q)).sum(-1).mean()), abs=EXACT)
    nll = F.cross_entropy(logits[0, :-1], ids[0, 1:])
    assert got.loss == pytest.approx(float(nll), abs=EXACT) and got.kl > 0


def test_head_effects_are_each_head_knocked_out_alone(reader) -> None:
    text = TEXTS[0]
    effects = reader_head_effects(reader, text, batch_size=3)  # several batches
    assert effects.kl.shape == effects.loss.shape == (4, 4)
    for layer, head in [(0, 0), (1, 3), (3, 2)]:
        alone = reader_ablate(reader, text, [(layer, head)])
        assert effects.kl[layer, head] == pytest.approx(alone.kl, abs=EXACT)
        assert effects.loss[layer, head] == pytest.approx(alone.loss, abs=EXACT)
    assert effects.original_loss == pytest.approx(reader_ablate(reader, text, []).loss, abs=EXACT)
    top = effects.ranking()[0]
    assert effects.kl[top] == effects.kl.max() and len(effects.ranking()) == 16
