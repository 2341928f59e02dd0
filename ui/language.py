"""The interface language: which one the sidebar chose (`lang`), and a catalog string in it
(`tr`). A leaf module (no other ui module), so that everything that speaks, the charts'
toolbar included, can import it; pages take both from `ui.common` as well.
"""

from __future__ import annotations

import streamlit as st

from attention_core.i18n import DEFAULT_LANG, t

__all__ = ["lang", "tr"]


def lang() -> str:
    """The interface language chosen in the sidebar."""
    return st.session_state.get("lang", DEFAULT_LANG)


def tr(key: str, /, **params: object) -> str:
    """A catalog string in the current language."""
    return t(key, lang(), **params)
