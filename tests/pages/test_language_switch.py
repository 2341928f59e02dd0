"""Option widgets keep their values when their labels change (ui.common.choose).

The browser sends an option widget's value back as the label it shows. After a language
switch a tab can still send the old language's label; before choose() that crashed
app.py on the next click (ValueError: tuple.index(x): x not in tuple). These tests send
exactly what such a tab sends: the widget state of the previous language's label.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Radio, Selectbox

from attention_core.i18n import t
from attention_core.settings import TOKENIZERS
from tests.support.apptest import APP, TIMEOUT, texts


def _app(params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(params or {})
    at.run()
    assert not at.exception
    return at


@contextmanager
def stale_label(
    monkeypatch: pytest.MonkeyPatch, kind: type[Selectbox] | type[Radio], key: str, label: str
) -> Iterator[None]:
    """While inside, widget `key` sends `label` as its value, like a tab that still shows it."""
    original = kind._widget_state

    def state(self: Selectbox | Radio):
        ws = original.fget(self)
        if self.key == key:
            ws.string_value = label
        return ws

    with monkeypatch.context() as m:
        m.setattr(kind, "_widget_state", property(state))
        yield


def test_switching_language_keeps_every_sidebar_setting_and_reruns() -> None:
    at = _app({"tokenizer": "char", "attention": "single", "embed_dim": "12", "num_heads": "3"})
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception
    at.text_area(key="text").input("中和有一個永和路，真的").run()
    assert not at.exception
    state = at.session_state
    assert (state["tokenizer"], state["attention"], state["embed_dim"]) == ("char", "single", 12)
    assert at.selectbox(key="tokenizer").options == [
        t(f"tokenizer_{mode}", "zh-TW") for mode in TOKENIZERS
    ]
    at.radio(key="lang").set_value("en").run()
    at.selectbox(key="tokenizer").select("word").run()
    assert not at.exception and at.session_state["tokenizer"] == "word"
    assert at.query_params["tokenizer"] == "word" and at.query_params["lang"] == "en"


@pytest.mark.parametrize(
    "kind, key, option", [(Selectbox, "tokenizer", "char"), (Radio, "attention", "single")]
)
def test_a_stale_label_from_the_other_language_means_its_option(
    monkeypatch: pytest.MonkeyPatch, kind: type[Selectbox] | type[Radio], key: str, option: str
) -> None:
    """A tab still in English picks an option after the switch: the pick counts."""
    at = _app()
    at.radio(key="lang").set_value("zh-TW").run()
    english = t(f"{key}_{option}", "en")
    with stale_label(monkeypatch, kind, key, english):
        at.text_area(key="text").input("the cat sat").run()
    assert not at.exception, at.exception
    assert at.session_state[key] == option
    assert at.query_params[key] == option
    at.text_area(key="text").input("the cat sat down").run()  # the next click is fine too
    assert not at.exception and at.session_state[key] == option


def test_an_unknown_label_keeps_the_last_value(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app({"tokenizer": "jieba"})
    with stale_label(monkeypatch, Selectbox, "tokenizer", "no such label"):
        at.text_area(key="text").input("中和").run()
    assert not at.exception and at.session_state["tokenizer"] == "jieba"


def test_page_widgets_keep_their_values_across_a_language_switch() -> None:
    at = _app({"text": "the cat sat on the mat", "tokenizer": "word"})
    at.switch_page("pages/compare.py")
    at.run()
    at.selectbox(key="compare_metric").select("max_weight").run()
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception
    assert at.selectbox(key="compare_metric").value == "max_weight"
    assert at.selectbox(key="compare_metric").options[1] == t("compare_stat_max_weight", "zh-TW")
    at.radio(key="lang").set_value("en").run()
    assert not at.exception and at.selectbox(key="compare_metric").value == "max_weight"


def test_zh_tw_session_reruns_on_every_page() -> None:
    """What the page tests used to work around: a zh-TW AppTest could not run twice."""
    at = _app({"lang": "zh-TW", "text": "中和有一個永和路"})
    for page in ("heatmaps", "compare", "steps", "scaling", "masks", "positions", "quiz"):
        at.switch_page(f"pages/{page}.py")
        at.run()
        at.text_area(key="text").input(f"中和有一個永和路 {page}").run()
        assert not at.exception, (page, at.exception)
        assert "Traceback" not in texts(at)
