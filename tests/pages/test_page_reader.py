"""?weights=trained in AppTest: the landing page and the pages that take the sidebar's
sentence through the trained reader (ui/reader_switch.py), in both tokenizations and languages,
against the model's own forward pass; the one-click contrast; honest [UNK]s and cuts; a
broken weights file that leaves the untrained module working."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
import torch

from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.reader import load_shipped
from attention_core.reader.card import shipped_shape
from attention_core.reader.run import reader_tokens
from tests.support.apptest import (
    catalog_line,
    figures,
    heatmaps,
    md_unescape,
    run_app,
    texts,
    weights_of,
)

ARTICLE = "中和有一個永和路"
TRAINED = {"weights": "trained", "text": ARTICLE}


def own_weights(text: str, layer: int) -> np.ndarray:
    """The model's own forward pass: layer `layer`'s weights (H, n, n) for `text`."""
    reader = load_shipped()
    with torch.no_grad():
        _, weights = reader.model(torch.tensor([reader.vocab.encode(text).ids]))
    return weights[layer][0].numpy()


def drawn(at) -> np.ndarray:
    return np.stack([weights_of(trace) for trace in heatmaps(at)])  # (H, n, n)


def params(at) -> dict[str, str]:
    return {k: at.query_params[k] for k in at.query_params}


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_characters_are_the_readers_own_heads_in_both_languages(lang):
    at = run_app({**TRAINED, "tokenizer": "char", "lang": lang})
    assert not at.exception
    shape = shipped_shape()
    assert heatmaps(at)[0]["x"] == [f"{i}:{u}" for i, u in enumerate(["[BOS]", *ARTICLE])]
    np.testing.assert_allclose(drawn(at), own_weights(ARTICLE, shape.default_layer), atol=EXACT)
    shown = md_unescape(texts(at))
    assert catalog_line("trained_rows", lang).search(shown)
    assert t("learned_header", lang, layer=shape.default_layer) in shown
    # the sidebar shows the checkpoint's sizes, fixed, and no untrained sliders
    fixed = {w.key: w for w in at.sidebar.number_input}
    assert fixed["fixed_embed_dim"].value == 128 and fixed["fixed_embed_dim"].disabled
    assert fixed["fixed_num_heads"].value == 4 and "embed_dim" not in fixed
    assert catalog_line("trained_fixed", lang).search(md_unescape(texts(at)))


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_jieba_pools_the_articles_characters_to_its_four_words(lang):
    at = run_app({**TRAINED, "tokenizer": "jieba", "lang": lang})
    assert not at.exception
    labels = heatmaps(at)[0]["x"]
    assert labels == ["0:[BOS]", "1:中和", "2:有", "3:一個", "4:永和路"]
    z = drawn(at)
    np.testing.assert_allclose(z.sum(-1), 1.0, atol=EXACT)
    own = own_weights(ARTICLE, shipped_shape().default_layer)
    np.testing.assert_allclose(z[:, 4, 1], own[:, 6:9, 1:3].sum(-1).mean(-1), atol=EXACT)
    assert catalog_line("trained_pooled", lang).search(md_unescape(texts(at)))


def test_the_layer_choice_shows_that_layer_and_goes_into_the_link():
    at = run_app({**TRAINED, "tokenizer": "char"})
    at.selectbox(key="layer").set_value(3).run()
    assert not at.exception
    np.testing.assert_allclose(drawn(at), own_weights(ARTICLE, 3), atol=EXACT)
    assert params(at)["layer"] == "3" and params(at)["weights"] == "trained"
    again = run_app(params(at))  # the copied link reproduces the view
    np.testing.assert_allclose(drawn(again), drawn(at), atol=0)


def test_untrained_to_trained_and_back_is_one_click_each_and_keeps_the_sliders():
    at = run_app({"text": ARTICLE})
    at.number_input(key="embed_dim").set_value(8).run()  # a widget's value, not the link's
    at.select_slider(key="num_heads").set_value(2).run()
    assert len(heatmaps(at)) == 2 and "weights" not in params(at)
    at.button(key="to_trained").click().run()
    assert not at.exception
    assert params(at)["weights"] == "trained" and len(heatmaps(at)) == 4
    at.button(key="to_untrained").click().run()
    assert not at.exception and "weights" not in params(at) and "layer" not in params(at)
    assert len(heatmaps(at)) == 2 and params(at)["embed_dim"] == "8"
    assert at.number_input(key="embed_dim").value == 8


def test_unknown_characters_are_flagged_and_counted_never_dropped():
    text = "貓😀坐ア"
    at = run_app({"weights": "trained", "text": text, "tokenizer": "char"})
    assert not at.exception
    read = reader_tokens(text, load_shipped().vocab)
    assert len(heatmaps(at)[0]["x"]) == len(read.tokens) == 5
    warning = md_unescape(" ".join(str(w.value) for w in at.warning))
    assert t("reader_unknown", "en", k=len(read.unknown), n=5, units="😀, ア") in warning
    at = run_app({"weights": "trained", "text": text, "tokenizer": "char", "lang": "zh-TW"})
    warning = md_unescape(" ".join(str(w.value) for w in at.warning))
    assert t("reader_unknown", "zh-TW", k=len(read.unknown), n=5, units="😀、ア") in warning


def test_a_long_text_is_cut_at_the_readers_context_with_a_message():
    at = run_app({"weights": "trained", "tokenizer": "char"})
    at.text_area(key="text").set_value("注意力" * 40_000).run()  # typed: 120 000 characters
    assert not at.exception
    context = shipped_shape().context
    assert len(heatmaps(at)[0]["x"]) == context
    assert catalog_line("reader_context_cut").search(md_unescape(texts(at)))


def test_lessons_that_switch_what_the_reader_fixed_run_the_untrained_module_and_say_so():
    for page, why in (
        ("masks", "lesson_untrained_masks"),
        ("positions", "lesson_untrained_positions"),
    ):
        at = run_app({**TRAINED, "embed_dim": "8", "num_heads": "2"}, page=f"pages/{page}.py")
        assert not at.exception and not at.error, page
        assert t("lesson_untrained", "en", why=t(why, "en")) in [i.value for i in at.info]


def test_the_steps_are_the_trained_layers_own_steps():
    at = run_app({**TRAINED, "layer": "1"}, page="pages/steps.py")
    assert not at.exception and not at.error
    captions = [c.value for c in at.caption]
    assert t("reader_x_note", "en", layer=1) in captions
    assert t("reader_weights_shape", "en", c=128) in captions


def test_an_impossible_layer_in_the_link_falls_back_with_a_warning():
    at = run_app({**TRAINED, "layer": "<b>7</b>"})
    assert not at.exception
    assert any("<b>7</b>" in md_unescape(str(w.value)) for w in at.warning)
    assert params(at)["layer"] == str(shipped_shape().default_layer)


@pytest.fixture
def broken_weights(tmp_path, monkeypatch):
    """The shipped reader with one byte of its weights flipped, for this test only."""
    import attention_core.reader.weights as weights

    for name in (weights.WEIGHTS, weights.VOCAB, weights.CARD):
        shutil.copy(weights.SHIPPED_DIR / name, tmp_path / name)
    data = bytearray((tmp_path / weights.WEIGHTS).read_bytes())
    data[-1] ^= 0x01
    (tmp_path / weights.WEIGHTS).write_bytes(bytes(data))
    monkeypatch.setattr(weights, "SHIPPED_DIR", tmp_path)
    weights.load_shipped.cache_clear()
    yield
    weights.load_shipped.cache_clear()


def test_a_corrupted_weights_file_says_so_and_the_untrained_module_keeps_working(
    broken_weights,
):
    text = "壞掉的權重檔案不會變成數字。"  # a sentence no other test caches
    at = run_app({"weights": "trained", "text": text})
    assert not at.exception
    errors = " ".join(str(e.value) for e in at.error)
    assert "corrupted" in errors and "untrained" in errors and not figures(at)
    at.radio(key="weights").set_value("untrained").run()
    assert not at.exception and not at.error and len(heatmaps(at)) == 4


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_each_head_has_one_plain_name_on_the_trained_landing_page(lang):
    """The sections "What the trained reader learned" and "What each head does" name each
    head with the same words (ui/reader.py's `learned_names`), never two descriptions."""
    at = run_app({**TRAINED, "tokenizer": "char", "lang": lang})
    assert not at.exception
    bold = re.findall(r"\*\*(.+?)\*\*", "\n".join(m.value for m in at.markdown))
    for i in range(shipped_shape().num_heads):
        head = t("head_title", lang, i=i)
        named = {md_unescape(b) for b in bold if md_unescape(b).startswith(head)}
        assert len(named) == 1, (head, named)


EVERYDAY = "我們明天早上八點在學校門口集合。"  # one of the sidebar's everyday examples


@pytest.mark.parametrize("lang", ["zh-TW", "en"])
def test_an_everyday_sentence_names_the_taught_word_head_with_its_numbers(lang):
    """An everyday sentence in the trained reader, at the layer of the head fit.py taught
    its word: every character known, that head named as taught with the card's everyday
    same-word ratio beside the picture, and the one click back to the untrained module."""
    card = load_shipped().card
    layer, head = card["word_head"]
    at = run_app(
        {
            "weights": "trained",
            "text": EVERYDAY,
            "tokenizer": "char",
            "lang": lang,
            "layer": str(layer),
        }
    )
    assert not at.exception and not at.warning
    np.testing.assert_allclose(drawn(at), own_weights(EVERYDAY, layer), atol=EXACT)
    words = card["everyday"]["same_word"]
    ratio = words["observed"][layer][head] / words["shuffled"][layer][head]
    taught = t("learned_taught", lang, head=t("head_title", lang, i=head), value=ratio)
    shown = md_unescape(texts(at))
    assert taught in shown and ratio >= 2.0
    assert t("learned_intro", lang) in shown
    at.button(key="to_untrained").click().run()
    assert not at.exception and heatmaps(at)
    assert not catalog_line("trained_rows", lang).search(md_unescape(texts(at)))
