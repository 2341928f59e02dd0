"""Glossary: the field's terms in English and Traditional Chinese, with short definitions.

The terms are the catalog's glossary (data/i18n/glossary.toml), the same words the
zh-TW interface uses everywhere (tests/core/test_i18n.py checks it), so teachers can put them on
their slides and students find them on screen.
"""

from __future__ import annotations

import streamlit as st

from attention_core.i18n import glossary_csv, glossary_rows
from ui.common import entry_guard
from ui.language import lang, tr

entry_guard()

st.title(tr("glossary_title"))
st.markdown(tr("glossary_intro"))
english, chinese, definitions = zip(*glossary_rows(lang()), strict=True)
st.table(
    {
        tr("glossary_col_en"): english,
        tr("glossary_col_zh"): chinese,
        tr("glossary_col_def"): definitions,
    },
    hide_index=True,
)
st.download_button(
    tr("glossary_download"),
    glossary_csv().encode("utf-8-sig"),  # with a BOM, so Excel reads the Chinese as UTF-8
    file_name=f"{tr('glossary_file')}.csv",
    mime="text/csv",
    key="glossary_download",
    help=tr("glossary_download_help"),
)
