"""What every page shares: the language, the current settings, option widgets that keep
their values, safe text, and the sentence's analysis or a clear message.

Pages import from here (and from `ui.cache`, `ui.charts`, `ui.models`) so they read like a
description of the UI; the computing is in `attention_core`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from attention_core.i18n import LANGS
from attention_core.limits import MAX_INPUT_CHARS, MAX_TEXT_CHARS
from attention_core.reader.card import ReaderError
from attention_core.settings import KEYS, ModelSettings, Settings
from attention_core.tokenize import manual_without_separator
from ui.cache import cached_analysis, prepare_process
from ui.language import tr

if TYPE_CHECKING:  # torch-heavy modules load lazily, after the sidebar has painted
    from attention_core.pipeline import Analysis
    from attention_core.tokenize import Token


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&\"'=^%@;,?/])")
# Explicit bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): in a
# line of Markdown an unclosed U+202E would flip the text after it, chips of other tokens
# included ("Trojan Source"). Right-to-left letters themselves are kept.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def entry_guard() -> None:
    """Make sure app.py (sidebar, settings, navigation) runs. Call first in app.py and pages.

    The project has a `pages/` folder, so a fresh Streamlit server (and every AppTest
    run) starts in its legacy multipage mode, which executes pages/<page>.py directly
    when a link points at that page: no sidebar, no settings. st.navigation in app.py
    ends that mode, but only from the next run on. So: leave legacy mode and rerun now,
    before anything is drawn, so every run executes app.py the same way.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def md_escape(text: str) -> str:
    """User text made inert for st.markdown: every ASCII punctuation mark backslash-escaped
    (CommonMark allows it for all of them), so no HTML, link, LaTeX, emphasis or
    directive can form; newlines become spaces; bidi override controls are dropped."""
    return _MD_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", _BIDI_CONTROLS.sub("", text)))


def seeded(key: str, default: Any) -> Any:
    """The value widget `key` holds now, seeding it with `default` on first use.

    Pass the result to the widget as its own default too (`value=` / `index=`): a browser
    tab that sends a rerun before it has mounted the widget (a click during the first
    paint, a busy machine) then still gets the current value drawn, instead of the
    widget's built-in default, which its next rerun would send back (see app.py)."""
    state = st.session_state
    if key not in state:
        state[key] = default
    return state[key]


_NO_VALUE = object()
_INDEX_ARG = {  # how each option widget is told its initial selection
    "selectbox": "index",
    "radio": "index",
    "select_slider": "value",
    "segmented_control": "default",
    "pills": "default",
    "multiselect": "default",
}
_STARTS_AT_FIRST = ("selectbox", "radio", "select_slider")


def choose(
    widget: Callable[..., Any],
    label: str,
    options: Sequence[Any],
    *,
    key: str,
    format_func: Callable[[Any], object] = str,
    default: Any = _NO_VALUE,
    **kwargs: Any,
) -> Any:
    """An option widget (selectbox, radio, select_slider, segmented_control, pills,
    multiselect) whose value survives a change of its labels: a language switch, a new
    sentence.

    The browser sends an option widget's value back as the *label* it shows. After the
    labels change (English → 中文) a tab can still send the old label: on the next click,
    while a rerun is on its way, or from a tab slow to mount. Streamlit then hands back a
    label that is no option (selectbox, radio), the widget's default (select_slider), or
    nothing. So every option widget goes through here, which
    - maps a stale label back to its option, from the labels this widget drew before;
    - otherwise keeps the last value it held (or `default`, the first time);
    - draws the widget with that value as its own default (a tab that sends no state for
      it gets the right value drawn), and re-asserts it whenever the labels changed, so the
      browser replaces the old label at once instead of sending it back later;
    - computes the labels now, in this run's language: Streamlit (and AppTest) may call
      `format_func` outside the script run, where the session's language is not visible.

    `options` are plain values (str, int). Without `default` the widget starts as
    Streamlit would start it (the first option; nothing for segmented_control, pills and
    multiselect); `default=None` starts with nothing selected where the widget allows it.
    Returns the widget's value, like the widget itself.
    """
    state = st.session_state
    options = list(options)
    labels = [str(format_func(option)) for option in options]
    memo_key = f"_choice.{key}"
    memo: dict[str, Any] = state.get(memo_key, {})
    drawn = memo.get("drawn", {})  # label → option, of this widget's last two draws

    raw = state[key] if key in state else _NO_VALUE

    def resolve(item: Any) -> Any:
        if item in options:
            return item
        if isinstance(item, str) and drawn.get(item, _NO_VALUE) in options:
            return drawn[item]  # a label drawn earlier: another language, an older sentence
        return _NO_VALUE

    if widget.__name__ == "multiselect":  # a list of options; unknown items are dropped
        if isinstance(raw, list):
            value = [v for v in map(resolve, raw) if v is not _NO_VALUE]
        else:
            start = memo.get("value", default if isinstance(default, list) else [])
            value = [v for v in start if v in options]
    elif raw is None or resolve(raw) is not _NO_VALUE:
        value = None if raw is None else resolve(raw)
    elif memo.get("value", _NO_VALUE) in options:
        value = memo["value"]
    elif default is _NO_VALUE and widget.__name__ in _STARTS_AT_FIRST and options:
        value = options[0]
    else:
        value = default if default in options else None
    if value is None and widget.__name__ == "select_slider" and options:
        value = options[0]  # a slider always holds a value
    relabelled = memo.get("labels", labels) != labels
    if raw is not _NO_VALUE and (relabelled or value != raw or type(value) is not type(raw)):
        state[key] = value  # sent to the browser with its current label

    if widget.__name__ in ("selectbox", "multiselect"):  # else Streamlit's English one
        kwargs.setdefault("placeholder", tr("choose_placeholder"))
    arg = _INDEX_ARG[widget.__name__]
    initial = options.index(value) if arg == "index" and value is not None else value
    result = widget(
        label,
        options,
        key=key,
        format_func=lambda option: labels[options.index(option)] if option in options else "",
        **{arg: initial},
        **kwargs,
    )
    now = dict(zip(labels, options, strict=True))
    state[memo_key] = {
        "value": result,
        "labels": labels,
        "drawn": {**memo.get("now", {}), **now},
        "now": now,
    }
    return result


