"""The one catalog of user-visible strings, in English and Traditional Chinese (zh-TW).

Strings live in data/i18n/*.toml, one file per area of the app, merged here into one
catalog (a key defined twice is an error). Every entry has both languages:

    [row_explainer]
    en = "Each row sums to 1: ..."
    zh-TW = "每一列總和為 1：..."

Placeholders use str.format syntax: t("tokens_truncated", "en", n=512).

Besides the two languages an entry may carry `avoid`, a list of zh-TW variants that the
catalog must not use for that term (data/i18n/glossary.toml; see `avoided`). Any other
field is an error, so a misspelt language ("zh-tw") cannot slip through.
"""

from __future__ import annotations

import csv
import io
import tomllib
from functools import lru_cache
from pathlib import Path

from attention_core.resources import DATA_DIR

__all__ = [
    "DEFAULT_LANG",
    "GLOSSARY_PREFIX",
    "LANGS",
    "avoided",
    "catalog",
    "glossary",
    "glossary_csv",
    "glossary_rows",
    "t",
]

LANGS = ("en", "zh-TW")
DEFAULT_LANG = "en"
I18N_DIR = DATA_DIR / "i18n"
GLOSSARY_PREFIX = "term_"
_EXTRA_FIELDS = ("avoid",)  # fields an entry may have besides LANGS


@lru_cache(maxsize=1)
def _load(folder: Path) -> tuple[dict[str, dict[str, str]], dict[str, tuple[str, ...]]]:
    """(key → {lang → text}, key → avoided variants), merged from every TOML file."""
    merged: dict[str, dict[str, str]] = {}
    avoid: dict[str, tuple[str, ...]] = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as f:
            entries = tomllib.load(f)
        for key, texts in entries.items():
            if key in merged:
                raise ValueError(f"i18n key {key!r} is defined twice (again in {path.name})")
            missing = [lang for lang in LANGS if not isinstance(texts.get(lang), str)]
            if missing:
                raise ValueError(f"i18n key {key!r} in {path.name} lacks {missing}")
            unknown = sorted(set(texts) - {*LANGS, *_EXTRA_FIELDS})
            if unknown:
                raise ValueError(
                    f"i18n key {key!r} in {path.name} has unknown fields {unknown}; "
                    f"allowed: {[*LANGS, *_EXTRA_FIELDS]}"
                )
            variants = texts.get("avoid", [])
            if not isinstance(variants, list) or not all(
                isinstance(v, str) and v for v in variants
            ):
                raise ValueError(f"i18n key {key!r} in {path.name}: avoid must be a list of text")
            merged[key] = {lang: texts[lang] for lang in LANGS}
            if variants:
                avoid[key] = tuple(variants)
    return merged, avoid


def catalog(folder: Path = I18N_DIR) -> dict[str, dict[str, str]]:
    """key → {lang → text}, merged from every TOML file in `folder`."""
    return _load(folder)[0]


def avoided(folder: Path = I18N_DIR) -> dict[str, tuple[str, ...]]:
    """Glossary key → the zh-TW variants of that term the catalog must not use."""
    return _load(folder)[1]


def glossary(folder: Path = I18N_DIR) -> list[str]:
    """The glossary's term keys (`term_<name>`, each with a `term_<name>_def`), in order."""
    keys = catalog(folder)
    return [k for k in keys if k.startswith(GLOSSARY_PREFIX) and f"{k}_def" in keys]


def glossary_rows(lang: str = DEFAULT_LANG) -> list[tuple[str, str, str]]:
    """(English term, Chinese term, definition in `lang`) for every glossary term."""
    return [(t(key, "en"), t(key, "zh-TW"), t(f"{key}_def", lang)) for key in glossary()]


def glossary_csv() -> str:
    """The glossary as CSV for slides and handouts: both terms and both definitions."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["en", "zh-TW", "definition_en", "definition_zh-TW"])
    for key in glossary():
        writer.writerow(
            [t(key, "en"), t(key, "zh-TW"), t(f"{key}_def", "en"), t(f"{key}_def", "zh-TW")]
        )
    return out.getvalue()


def t(key: str, lang: str = DEFAULT_LANG, /, **params: object) -> str:
    """The text of `key` in `lang` (falls back to English), formatted with `params`."""
    texts = catalog()[key]
    text = texts.get(lang) or texts[DEFAULT_LANG]
    return text.format(**params) if params else text
