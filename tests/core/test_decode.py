"""attention_core.decode checked against the models themselves, never against itself:
transformers' own `generate`, the eager model's `output_attentions` and logits on the whole
sequence so far, ReaderLM.forward for the shipped reader.

Shape legend: L layers, H heads, t positions a step's query met.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import transformers

from attention_core.decode import MAX_DECODE_STEPS, DecodeRefused, decode
from attention_core.decode.hf_steps import final_norm
from attention_core.limits import EXACT
from attention_core.pretrained import from_model, tiny_family
from attention_core.reader import load_shipped

FAMILIES = ("llama", "qwen2", "gpt2")
PROMPT = "the cat sat on the"
STEPS = 6
READER_PROMPT = "今天天氣很好，我們"


def uneven_norm(model):
    """`model` with its final norm's weights made uneven: a fresh model's are all 1, under
    which a second pass through the norm changes nothing, so a lens that normed twice
    would pass unseen."""
    norm = final_norm(model)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, norm.weight.numel()))
    return model


@pytest.fixture(scope="module")
def reader():
    return load_shipped()


@pytest.fixture(scope="module", params=FAMILIES)
def family(request):
    """(family, the model as a user holds it: transformers' default SDPA, its tokenizer)."""
    model, tokenizer = tiny_family(request.param, attn_implementation="sdpa", context=64)
    model.generation_config.eos_token_id = None  # every step written, for generate() too
    return request.param, uneven_norm(model), tokenizer


def eager(family_name: str):
    """The same weights (the same seed) with eager attention: the reference's attentions."""
    model, _ = tiny_family(family_name, context=64)
    return uneven_norm(model)


def full_forward(model, ids: list[int]):
    with torch.no_grad():
        return model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)


def test_greedy_tokens_are_generates(family) -> None:
    _, model, tokenizer = family
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    prompt = torch.tensor([r.ids[: r.prompt_length]])
    expected = model.generate(prompt, do_sample=False, max_new_tokens=STEPS)[0].tolist()
    assert r.ids == expected
    assert model.config._attn_implementation == "sdpa"  # the user's model is unchanged


def test_a_loaded_model_writes_what_its_transformers_model_writes(family) -> None:
    _, model, tokenizer = family
    loaded = from_model(model, tokenizer)
    assert (
        decode(loaded, PROMPT, STEPS).ids == decode(model, PROMPT, STEPS, tokenizer=tokenizer).ids
    )


def test_the_end_of_text_token_stops_the_run_where_generate_stops() -> None:
    model, tokenizer = tiny_family("gpt2", attn_implementation="sdpa", context=64)
    uneven_norm(model)  # this GPT-2 then writes [SEP], its end-of-text token, at once
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    prompt = torch.tensor([r.ids[: r.prompt_length]])
    expected = model.generate(prompt, do_sample=False, max_new_tokens=STEPS)[0].tolist()
    assert r.ids == expected and len(r.steps) < STEPS
    assert r.steps[-1].token_id == model.generation_config.eos_token_id
    assert "end-of-text token at step" in r.stopped


def test_every_row_is_the_last_row_of_the_eager_models_full_forward(family) -> None:
    name, model, tokenizer = family
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    reference = eager(name)
    L = reference.config.num_hidden_layers
    H = reference.config.num_attention_heads
    assert len(r.steps) == STEPS and r.stopped is None
    for i, step in enumerate(r.steps):
        t = r.prompt_length + i
        out = full_forward(reference, r.ids[:t])
        rows = torch.stack([a[0, :, -1] for a in out.attentions]).numpy()  # (L, H, t)
        assert step.attention.shape == (L, H, t)
        assert step.attention.dtype == np.float32
        assert np.abs(step.attention - rows).max() <= EXACT


def test_the_last_layers_lens_is_the_models_logits(family) -> None:
    name, model, tokenizer = family
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    reference = eager(name)
    for i, step in enumerate(r.steps):
        logits = full_forward(reference, r.ids[: r.prompt_length + i]).logits[0, -1]  # (V,)
        top = torch.topk(torch.softmax(logits, -1), 5)
        np.testing.assert_array_equal(step.lens_ids[-1], top.indices.numpy())
        np.testing.assert_array_equal(step.top_ids, top.indices.numpy())
        assert np.abs(step.lens_probs[-1] - top.values.numpy()).max() <= EXACT
        assert np.abs(step.top_probs - top.values.numpy()).max() <= EXACT
        assert step.lens_ids.shape == (reference.config.num_hidden_layers, 5)


