"""The Lens page on a model of every family the lens reads (attention_core.pretrained.zoo,
saved to a folder as a user's model is): no family shows a traceback or an error; the
neuron view shows the rebuilt weight equal to the model's own; a family that once crashed
the page (StableLM, partial rotary) draws every view."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from attention_core.pretrained import load_model, run_model, tiny_family
from attention_core.pretrained.zoo import FAMILY_CONFIGS
from tests.support import teaching
from tests.support.apptest import chart, md_unescape, offline, texts  # noqa: F401 (autouse)
from tests.support.availability import needs_minilm
from ui.models import MODEL_STATE

pytestmark = needs_minilm

SENTENCE = "The animal didn't cross the street because it was too tired."


@functools.cache
def saved(family: str, folder: Path) -> str:
    model, tokenizer = tiny_family(family, context=512)
    # a few spare rows, as real vocabularies have: transformers loads some families' saved
    # tokenizer as their own class, which adds its end-of-text token to the vocabulary
    model.resize_token_embeddings(len(tokenizer) + 8)
    model.save_pretrained(folder / family)
    tokenizer.save_pretrained(folder / family)
    return str(folder / family)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("zoo")


def lens_page(model: str, **state: object):
    state = {MODEL_STATE: model, **state}
    at = teaching.open_page("lens", {"text": SENTENCE, "lang": "en"}, state)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("family", FAMILY_CONFIGS)
def test_the_neuron_view_of_every_family_is_the_models_own(zoo: Path, family: str) -> None:
    model = saved(family, zoo)
    at = lens_page(model, lens_view="neuron", lens_layer=1, lens_head=3, lens_query=5, lens_key=2)
    want = run_model(load_model(model), SENTENCE).attentions[1, 3, 5, 2]
    assert f"for this pair: {want:.6f}. Rebuilt from q and k: {want:.6f}" in md_unescape(texts(at))


@pytest.mark.parametrize("view", ["maps", "head", "ablation", "sinks"])
def test_a_partial_rotary_model_draws_every_view(zoo: Path, view: str) -> None:
    at = lens_page(saved("stablelm", zoo), lens_view=view)
    assert at.get("plotly_chart") or at.get("bidi_component")


def test_a_model_that_does_not_scale_its_scores_says_so(zoo: Path) -> None:
    """GPT-Neo's scores are not divided by √d: the neuron view does not claim they are."""
    at = lens_page(saved("gpt-neo", zoo), lens_view="neuron", lens_layer=1, lens_head=0)
    shown = md_unescape(texts(at))
    assert "this model does not scale it" in shown and "÷√d = ×" not in shown
    assert "· not scaled ·" in chart(at, "lens_neuron_chart")["layout"]["title"]["text"]
