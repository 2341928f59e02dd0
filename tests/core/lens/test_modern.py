"""The lens on modern decoders, each a tiny random model built offline from its config:
Llama (grouped-query attention, RoPE), Mistral (a sliding window of 4), Qwen2 (one
key/value head for all), Qwen3 (q_norm / k_norm), Gemma 2 (soft-capped scores, local and
global layers), Phi-3 (one fused qkv projection). Every rebuilt neuron-view row against
transformers' own output_attentions at EXACT; value norms against the model's own v_proj
output grouped by transformers' repeat_kv; the views that cannot rebuild refuse.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from attention_core.lens import is_causal, neuron_view, value_norms
from attention_core.limits import EXACT
from tests.support.availability import needs_minilm

TEXT = "the cat sat on the mat and then it slept"
SMALL = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}
SMALL |= {"num_attention_heads": 4, "max_position_embeddings": 128}
# Gemma 2's scores are soft-capped: 5.0 (its default 50 would never bite on random weights)
FAMILIES_CAP = {"gemma2": {"attn_logit_softcapping": 5.0}}
FAMILIES = {  # family → (config class, its own settings)
    "llama": ("LlamaConfig", {"num_key_value_heads": 2}),
    "mistral": ("MistralConfig", {"num_key_value_heads": 2, "sliding_window": 4}),
    "qwen2": ("Qwen2Config", {"num_key_value_heads": 1}),
    "qwen3": ("Qwen3Config", {"num_key_value_heads": 2, "head_dim": 8}),
    "gemma2": (
        "Gemma2Config",
        {
            "num_key_value_heads": 2,
            "head_dim": 8,
            "sliding_window": 4,
            "attn_logit_softcapping": 5.0,
        },
    ),
    "phi3": ("Phi3Config", {"num_key_value_heads": 2, "pad_token_id": 0}),
}

pytestmark = needs_minilm  # the tokenizer is the packaged model's vocabulary


@functools.cache
def _loaded(family: str):
    """(LoadedModel, the model's own attentions (L, H, n, n) for TEXT), built once."""
    import transformers
    from transformers import AutoTokenizer

    from attention_core.pretrained import from_model, run_model
    from attention_core.resources import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    config_class, own = FAMILIES[family]
    own = own | FAMILIES_CAP.get(family, {})
    config = getattr(transformers, config_class)(vocab_size=tokenizer.vocab_size, **SMALL, **own)
    torch.manual_seed(0)
    raw = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    loaded = from_model(raw.eval(), tokenizer, name=family)
    return loaded, run_model(loaded, TEXT).attentions


@pytest.fixture(params=sorted(FAMILIES))
def model(request):
    """(family, LoadedModel, the model's own attentions (L, H, n, n) for TEXT)."""
    return (request.param, *_loaded(request.param))


def test_every_neuron_view_row_is_the_models_own(model) -> None:
    family, loaded, attentions = model
    L, H, n, _ = attentions.shape
    for layer in range(L):
        for head in range(H):
            parts = neuron_view(loaded, TEXT, layer, head)
            rebuilt = np.stack([parts.weights(i, causal=is_causal(attentions)) for i in range(n)])
            np.testing.assert_allclose(rebuilt, attentions[layer, head], atol=EXACT, err_msg=family)


def test_query_heads_that_share_a_key_value_head_are_named(model) -> None:
    family, loaded, _ = model
    kv = FAMILIES[family][1]["num_key_value_heads"]
    groups = [neuron_view(loaded, TEXT, 0, head).kv_head for head in range(4)]
    assert groups == ([None] * 4 if kv == 4 else [h // (4 // kv) for h in range(4)])


def test_a_sliding_window_is_the_models_own_mask() -> None:
    loaded, attentions = _loaded("mistral")
    n = attentions.shape[-1]
    far = np.tril(np.ones((n, n), dtype=bool), k=-4)  # keys 4 or more behind the query
    assert not attentions[:, :, far].any()  # the model's own weights: the window holds
    assert (neuron_view(loaded, TEXT, 1, 0).mask[far] == -np.inf).all()


@pytest.mark.parametrize("family", sorted(set(FAMILIES) - {"phi3"}))  # phi3: no v_proj
def test_value_norms_group_values_as_transformers_repeat_kv_does(family: str) -> None:
    loaded, _ = _loaded(family)
    from transformers.models.llama.modeling_llama import repeat_kv

    seen: dict[int, torch.Tensor] = {}
    layers = [m for name, m in loaded.model.named_modules() if name.endswith("self_attn")]
    hooks = [
        layer.v_proj.register_forward_hook(lambda m, a, out, i=i: seen.__setitem__(i, out[0]))
        for i, layer in enumerate(layers)
    ]
    try:
        norms = value_norms(loaded, TEXT)  # (L, H, n)
    finally:
        for hook in hooks:
            hook.remove()
    for i, layer in enumerate(layers):
        d = layer.head_dim
        v = seen[i].view(seen[i].shape[0], -1, d).transpose(0, 1)[None]  # (1, KV, n, D)
        v = repeat_kv(v, layer.num_key_value_groups)[0]  # (H, n, D)
        wo = layer.o_proj.weight.view(layer.o_proj.weight.shape[0], -1, d)  # (C, H, D)
        expected = torch.einsum("hnd,chd->hnc", v, wo).norm(dim=-1)  # (H, n)
        np.testing.assert_allclose(norms[i], expected.detach().numpy(), atol=EXACT)


def test_gpt_neos_unscaled_scores_and_its_own_window_are_rebuilt() -> None:
    """GPT-Neo does not scale its scores by 1/√D, and its local layer keeps a window of 4
    keys in its own mask while the model passes it a causal one: the neuron view rebuilds
    both, every row equal to the model's own output_attentions (a model whose scores are not
    rebuilt is refused: tests/core/pretrained/test_families.py)."""
    import transformers

    from attention_core.notebook import neuron_view as notebook_neuron_view
    from attention_core.pretrained import from_model, run_model

    tokenizer = _loaded("llama")[0].tokenizer
    config = transformers.GPTNeoConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_layers=2,
        num_heads=4,
        max_position_embeddings=128,
        attention_types=[[["global", "local"], 1]],
        window_size=4,
    )
    torch.manual_seed(0)
    neo = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    loaded = from_model(neo.eval(), tokenizer)
    own = run_model(loaded, TEXT).attentions[1, 1]  # (n, n), eager output_attentions
    view = neuron_view(loaded, TEXT, 1, 1)
    assert view.scaling == 1.0
    rows = np.stack([view.weights(i, causal=True) for i in range(own.shape[-1])])
    np.testing.assert_allclose(rows, own, atol=EXACT)
    assert not np.triu(rows, 1).any() and not np.tril(rows, -4).any()  # keys i − 3 … i
    notebook_neuron_view(neo, TEXT, layer=1, head=1, tokenizer=tokenizer)  # drawn, not refused


@pytest.mark.parametrize("family", ["llama", "qwen2", "phi3"])
def test_knocking_out_a_query_head_zeroes_only_its_slice(family: str) -> None:
    """`ablate` against a hook of our own on the model's o_proj input: query head 3 of layer
    1 zeroed there (its D columns), the rest of its key/value group left as it is."""
    from attention_core.lens import ablate
    from attention_core.pretrained.parts import model_inputs

    loaded, _ = _loaded(family)
    attention = loaded.model.model.layers[1].self_attn
    d = attention.head_dim

    def zero_head_3(module, args):
        x = args[0].clone()  # (1, n, H·D)
        x[..., 3 * d : 4 * d] = 0.0
        return (x,)

    handle = attention.o_proj.register_forward_pre_hook(zero_head_3)
    try:
        with torch.no_grad():
            inputs = model_inputs(loaded, TEXT, 512)
            expected = loaded.model.model(**inputs).last_hidden_state[0].double().numpy()
    finally:
        handle.remove()
    result = ablate(loaded, TEXT, [(1, 3)])
    np.testing.assert_allclose(result.hidden, expected, atol=EXACT)
    assert result.token_distance > 0
    np.testing.assert_allclose(ablate(loaded, TEXT, []).hidden, result.original, atol=EXACT)


@pytest.mark.parametrize("family", ["llama", "qwen2", "mistral"])
def test_knocking_out_a_key_value_group_is_zeroing_its_value_head(family: str) -> None:
    """A whole group of query heads knocked out (`kv_groups`) against another way to remove
    that key/value head: a copy of the model whose v_proj rows of the head are zero (its
    values are then 0, so every query head reading it outputs 0)."""
    import copy

    from attention_core.lens import ablate, kv_groups
    from attention_core.pretrained.parts import model_inputs

    loaded, _ = _loaded(family)
    kv = FAMILIES[family][1]["num_key_value_heads"]
    groups = kv_groups(loaded)
    assert groups == [list(range(g * 4 // kv, (g + 1) * 4 // kv)) for g in range(kv)]
    group = len(groups) - 1  # the last key/value head of layer 0
    model = copy.deepcopy(loaded.model)
    v_proj = model.model.layers[0].self_attn.v_proj
    d = model.model.layers[0].self_attn.head_dim
    with torch.no_grad():
        v_proj.weight[group * d : (group + 1) * d] = 0.0
        if v_proj.bias is not None:
            v_proj.bias[group * d : (group + 1) * d] = 0.0
        inputs = model_inputs(loaded, TEXT, 512)
        expected = model.model(**inputs).last_hidden_state[0].double().numpy()
    result = ablate(loaded, TEXT, [(0, h) for h in groups[group]])
    np.testing.assert_allclose(result.hidden, expected, atol=EXACT)
    assert result.token_distance > 0
