"""attention_core.notebook: BertViz's calls on transformers' own output, checked against
that output; bad input refused with a message; every script inline, no token ever HTML.

The views in a real notebook and a real browser: tests/browser/test_notebook_browser.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from attention_core.figures.headview import MIN_WEIGHT
from attention_core.limits import EXACT
from attention_core.notebook import (
    NotebookInputError,
    as_attention,
    head_view,
    heads_grid,
    model_view,
    neuron_view,
)
from tests.support.availability import needs_minilm

HOSTILE = "</script><img src=x onerror=alert(1)>"
ANIMAL = "The animal didn't cross the street because it was too tired"


def _weights(L: int = 2, H: int = 3, n: int = 5, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((L, H, n, n)) ** 4  # some weights under MIN_WEIGHT
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)  # (L, H, n, n), rows sum to 1


def _payload(view) -> dict:
    (text,) = re.findall(
        r'<script type="application/json" class="hv-payload">(.*?)</script>', view.data
    )
    return json.loads(text)


def _decoded(layer: dict, H: int, n: int, scale: int) -> np.ndarray:
    """The head view's sparse layer back to (H, n, n), as its JavaScript decodes it."""
    out = np.zeros((H * n, n))
    at = 0
    for row, count in enumerate(layer["counts"]):
        for _ in range(count):
            out[row, layer["keys"][at]] = layer["vals"][at] / scale
            at += 1
    return out.reshape(H, n, n)


@pytest.fixture(scope="module")
def bert():
    """The packaged MiniLM through transformers directly (eager), ANIMAL run once."""
    from transformers import AutoModel, AutoTokenizer

    from attention_core.resources import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    model = AutoModel.from_pretrained(minilm_dir(), attn_implementation="eager").eval()
    inputs = tokenizer(ANIMAL, return_tensors="pt")
    with torch.no_grad():
        outputs = model(**inputs, output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
    return model, tokenizer, outputs.attentions, tokens


@needs_minilm
def test_transformers_tuple_is_drawn_as_the_model_returned_it(bert) -> None:
    _, _, attentions, tokens = bert
    view = head_view(attentions, tokens, every_weight=False)  # weights >= MIN_WEIGHT
    payload = _payload(view)
    L, H, n = len(attentions), attentions[0].shape[1], len(tokens)
    assert payload["tokens"] == tokens and len(payload["layers"]) == L == 6
    for layer, own in zip(payload["layers"], attentions, strict=True):
        drawn = _decoded(layer, H, n, payload["scale"])
        own = own[0].numpy().astype(np.float64)  # (H, n, n)
        kept = own >= MIN_WEIGHT
        assert ((drawn > 0) == kept).all()  # a line for exactly the weights drawn
        np.testing.assert_allclose(drawn[kept], own[kept], atol=0.5 / payload["scale"] + EXACT)


def test_forms_bertviz_takes_are_one_attention() -> None:
    w = _weights()
    tokens = list("abcde")
    tensors = tuple(torch.from_numpy(layer[None]) for layer in w)  # L × (1, H, n, n)
    batched = tuple(torch.from_numpy(np.stack([layer[::-1], layer])) for layer in w)  # (2, …)
    for form, batch in ((w, 0), (tensors, 0), (list(w), 0), (batched, 1)):
        np.testing.assert_array_equal(as_attention(form, tokens, batch=batch).weights, w)
    one_layer = as_attention(w[1], tokens)  # (H, n, n)
    assert one_layer.weights.shape == (1, 3, 5, 5) and one_layer.layers == [0]
    kept = as_attention(w, tokens, include_layers=[1])
    np.testing.assert_array_equal(kept.weights, w[1:])
    assert kept.layers == [1]


def test_tokens_are_prettified_as_bertviz_does() -> None:
    tokens = ["<s>", "Ġhello", "▁world", "end</w>"]
    assert as_attention(_weights(n=4), tokens).tokens == ["<s>", " hello", " world", "end"]
    assert as_attention(_weights(n=4), tokens, prettify_tokens=False).tokens == tokens


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w, tok: (w, tok[:-1]), "4 tokens for attention over 5"),
        (lambda w, tok: (np.where(np.eye(5, dtype=bool), np.nan, w), tok), "NaN"),
        (lambda w, tok: (-w, tok), "negative"),
        (lambda w, tok: (np.zeros_like(w), tok), "eager"),  # an SDPA model's attention
        (lambda w, tok: (w[..., :4], tok), "shape"),
        (lambda w, tok: ((), tok), "no layers"),
        (lambda w, tok: (w, "abcde"), "list of token strings"),
        (lambda w, tok: ((w[0], w[1, :, :4, :4]), tok), "different shapes"),
    ],
)
def test_attention_that_is_not_what_it_claims_is_refused(change, message: str) -> None:
    attention, tokens = change(_weights(), list("abcde"))
    with pytest.raises(NotebookInputError, match=message):
        head_view(attention, tokens)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"include_layers": [2]},
        {"include_layers": []},
        {"include_layers": [0, 0]},
        {"layer": 1, "include_layers": [0]},
        {"heads": [3]},
        {"sentence_b_start": 5},
        {"sentence_b_start": 0},
        {"batch": 1},
        {"html_action": "save"},
    ],
)
def test_impossible_choices_say_what_is_possible(kwargs: dict) -> None:
    with pytest.raises(NotebookInputError):
        head_view(_weights(), list("abcde"), **kwargs)


