"""Every model family (encoder, decoder, encoder-decoder) through tiny random models that
attention_core/pretrained/tiny.py builds offline, against transformers loading the same
folders directly: the attentions, a decoder's greedily written tokens, an encoder-decoder's
decoder self- and cross-attention, and the lens on a decoder. Their tokenizer is the packaged
model's vocabulary: skipped locally without it, failed under CI (tests/support/availability.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.pretrained import FAMILIES, LoadedModel, build_tiny_model, load_model, run_model
from tests.support.availability import require_minilm

SENTENCE = "The article explains how self-attention mixes every token with the others."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LoadedModel]:
    """A tiny random encoder (BERT), decoder (GPT-2) and encoder-decoder (BART), each saved
    to a folder by build_tiny_model and loaded back through load_model like a user's."""
    require_minilm()  # their tokenizer is the packaged model's vocabulary
    models = {}
    for family in FAMILIES:
        folder = build_tiny_model(family, tmp_path_factory.mktemp(family.replace("-", "_")))
        models[family] = load_model(str(folder))
    return models


def _direct(folder: str, family: str):
    """The same folder loaded by transformers directly, not through our code."""
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    auto = {
        "encoder": AutoModel,
        "decoder": AutoModelForCausalLM,
        "encoder-decoder": AutoModelForSeq2SeqLM,
    }[family]
    model = auto.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    return model.eval()


def _greedy(loaded: LoadedModel, family: str, tokens: int):
    """`loaded`'s folder loaded by transformers directly, SENTENCE encoded, and the ids
    transformers' own greedy `generate` writes for it (`tokens` new ones at most)."""
    model = _direct(loaded.name, family)
    enc = loaded.tokenizer(SENTENCE, return_tensors="pt")
    with torch.no_grad():
        ids = model.generate(**enc, max_new_tokens=tokens, do_sample=False, num_beams=1)[0]
    return model, enc, ids


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_loads_offline_and_equals_transformers(tiny, family: str) -> None:
    loaded = tiny[family]
    assert loaded.family == family and (loaded.num_layers, loaded.num_heads) == (2, 4)
    result = run_model(loaded, SENTENCE, generate=0)
    model = _direct(loaded.name, family)
    enc = loaded.tokenizer(SENTENCE, return_tensors="pt")
    extra = {}
    if family == "encoder-decoder":
        extra = {"decoder_input_ids": torch.tensor([[model.config.decoder_start_token_id]])}
    with torch.no_grad():
        out = model(**enc, **extra, output_attentions=True)
    want = out.encoder_attentions if family == "encoder-decoder" else out.attentions
    np.testing.assert_allclose(result.attentions, torch.cat(want).numpy(), atol=EXACT)
    np.testing.assert_allclose(result.attentions.sum(-1), 1.0, atol=1e-5)
    causal = not np.triu(result.attentions, k=1).any()
    assert causal == (family == "decoder")


def test_decoder_writes_tokens_greedily_and_shows_their_attention(tiny) -> None:
    loaded = tiny["decoder"]
    result = run_model(loaded, SENTENCE, generate=4)
    model, _, ids = _greedy(loaded, "decoder", 4)
    with torch.no_grad():
        want = torch.cat(model(ids[None], output_attentions=True).attentions).numpy()
    n = len(ids)
    assert result.tokens == loaded.tokenizer.convert_ids_to_tokens(ids)
    assert result.generated == [False] * (n - 4) + [True] * 4
    assert result.attentions.shape == (2, 4, n, n)
    np.testing.assert_allclose(result.attentions, want, atol=1e-5)
    assert not np.triu(result.attentions, k=1).any()  # causal: no token sees a later one
    assert result.special[-4:] == [False] * 4 and result.offsets[-1] == (0, 0)