def preset(key: str, value: Any) -> None:
    """Make option widget `key` (drawn through `choose`, maybe on another page) start at
    `value`: a link that opens another page in a chosen view."""
    st.session_state[key] = value
    st.session_state[f"_choice.{key}"] = {"value": value}


SCALE_KEY = "color_scale"  # the colour-scale widget; also the URL parameter `scale`


def colour_scale_choice() -> str:
    """The colour scale of attention heatmaps (`figures.heads.SCALES`): a widget shared by
    the pages that draw heads, mirrored in the URL as `scale=` so a link keeps it."""
    from attention_core.figures.heads import DEFAULT_SCALE, SCALES

    state = st.session_state
    wanted = st.query_params.get("scale")
    if SCALE_KEY not in state and f"_choice.{SCALE_KEY}" not in state and wanted is not None:
        if wanted in SCALES:
            state[SCALE_KEY] = wanted
        else:
            fallback = tr(f"scale_{DEFAULT_SCALE}")
            st.warning(md_escape(tr("scale_url_bad", value=wanted, fallback=fallback)))
    value = choose(
        st.segmented_control,
        tr("scale_label"),
        SCALES,
        key=SCALE_KEY,
        default=DEFAULT_SCALE,
        format_func=lambda option: tr(f"scale_{option}"),
        help=tr("scale_help"),
        required=True,
    )
    value = value or DEFAULT_SCALE
    if st.query_params.get("scale") != value:
        st.query_params["scale"] = value
    return value


def colour_bar_title(scale: str, *, one_axis: bool = False) -> str:
    """The colour bar's title for `scale` (what `colour_scale_choice` returned). `one_axis`:
    a chart with one colour axis for all its panels (the model view), whose contrast runs
    to the largest value shown, not to each head's own."""
    if one_axis and scale == "contrast":
        return tr("scale_bar_contrast_all")
    return tr(f"scale_bar_{scale}")


def forget(*keys: str) -> None:
    """Drop what option widgets `keys` hold, so they start again from their defaults."""
    for key in keys:
        st.session_state.pop(key, None)
        st.session_state.pop(f"_choice.{key}", None)


def sidebar_settings() -> Settings:
    """The settings as the sidebar widgets (and the link) hold them now."""
    state = st.session_state
    defaults = Settings()
    values = {k: state.get(k, getattr(defaults, k)) for k in KEYS}
    return Settings(**values)


# app.py keeps here, at every whole run, the settings the page is being drawn with
DRAWN_SETTINGS = "_settings"


