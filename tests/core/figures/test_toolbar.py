"""The chart config: Plotly's toolbar speaks the interface language, built from the catalog."""

from __future__ import annotations

import json
import re

import pytest

from attention_core.figures.toolbar import PLOTLY_PREFIX, chart_config, plotly_locale
from attention_core.i18n import LANGS, catalog

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# The modebar tooltips of a Streamlit heatmap (plotly.js 4 button titles), and notices
TOOLBAR = [
    "Download plot as a PNG",
    "Zoom",
    "Pan",
    "Zoom in",
    "Zoom out",
    "Autoscale",
    "Reset axes",
    "Box Select",
    "Lasso Select",
    "Toggle Spike Lines",
    "Show closest data on hover",
    "Compare data on hover",
    "Produced with Plotly.js",
    "Double-click to zoom back out",
    "Preparing image - this may take a few seconds",
    "Image download succeeded",
]


def test_chinese_config_translates_the_toolbar():
    config = chart_config("zh-TW")
    assert config["displaylogo"] is False
    assert config["locale"] == "zh-TW"
    assert set(config["locales"]) == {"zh-TW"}
    dictionary = config["locales"]["zh-TW"]["dictionary"]
    for english in TOOLBAR:
        assert english in dictionary, english
        assert CJK.search(dictionary[english]), (english, dictionary[english])
    assert dictionary["Download plot as a PNG"] == "下載圖表為 PNG 圖檔"
    assert dictionary["Zoom"] == "縮放"


def test_every_dictionary_key_is_the_english_plotly_string():
    dictionary = plotly_locale("zh-TW")["dictionary"]
    english = {
        texts["en"]
        for key, texts in catalog().items()
        if key.startswith(PLOTLY_PREFIX) and not key.startswith("plotly_format_")
    }
    assert set(dictionary) == english
    assert len(dictionary) > 60
    for key, value in dictionary.items():
        assert not CJK.search(key), key
        assert re.search(r"[A-Za-z]", key), key
        assert value.strip(), key


def test_chinese_values_are_chinese_with_full_width_punctuation():
    for english, chinese in plotly_locale("zh-TW")["dictionary"].items():
        if english in ("kde:",):  # a symbol, the same in every language
            continue
        assert CJK.search(chinese), (english, chinese)
        assert not re.search(r"[\u3400-\u9fff][:,!?]|[:,!?][\u3400-\u9fff]", chinese), chinese


def test_english_config_has_no_chinese():
    config = chart_config("en", filename="attention-heads")
    assert config["locale"] == "en"
    text = json.dumps(config, ensure_ascii=False)
    assert not CJK.search(text)
    dictionary = config["locales"]["en"]["dictionary"]
    assert all(key == value for key, value in dictionary.items())


def test_date_format_is_localised():
    zh = plotly_locale("zh-TW")["format"]
    en = plotly_locale("en")["format"]
    for name, size in (("days", 7), ("shortDays", 7), ("months", 12), ("shortMonths", 12)):
        assert len(zh[name]) == len(en[name]) == size, name
        assert all(CJK.search(day) for day in zh[name]), name
    assert en["months"][0] == "January" and zh["months"][0] == "一月"
    assert zh["date"] == "%Y-%m-%d"


@pytest.mark.parametrize("lang", LANGS)
def test_filename_names_the_png_at_twice_the_resolution(lang):
    assert "toImageButtonOptions" not in chart_config(lang)
    config = chart_config(lang, filename="attention-heads")
    assert config["toImageButtonOptions"] == {"filename": "attention-heads", "scale": 2}


def test_unknown_language_falls_back_to_english():
    assert chart_config("fr") == chart_config("en")


def test_config_is_json_and_fresh_each_call():
    first = chart_config("zh-TW")
    first["locales"]["zh-TW"]["dictionary"]["Zoom"] = "changed"
    assert chart_config("zh-TW")["locales"]["zh-TW"]["dictionary"]["Zoom"] == "縮放"
    assert json.loads(json.dumps(chart_config("zh-TW"))) == chart_config("zh-TW")
