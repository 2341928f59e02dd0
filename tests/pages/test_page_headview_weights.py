"""The app's head view (Lens page) says what it leaves out for size, and its switch *Every
weight* sends every weight: checked against transformers itself (the packaged
all-MiniLM-L6-v2, eager attention), never against what the page drew."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from tests.support import teaching as helpers_teaching
from tests.support.apptest import offline  # noqa: F401 (autouse)
from tests.support.availability import needs_minilm, require_minilm
from ui.headview import HEAD_VIEW_COMPONENT

SENTENCE = "The animal didn't cross the street because it was too tired."
LAYER = 2

pytestmark = needs_minilm


@pytest.fixture(scope="module")
def own() -> np.ndarray:
    """The model's own layer LAYER over SENTENCE, (H, n, n)."""
    from transformers import AutoModel, AutoTokenizer

    folder = require_minilm()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    with torch.no_grad():
        out = model.eval()(**tokenizer(SENTENCE, return_tensors="pt"), output_attentions=True)
    return out.attentions[LAYER][0].double().numpy()


def _spec(at) -> dict:
    (element,) = [
        e for e in at.get("bidi_component") if e.proto.component_name == HEAD_VIEW_COMPONENT
    ]
    return json.loads(json.loads(element.proto.json)["spec"])


def test_the_lines_left_out_are_said_and_every_weight_sends_them(own: np.ndarray) -> None:
    state = {"lens_view": "head", "lens_layer": LAYER}
    at = helpers_teaching.open_page("lens", {"text": SENTENCE, "lang": "en"}, state)
    assert not at.exception, at.exception
    spec = _spec(at)
    light = (own > 0) & (own < 0.005)
    assert light.sum() > 0
    share, mass = light.mean(), own[light].sum() / (own.shape[0] * own.shape[1])
    assert spec["text"]["note"] == (
        f"Left out for size: the lines of {int(light.sum()):,} weights under 0.005 "
        f"({share:.1%} of the weights, {mass:.1%} of the attention)."
    )
    assert "{shown}" in spec["text"]["open_cap"]  # filled in by the page when it caps
    toggle = at.toggle(key="lens_every_weight")
    assert not toggle.value and not toggle.disabled
    toggle.set_value(True).run()
    assert not at.exception, at.exception
    spec = _spec(at)
    H, n, _ = own.shape
    sent = np.asarray(spec["sparse"]["dense"], dtype=float).reshape(H, n, n) / spec["scale"]
    np.testing.assert_allclose(sent, own, atol=EXACT)
    assert spec["text"]["note"] == ""


def test_the_note_speaks_the_pages_language(own: np.ndarray) -> None:
    state = {"lens_view": "head", "lens_layer": LAYER}
    at = helpers_teaching.open_page("lens", {"text": SENTENCE, "lang": "zh-TW"}, state)
    assert not at.exception, at.exception
    light = int(((own > 0) & (own < 0.005)).sum())
    assert _spec(at)["text"]["note"].startswith(f"為了控制大小而省略：{light:,} 個低於 0.005")
    assert at.toggle(key="lens_every_weight").label == "每一個權重"
