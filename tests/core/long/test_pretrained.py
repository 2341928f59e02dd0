"""Long texts through real models (attention_core/long/pretrained.py): each layer's map
against transformers' own output_attentions (eager) at 600 and 4 096 tokens — Llama
(grouped-query attention, RoPE), Qwen3 (q_norm / k_norm), Phi-3 (fused qkv), Gemma 2 (soft-capped
scores), GPT-2, BERT —, the views that cannot be the model's own refused (Mistral past its
sliding window), and which bound cut a text (characters, the model's context, max_tokens).
Tiny random models built offline; their tokenizer is the packaged model's vocabulary.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT, MAX_DENSE_FLOATS, MAX_TEXT_CHARS
from attention_core.long.pretrained import LongRefused, run_model_long
from attention_core.pretrained import build_tiny_model, from_model, load_model, run_model
from tests.support.availability import needs_minilm
from tests.support.models import SMALL, minilm_tokenizer, tiny_decoder

pytestmark = needs_minilm

SENTENCE = "the cat sat on the mat and then it slept. "  # 11 tokens
CONFIGS = {  # name → (config class, its own settings)
    "llama": ("LlamaConfig", {"num_key_value_heads": 2}),
    "qwen3": ("Qwen3Config", {"num_key_value_heads": 2, "head_dim": 8}),
    "phi3": ("Phi3Config", {"num_key_value_heads": 2, "pad_token_id": 0}),
    "mistral": ("MistralConfig", {"num_key_value_heads": 2, "sliding_window": 64}),
    "gemma2": (
        "Gemma2Config",
        {"num_key_value_heads": 2, "head_dim": 8, "attn_logit_softcapping": 5.0},
    ),
}


@functools.cache
def _model(name: str):
    """A tiny random model with an 8 192-token context, as a notebook's `from_model`."""
    import transformers

    tokenizer = minilm_tokenizer()
    torch.manual_seed(0)
    if name == "gpt2":
        config = transformers.GPT2Config(
            vocab_size=tokenizer.vocab_size, n_embd=32, n_layer=2, n_head=4, n_positions=8192
        )
        raw = transformers.GPT2LMHeadModel(config)
    elif name == "bert":
        config = transformers.BertConfig(
            vocab_size=tokenizer.vocab_size,
            **SMALL,
            max_position_embeddings=8192,
            pad_token_id=tokenizer.pad_token_id,
        )
        raw = transformers.BertModel(config)
    else:
        config_class, own = CONFIGS[name]
        raw = tiny_decoder(config_class, tokenizer.vocab_size, **own)
    return from_model(raw.eval(), tokenizer, name=name)


def _gap(long, attentions: np.ndarray) -> float:
    """The largest difference between the maps and the model's own (L, H, n, n) weights."""
    n = long.n
    assert attentions.shape[-1] == n
    return max(
        float(np.abs(amap.exact(h, slice(0, n), slice(0, n)) - attentions[layer, h]).max())
        for layer, amap in enumerate(long.maps)
        for h in range(amap.num_heads)
    )


@pytest.mark.parametrize("name", ["llama", "qwen3", "phi3", "gpt2", "bert", "mistral", "gemma2"])
def test_maps_are_the_models_own_weights_past_512_tokens(name: str) -> None:
    loaded = _model(name)
    text = SENTENCE * 60
    long = run_model_long(loaded, text, max_tokens=600) if name != "mistral" else None
    if name == "mistral":  # within its window of 64 the map is exact too
        long = run_model_long(loaded, text, max_tokens=60)
    own = run_model(loaded, text, max_tokens=long.n).attentions  # (L, H, n, n)
    assert long.n == (600 if name != "mistral" else 60)
    assert long.causal == (name != "bert")
    assert long.tokens == run_model(loaded, text, max_tokens=long.n).tokens
    assert _gap(long, own) <= EXACT


def test_4096_tokens_of_a_llama_equal_its_own_weights_and_hold_no_n2() -> None:
    loaded = _model("llama")
    text = SENTENCE * 400  # 4 402 tokens: cut at the 4 096 of max_tokens, not at the model
    long = run_model_long(loaded, text)
    assert (long.n, long.cut_by, long.limit) == (4096, "max_tokens", 4096)
    assert long.total_tokens == 4402  # [CLS] + 400 × 11 + [SEP]
    # a map keeps q̂ and k̂: 2 × 4 bytes × H × n × (D + 1) a layer, far from H·n² floats
    assert long.nbytes == 2 * (2 * 4 * 4 * 4096 * 9)
    own = run_model(loaded, text, max_tokens=4096).attentions  # the reference, 537 MB
    assert own.shape == (2, 4, 4096, 4096)
    assert _gap(long, own) <= EXACT