def test_each_layers_lens_reads_the_full_forwards_residual_stream(family) -> None:
    name, model, tokenizer = family
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    reference = eager(name)
    head, norm = reference.get_output_embeddings(), final_norm(reference)
    for i, step in enumerate(r.steps):
        states = full_forward(reference, r.ids[: r.prompt_length + i]).hidden_states
        for layer in range(len(states) - 2):  # the last is checked against the logits
            with torch.no_grad():
                logits = head(norm(states[layer + 1][0, -1]))  # (V,)
            top = torch.topk(torch.softmax(logits, -1), 5)
            np.testing.assert_array_equal(step.lens_ids[layer], top.indices.numpy())
            assert np.abs(step.lens_probs[layer] - top.values.numpy()).max() <= EXACT


def test_a_soft_capped_models_lens_is_its_capped_logits() -> None:
    """Gemma 2 caps its logits after the unembedding (eager: it has no SDPA path here); a
    cap this small moves every logit, so a lens without it would be refused."""
    model, tokenizer = tiny_family("gemma2", context=64)
    uneven_norm(model).config.final_logit_softcapping = 0.5
    model.generation_config.eos_token_id = None
    r = decode(model, PROMPT, 3, tokenizer=tokenizer)
    for i, step in enumerate(r.steps):
        out = full_forward(model, r.ids[: r.prompt_length + i])
        top = torch.topk(torch.softmax(out.logits[0, -1], -1), 5)
        np.testing.assert_array_equal(step.lens_ids[-1], top.indices.numpy())
        assert np.abs(step.lens_probs[-1] - top.values.numpy()).max() <= EXACT
        rows = torch.stack([a[0, :, -1] for a in out.attentions]).numpy()  # (L, H, t)
        assert np.abs(step.attention - rows).max() <= EXACT


def test_a_sliding_window_layers_row_is_the_full_forwards_with_the_dropped_keys_at_0() -> None:
    model, tokenizer = tiny_family("gemma2", context=64)  # layers alternate: sliding, full
    model.config.sliding_window = 4
    model.generation_config.eos_token_id = None
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    assert len(r.steps) == STEPS
    for i, step in enumerate(r.steps):
        t = r.prompt_length + i
        out = full_forward(model, r.ids[:t])
        rows = torch.stack([a[0, :, -1] for a in out.attentions]).numpy()  # (L, H, t)
        assert step.attention.shape[-1] == t
        assert np.abs(step.attention - rows).max() <= EXACT
        kept = step.cache.layer_positions
        assert kept[1] == t and kept[0] < t  # the sliding layer keeps its window only


def test_a_seeded_sampled_run_repeats_and_draws_within_top_k(family) -> None:
    _, model, tokenizer = family
    runs = [
        decode(model, PROMPT, STEPS, tokenizer=tokenizer, temperature=1.5, top_k=3, seed=7)
        for _ in range(2)
    ]
    assert runs[0].ids == runs[1].ids
    for step in runs[0].steps:  # top_k=3: every draw is one of the model's three likeliest
        assert step.token_id in step.top_ids[:3].tolist()
    greedy = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    assert all(s.token_id == s.top_ids[0] for s in greedy.steps)


def test_force_changes_the_forced_step_and_what_follows_only(family) -> None:
    name, model, tokenizer = family
    base = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    other = next(int(t) for t in base.steps[2].top_ids if t != base.steps[2].token_id)
    fork = decode(model, PROMPT, STEPS, tokenizer=tokenizer, force={2: other})
    p = base.prompt_length
    assert fork.ids[: p + 2] == base.ids[: p + 2]
    assert fork.ids[p + 2] == other != base.ids[p + 2]
    assert [s.forced for s in fork.steps] == [i == 2 for i in range(STEPS)]
    for i in range(3):  # the rows up to the forced step read the same prefix
        np.testing.assert_array_equal(fork.steps[i].attention, base.steps[i].attention)
    # after it, the model reads the forced token: its rows are the model's own on that branch
    reference = eager(name)
    out = full_forward(reference, fork.ids[: p + 3])
    rows = torch.stack([a[0, :, -1] for a in out.attentions]).numpy()  # (L, H, t)
    assert np.abs(fork.steps[3].attention - rows).max() <= EXACT
    assert fork.steps[3].attention.shape[-1] == p + 3


def test_the_cache_holds_the_shared_kv_heads_and_grows_by_one_position() -> None:
    model, tokenizer = tiny_family("llama", attn_implementation="sdpa", context=64)
    r = decode(model, PROMPT, STEPS, tokenizer=tokenizer)
    config = model.config
    head_dim = config.hidden_size // config.num_attention_heads
    for i, step in enumerate(r.steps):
        t = r.prompt_length + i
        cache = step.cache
        assert (cache.positions, cache.heads, cache.kv_heads) == (t, 4, 2)
        np.testing.assert_array_equal(cache.layer_positions, [t, t])
        per_layer = config.num_key_value_heads * t * head_dim * 4  # float32: (1, KV, t, D)
        np.testing.assert_array_equal(cache.keys_bytes, [per_layer] * 2)
        np.testing.assert_array_equal(cache.values_bytes, [per_layer] * 2)


