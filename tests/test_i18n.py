"""The catalog: every key in both languages, every key used by the code exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attention_core.i18n import LANGS, catalog, t

ROOT = Path(__file__).resolve().parent.parent
USE = re.compile(r"""\btr?\(\s*["']([a-zA-Z0-9_\-]+)["']""")


def test_every_entry_has_both_languages_and_zh_tw_is_chinese():
    cat = catalog()
    assert len(cat) > 40
    for key, texts in cat.items():
        assert set(texts) == set(LANGS), key
        assert all(texts[lang].strip() for lang in LANGS), key
        if re.search(r"[A-Za-z]{4,}", texts["en"]) and len(texts["en"]) > 12:
            assert texts["zh-TW"] != texts["en"], f"{key} is not translated"


def test_placeholders_match_between_languages():
    for key, texts in catalog().items():
        fields = [set(re.findall(r"\{(\w+)", texts[lang])) for lang in LANGS]
        assert fields[0] == fields[1], key


def test_every_key_the_code_uses_exists():
    used = set()
    for path in [ROOT / "app.py", *ROOT.glob("pages/*.py")]:
        used |= set(USE.findall(path.read_text(encoding="utf-8")))
    missing = used - set(catalog())
    assert not missing, f"keys used but not in assets/i18n: {sorted(missing)}"


def test_t_formats_and_falls_back():
    assert t("tokens_truncated", "en", total=900, limit=512).startswith("The text has 900")
    assert "900" in t("tokens_truncated", "zh-TW", total=900, limit=512)
    assert t("app_title", "fr") == t("app_title", "en")
    with pytest.raises(KeyError):
        t("no_such_key", "en")
