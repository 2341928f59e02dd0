"""Tests for attention_core/lens.py against independent references, never against itself:

- rollout: the paper's recursion written out with explicit sums, and a 2-token hand case;
- flow: networkx's max-flow on the layered graph built from the paper's definition;
- norms: the model's own value and output modules observed through forward hooks;
- neuron view: transformers' `output_attentions`;
- ablation: a hook at another place (the self-attention module's output) zeroing the heads,
  and "nothing knocked out" equal to the model's own output exactly;
- sinks and word pooling: hand-computed cases.

The model tests use the packaged all-MiniLM-L6-v2: skipped locally without it, failed under CI.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch

from attention_core import lens
from attention_core.pretrained import run_model
from tests.support.availability import require_minilm

SENTENCE = "The animal didn't cross the street because it was too tired."


def random_attentions(seed: int, layers: int, heads: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.random((layers, heads, n, n)) ** 3  # peaked, like real heads
    return a / a.sum(-1, keepdims=True)  # (L, H, n, n), rows sum to 1


def mixed_by_hand(a: np.ndarray, residual: float) -> list[list[list[float]]]:
    """Ã_l[i][j] = (residual·[i == j] + (1−residual)·mean_h A_l[h, i, j]) / row sum, by loops."""
    layers, heads, n, _ = a.shape
    out = []
    for layer in range(layers):
        rows = []
        for i in range(n):
            row = [
                residual * (i == j)
                + (1 - residual) * sum(a[layer, h, i, j] for h in range(heads)) / heads
                for j in range(n)
            ]
            total = sum(row)
            rows.append([v / total for v in row])
        out.append(rows)
    return out


# --- rollout --------------------------------------------------------------------------------


@pytest.mark.parametrize("residual", [0.0, 0.5, 0.9])
def test_rollout_is_the_papers_recursion(residual: float) -> None:
    a = random_attentions(1, 4, 3, 5)
    mixed = mixed_by_hand(a, residual)
    n = 5
    want = mixed[0]
    expected = [want]
    for layer in range(1, 4):  # R_l[i][j] = Σ_k Ã_l[i][k] · R_{l−1}[k][j]
        want = [
            [sum(mixed[layer][i][k] * want[k][j] for k in range(n)) for j in range(n)]
            for i in range(n)
        ]
        expected.append(want)
    got = lens.rollout(a, residual=residual)
    assert got.shape == (4, 5, 5)
    np.testing.assert_allclose(got, np.array(expected), atol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-12)


def test_rollout_two_tokens_by_hand() -> None:
    # One head attending fully to token 0 in both layers; residual 0.5:
    # Ã = [[1, 0], [0.5, 0.5]]; Ã·Ã = [[1, 0], [0.75, 0.25]].
    a = np.array([[[1.0, 0.0], [1.0, 0.0]]])[None].repeat(2, axis=0)  # (2, 1, 2, 2)
    got = lens.rollout(a)
    np.testing.assert_allclose(got[0], [[1, 0], [0.5, 0.5]])
    np.testing.assert_allclose(got[1], [[1, 0], [0.75, 0.25]])


def test_rollout_rejects_bad_shapes_and_residuals() -> None:
    with pytest.raises(ValueError, match=r"\(L, H, n, n\)"):
        lens.rollout(np.ones((2, 3, 3)))
    with pytest.raises(ValueError, match="residual"):
        lens.rollout(random_attentions(0, 1, 1, 2), residual=1.5)


# --- flow -----------------------------------------------------------------------------------


def flow_by_networkx(a: np.ndarray, residual: float) -> np.ndarray:
    mixed = np.array(mixed_by_hand(a, residual))
    layers, n, _ = mixed.shape
    graph = nx.DiGraph()
    for layer in range(layers):
        for i in range(n):
            for j in range(n):
                graph.add_edge((layer, j), (layer + 1, i), capacity=float(mixed[layer, i, j]))
    return np.array(
        [[nx.maximum_flow_value(graph, (0, j), (layers, i)) for j in range(n)] for i in range(n)]
    )


@pytest.mark.parametrize(
    ("seed", "layers", "heads", "n"), [(0, 1, 1, 3), (1, 3, 2, 4), (2, 6, 4, 6)]
)
def test_flow_equals_networkx_max_flow(seed: int, layers: int, heads: int, n: int) -> None:
    a = random_attentions(seed, layers, heads, n)
    np.testing.assert_allclose(lens.flow(a), flow_by_networkx(a, 0.5), atol=1e-6)


def test_flow_with_one_layer_is_that_layers_mixed_weights() -> None:
    a = random_attentions(3, 1, 2, 4)  # one layer: each path is one edge
    np.testing.assert_allclose(lens.flow(a), np.array(mixed_by_hand(a, 0.5))[0], atol=1e-7)


def test_flow_refuses_long_texts_politely() -> None:
    a = random_attentions(0, 1, 1, lens.FLOW_MAX_TOKENS + 1)
    with pytest.raises(ValueError, match=f"limited to {lens.FLOW_MAX_TOKENS} tokens"):
        lens.flow(a)


# --- the packaged model ---------------------------------------------------------------------


# `loaded`, the packaged model through load_model, is a fixture of tests/conftest.py.


@pytest.fixture(scope="module")
def reference() -> object:
    """The packaged model loaded by transformers directly, not through our code."""
    folder = require_minilm()
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return model, tokenizer


def test_norm_weighted_equals_hooks_on_the_models_own_modules(loaded, reference) -> None:
    model, tokenizer = reference
    values: dict[int, torch.Tensor] = {}
    handles = [
        layer.attention.self.value.register_forward_hook(
            lambda mod, args, out, i=i: values.__setitem__(i, out[0])  # (n, H·D)
        )
        for i, layer in enumerate(model.encoder.layer)
    ]
    try:
        with torch.no_grad():
            out = model(**tokenizer(SENTENCE, return_tensors="pt"), output_attentions=True)
    finally:
        for h in handles:
            h.remove()
    heads, d = 12, 32
    want = []
    for i, layer in enumerate(model.encoder.layer):
        dense = layer.attention.output.dense.weight  # (C, H·D)
        alpha = out.attentions[i][0]  # (H, n, n)
        per_head = []
        for h in range(heads):
            v = values[i][:, h * d : (h + 1) * d]  # (n, D)
            f = v @ dense[:, h * d : (h + 1) * d].T  # (n, C): this head's slice, no bias
            moved = alpha[h][:, :, None] * f[None, :, :]  # (n, n, C): α_ij · f(x_j)
            per_head.append(moved.norm(dim=-1))
        want.append(torch.stack(per_head))
    got = lens.norm_weighted(loaded, SENTENCE)
    assert got.shape == (6, 12, len(out.attentions[0][0, 0]), len(out.attentions[0][0, 0]))
    np.testing.assert_allclose(got, torch.stack(want).detach().numpy(), atol=1e-5)


def test_neuron_view_rebuilds_output_attentions(loaded) -> None:
    result = run_model(loaded, SENTENCE)
    for layer, head, query in [(0, 0, 1), (3, 7, 5), (5, 11, 0)]:
        view = lens.neuron_view(loaded, SENTENCE, layer, head)
        assert view.q.shape == (len(result.tokens), 32)
        np.testing.assert_allclose(view.raw_scores(query), view.k @ view.q[query], atol=1e-9)
        assert view.scaling == pytest.approx(32**-0.5)
        np.testing.assert_allclose(
            view.weights(query), result.attentions[layer, head, query], atol=1e-5
        )
    with pytest.raises(ValueError, match=r"layer must be in 0\.\.5"):
        lens.neuron_view(loaded, SENTENCE, 6, 0)


def test_ablating_nothing_is_the_original_output_exactly(loaded, reference) -> None:
    model, tokenizer = reference
    result = lens.ablate(loaded, SENTENCE, [])
    with torch.no_grad():
        want = model(**tokenizer(SENTENCE, return_tensors="pt")).last_hidden_state[0]
    assert np.array_equal(result.hidden, want.double().numpy())
    assert np.array_equal(result.hidden, result.original)
    assert result.token_distance == pytest.approx(0.0, abs=1e-12)


def test_ablation_equals_zeroing_the_self_attention_output(loaded, reference) -> None:
    model, tokenizer = reference
    knocked = [(1, 4), (1, 9), (4, 0)]
    d = 32

    def zero(heads: list[int]):
        def hook(module, args, output):
            context = output[0].clone()  # (1, n, H·D)
            for h in heads:
                context[..., h * d : (h + 1) * d] = 0.0
            return (context, *output[1:])

        return hook

    handles = [
        model.encoder.layer[layer].attention.self.register_forward_hook(
            zero([h for at, h in knocked if at == layer])
        )
        for layer in {at for at, _ in knocked}
    ]
    try:
        with torch.no_grad():
            want = model(**tokenizer(SENTENCE, return_tensors="pt")).last_hidden_state[0]
    finally:
        for h in handles:
            h.remove()
    got = lens.ablate(loaded, SENTENCE, knocked)
    np.testing.assert_allclose(got.hidden, want.double().numpy(), atol=1e-5)
    assert got.pooled_distance > 0
    cos = np.dot(got.hidden.mean(0), got.original.mean(0)) / (
        np.linalg.norm(got.hidden.mean(0)) * np.linalg.norm(got.original.mean(0))
    )
    assert got.pooled_distance == pytest.approx(1 - cos, abs=1e-9)
    with pytest.raises(ValueError, match="does not exist"):
        lens.ablate(loaded, SENTENCE, [(0, 12)])


def test_head_effects_rank_every_head_like_one_at_a_time_ablation(loaded) -> None:
    effects = lens.head_effects(loaded, SENTENCE)
    assert effects.pooled_distance.shape == (6, 12)
    ranking = effects.ranking()
    assert len(ranking) == 72 and len(set(ranking)) == 72
    ordered = [effects.pooled_distance[p] for p in ranking]
    assert ordered == sorted(ordered, reverse=True)
    for layer, head in [ranking[0], ranking[-1], (2, 5)]:
        alone = lens.ablate(loaded, SENTENCE, [(layer, head)])
        assert effects.pooled_distance[layer, head] == pytest.approx(
            alone.pooled_distance, abs=2e-6
        )
        assert effects.token_distance[layer, head] == pytest.approx(alone.token_distance, abs=2e-6)


def test_head_effects_report_progress_after_each_batch_with_the_same_effects(loaded) -> None:
    """A page draws its bar (and a cancel stops) at each report: reports climb to all 72
    heads, one per batch of at most 9 rows within a layer, and batching changes no effect."""
    seen: list[tuple[int, int]] = []
    effects = lens.head_effects(loaded, SENTENCE, batch_size=9, progress=lambda *a: seen.append(a))
    assert [done for done, _ in seen] == [d + k for d in range(0, 72, 12) for k in (9, 12)]
    assert {total for _, total in seen} == {72}
    whole = lens.head_effects(loaded, SENTENCE)  # one batch of every head
    np.testing.assert_allclose(effects.pooled_distance, whole.pooled_distance, atol=2e-6)


# --- sinks ----------------------------------------------------------------------------------


def test_sinks_by_hand() -> None:
    tokens = ["[CLS]", "hi", ",", "you", "[SEP]"]
    special = [True, False, False, False, True]
    a = np.zeros((1, 1, 5, 5))
    a[0, 0, :, 0] = 0.5  # every query: half on [CLS]
    a[0, 0, :, 2] = 0.25  # a quarter on ","
    a[0, 0, :, 4] = 0.25  # a quarter on [SEP]
    norms = np.array([[[0.1, 2.0, 0.3, 4.0, 0.5]]])  # (1, 1, 5)
    s = lens.sinks(a, norms, tokens, special)
    assert s.mass["cls"][0, 0] == pytest.approx(0.5)
    assert s.mass["first"][0, 0] == pytest.approx(0.5)
    assert s.mass["sep"][0, 0] == pytest.approx(0.25)
    assert s.mass["punct"][0, 0] == pytest.approx(0.25)
    assert s.norm["cls"][0, 0] == pytest.approx(0.1)
    assert s.norm["punct"][0, 0] == pytest.approx(0.3)
    assert s.other_norm[0, 0] == pytest.approx(3.0)  # "hi" and "you"


def test_sinks_on_minilm_cls_has_small_value_norms(loaded) -> None:
    result = run_model(loaded, SENTENCE)
    s = lens.sinks(
        result.attentions, lens.value_norms(loaded, SENTENCE), result.tokens, result.special
    )
    heavy = s.mass["cls"] > 0.5  # heads that mostly look at [CLS]
    assert heavy.any()
    # what they pick up there is small next to what ordinary tokens carry (Kobayashi et al.)
    assert np.nanmean(s.norm["cls"][heavy]) < 0.5 * np.nanmean(s.other_norm[heavy])


# --- word pooling ---------------------------------------------------------------------------


def test_pool_to_words_sums_keys_and_averages_queries() -> None:
    text = "中和有一個永和路"  # jieba: 中和 / 有 / 一個 / 永和路
    tokens = ["[CLS]", *text, "[SEP]"]
    offsets = [(0, 0), *[(i, i + 1) for i in range(len(text))], (0, 0)]
    special = [True, *[False] * len(text), True]
    n = len(tokens)
    w = random_attentions(5, 1, 2, n)[0]  # (2, n, n)
    labels, pooled = lens.pool_to_words(w, tokens, offsets, special, text)
    assert labels == ["[CLS]", "中和", "有", "一個", "永和路", "[SEP]"]
    groups = [[0], [1, 2], [3], [4, 5], [6, 7, 8], [9]]
    for h in range(2):
        for a, qa in enumerate(groups):
            for b, kb in enumerate(groups):
                want = np.mean([sum(w[h, i, j] for j in kb) for i in qa])
                assert pooled[h, a, b] == pytest.approx(want)
    np.testing.assert_allclose(pooled.sum(-1), 1.0)


# --- the project's own trained toy model ----------------------------------------------------


@pytest.fixture(scope="module")
def toy():
    """The reverse task, 4 heads, trained for 30 steps: part-way, so knocking a head out
    changes the accuracy, and quick (the full run is the train tests' business)."""
    from attention_core.train.loop import fit
    from attention_core.train.tasks import default_config

    result = fit(default_config("reverse", num_heads=4, steps=30), num_sequences=256)
    return result.model, result.config, result.evaluation.accuracy


def test_toy_ablation_of_nothing_is_evaluates_own_accuracy(toy) -> None:
    model, config, accuracy = toy
    assert lens.toy_accuracy(model, config, num_sequences=256) == accuracy


def test_toy_head_knocked_out_equals_zeroing_its_value_vectors(toy) -> None:
    """Reference: a copy of the model whose head-h value projection is zero, so the head
    outputs exactly 0 (A · 0), with no hook involved."""
    import copy

    from attention_core.train.loop import evaluate

    model, config, accuracy = toy
    effects = lens.toy_head_effects(model, config, num_sequences=256)
    assert effects.accuracy == accuracy and effects.knocked.shape == (1, 4)
    d = config.embed_dim // config.num_heads
    for head in range(4):
        silenced = copy.deepcopy(model)
        with torch.no_grad():
            silenced.attention.value_linear.weight[head * d : (head + 1) * d] = 0.0
            silenced.attention.value_linear.bias[head * d : (head + 1) * d] = 0.0
        want = evaluate(silenced, config, num_sequences=256).accuracy
        assert effects.knocked[0, head] == pytest.approx(want, abs=1e-12)
    everything = lens.toy_accuracy(model, config, [(0, h) for h in range(4)], num_sequences=256)
    assert everything < accuracy  # with no head left the read-out sees only biases
    with pytest.raises(ValueError, match=r"heads 0\.\.3"):
        lens.toy_accuracy(model, config, [(0, 4)])