def test_reader_rows_lens_and_tokens_are_its_own_forward(reader) -> None:
    r = decode("reader", READER_PROMPT, 8)
    assert r.ids[0] == reader.vocab.bos_id and r.prompt_length == 1 + len(READER_PROMPT)
    for i, step in enumerate(r.steps):
        t = r.prompt_length + i
        with torch.no_grad():
            logits, weights = reader.model(torch.tensor([r.ids[:t]]))
        rows = torch.stack([w[0, :, -1] for w in weights]).numpy()  # (L, H, t)
        assert step.attention.shape == (reader.config.num_layers, reader.config.num_heads, t)
        assert np.abs(step.attention - rows).max() <= EXACT
        top = torch.topk(torch.softmax(logits[0, -1], -1), 5)
        np.testing.assert_array_equal(step.lens_ids[-1], top.indices.numpy())
        assert np.abs(step.lens_probs[-1] - top.values.numpy()).max() <= EXACT
        assert step.token_id == int(logits[0, -1].argmax())  # greedy
        assert step.cache.positions == t


def test_reader_forced_string_and_seeded_sampling(reader) -> None:
    base = decode("reader", READER_PROMPT, 4)
    fork = decode("reader", READER_PROMPT, 4, force={1: "貓"})
    p = base.prompt_length
    assert fork.ids[p + 1] == reader.vocab.index["貓"]
    assert fork.ids[: p + 1] == base.ids[: p + 1]
    a = decode("reader", READER_PROMPT, 6, temperature=1.0, seed=3)
    b = decode("reader", READER_PROMPT, 6, temperature=1.0, seed=3)
    assert a.ids == b.ids


def test_an_empty_prompt_starts_from_bos(reader) -> None:
    r = decode("reader", "", 2)
    assert r.ids[:1] == [reader.vocab.bos_id] and r.prompt_length == 1
    model, tokenizer = tiny_family("llama", attn_implementation="sdpa", context=64)
    r = decode(model, "", 2, tokenizer=tokenizer)
    assert r.ids[0] == model.config.bos_token_id and r.prompt_length == 1
    model.config.bos_token_id = None  # this copy only: a model with no BOS at all
    with pytest.raises(DecodeRefused, match="no beginning-of-text token"):
        decode(model, "", 2, tokenizer=copy.copy(tokenizer))


def test_past_the_context_it_stops_and_a_huge_ask_is_capped(reader) -> None:
    context = reader.config.context
    r = decode("reader", "天" * (context - 4), MAX_DECODE_STEPS + 1)
    assert r.capped is not None and str(MAX_DECODE_STEPS) in r.capped
    assert len(r.ids) == context and len(r.steps) == 3
    assert "context of 64" in r.stopped
    with pytest.raises(ValueError, match="shorten it"):
        decode("reader", "天" * context, 1)


def test_a_forced_token_outside_the_vocabulary_is_a_clear_error(reader) -> None:
    with pytest.raises(ValueError, match="not one unit of the reader's vocabulary"):
        decode("reader", READER_PROMPT, 2, force={0: "🦄🦄"})
    with pytest.raises(ValueError, match="outside the reader's"):
        decode("reader", READER_PROMPT, 2, force={0: 10**9})
    with pytest.raises(ValueError, match="not one of the steps"):
        decode("reader", READER_PROMPT, 2, force={5: "貓"})
    model, tokenizer = tiny_family("gpt2", attn_implementation="sdpa", context=64)
    with pytest.raises(ValueError, match="tokens to this tokenizer"):
        decode(model, PROMPT, 2, tokenizer=tokenizer, force={0: "unbelievable zebra"})


def test_models_that_do_not_write_are_refused_with_the_way_out() -> None:
    bert, tokenizer = tiny_family("bert")
    with pytest.raises(DecodeRefused, match="AutoModelForCausalLM"):
        decode(bert, PROMPT, 2, tokenizer=tokenizer)
    masked = transformers.BertForMaskedLM(bert.config).eval()
    with pytest.raises(DecodeRefused, match="is an encoder"):
        decode(masked, PROMPT, 2, tokenizer=tokenizer)
    llama, _ = tiny_family("llama")
    with pytest.raises(DecodeRefused, match="no language-model head"):
        decode(llama.model, PROMPT, 2, tokenizer=tokenizer)
    config = transformers.BartConfig(
        vocab_size=len(tokenizer),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=16,
        decoder_ffn_dim=16,
    )
    bart = transformers.BartForConditionalGeneration(config).eval()
    with pytest.raises(DecodeRefused, match=r"encoder-decoder.*decoder prompt"):
        decode(bart, PROMPT, 2, tokenizer=tokenizer)
    assert issubclass(DecodeRefused, ValueError)