def test_heads_shown_first_and_the_sentence_menu() -> None:
    view = head_view(_weights(), list("abcde"), layer=1, heads=[0, 2], sentence_b_start=2)
    payload = _payload(view)
    assert payload["active"] == [True, False, True] and payload["b_start"] == 2
    assert '<option value="1" selected>layer 1</option>' in view.data
    assert "Sentence A → Sentence B" in view.data
    assert (
        "頭 0" in _payload(head_view(_weights(), list("abcde"), lang="zh-TW"))["heads"][0]["name"]
    )


def test_no_token_is_html_and_no_script_comes_from_the_network() -> None:
    tokens = ["a", HOSTILE, "c", "d", "e"]
    for view in (
        head_view(_weights(), tokens),
        model_view(_weights(), tokens),
        heads_grid(_weights(), tokens, layer=1),
    ):
        page = view.to_html()
        assert "<img" not in page.replace("\\u003c", "")  # only ever inside escaped JSON
        assert not re.search(r"<script[^>]*\bsrc=|<link\b|<iframe\b", page)
        assert page.count("<script") == page.count("</script>")
        assert view._repr_html_() == view.data and view.data in page


def test_model_view_and_heads_grid_show_the_weights_given() -> None:
    w = _weights(L=3, H=4)
    view = model_view(w, list("abcde"), include_layers=[0, 2], include_heads=[1, 3])
    (trace,) = view.figure.data
    z = np.array(trace.z, dtype=float)  # (2·(n+1)−1, 2·(n+1)−1): panels with NaN gaps
    np.testing.assert_allclose(z[6:11, 6:11], w[2, 3], atol=EXACT)  # layer 2, head 3
    ticks = list(view.figure.layout.yaxis.ticktext) + list(view.figure.layout.xaxis.ticktext)
    assert ticks == ["layer 0", "layer 2", "head 1", "head 3"]
    grid = heads_grid(w, list("abcde"), layer=2, mean=True)
    panels = [np.array(t.z, dtype=float) for t in grid.figure.data if t.type == "heatmap"]
    assert len(panels) == 5
    np.testing.assert_allclose(panels[1], w[2, 1], atol=EXACT)
    np.testing.assert_allclose(panels[4], w[2].mean(0), atol=EXACT)
    with pytest.raises(NotebookInputError):
        heads_grid(w, list("abcde"), layer=3)


def test_a_saved_view_is_a_whole_page(tmp_path) -> None:
    path = head_view(_weights(), list("abcde")).save_html(tmp_path / "head.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in page
    assert "function renderHeadView" in page  # the app's renderer, inline


@needs_minilm
def test_neuron_view_shows_the_models_own_weight(bert) -> None:
    model, tokenizer, attentions, tokens = bert
    view = neuron_view(model, ANIMAL, layer=3, head=1, query="it", tokenizer=tokenizer)
    i = tokens.index("it")
    j = int(attentions[3][0, 1, i].argmax())
    own = float(attentions[3][0, 1, i, j])
    assert view.figure.layout.title.text.endswith(f"softmax → {own:.4f}")
    assert list(view.figure.data[0].y) == ["q: it", f"k: {tokens[j]}", "q⊙k"]


@needs_minilm
def test_neuron_view_of_a_llama_after_rope_with_shared_keys(bert) -> None:
    """A tiny random Llama, 4 query heads on 2 key/value heads, rotary positions: the view
    rebuilds q and k as the model uses them (every family: tests/core/lens/test_modern.py)."""
    from tests.support.models import tiny_decoder

    _, tokenizer, _, _ = bert
    llama = tiny_decoder("LlamaConfig", tokenizer.vocab_size, context=128, num_key_value_heads=2)
    inputs = tokenizer("the cat sat on the mat", return_tensors="pt")
    with torch.no_grad():
        own = llama(**inputs, output_attentions=True).attentions[1][0, 3, -1]  # last query
    view = neuron_view(llama, "the cat sat on the mat", layer=1, head=3, tokenizer=tokenizer)
    assert view.figure.layout.title.text.endswith(f"softmax → {float(own.max()):.4f}")
