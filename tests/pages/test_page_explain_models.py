"""AppTest of pages/explain.py's model choice in both languages: MiniLM explaining the
similarity of the sidebar's sentence to a second one, and the Pretrained page's causal
model (a tiny Llama written to a folder) explaining its next token, each against
attention_core.attribution's `agreement` run here on the same model, sentence and target
(the library is checked against Captum and SciPy in tests/core/attribution); MiniLM's run
draws the bar and Cancel, and a cancelled run says so and starts again on request.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.attribution import agreement
from attention_core.i18n import t
from tests.support.apptest import chart, decode, open_after_first_run, spy_bar_and_cancel, texts
from tests.support.availability import needs_minilm
from ui.common import md_escape

PAGE = "pages/explain.py"
SENTENCE = "the cat sat on the mat"
SECOND = "a dog lay on the rug"


def _rows(at) -> np.ndarray:
    return decode(chart(at, "explain_rows")["data"][0]["customdata"])[::-1]  # first on top


def _same_rows(at, expected) -> None:
    ig = expected.attributions["integrated_gradients"]
    values = _rows(at)
    np.testing.assert_allclose(values[0], expected.views.rollout[-1], rtol=1e-5, atol=1e-7)
    magnitude = np.abs(ig.scores[expected.views.keys])
    np.testing.assert_allclose(values[1], magnitude, rtol=1e-4, atol=1e-6)
    assert len(at.dataframe[0].value) == len(expected.table)


@pytest.fixture(scope="module")
def minilm_expected(loaded):
    return agreement(loaded, SENTENCE, target=SECOND)


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    pytest.importorskip("transformers")
    from attention_core.pretrained import build_tiny_model

    return str(build_tiny_model("llama", tmp_path_factory.mktemp("tiny_llama")))


@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_minilm_explains_the_similarity_to_a_second_sentence(lang, minilm_expected):
    at = open_after_first_run(PAGE, {"text": SENTENCE, "lang": lang}, explain_second=SECOND)
    at.segmented_control(key="explain_model").set_value("minilm").run()
    assert not at.exception
    assert at.text_input(key="explain_second").value == SECOND
    assert "explain_token" not in _keys(at)  # an encoder explains no token
    ig = minilm_expected.attributions["integrated_gradients"]
    said = t(
        "explain_target_similarity",
        lang,
        model=md_escape(t("explain_model_minilm", lang)),
        second=md_escape(SECOND),
        value=ig.output,
    )
    assert said in [m.value for m in at.markdown]
    _same_rows(at, minilm_expected)
    columns = list(at.dataframe[0].value.columns)  # knocking a head out changes the similarity
    assert t("explain_col_ablation_similarity", lang) in columns
    assert t("explain_col_ablation", lang) not in columns


def _keys(at) -> list[str]:
    return [w.key for w in at.text_input]


@needs_minilm
def test_minilm_shows_a_bar_and_cancel_and_a_cancel_holds_for_its_run(monkeypatch, loaded):
    import ui.explain

    drawn = spy_bar_and_cancel(monkeypatch)
    text = "a sentence only this test reads"  # not kept from another test's run
    at = open_after_first_run(PAGE, {"text": text, "lang": "zh-TW"}, explain_second=SECOND)
    at.segmented_control(key="explain_model").set_value("minilm").run()
    assert not at.exception and "explain_cancel" in drawn
    bars = [d for d in drawn if isinstance(d, str) and d.startswith("正在計算歸因")]
    assert bars and bars[-1] == t("explain_progress", "zh-TW", done=4, total=4)
    assert not at.get("progress") and "explain_cancel" not in [b.key for b in at.button]

    monkeypatch.setattr(ui.explain, "run_key", lambda key, method, target, text: key + text)
    at = open_after_first_run(
        PAGE, {"text": SENTENCE}, explain_second=SECOND, explain_cancelled="minilm" + SENTENCE
    )
    assert "explain_rows" in _chart_keys(at)  # the reader's run: the cancel is MiniLM's
    at.segmented_control(key="explain_model").set_value("minilm").run()
    assert t("explain_cancelled", "en") in [i.value for i in at.info]
    assert "explain_rows" not in _chart_keys(at)
    at.button(key="explain_again").click().run()
    assert not at.exception and "explain_rows" in _chart_keys(at)
    assert t("explain_cancelled", "en") not in [i.value for i in at.info]


def _chart_keys(at) -> list[str]:
    from tests.support.apptest import charts

    return list(charts(at))


@needs_minilm
def test_an_empty_second_sentence_is_asked_for(loaded):
    at = open_after_first_run(PAGE, {"text": SENTENCE, "lang": "zh-TW"}, explain_second="  ")
    at.segmented_control(key="explain_model").set_value("minilm").run()
    assert not at.exception
    assert t("explain_second_empty", "zh-TW") in [w.value for w in at.warning]


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_pretrained_pages_causal_model_explains_its_next_token(lang, llama_folder):
    from attention_core.pretrained import load_model

    expected = agreement(load_model(llama_folder), SENTENCE)
    at = open_after_first_run(
        PAGE, {"text": SENTENCE, "lang": lang}, _pretrained_model_name=llama_folder
    )
    key = f"pretrained:{llama_folder}"
    at.segmented_control(key="explain_model").set_value(key).run()
    assert not at.exception
    ig = expected.attributions["integrated_gradients"]
    said = t(
        "explain_target_model",
        lang,
        model=md_escape(t("explain_model_pretrained", lang, name=llama_folder)),
        token=md_escape(ig.target_token),
        logit=ig.output,
    )
    assert said in [m.value for m in at.markdown]
    _same_rows(at, expected)
    assert t("explain_col_ablation", lang) in list(at.dataframe[0].value.columns)


def test_a_chosen_token_is_explained_and_a_padding_token_refused(llama_folder):
    from attention_core.pretrained import load_model

    expected = agreement(load_model(llama_folder), SENTENCE, target="dog")
    key = f"pretrained:{llama_folder}"
    at = open_after_first_run(PAGE, {"text": SENTENCE}, _pretrained_model_name=llama_folder)
    at.segmented_control(key="explain_model").set_value(key).run()
    at.text_input(key="explain_token").set_value("dog").run()
    assert not at.exception
    assert "**dog**" in texts(at)
    _same_rows(at, expected)
    at.text_input(key="explain_token").set_value("[PAD]").run()
    assert not at.exception
    assert t("explain_token_padding", "en", token=md_escape("[PAD]")) in [
        w.value for w in at.warning
    ]


def test_an_encoder_decoder_from_the_pretrained_page_is_refused_with_the_way_out(
    tmp_path_factory,
):
    from attention_core.pretrained import build_tiny_model

    folder = str(build_tiny_model("encoder-decoder", tmp_path_factory.mktemp("bart")))
    at = open_after_first_run(
        PAGE, {"text": SENTENCE, "lang": "zh-TW"}, _pretrained_model_name=folder
    )
    at.segmented_control(key="explain_model").set_value(f"pretrained:{folder}").run()
    assert not at.exception and not at.error
    model = md_escape(t("explain_model_pretrained", "zh-TW", name=folder))
    assert [w.value for w in at.warning] == [t("explain_not_causal", "zh-TW", model=model)]
    assert "explain_token" not in _keys(at) and "explain_second" not in _keys(at)
