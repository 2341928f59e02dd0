"""BertViz's whole call surface on an encoder-decoder: head_view and model_view called with
encoder_attention=, decoder_attention=, cross_attention=, encoder_tokens=, decoder_tokens=,
on a tiny random BART run by transformers itself (eager attention, output_attentions);
every number drawn is the model's own. And the head view's weights: every one at a small
size, those left out for size said on the page, every_weight up to its stated bound.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from attention_core.figures.headview import EVERY_WEIGHT_MAX, MIN_WEIGHT
from attention_core.limits import EXACT
from attention_core.notebook import NotebookInputError, head_view, model_view

ENCODER = ["<s>", "the", "cat", "sat", "on", "the", "mat", "</s>"]
DECODER = ["</s>", "<s>", "die", "katze", "saß"]


@pytest.fixture(scope="module")
def bart():
    """A tiny random BART (2 encoder layers × 4 heads, 3 decoder layers × 2 heads): its
    outputs over 8 encoder and 5 decoder tokens."""
    from transformers import BartConfig, BartModel

    config = BartConfig(
        vocab_size=64,
        d_model=16,
        encoder_layers=2,
        decoder_layers=3,
        encoder_attention_heads=4,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = BartModel(config)
    model.config._attn_implementation = "eager"  # the weights come back only from eager
    model.eval()
    encoder_ids = torch.randint(4, 64, (1, len(ENCODER)))
    decoder_ids = torch.randint(4, 64, (1, len(DECODER)))
    with torch.no_grad():
        return model(input_ids=encoder_ids, decoder_input_ids=decoder_ids, output_attentions=True)


def _payload(view) -> dict:
    (text,) = re.findall(r'class="hv-payload">(.*?)</script>', view.data)
    return json.loads(text)


def _weights(sent: dict, heads: int, n: int, k: int, scale: int) -> np.ndarray:
    """One layer as the page carries it, decoded here: (H, n, k)."""
    if "dense" in sent:
        return np.asarray(sent["dense"], dtype=float).reshape(heads, n, k) / scale
    out = np.zeros((heads * n, k))
    at = 0
    for row, count in enumerate(sent["counts"]):
        for _ in range(count):
            out[row, sent["keys"][at]] = sent["vals"][at] / scale
            at += 1
    return out.reshape(heads, n, k)


def _call(outputs) -> dict:
    return {
        "encoder_attention": outputs.encoder_attentions,
        "decoder_attention": outputs.decoder_attentions,
        "cross_attention": outputs.cross_attentions,
        "encoder_tokens": ENCODER,
        "decoder_tokens": DECODER,
    }


def test_head_view_draws_encoder_decoder_and_cross_as_the_model_returned_them(bart) -> None:
    view = head_view(**_call(bart))
    payload = _payload(view)
    encoder, decoder, cross = payload["sections"]
    own = {
        "encoder": (encoder, bart.encoder_attentions, ENCODER, ENCODER),
        "decoder": (decoder, bart.decoder_attentions, DECODER, DECODER),
        "cross": (cross, bart.cross_attentions, DECODER, ENCODER),  # decoder → encoder
    }
    for part, attentions, queries, keys in own.values():
        assert part["tokens"] == queries and (part["key_tokens"] or part["tokens"]) == keys
        assert len(part["layers"]) == len(attentions) == len(part["layer_names"])
        assert not any(part["notes"])  # a small page: every weight, nothing left out
        for sent, layer in zip(part["layers"], attentions, strict=True):
            H = layer.shape[1]
            drawn = _weights(sent, H, len(queries), len(keys), payload["scale"])
            np.testing.assert_allclose(drawn, layer[0].double().numpy(), atol=EXACT)
    assert len(encoder["heads"]) == 4 and len(cross["heads"]) == 2
    # BertViz's menu, in its order, and the layer menu of the first
    assert re.search(r'Attention: <select class="hv-kind">.*Encoder.*Decoder.*Cross', view.data)
    assert view.data.count('<option value="') == 3 + 2  # three attentions, two encoder layers
    assert "注意力：" in head_view(**_call(bart), lang="zh-TW").data


def test_model_view_draws_three_sections_of_the_models_own_weights(bart) -> None:
    view = model_view(**_call(bart))
    assert list(view.figures) == ["encoder", "decoder", "cross"]
    assert [h for h in re.findall(r'class="studio-nb-section">(.*?)</h4>', view.data)] == [
        "Encoder",
        "Decoder",
        "Cross",
    ]
    assert view.data.count("window.Plotly) return;") == 1  # plotly.js inlined once
    n_dec, n_enc = len(DECODER), len(ENCODER)
    for kind, attentions, rows, cols in (
        ("encoder", bart.encoder_attentions, n_enc, n_enc),
        ("decoder", bart.decoder_attentions, n_dec, n_dec),
        ("cross", bart.cross_attentions, n_dec, n_enc),
    ):
        (trace,) = view.figures[kind].data
        z = np.array(trace.z, dtype=float)  # panels (rows × cols) with NaN gaps of 1
        for layer, own in enumerate(attentions):
            for head in range(own.shape[1]):
                r, c = layer * (rows + 1), head * (cols + 1)
                np.testing.assert_allclose(
                    z[r : r + rows, c : c + cols], own[0, head].numpy(), atol=EXACT
                )
    one = model_view(
        cross_attention=bart.cross_attentions,
        encoder_tokens=ENCODER,
        decoder_tokens=DECODER,
        include_layers=[2],
        include_heads=[1],
    )
    (trace,) = one.figures["cross"].data
    np.testing.assert_allclose(
        np.array(trace.z, dtype=float), bart.cross_attentions[2][0, 1].numpy(), atol=EXACT
    )


def test_cross_attention_passed_as_attention_is_named_with_the_keyword_to_use(bart) -> None:
    with pytest.raises(
        NotebookInputError,
        match=r"looks like cross-attention \(5 decoder tokens "
        r"× 8 encoder tokens\).*cross_attention=",
    ):
        head_view(bart.cross_attentions, DECODER)
    with pytest.raises(NotebookInputError, match="cross-attention"):
        model_view(bart.cross_attentions, DECODER)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"attention": "x"}, "not both"),
        ({"encoder_tokens": None}, "encoder_tokens= is missing"),
        ({"decoder_tokens": ENCODER}, "8 tokens for attention over 5"),
        ({"display_mode": "blue"}, "display_mode"),
    ],
)
def test_an_encoder_decoder_call_that_cannot_be_drawn_says_why(bart, change, message) -> None:
    call = _call(bart) | change
    view = model_view if "display_mode" in change else head_view
    with pytest.raises(NotebookInputError, match=message):
        view(**call)


def test_one_of_the_three_alone_is_drawn(bart) -> None:
    payload = _payload(head_view(decoder_attention=bart.decoder_attentions, decoder_tokens=DECODER))
    (decoder,) = payload["sections"]
    assert decoder["tokens"] == DECODER and decoder["key_tokens"] is None
    with pytest.raises(NotebookInputError, match="not both"):
        head_view(
            bart.encoder_attentions,
            ENCODER,
            decoder_attention=bart.decoder_attentions,
            decoder_tokens=DECODER,
        )


def _long(n: int, L: int = 2, H: int = 4, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((L, H, n, n)) ** 8  # many weights under 0.005
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)  # (L, H, n, n)


def test_weights_left_out_for_size_are_counted_and_said_on_the_page() -> None:
    w = _long(300)  # 2 × 4 × 300² = 720 000 weights: more than a page sends unasked
    tokens = [f"t{i}" for i in range(300)]
    view = head_view(w, tokens)
    payload = _payload(view)
    for layer, (sent, note) in enumerate(zip(payload["layers"], payload["notes"], strict=True)):
        light = (w[layer] > 0) & (w[layer] < MIN_WEIGHT)
        assert sent["left_out"] == int(light.sum()) > 0
        assert sent["total"] == w[layer].size
        mass = float(w[layer][light].sum() / (4 * 300))
        assert sent["left_mass"] == pytest.approx(mass, rel=1e-5)
        assert note.startswith(f"Left out for size: the lines of {int(light.sum()):,} weights")
        assert f"{light.mean():.1%} of the weights, {mass:.1%} of the attention" in note
        assert "every_weight=True" in note and f"{EVERY_WEIGHT_MAX:,}" in note
        kept = _weights(sent, 4, 300, 300, payload["scale"])
        assert ((kept > 0) == (w[layer] >= MIN_WEIGHT)).all()
    every = _payload(head_view(w, tokens, every_weight=True))
    assert not any(every["notes"])
    for layer, sent in enumerate(every["layers"]):
        np.testing.assert_allclose(
            _weights(sent, 4, 300, 300, every["scale"]), w[layer], atol=EXACT
        )
    assert _payload(
        head_view(w[:, :, :20, :20] / w[:, :, :20, :20].sum(-1, keepdims=True), tokens[:20])
    )["layers"][0].keys() >= {"dense"}  # small: all
    with pytest.raises(NotebookInputError, match="include_layers"):
        head_view(_long(720, L=2, H=4), [f"t{i}" for i in range(720)], every_weight=True)
