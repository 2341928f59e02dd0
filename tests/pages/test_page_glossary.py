"""The glossary page: every glossary term in a table, in the interface's language, and the
same terms as a CSV for slides."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attention_core.i18n import glossary, glossary_csv, t

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "glossary.py")


def open_glossary(lang: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()  # leaves Streamlit's legacy pages/ mode and reruns (ui.common.entry_guard)
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_the_table_lists_every_term_with_its_definition_in_the_interface_language(lang):
    at = open_glossary(lang)
    assert at.title[0].value == t("glossary_title", lang)
    (table,) = at.table
    frame = table.value
    assert list(frame.columns) == [
        t("glossary_col_en", lang),
        t("glossary_col_zh", lang),
        t("glossary_col_def", lang),
    ]
    terms = glossary()
    assert len(frame) == len(terms)
    assert list(frame.iloc[:, 0]) == [t(key, "en") for key in terms]
    assert list(frame.iloc[:, 1]) == [t(key, "zh-TW") for key in terms]
    assert list(frame.iloc[:, 2]) == [t(f"{key}_def", lang) for key in terms]
    row = list(frame.iloc[:, 0]).index("token")
    assert frame.iloc[row, 1] == "詞元"


def test_the_csv_has_both_languages_and_both_definitions():
    rows = list(csv.DictReader(io.StringIO(glossary_csv())))
    assert len(rows) == len(glossary())
    token = next(row for row in rows if row["en"] == "tokenizer")
    assert token["zh-TW"] == "斷詞器"
    assert token["definition_en"] == t("term_tokenizer_def", "en")
    assert token["definition_zh-TW"] == t("term_tokenizer_def", "zh-TW")
