"""The views and `as_attention` on a TransformerLens ActivationCache, and CircuitsVis's calls
(attention_core.notebook.circuitsvis): every number equal to the cache's own patterns.

TransformerLens 4's two ways in: `TransformerBridge.boot_native` (a random TL-native model,
offline) and `boot_transformers(..., hf_model=…)` around a tiny transformers model; the
2/3 `HookedTransformer` cache has the same `cache["pattern", l]`.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.notebook import NotebookInputError, View, as_attention, head_view
from attention_core.notebook import circuitsvis as cv

bridge = pytest.importorskip("transformer_lens.model_bridge", reason="requirements-dev.txt")
TEXT = "the cat sat on the mat because it was tired"


@pytest.fixture(scope="module")
def native() -> tuple[object, object, torch.Tensor]:
    """A random 3-layer TL-native model, its cache over 7 token ids, the ids."""
    from transformer_lens.config import TransformerBridgeConfig

    config = TransformerBridgeConfig(
        d_model=32, d_head=8, n_layers=3, n_heads=4, d_mlp=64, n_ctx=32, d_vocab=40,
        act_fn="gelu", architecture="TransformerLensNative", seed=0,
    )  # fmt: skip
    model = bridge.TransformerBridge.boot_native(config)
    ids = torch.tensor([[1, 5, 9, 2, 7, 7, 3]])
    _, cache = model.run_with_cache(ids)
    return model, cache, ids


def _tokens(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


def test_as_attention_reads_every_layers_pattern_exactly(native) -> None:
    _, cache, ids = native
    att = as_attention(cache, _tokens(ids.shape[1]))
    assert att.layers == [0, 1, 2] and att.weights.shape == (3, 4, 7, 7)
    for layer in range(3):
        own = cache["pattern", layer][0].numpy()  # (H, n, n), the cache's own
        np.testing.assert_allclose(att.weights[layer], own, atol=EXACT, rtol=0)


def test_head_view_of_a_cache_is_the_view_of_its_patterns(native) -> None:
    _, cache, ids = native
    tokens = _tokens(ids.shape[1])
    stacked = torch.stack([cache["pattern", layer] for layer in range(3)])  # (L, B, H, n, n)
    assert head_view(cache, tokens).data == head_view(stacked, tokens).data
    widget = head_view(cache, tokens, layer=2, widget=True)
    sent = np.frombuffer(widget.weights, dtype="<f4").reshape(4, 7, 7)
    np.testing.assert_allclose(sent, cache["pattern", 2][0].numpy(), atol=EXACT, rtol=0)


def test_a_cache_without_patterns_and_wrong_tokens_say_what_to_do(native) -> None:
    model, cache, ids = native
    with warnings.catch_warnings():  # TransformerLens lists the hooks it skipped
        warnings.simplefilter("ignore")
        _, bare = model.run_with_cache(ids, names_filter=lambda name: "hook_pattern" not in name)
    with pytest.raises(NotebookInputError, match=r"no attention patterns.*run_with_cache"):
        head_view(bare, _tokens(7))
    with pytest.raises(NotebookInputError, match=r"6 tokens for attention over 7.*to_str_tokens"):
        head_view(cache, _tokens(6))
    with pytest.raises(NotebookInputError, match="not ids"):
        head_view(cache, ids[0])


def test_circuitsvis_calls_draw_the_cache_pattern(native) -> None:
    cache = native[1]
    tokens, pattern = _tokens(7), cache["pattern", 1][0]  # (H, n, n) as CircuitsVis takes it
    grid = cv.attention.attention_patterns(tokens=tokens, attention=pattern)
    assert isinstance(grid, View)
    z = grid.figure.data[0].z  # head 0's heatmap
    np.testing.assert_allclose(np.asarray(z, dtype=float), pattern[0].numpy(), atol=EXACT)
    heads = cv.attention_heads(attention=pattern, tokens=tokens, widget=True)
    sent = np.frombuffer(heads.weights, dtype="<f4").reshape(4, 7, 7)
    np.testing.assert_allclose(sent, pattern.numpy(), atol=EXACT, rtol=0)
    with pytest.raises(NotebookInputError, match=r"\[num_heads, dest, src\]"):
        cv.attention_patterns(tokens=tokens, attention=cache["pattern", 1])  # with batch
    assert "unpkg" not in json.dumps(grid.data) and not re.search(r"<script[^>]*\bsrc=", grid.data)


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_from_model_reads_a_bridge_around_a_transformers_model(family: str) -> None:
    from attention_core.pretrained import from_model, run_model, tiny_family

    model, tokenizer = tiny_family(family)
    wrapped = bridge.TransformerBridge.boot_transformers(
        family, hf_model=model, tokenizer=tokenizer
    )
    loaded = from_model(wrapped)  # the bridge's own tokenizer
    result = run_model(loaded, TEXT)
    ids = tokenizer(TEXT, return_tensors="pt")["input_ids"]  # what run_model encodes
    _, cache = wrapped.run_with_cache(ids)
    assert result.tokens == tokenizer.convert_ids_to_tokens(ids[0])
    own = np.stack([cache["pattern", layer][0].numpy() for layer in range(2)])  # (L, H, n, n)
    np.testing.assert_allclose(result.attentions, own, atol=EXACT, rtol=0)


def test_from_model_refuses_a_native_model_and_another_tokenizer(native) -> None:
    from attention_core.pretrained import ModelLoadError, from_model, tiny_family

    # 40 rows of embeddings: a tokenizer of 30 522 tokens would give ids past them
    with pytest.raises(ModelLoadError, match="vocabulary only 40"):
        from_model(native[0], tiny_family("llama")[1])
    model, tokenizer = tiny_family("llama")
    wrapped = bridge.TransformerBridge.boot_transformers(
        "llama", hf_model=model, tokenizer=tokenizer
    )
    from transformers import AutoTokenizer

    from attention_core.resources import minilm_dir

    other = AutoTokenizer.from_pretrained(minilm_dir())
    other.add_tokens(["zzzextra"])  # another vocabulary
    with pytest.raises(ModelLoadError, match="not this model's own"):
        from_model(wrapped, other)


def test_from_model_runs_a_native_model_and_refuses_what_needs_transformers_modules() -> None:
    from transformer_lens.config import TransformerBridgeConfig

    from attention_core.attribution import AttributionRefused, agreement
    from attention_core.decode import DecodeRefused, decode
    from attention_core.lens import ablate, rollout, value_norms
    from attention_core.pretrained import ModelLoadError, from_model, run_model, tiny_family

    tokenizer = tiny_family("llama")[1]
    config = TransformerBridgeConfig(
        d_model=32, d_head=8, n_layers=3, n_heads=4, d_mlp=64, n_ctx=64,
        d_vocab=len(tokenizer), act_fn="gelu", architecture="TransformerLensNative", seed=0,
    )  # fmt: skip
    model = bridge.TransformerBridge.boot_native(config)
    loaded = from_model(model, tokenizer)
    assert (loaded.family, loaded.num_layers, loaded.num_heads) == ("decoder", 3, 4)
    assert loaded.max_length == 64  # n_ctx
    result = run_model(loaded, TEXT)
    ids = tokenizer(TEXT, return_tensors="pt")["input_ids"]
    _, cache = model.run_with_cache(ids)  # TransformerLens's own patterns are the reference
    own = np.stack([cache["pattern", layer][0].numpy() for layer in range(3)])  # (L, H, n, n)
    np.testing.assert_allclose(result.attentions, own, atol=EXACT, rtol=0)
    assert result.tokens == tokenizer.convert_ids_to_tokens(ids[0])
    reason = "TransformerLens-native model has no transformers modules"
    with pytest.raises(DecodeRefused, match=f"{reason}: decoding .* key/value cache"):
        decode(loaded, "the cat", 2)
    with pytest.raises(DecodeRefused, match=reason):
        decode(model, "the cat", 2, tokenizer=tokenizer)  # the bridge itself
    with pytest.raises(AttributionRefused, match=f"{reason}: attribution .*input embeddings"):
        agreement(loaded, "the cat sat", steps=2)
    with pytest.raises(ValueError, match=f"{reason}: this lens .*attention projections"):
        value_norms(loaded, "the cat")
    with pytest.raises(ValueError, match=reason):
        ablate(loaded, "the cat", [(0, 0)])  # knocking a head out hooks it too
    # the lens that reads attention only works on it: rollout of TransformerLens's patterns
    np.testing.assert_allclose(rollout(result.attentions), rollout(own), atol=EXACT, rtol=0)
    with pytest.raises(ModelLoadError, match="no tokenizer"):
        from_model(model)


class ActivationCache:
    """TransformerLens 2/3's cache as `HookedTransformer.run_with_cache` returns it (the
    class is gone in 4.x): hook names → tensors, `cache["pattern", l]` (B, H, q, k), and
    other hooks beside the patterns."""

    def __init__(self, tensors: dict[str, torch.Tensor]) -> None:
        self.cache_dict = tensors

    def keys(self):
        return self.cache_dict.keys()

    def __getitem__(self, key):
        if isinstance(key, tuple):  # ("pattern", l): TransformerLens's shorthand
            name, layer = key
            return self.cache_dict[f"blocks.{layer}.attn.hook_{name}"]
        return self.cache_dict[key]


def test_a_hooked_transformer_shaped_cache_is_read_exactly() -> None:
    rng = np.random.default_rng(3)
    L, H, n = 3, 2, 5
    raw = rng.random((L, 1, H, n, n)) * np.tril(np.ones((n, n)))  # causal, (L, B, H, q, k)
    patterns = torch.tensor(raw / raw.sum(-1, keepdims=True), dtype=torch.float32)
    tensors = {f"blocks.{layer}.attn.hook_pattern": patterns[layer] for layer in range(L)}
    tensors |= {f"blocks.{layer}.attn.hook_z": torch.zeros(1, n, H, 4) for layer in range(L)}
    tensors["hook_embed"] = torch.zeros(1, n, 8)
    del tensors["blocks.1.attn.hook_pattern"]  # a names_filter kept layers 0 and 2
    cache = ActivationCache(tensors)
    tokens = _tokens(n)
    att = as_attention(cache, tokens)
    assert att.layers == [0, 2] and att.weights.shape == (2, H, n, n)
    np.testing.assert_allclose(att.weights[1], patterns[2, 0].numpy(), atol=EXACT, rtol=0)
    widget = head_view(cache, tokens, layer=2, widget=True)
    sent = np.frombuffer(widget.weights, dtype="<f4").reshape(H, n, n)
    np.testing.assert_allclose(sent, patterns[2, 0].numpy(), atol=EXACT, rtol=0)
    with pytest.raises(Exception, match="layer"):
        widget.layer = 1  # not in the cache
