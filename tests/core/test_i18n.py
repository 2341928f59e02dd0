"""The catalog: every key in both languages, every key used by the code exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from attention_core.i18n import LANGS, avoided, catalog, glossary, t

ROOT = Path(__file__).resolve().parents[2]
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
    assert not missing, f"keys used but not in data/i18n: {sorted(missing)}"


def test_t_formats_and_falls_back():
    assert t("tokens_truncated", "en", total=900, limit=512).startswith("The text has 900")
    assert "900" in t("tokens_truncated", "zh-TW", total=900, limit=512)
    assert t("app_title", "fr") == t("app_title", "en")
    with pytest.raises(KeyError):
        t("no_such_key", "en")


# --- the glossary, and a zh-TW catalog consistent with it ------------------------------------
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
REQUIRED_TERMS = {
    "term_token",
    "term_tokenizer",
    "term_query",
    "term_key",
    "term_value",
    "term_head",
    "term_attention_weight",
    "term_softmax",
    "term_embedding",
    "term_scaled_dot_product",
    "term_causal_mask",
    "term_positional_encoding",
    "term_pretrained",
    "term_layer",
    "term_row",
    "term_column",
}
# Entries whose English names a term in another sense, so their Chinese rightly lacks it:
# (term, key). Keep this short; a new entry usually means the zh-TW text should change.
TERM_EXCEPTIONS = {("term_score", "quiz_score")}  # the quiz's points: 得分


def _zh_texts() -> dict[str, str]:
    """Every zh-TW text of the app (Plotly's own toolbar strings excepted), placeholders out."""
    return {
        key: PLACEHOLDER.sub(" ", texts["zh-TW"])
        for key, texts in catalog().items()
        if not key.startswith("plotly_")
    }


def _variant_pattern(variant: str) -> re.Pattern[str]:
    """An ASCII variant matches as a whole word (plural too); a Chinese one anywhere."""
    if variant.isascii():
        return re.compile(rf"(?<![A-Za-z_]){re.escape(variant)}s?(?![A-Za-z_])", re.IGNORECASE)
    return re.compile(re.escape(variant))


def test_glossary_has_the_field_terms_each_with_a_definition():
    cat = catalog()
    terms = glossary()
    assert REQUIRED_TERMS <= set(terms)
    assert len(terms) >= 30
    for key in terms:
        zh_term, zh_def = cat[key]["zh-TW"], cat[f"{key}_def"]["zh-TW"]
        assert re.search(f"[{HAN}]", zh_term) or zh_term == cat[key]["en"], key
        assert re.search(f"[{HAN}]", zh_def), key
        assert not re.search(f"[{HAN}]", cat[key]["en"] + cat[f"{key}_def"]["en"]), key
        assert key in avoided(), f"{key} lists no variants to avoid"
        assert zh_term not in avoided()[key], key
    # one Chinese word per term: no two terms share a translation
    zh = [cat[key]["zh-TW"] for key in terms]
    assert len(zh) == len(set(zh))


def test_zh_tw_catalog_never_uses_an_avoided_variant():
    found = []
    for term, variants in avoided().items():
        for variant in variants:
            pattern = _variant_pattern(variant)
            for key, text in _zh_texts().items():
                if not key.startswith("term_") and pattern.search(text):
                    found.append(f"{key}: {variant!r} (say {t(term, 'zh-TW')!r})")
    assert not found, "zh-TW text uses avoided variants:\n" + "\n".join(found)


def test_zh_tw_catalog_uses_the_glossary_term_where_english_does():
    cat = catalog()
    missing = []
    for term in glossary():
        english = _variant_pattern(cat[term]["en"])
        chinese = cat[term]["zh-TW"]
        for key, texts in cat.items():
            if key.startswith(("plotly_", "term_")) or (term, key) in TERM_EXCEPTIONS:
                continue
            zh = texts["zh-TW"].lower() if chinese.isascii() else texts["zh-TW"]
            if english.search(PLACEHOLDER.sub(" ", texts["en"])) and chinese not in zh:
                missing.append(f"{key}: English says {cat[term]['en']!r}, no {chinese!r}")
    assert not missing, "zh-TW text lacks the glossary term:\n" + "\n".join(missing)


def test_zh_tw_punctuation_is_full_width_next_to_chinese():
    bad = re.compile(f'[{HAN}][:,;()?!."]|[:,;()?!."][{HAN}]')
    found = [
        f"{key}: …{m.group()}…" for key, text in _zh_texts().items() for m in bad.finditer(text)
    ]
    use = "：，；（）？！。「」"
    assert not found, f"ASCII punctuation beside Chinese (use {use}):\n" + "\n".join(found)


def test_catalog_rejects_unknown_fields_and_bad_avoid_lists(tmp_path):
    (tmp_path / "a.toml").write_text('[k]\nen = "a"\nzh-TW = "甲"\nzh-tw = "乙"\n', "utf-8")
    with pytest.raises(ValueError, match="unknown fields"):
        catalog(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.toml").write_text('[k]\nen = "a"\nzh-TW = "甲"\navoid = "乙"\n', "utf-8")
    with pytest.raises(ValueError, match="avoid must be a list"):
        catalog(other)


def _error_reasons(module: str, error: str) -> set[str]:
    """The `reason` literals `module` (a file, or every file of a package) raises `error`
    with (its second positional argument)."""
    path = ROOT / module
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    trees = [ast.parse(f.read_text(encoding="utf-8")) for f in files]
    return {
        node.args[1].value
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == error
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
    }


@pytest.mark.parametrize(
    ("module", "error", "prefix"),
    [
        ("attention_core/pretrained", "ModelLoadError", "pretrained_error_"),
        ("attention_core/train", "SettingError", "train_error_"),
    ],
)
def test_every_library_error_reason_has_words_in_the_catalog(module, error, prefix):
    reasons = _error_reasons(module, error)
    assert len(reasons) >= 4
    missing = {r for r in reasons if prefix + r not in catalog()}
    assert not missing, f"{module} raises {error} reasons without catalog text: {missing}"
