"""The Plotly config every chart of the app is drawn with: the toolbar in the interface's
language, no Plotly logo, and a PNG name that says what was drawn.

plotly.js translates its own strings (modebar tooltips, "Double-click to zoom back out",
notices) through `config.locale` and `config.locales` (plotly.js `src/lib/localize.js`:
the chart's own `locales` are looked up before globally registered ones), so no script
has to be registered in the page. The translations live in the one catalog,
data/i18n/plotly.toml: `en` is the string plotly.js looks up, `zh-TW` its translation
(from plotly.js lib/locales/zh-tw.js).

Besides Plotly's PNG camera, every chart gets a second download button for SVG (vector, for
slides and papers). A button's `click` is a JavaScript function, which JSON cannot carry, so
`svg_button` gives its plain description (tooltip, file name) and the chart component
(ui/charts.py) builds the button around `Plotly.downloadImage(gd, {format: "svg"})`.
"""

from __future__ import annotations

from attention_core.i18n import DEFAULT_LANG, LANGS, catalog

__all__ = ["PLOTLY_PREFIX", "SVG_BUTTON_KEY", "chart_config", "plotly_locale", "svg_button"]

PLOTLY_PREFIX = "plotly_"
SVG_BUTTON_KEY = "chart_download_svg"  # its tooltip in the catalog (data/i18n/lens.toml)
_DEFAULT_FILENAME = "attention-studio-chart"
_FORMAT_PREFIX = "plotly_format_"
# plotly.js format key → catalog key; lists are stored space-separated in the catalog
_FORMAT_LISTS = {
    "days": "plotly_format_days",
    "shortDays": "plotly_format_short_days",
    "months": "plotly_format_months",
    "shortMonths": "plotly_format_short_months",
}
_FORMAT_TEXTS = {"date": "plotly_format_date"}


def plotly_locale(lang: str) -> dict[str, object]:
    """plotly.js locale `{"dictionary": {English: translation}, "format": {...}}` for `lang`.

    Built from the catalog's plotly_* keys; an unknown language falls back to English."""
    cat = catalog()
    code = lang if lang in LANGS else DEFAULT_LANG
    dictionary = {
        texts[DEFAULT_LANG]: texts[code]
        for key, texts in cat.items()
        if key.startswith(PLOTLY_PREFIX) and not key.startswith(_FORMAT_PREFIX)
    }
    fmt: dict[str, object] = {name: cat[key][code].split() for name, key in _FORMAT_LISTS.items()}
    fmt.update({name: cat[key][code] for name, key in _FORMAT_TEXTS.items()})
    return {"dictionary": dictionary, "format": fmt}


def chart_config(lang: str, *, filename: str | None = None) -> dict[str, object]:
    """The `config` of st.plotly_chart for interface language `lang`.

    `locale` names the language for plotly.js and `locales` carries its strings, so the
    toolbar's tooltips and notices are in `lang`; `filename` (without extension) names
    the PNG the camera button downloads, at twice the screen resolution.
    """
    code = lang if lang in LANGS else DEFAULT_LANG
    config: dict[str, object] = {
        "displaylogo": False,
        "locale": code,
        "locales": {code: plotly_locale(code)},
    }
    if filename:
        config["toImageButtonOptions"] = {"filename": filename, "scale": 2}
    return config


def svg_button(lang: str, *, filename: str | None = None) -> dict[str, str]:
    """The SVG download button of a chart: `{"title": tooltip in lang, "filename": name}`
    (the file name without extension; the chart's PNG name when it has one)."""
    code = lang if lang in LANGS else DEFAULT_LANG
    return {"title": catalog()[SVG_BUTTON_KEY][code], "filename": filename or _DEFAULT_FILENAME}