def test_encoder_decoder_gives_decoder_self_and_cross_attention(tiny) -> None:
    loaded = tiny["encoder-decoder"]
    result = run_model(loaded, SENTENCE, generate=3)
    model, enc, written = _greedy(loaded, "encoder-decoder", 3)
    with torch.no_grad():
        out = model(**enc, decoder_input_ids=written[None], output_attentions=True)
    m, n = len(written), len(result.tokens)
    assert result.decoder_tokens == loaded.tokenizer.convert_ids_to_tokens(written)
    assert result.decoder_attentions.shape == (2, 4, m, m)
    assert result.cross_attentions.shape == (2, 4, m, n)
    np.testing.assert_allclose(result.cross_attentions, torch.cat(out.cross_attentions), atol=1e-5)
    np.testing.assert_allclose(
        result.decoder_attentions, torch.cat(out.decoder_attentions), atol=1e-5
    )
    assert not np.triu(result.decoder_attentions, k=1).any()
    assert run_model(loaded, SENTENCE).decoder_tokens is not None  # written by default
    with pytest.raises(ValueError, match="between 0 and"):
        run_model(loaded, SENTENCE, generate=1000)


def test_the_lens_reads_a_decoders_heads_and_refuses_an_encoder_decoder(tiny) -> None:
    from attention_core import lens

    loaded = tiny["decoder"]
    result = run_model(loaded, SENTENCE)
    view = lens.neuron_view(loaded, SENTENCE, 1, 2)
    for query in (0, 5, len(result.tokens) - 1):
        np.testing.assert_allclose(
            view.weights(query, causal=True), result.attentions[1, 2, query], atol=1e-5
        )
    nothing = lens.ablate(loaded, SENTENCE, [])
    assert np.array_equal(nothing.hidden, nothing.original)
    assert nothing.hidden.shape == (len(result.tokens), 32)  # hidden states, not logits
    assert lens.head_effects(loaded, SENTENCE).pooled_distance.shape == (2, 4)
    with pytest.raises(ValueError, match="encoder-only"):
        lens.neuron_view(tiny["encoder-decoder"], SENTENCE, 0, 0)


# --- a model already in memory ----------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_an_sdpa_model_from_memory_is_read_eagerly_and_left_as_it_was(tiny, family: str) -> None:
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    from attention_core.pretrained import from_model

    auto = {"encoder": AutoModel, "decoder": AutoModelForCausalLM}
    auto["encoder-decoder"] = AutoModelForSeq2SeqLM
    folder = tiny[family].name
    mine = auto[family].from_pretrained(folder, local_files_only=True)  # the default: SDPA
    assert mine.config._attn_implementation != "eager"
    before = mine.config._attn_implementation
    loaded = from_model(mine, tiny[family].tokenizer, name="my model")
    assert mine.config._attn_implementation == before  # the user's model is never changed
    assert loaded.model.config._attn_implementation == "eager"  # its twin reads the weights
    assert (loaded.name, loaded.family, loaded.num_layers) == ("my model", family, 2)
    result = run_model(loaded, SENTENCE, generate=0)
    reference = run_model(tiny[family], SENTENCE, generate=0)  # loaded eager from the folder
    np.testing.assert_allclose(result.attentions, reference.attentions, atol=EXACT, rtol=0)
    assert np.abs(result.attentions.sum(-1) - 1).max() < EXACT  # never silently zero


def test_a_model_whose_attention_is_not_real_weights_is_refused(tiny, monkeypatch) -> None:
    import attention_core.pretrained.load as load
    from attention_core.pretrained import ModelLoadError, from_model

    real = load.forward_pass

    def zeros(*args, **kwargs):  # what an SDPA path handed back as "attention"
        out = real(*args, **kwargs)
        return type(out)(**{**vars(out), "attentions": np.zeros_like(out.attentions)})

    monkeypatch.setattr(load, "forward_pass", zeros)
    with pytest.raises(ModelLoadError, match="sum to 0"):
        from_model(tiny["encoder"].model, tiny["encoder"].tokenizer)
    with pytest.raises(ValueError, match="transformers model"):
        from_model(object(), tiny["encoder"].tokenizer)


def test_a_tokenizer_that_is_not_the_model_s_is_refused(tiny) -> None:
    """The packaged vocabulary (30 522 tokens) handed with a model of 100 embedding rows:
    a message naming both sizes, not an IndexError from inside the forward pass."""
    import transformers

    from attention_core.pretrained import ModelLoadError, from_model

    config = transformers.BertConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32,
    )  # fmt: skip
    small = transformers.BertModel(config)
    tokenizer = tiny["encoder"].tokenizer
    with pytest.raises(ModelLoadError, match=f"has {len(tokenizer)} tokens but the model's vocab"):
        from_model(small, tokenizer)
