"""Issue 27, items 9 and 10 in AppTest: on a phone the language and the sentence are in the
main area too (shown by CSS below 640 px), mirroring the sidebar's widgets; no ⋮ menu."""

from __future__ import annotations

import tomllib
from pathlib import Path

from apptest_helpers import run_app

ROOT = Path(__file__).resolve().parent.parent


def test_no_phone_controls_on_a_desktop():
    at = run_app({"text": "the cat sat", "lang": "en"})  # AppTest sends no User-Agent
    assert not at.exception
    assert not [w for w in at.text_area if w.key == "phone_text"]


def test_the_phone_controls_write_the_language_and_the_sentence_to_the_sidebar(monkeypatch):
    import ui.presenter

    monkeypatch.setattr(ui.presenter, "on_a_phone", lambda: True)
    at = run_app({"text": "the cat sat", "lang": "en"})
    assert not at.exception
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


def test_no_streamlit_menu_and_no_stop_button_in_front_of_a_class():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] == "minimal"  # no ⋮ menu: no English items
    from ui.presenter import _CHROME_CSS

    assert '[data-testid="stStatusWidget"] { display: none' in _CHROME_CSS
