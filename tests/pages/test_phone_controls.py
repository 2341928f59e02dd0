"""Phones in class, in AppTest: on a phone the language and the sentence are in the
main area too (shown by CSS below 640 px), mirroring the sidebar's widgets; no ⋮ menu."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.support.apptest import run_app

ROOT = Path(__file__).resolve().parents[2]


def test_no_phone_controls_on_a_desktop():
    at = run_app({"text": "the cat sat", "lang": "en"})  # AppTest sends no User-Agent
    assert not at.exception
    assert not [w for w in at.text_area if w.key == "phone_text"]


def test_the_phone_controls_write_the_language_and_the_sentence_to_the_sidebar(monkeypatch):
    import ui.phone

    monkeypatch.setattr(ui.phone, "on_a_phone", lambda: True)
    at = run_app({"text": "the cat sat", "lang": "en"})
    assert not at.exception
    at.session_state["_sidebar_drawn"] = True  # the phone opened its sidebar
    at.run()
    phone_text = at.text_area(key="phone_text")
    assert phone_text.value == "the cat sat"  # starts from the sidebar's
    phone_text.set_value("中和有一個永和路").run()
    assert at.text_area(key="text").value == "中和有一個永和路"
    assert at.query_params["text"] in ("中和有一個永和路", ["中和有一個永和路"])
    at.radio(key="phone_lang").set_value("zh-TW").run()
    assert not at.exception
    assert at.session_state["lang"] == "zh-TW" and at.radio(key="lang").value == "zh-TW"
    assert at.text_area(key="phone_text").label == at.text_area(key="text").label
    at.text_area(key="text").set_value("the mat").run()  # the sidebar leads again
    assert at.text_area(key="phone_text").value == "the mat"
    assert at.radio(key="phone_lang").value == "zh-TW"


def test_a_phone_draws_the_sidebar_settings_once_it_opens_the_sidebar(monkeypatch):
    """ui/phone.py: a new phone's first paint has no settings widgets in its folded sidebar
    (they cost ~0.16 s); the settings still hold the link's values and drive the page; the
    run after the sidebar opens draws them with those values, and on every run after."""
    import ui.phone

    monkeypatch.setattr(ui.phone, "on_a_phone", lambda: True)
    view = {"text": "the cat sat", "lang": "en", "tokenizer": "word", "embed_dim": "8"}
    at = run_app({**view, "num_heads": "2"})
    assert not at.exception
    assert not [w for w in at.text_area if w.key == "text"]  # folded: not drawn
    assert not [w for w in at.number_input if w.key == "embed_dim"]
    assert at.session_state["embed_dim"] == 8 and at.session_state["num_heads"] == 2
    assert at.text_area(key="phone_text").value == "the cat sat"  # the main area has it
    assert at.query_params["embed_dim"] in ("8", ["8"])  # the link is kept
    at.text_area(key="phone_text").set_value("a dog ran").run()  # still works while folded
    assert at.session_state["text"] == "a dog ran" and not at.exception
    at.session_state["_sidebar_drawn"] = True  # what the sidebar's watcher sets on opening
    at.run()
    assert at.text_area(key="text").value == "a dog ran"
    assert at.number_input(key="embed_dim").value == 8
    at.number_input(key="embed_dim").set_value(16).run()
    assert at.session_state["embed_dim"] == 16 and at.number_input(key="embed_dim").value == 16
    at.text_area(key="phone_text").set_value("the mat").run()
    assert at.text_area(key="text").value == "the mat"  # drawn on every run from now on


def test_no_streamlit_menu_and_no_stop_button_in_front_of_a_class():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] == "minimal"  # no ⋮ menu: no English items
    from ui.presenter import _CHROME_CSS

    assert '[data-testid="stStatusWidget"] { display: none' in _CHROME_CSS
    # a table's toolbar: "Download as CSV", "Search", "Fullscreen", in English only
    assert '[data-testid="stElementToolbar"] { display: none' in _CHROME_CSS