def test_a_window_narrower_than_the_text_is_refused() -> None:
    with pytest.raises(LongRefused, match="sliding window"):
        run_model_long(_model("mistral"), SENTENCE * 60, max_tokens=600)


def test_a_rebuild_that_differs_from_the_model_is_refused(monkeypatch) -> None:
    """Whatever else could make a map differ from the model's own weights (an architecture
    whose scores are not softmax(q·kᵀ·scale)), the first tokens compared with the model's
    output_attentions give it away: here layer 1's rebuild is replaced by other queries."""
    import attention_core.long.pretrained as long_module
    from attention_core.long.map import AttentionMap

    original = long_module._layer_map

    def other(part, index, x, call):
        amap, causal = original(part, index, x, call)
        if index != 1:
            return amap, causal
        q, k = torch.randn(4, x.shape[0], 8), torch.randn(4, x.shape[0], 8)  # (H, n, D)
        return AttentionMap.from_qk(q, k, causal=causal, max_tokens=x.shape[0]), causal

    monkeypatch.setattr(long_module, "_layer_map", other)
    with pytest.raises(LongRefused, match="layer 1 head 0: rebuilt"):
        run_model_long(_model("llama"), SENTENCE * 5)


def test_which_bound_cut_the_text(tmp_path) -> None:
    short = load_model(str(build_tiny_model("llama", tmp_path / "llama", context=700)))
    assert short.max_length == 700
    long = run_model_long(short, SENTENCE * 100)
    assert (long.n, long.cut_by, long.limit) == (700, "model", 700)
    assert run_model_long(short, SENTENCE * 100, max_tokens=300).cut_by == "max_tokens"
    assert run_model_long(short, SENTENCE * 10).cut_by is None
    spaced = "hello" + " " * MAX_TEXT_CHARS + "world"  # "world" is past the characters read
    assert run_model_long(short, spaced).cut_by == "characters"
    assert run_model_long(short, spaced).tokens == ["[CLS]", "hello", "[SEP]"]
    exact = run_model(short, SENTENCE * 100, max_tokens=600)
    assert (exact.cut_by, exact.limit) == ("max_tokens", 600)
    assert (run_model(short, SENTENCE * 100, max_tokens=4096).cut_by, exact.truncated) == (
        "model",
        True,
    )
    assert run_model(short, spaced).cut_by == "characters"


def test_the_packaged_minilm_is_cut_at_its_own_context() -> None:
    loaded = load_model()
    assert loaded.max_length == 512
    exact = run_model(loaded, SENTENCE * 60)
    assert (len(exact.tokens), exact.truncated, exact.cut_by) == (512, True, "model")
    long = run_model_long(loaded, SENTENCE * 60)
    assert (long.n, long.cut_by, long.limit) == (512, "model", 512)


def test_dense_weights_past_their_bound_are_refused_with_the_way_out() -> None:
    loaded = _model("llama")
    n = 4096
    assert loaded.num_layers * loaded.num_heads * n * n <= MAX_DENSE_FLOATS  # tiny: allowed
    big = type(loaded)(**{**loaded.__dict__, "num_layers": 64, "num_heads": 32})
    with pytest.raises(ValueError, match="run_model_long"):
        run_model(big, SENTENCE * 400, max_tokens=4096)


@pytest.mark.parametrize("text", ["", "   ", "🙂" * 3])
def test_bad_text_is_a_clear_error(text: str) -> None:
    loaded = _model("llama")
    if text == "🙂" * 3:  # [UNK]s: tokens all the same
        assert run_model_long(loaded, text).unknown[1]
        return
    with pytest.raises(ValueError, match="no tokens"):
        run_model_long(loaded, text)
    with pytest.raises(ValueError, match="MAX_INPUT_CHARS"):
        run_model_long(loaded, "x" * 1_000_000)
    with pytest.raises(ValueError, match="max_tokens"):
        run_model_long(loaded, "hello", max_tokens=10**6)
