"""Tests for attention_core/lens/ablation.py's `branched`: every head knocked out alone,
each layer's heads run from a cached pass of the layers below, against the reference, a
plain rerun of the whole model (a deep copy) with that head's output-projection columns
zeroed, at EXACT, on the shipped reader, MiniLM and every tiny family; the model is left
exactly as it was.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attention_core.lens.ablation import block_list, branched
from attention_core.limits import EXACT
from attention_core.pretrained import tiny_family
from attention_core.pretrained.parts import attention_layers
from attention_core.pretrained.zoo import FAMILY_CONFIGS
from tests.support.availability import needs_minilm

TEXT = "the cat sat on the mat and then it slept"


def _snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _reference(model: torch.nn.Module, forward, layer: int, head: int) -> np.ndarray:
    """The whole model rerun, a deep copy with head `head`'s columns of layer `layer`'s
    output projection zeroed: (…) float64."""
    twin = copy.deepcopy(model)
    part = attention_layers(twin)[layer]
    d = part.head_dim
    with torch.no_grad():
        part.wo[:, head * d : (head + 1) * d] = 0.0  # Conv1D's wo is a view of its weight
        return forward(twin, 1)[0].double().numpy()


def _check(model: torch.nn.Module, forward, *, heads=None) -> bool:
    """branched against the plain reruns, the model unchanged; returns its shortcut flag."""
    before = _snapshot(model)
    modules = [(name, type(m)) for name, m in model.named_modules()]
    hooks = [len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()]
    found = branched(model, forward, rows=3)  # 3 rows: a layer's heads in several batches
    layers = attention_layers(model)
    assert found.knocked.shape[:2] == (len(layers), layers[0].num_heads)
    with torch.no_grad():
        clean = forward(model, 1)[0].double().numpy()
    np.testing.assert_allclose(found.clean, clean, atol=EXACT, rtol=0)
    pairs = heads or [(lay, h) for lay in range(len(layers)) for h in range(layers[0].num_heads)]
    for layer, head in pairs:
        want = _reference(model, forward, layer, head)
        np.testing.assert_allclose(found.knocked[layer, head], want, atol=EXACT, rtol=0)
        assert np.abs(want - clean).max() > 10 * EXACT  # the head matters: the test can fail
    after = _snapshot(model)
    assert before.keys() == after.keys()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert [(name, type(m)) for name, m in model.named_modules()] == modules
    assert [len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()] == hooks
    return found.shortcut


@pytest.mark.parametrize("family", list(FAMILY_CONFIGS))
def test_every_head_equals_a_plain_rerun_on_each_tiny_family(family: str) -> None:
    model, tokenizer = tiny_family(family)
    ids = torch.tensor([tokenizer(TEXT)["input_ids"]])  # (1, n)

    def forward(m, copies):
        batch = ids.expand(copies, -1)  # (B, n)
        out = m(input_ids=batch, attention_mask=torch.ones_like(batch))
        if hasattr(out, "logits"):
            return out.logits[:, -1]  # (B, V) the next token's logits
        return out.last_hidden_state  # (B, n, C)

    shortcut = _check(model, forward)
    assert shortcut == (family != "bloom")  # BLOOM's alibi is built per row: whole copies


def test_every_head_equals_a_plain_rerun_on_the_reader() -> None:
    from attention_core.attribution.subjects import subject_for

    subject = subject_for("reader", "中和有一個永和路", None, None)
    p = len(subject.ids) - 1

    def forward(m, copies):
        return subject.run(subject.embeds.expand(copies, -1, -1), p, module=m)  # (B, V)

    assert block_list(subject.module, attention_layers(subject.module)) is not None
    assert _check(subject.module, forward)


@needs_minilm
def test_every_head_equals_a_plain_rerun_on_minilm(loaded) -> None:
    from attention_core.attribution.subjects import subject_for

    subject = subject_for(loaded, "the cat sat", None, "a dog lay")
    base = loaded.model.base_model
    inputs = {"input_ids": torch.tensor([subject.ids])}

    def hidden(m, copies):  # the final hidden states (B, n, C)
        batch = {k: v.expand(copies, -1) for k, v in inputs.items()}
        return getattr(m, "base_model", m)(**batch).last_hidden_state

    assert _check(base, hidden)

    def similarity(m, copies):  # the attribution's target: cos to the second sentence (B,)
        return subject.run(subject.embeds.expand(copies, -1, -1), module=m)

    assert _check(loaded.model, similarity, heads=[(0, 0), (2, 5), (5, 11)])


def test_progress_reports_every_head_once() -> None:
    model, tokenizer = tiny_family("llama")
    ids = torch.tensor([tokenizer(TEXT)["input_ids"]])
    seen: list[tuple[int, int]] = []
    branched(
        model,
        lambda m, b: m(input_ids=ids.expand(b, -1)).logits[:, -1],
        rows=3,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen[-1] == (8, 8) and [d for d, _ in seen] == sorted({d for d, _ in seen})
