"""Watch it write (pages/write.py) with AppTest, in English and Traditional Chinese: the
default prompt, ▶ and ◀, play, jump (10 000 steps capped and said, the context's end
said), a branch, and bad input (empty, emoji, markup), never a traceback.

Reference: `attention_core.decode.decode` on the same prompt (checked against the model
itself in tests/core/test_decode.py); the page must show exactly its rows and tokens.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.decode import decode, parting
from attention_core.i18n import t
from attention_core.reader.card import shipped_shape
from tests.support.apptest import (
    assert_drawn_literally,
    chart,
    charts,
    md_unescape,
    open_after_first_run,
    texts,
)
from tests.support.apptest import (
    decode as plotly_array,
)
from tests.support.availability import require_minilm

PAGE = "pages/write.py"
PROMPT = "這個程式"
CHARTS = {"write_strip", "write_triangles", "write_alternatives", "write_cache", "write_lens"}


def _shown(at) -> str:
    return md_unescape(texts(at))


def _rows(at) -> int:
    return len(chart(at, "write_triangles")["data"][0]["y"])


@pytest.fixture(scope="module")
def reference():
    return decode("reader", PROMPT, 64)


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_default_prompt_writes_its_first_step_in_both_languages(lang, reference) -> None:
    at = open_after_first_run(PAGE, {"lang": lang})
    assert at.text_input(key="write_prompt").value == PROMPT
    assert t("write_title", lang) in _shown(at)
    assert CHARTS <= set(charts(at))
    tri = chart(at, "write_triangles")
    layer = shipped_shape().default_layer
    assert len(tri["data"]) == reference.steps[0].attention.shape[1]  # one per head
    for h, trace in enumerate(tri["data"]):
        z = plotly_array(trace["z"])  # (1, t)
        np.testing.assert_allclose(z[0], reference.steps[0].attention[layer, h], atol=1e-6)
    first = reference.steps[0].token
    assert t("write_status", lang, step=1, text=f"[BOS]{PROMPT}{first}") in _shown(at)


def test_step_back_play_and_jump(reference) -> None:
    at = open_after_first_run(PAGE)
    at.button(key="write_next").click().run()
    assert _rows(at) == 2
    at.button(key="write_back").click().run()
    assert _rows(at) == 1
    at.button(key="write_play_button").click().run()  # five steps, one rerun each
    assert not at.exception and _rows(at) == 6
    at.number_input(key="write_jump").set_value(20).run()
    assert _rows(at) == 20 and at.number_input(key="write_jump").value == 20
    alternatives = chart(at, "write_alternatives")["data"][0]
    assert alternatives["y"][0] == f"1. {reference.steps[19].top_tokens[0]}"
    np.testing.assert_allclose(plotly_array(alternatives["x"]), reference.steps[19].top_probs,
                               atol=1e-6)  # fmt: skip


def test_ten_thousand_steps_are_capped_and_the_context_end_is_said(reference) -> None:
    at = open_after_first_run(PAGE)
    at.number_input(key="write_jump").set_value(10_000).run()
    assert not at.exception
    shown = _shown(at)
    assert t("write_capped", "en", asked=10_000, most=256) in shown
    written = len(reference.steps)  # the reader stops when its 64 positions are full
    assert t("write_context_full", "en", context=64, steps=written) in shown
    assert _rows(at) == written
    assert at.button(key="write_next").disabled


def test_an_alternative_branches_and_the_page_says_where_attention_parts(reference) -> None:
    at = open_after_first_run(PAGE)
    at.number_input(key="write_jump").set_value(3).run()
    at.button(key="write_alt_1").click().run()
    assert {"write_branch_0", "write_branch_1", "write_parting"} <= set(charts(at))
    other = reference.steps[2].top_tokens[1]
    assert t("write_branch_other", "en", token=other, step=3) in _shown(at)
    assert t("write_no_parting", "en", tol=0.05, step=3) in _shown(at)  # not before the next
    at.button(key="write_next").click().run()
    branch = decode("reader", PROMPT, 4, force={2: int(reference.steps[2].top_ids[1])})
    found = parting(decode("reader", PROMPT, 4), branch)
    assert found is not None and found.step == 3
    said = t("write_parting", "en", step=4, layer=found.layer, head=found.head,
             position=found.position, token=branch.tokens[found.position],
             difference=found.difference)  # fmt: skip
    assert said in _shown(at)
    at.button(key="write_branch_clear").click().run()
    assert "write_parting" not in charts(at)
    at.button(key="write_alt_0").click().run()  # the token it wrote: no branch
    assert t("write_branch_same", "en") in _shown(at)


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_bad_input_is_said_or_drawn_as_text(lang) -> None:
    at = open_after_first_run(PAGE, {"lang": lang})
    at.text_input(key="write_prompt").input("").run()
    assert not at.exception and t("write_empty_prompt", lang) in _shown(at)
    assert chart(at, "write_triangles")["data"][0]["x"] == ["0:[BOS]"]  # from [BOS] alone
    for prompt in ("😀🎉 emoji", "<script>alert(1)</script><b>x</b>"):
        at.text_input(key="write_prompt").input(prompt).run()
        assert not at.exception, (prompt, at.exception)
        assert "Traceback" not in texts(at)
        for spec in charts(at).values():
            assert_drawn_literally(spec)
        assert "<script>" not in texts(at)  # escaped markdown: \<script\>


def test_a_model_that_does_not_write_is_refused_with_its_reason() -> None:
    minilm = str(require_minilm())  # an encoder: nothing to watch writing
    at = open_after_first_run(PAGE, _pretrained_model_name=minilm)
    at.selectbox(key="write_model").select(f"pretrained:{minilm}").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and errors[0].startswith(t("write_refused", "en", reason="")), errors
    assert "encoder" in errors[0]


def test_a_tiny_random_decoder_writes_with_grouped_keys() -> None:
    require_minilm()  # its tokenizer
    at = open_after_first_run(PAGE)
    at.selectbox(key="write_model").select("tiny:llama").run()
    at.text_input(key="write_prompt").input("the cat sat").run()
    assert not at.exception and CHARTS <= set(charts(at))
    assert "2 key/value heads for 4 heads" in _shown(at)