def rerun_if_settings_moved() -> None:
    """Run the whole page now if the sidebar's settings (the language among them) differ
    from the ones app.py last drew it with (`DRAWN_SETTINGS`).

    For a live fragment (`st.fragment(run_every=…)`), which may run on its own: a settings
    change can reach the server with the fragment's timed run instead of a run of its own
    (seen on a loaded machine: the teacher switched the language, the fragment redrew in the
    new one, the rest of the page stayed in the old one until the next click)."""
    drawn = st.session_state.get(DRAWN_SETTINGS)
    if drawn is not None and drawn != sidebar_settings():
        st.rerun()


def current_settings() -> Settings:
    """The settings the pages compute with: the sidebar's, with the trained checkpoint's
    fixed sizes and layer when the trained weights are chosen (`Settings.effective`)."""
    return sidebar_settings().effective  # type: ignore[return-value]


UNKNOWN_SHOWN = 12  # unknown units named in the warning; the count covers them all


def analysis_or_stop(
    settings: ModelSettings | None = None,
    *,
    with_trace: bool = False,
    divisor: float | None = None,
    min_tokens: int = 1,
) -> Analysis:
    """The current analysis, or a friendly message and `st.stop()` when there is none.

    Empty text, a text with no tokens, a text over MAX_INPUT_CHARS (refused before it is
    tokenized), and any failure end the page here with a message; truncation is reported
    and the shortened result returned.
    """
    settings = settings or current_settings()
    if not settings.text.strip():
        st.info(tr("empty_text"))
        st.stop()
    if len(settings.text) > MAX_INPUT_CHARS:
        st.error(tr("text_refused", n=len(settings.text), limit=MAX_INPUT_CHARS))
        st.stop()
    prepare_process()
    try:
        with st.spinner(tr("computing")):
            result = cached_analysis(settings, with_trace=with_trace, divisor=divisor)
    except ReaderError as error:  # missing or corrupted weights: say which file, and the fix
        st.error(tr("reader_unavailable", error=md_escape(str(error))))
        st.stop()
    except Exception as error:  # the page must show a message, never a traceback
        st.error(tr("error_generic", error=type(error).__name__))
        st.stop()
    if manual_without_separator(settings.text, settings.tokenizer):
        st.info(tr("manual_no_separator"))  # one token: the student most likely forgot "|"
    if len(result.tokens) < min_tokens:
        st.info(tr("no_tokens", tokenizer=tr(f"tokenizer_{settings.tokenizer}")))
        st.stop()
    if result.text_cut:
        st.warning(tr("text_cut", limit=MAX_TEXT_CHARS))
    if result.total_tokens > result.read_tokens:
        key = "reader_context_cut" if settings.trained else "tokens_truncated"
        st.warning(tr(key, total=result.total_tokens, limit=result.read_tokens))
    reader_unknown_warning(result.tokens, result.unknown)
    return result


def reader_unknown_warning(tokens: Sequence[Token], unknown: Sequence[int]) -> None:
    """How many of `tokens` the trained reader read as [UNK] (`unknown`: their positions),
    and which units (each once, in order); nothing when its vocabulary held them all."""
    if not unknown:
        return
    units = dict.fromkeys(tokens[i].text for i in unknown)  # in order, once
    more = "…" if len(units) > UNKNOWN_SHOWN else ""
    shown = tr("list_separator").join(list(units)[:UNKNOWN_SHOWN]) + more
    st.warning(md_escape(tr("reader_unknown", k=len(unknown), n=len(tokens), units=shown)))


LANG_NAMES = {"en": "English", "zh-TW": "繁體中文"}  # each language named in itself


def language_radio(key: str, **kwargs: Any) -> Any:
    """The interface-language choice (the sidebar's `lang`, the phone's mirror of it)."""
    return choose(
        st.radio,
        tr("lang_label"),
        LANGS,
        key=key,
        horizontal=True,
        format_func=LANG_NAMES.__getitem__,
        **kwargs,
    )


def token_chips(labels: list[str], *, highlight: int | None = None) -> None:
    """Tokens as `index:token` chips; user text is escaped, never rendered as markup."""
    chips = [
        f":orange-background[**▸ {i}:{md_escape(label)}**]"  # the picked one stands out
        if i == highlight
        else f":blue-background[{i}:{md_escape(label)}]"
        for i, label in enumerate(labels)
    ]
    st.markdown(" ".join(chips))


def highlighted_text(text: str, start: int, end: int) -> None:
    """The input text with one span highlighted (where a token came from)."""
    before, span, after = text[:start], text[start:end], text[end:]
    middle = f":orange-background[**{md_escape(span)}**]" if span else ""
    st.markdown(md_escape(before) + middle + md_escape(after))
