"""The one catalog of user-visible strings, in English and Traditional Chinese (zh-TW).

Strings live in assets/i18n/*.toml, one file per area of the app, merged here into one
catalog (a key defined twice is an error). Every entry has both languages:

    [row_explainer]
    en = "Each row sums to 1: ..."
    zh-TW = "每一列總和為 1：..."

Placeholders use str.format syntax: t("tokens_truncated", "en", n=512).
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from attention_core.resources import ASSETS_DIR

__all__ = ["DEFAULT_LANG", "LANGS", "catalog", "t"]

LANGS = ("en", "zh-TW")
DEFAULT_LANG = "en"
I18N_DIR = ASSETS_DIR / "i18n"


@lru_cache(maxsize=1)
def catalog(folder: Path = I18N_DIR) -> dict[str, dict[str, str]]:
    """key → {lang → text}, merged from every TOML file in `folder`."""
    merged: dict[str, dict[str, str]] = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as f:
            entries = tomllib.load(f)
        for key, texts in entries.items():
            if key in merged:
                raise ValueError(f"i18n key {key!r} is defined twice (again in {path.name})")
            missing = [lang for lang in LANGS if not isinstance(texts.get(lang), str)]
            if missing:
                raise ValueError(f"i18n key {key!r} in {path.name} lacks {missing}")
            merged[key] = {lang: texts[lang] for lang in LANGS}
    return merged


def t(key: str, lang: str = DEFAULT_LANG, /, **params: object) -> str:
    """The text of `key` in `lang` (falls back to English), formatted with `params`."""
    texts = catalog()[key]
    text = texts.get(lang) or texts[DEFAULT_LANG]
    return text.format(**params) if params else text
