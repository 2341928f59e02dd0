"""decode_view: the arrays on the view are the model's own (ReaderLM.forward), the page
holds exactly those numbers (rounded) behind its slider, user text stays inert, and the
HTML needs nothing from the network.

Shape legend: L layers, H heads, t positions a step's query met.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.notebook import DecodeView, decode_view
from attention_core.pretrained import tiny_family
from attention_core.reader import load_shipped

PROMPT = "今天天氣很好，我們"
STEPS = 4


@pytest.fixture(scope="module")
def view() -> DecodeView:
    return decode_view("reader", PROMPT, steps=STEPS)


def page_data(view: DecodeView) -> dict:
    """The JSON the view's script draws from."""
    found = re.search(r"const d = (\{.*?\});\n", view.data, re.S)
    assert found, "the page carries its data as one JSON object"
    return json.loads(found.group(1))


def test_the_views_arrays_are_the_readers_own_forward(view: DecodeView) -> None:
    reader = load_shipped()
    result = view.result
    assert len(view.attention) == STEPS and view.top_probs.shape == (STEPS, 5)
    for i, rows in enumerate(view.attention):
        ids = result.ids[: result.prompt_length + i]
        with torch.no_grad():
            logits, weights = reader.model(torch.tensor([ids]))
        own = torch.stack([w[0, :, -1] for w in weights]).numpy()  # (L, H, t)
        assert np.abs(rows - own).max() <= EXACT
        top = torch.topk(torch.softmax(logits[0, -1], -1), 5)
        np.testing.assert_array_equal(view.top_ids[i], top.indices.numpy())
        assert np.abs(view.top_probs[i] - top.values.numpy()).max() <= EXACT
        np.testing.assert_array_equal(view.lens_ids[i, -1], top.indices.numpy())


def test_the_page_holds_each_steps_numbers_behind_a_slider(view: DecodeView) -> None:
    data = page_data(view)
    assert f'type="range" min="0" max="{STEPS - 1}"' in view.data
    assert data["tokens"] == view.tokens and data["prompt"] == view.result.prompt_length
    for i, step in enumerate(data["steps"]):
        rows = np.array(step["rows"])  # (L, H, t)
        assert rows.shape == view.attention[i].shape
        assert np.abs(rows - view.attention[i]).max() <= 1e-4  # rounded to 4 digits
        assert [a[0] for a in step["top"]] == view.result.steps[i].top_tokens
        assert len(step["lens"]) == view.attention[i].shape[0]
    assert "<script src" not in view.data and "http" not in view.data  # nothing fetched


def test_a_forced_step_is_marked_and_zh_tw_words_are_used() -> None:
    view = decode_view("reader", PROMPT, steps=3, force={1: "貓"}, lang="zh-TW")
    data = page_data(view)
    assert [s["forced"] for s in data["steps"]] == [False, True, False]
    assert data["steps"][1]["token"] == "貓"
    assert data["words"]["nb_decode_rows"] == t("nb_decode_rows", "zh-TW")
    assert data["steps"][0]["cache"].startswith("快取")


def test_user_text_cannot_leave_the_script() -> None:
    model, tokenizer = tiny_family("gpt2", attn_implementation="sdpa", context=64)
    hostile = "</script><img src=x onerror=alert(1)>"
    view = decode_view(model, hostile, steps=2, tokenizer=tokenizer)
    assert "<img" not in view.data and "</script><" not in view.data.replace("</script></div>", "")
    assert "<" in page_data(view)["tokens"]  # the text is in the page, as data only


def test_no_step_written_says_so_instead_of_drawing(tmp_path) -> None:
    view = decode_view("reader", PROMPT, steps=0, lang="zh-TW")
    assert t("nb_decode_none", "zh-TW") in view.data and "<input" not in view.data
    assert view.attention == [] and view.top_probs.shape == (0,)
    saved = view.save_html(tmp_path / "none.html").read_text(encoding="utf-8")
    assert saved.startswith("<!DOCTYPE html>")
