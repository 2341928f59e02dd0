"""Hostile and odd text, in AppTest: a classroom opens one link and some type nonsense.

Nothing a student types or puts in the link's text may raise, show a traceback, render
markup, or make the app produce an unbounded amount of work. Each case asserts the page
stays healthy (no exception element, no error box, no unescaped `<` in any markdown), gives
the message that is due (empty text, no tokens, cut text, truncated tokens), and shows the
same tokens as the library computes for that text (the reference is
`attention_core.tokenize`, the wiring under test is the page). Markup in the text stays
literal in the chips, the highlight and every chart.

The other URL values, resource bounds and downloads: test_hostile_urls.py.
"""

from __future__ import annotations

import html
import re

import pytest

from attention_core.figures.layout import short_label
from attention_core.i18n import t
from attention_core.limits import MAX_LONG_TOKENS, MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.pipeline import token_labels
from attention_core.tokenize import TOKENIZER_MODES, tokenize
from tests.support.apptest import (
    assert_drawn_literally,
    decode,
    drawn_charts,
    drawn_strings,
    heatmaps,
    long_map,
    run_app,
    shown_labels,
)
from tests.support.availability import require_minilm
from tests.support.hostile import (
    ACTIVE,
    MARKUP,
    SMALL,
    TEXTS,
    assert_healthy,
    infos,
    markdown_values,
    unescaped,
    warnings,
)
from tests.support.teaching import charts, open_page
from ui.common import md_escape


# --- helpers -------------------------------------------------------------------------------
def chips_markdown(at) -> str:
    return next(v for v in markdown_values(at) if "-background[" in v)


def chip_payload(chips: str) -> str:
    """The token chips' contents, without the app's own `:blue-background[i:...]` syntax.

    A chip ends at its first unescaped `]`: if user text could close it early, the rest
    would be left here with unescaped characters, and the caller's check fails.
    """
    return re.sub(r":(?:blue|orange)-background\[\d+:((?:\\.|[^\\\]])*)\]", r"\1", chips)


@pytest.fixture(scope="module")
def session_for():
    """One app session per tokenizer mode; each test types its text into it (a rerun)."""
    sessions = {}

    def get(mode: str):
        if mode not in sessions:
            sessions[mode] = run_app({"tokenizer": mode, **SMALL})
        return sessions[mode]

    return get


# --- 1. typed text, in every tokenizer mode ---------------------------------------------------
@pytest.mark.parametrize("name", list(TEXTS))
@pytest.mark.parametrize("mode", TOKENIZER_MODES)
def test_typed_text_gives_the_tokens_or_the_due_message(session_for, mode, name):
    text = TEXTS[name]
    at = session_for(mode)
    at.session_state["text"] = text  # what typing into the sidebar's text area does
    at.run()
    assert_healthy(at)
    all_tokens = tokenize(text[:MAX_TEXT_CHARS], mode)
    shown = all_tokens[:MAX_LONG_TOKENS]
    if not text.strip():
        assert infos(at) == [t("empty_text", "en")] and not drawn_charts(at)
    elif not shown:
        no_tokens = t("no_tokens", "en", tokenizer=t(f"tokenizer_{mode}", "en"))
        assert infos(at) == [no_tokens] and not drawn_charts(at)
    elif len(shown) > MAX_TOKENS:  # the long map: every token up to 4 096
        drawn = long_map(at)
        assert drawn["labels"] == [tok.label for tok in shown]
        # axis labels: cut to a few characters (hover names the token in full), escaped
        ticks = [short_label(x) for x in token_labels(shown)]
        assert drawn["ticks"] == [html.escape(x, quote=False) for x in ticks]
    else:
        labels = token_labels(shown)
        traces = heatmaps(at)
        assert shown_labels(traces[0], "x") == shown_labels(traces[0], "y") == labels
        assert decode(traces[0]["z"]).shape == (len(shown), len(shown))
        chips = chips_markdown(at)
        assert all(md_escape(tok.label) in chips for tok in shown)
        assert not unescaped(chip_payload(chips), ACTIVE)
    chars_cut = len(text) > MAX_TEXT_CHARS
    tokens_cut = len(all_tokens) > MAX_LONG_TOKENS
    cut = t("text_cut", "en", limit=MAX_TEXT_CHARS)
    assert (cut in warnings(at)) == (chars_cut and not tokens_cut)  # else said in one sentence
    count = (
        t("long_count_chars", "en", chars=MAX_TEXT_CHARS, total=len(all_tokens))
        if chars_cut
        else t("long_count", "en", total=len(all_tokens))
    )
    truncated = t("long_tokens_cut", "en", count=count, limit=MAX_LONG_TOKENS)
    assert (truncated in warnings(at)) == tokens_cut


def test_long_text_finishes_in_zh_tw_naming_both_bounds():
    """Cut by its characters, then by its tokens: one sentence names both, and counts the
    tokens of the characters read (not of the whole text)."""
    at = run_app({"text": TEXTS["long_100k"], "tokenizer": "char", "lang": "zh-TW", **SMALL})
    assert_healthy(at)
    total = len(tokenize(TEXTS["long_100k"][:MAX_TEXT_CHARS], "char"))
    count = t("long_count_chars", "zh-TW", chars=MAX_TEXT_CHARS, total=total)
    assert warnings(at) == [t("long_tokens_cut", "zh-TW", count=count, limit=MAX_LONG_TOKENS)]


def test_a_bidi_override_cannot_flip_the_other_tokens_chips():
    # U+202E (right-to-left override) never closed, U+2067 (RLI) isolate: dropped from the
    # page's Markdown; Hebrew letters (right-to-left by nature) stay
    text = "abc | \u202eevil | \u2067x\u2069 | שלום | def"
    at = run_app({"text": text, "tokenizer": "manual", **SMALL})
    assert_healthy(at)
    chips = chips_markdown(at)
    assert not set(chips) & {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2067"}
    for i, token in enumerate(("abc", "evil", "x", "שלום", "def")):
        assert f"[{i}:{md_escape(token)}]" in chips
    # the chart keeps the tokens as they are: each tick label is its own SVG text
    assert shown_labels(heatmaps(at)[0])[1] == "1:\u202eevil"


# --- 1b. markup in the text: literal everywhere, never markup ---------------------------------
def test_markup_as_manual_tokens_is_shown_literally():
    at = run_app({"text": " | ".join(MARKUP), "tokenizer": "manual", **SMALL})
    assert_healthy(at)
    assert shown_labels(heatmaps(at)[0]) == [f"{i}:{m}" for i, m in enumerate(MARKUP)]
    chips = chips_markdown(at)
    assert all(md_escape(m) in chips for m in MARKUP)
    assert not unescaped(chip_payload(chips), ACTIVE)
    # The per-head summary names each head's top token: escaped too.
    summary = [
        line for text in markdown_values(at) for line in text.split("\n") if "column sum" in line
    ]
    assert len(summary) == 2
    assert all(not unescaped(line, ACTIVE) for line in summary)


@pytest.mark.parametrize("markup", MARKUP)
def test_markup_in_the_link_text_is_inert(markup):
    at = run_app({"text": f"hi {markup} 中和", **SMALL})
    assert_healthy(at)
    shown = tokenize(f"hi {markup} 中和", "auto")
    assert shown_labels(heatmaps(at)[0]) == token_labels(shown)
    assert not unescaped(chip_payload(chips_markdown(at)), ACTIVE)


# Plotly reads its own pseudo-HTML in chart text (<b>, <br>, <a href>, entities).
PLOTLY_MARKUP = ["<b>b</b>", "x<br>y", "a&amp;b", "<a href='javascript:alert(1)'>x</a>"]
# every page whose charts can show the sentence's tokens (train draws its own task's tokens)
TOKEN_PAGES = ["heatmaps", "steps", "quiz", "masks", "positions", "compare", "scaling"]


@pytest.mark.parametrize("page", [*TOKEN_PAGES, "handmade", "pretrained"])
def test_markup_tokens_are_drawn_literally_in_every_chart(page):
    """Every chart of every page: the tokens reach it, and only escaped (figures/text.py)."""
    if page == "pretrained":
        require_minilm()  # skips locally, fails under CI without the packaged model
    text = " | ".join(PLOTLY_MARKUP)
    state = {"handmade_tokens": text} if page == "handmade" else None
    if page == "quiz":  # questions about this sentence's own (untrained) heads only
        state = {"quiz_sources": ["untrained"]}
    at = open_page(page, {"text": text, "tokenizer": "manual", **SMALL}, state)
    if page == "quiz":  # the matrix is shown once the guess is in
        at.radio(key="quiz_guess").set_value(at.session_state["quiz_round"].answer)
        at.button(key="quiz_submit").click().run()
    assert_healthy(at)
    specs = charts(at)
    assert specs, "the page draws charts"
    for key, spec in specs.items():
        try:
            assert_drawn_literally(spec)
        except AssertionError as error:
            raise AssertionError(f"chart {key}: {error}") from None
    shown = [html.unescape(s) for spec in specs.values() for s in drawn_strings(spec)]
    # the pretrained model's own tokenizer cuts "<b>" into pieces: "<" still gets through
    reached = "<" if page == "pretrained" else "<b>b</b>"
    assert any(reached in s for s in shown), "the tokens reach the charts"


def test_highlighting_a_markup_token_keeps_it_inert_and_a_shorter_text_resets_it():
    text = " | ".join(MARKUP)
    at = run_app({"text": text, "tokenizer": "manual", **SMALL})
    last = len(MARKUP) - 1
    at.selectbox(key="highlight_token").set_value(last).run()
    assert_healthy(at)
    highlighted = [v for v in markdown_values(at) if ":orange-background[" in v and "|" in v]
    assert highlighted, "the source text with the picked token highlighted"
    assert f":orange-background[**{md_escape(MARKUP[last])}**]" in highlighted[0]
    # the only markup: the highlight and its bold
    ours = highlighted[0].replace(":orange-background[**", "", 1).replace("**]", "]", 1)
    assert not unescaped(ours, "<>[*$`")
    # The picked index no longer exists after the student shortens the sentence.
    at.session_state["text"] = "only | two"
    at.run()
    assert_healthy(at)
    assert heatmaps(at)[0]["x"] == ["0:only", "1:two"]


# --- 1c. the Explain page: odd sentences, markup and targets end in a message ----------------
@pytest.fixture(scope="module")
def tiny_llama_folder(tmp_path_factory) -> str:
    """A tiny causal model written to a folder, as the Pretrained page would load it."""
    from attention_core.pretrained import build_tiny_model

    return str(build_tiny_model("llama", tmp_path_factory.mktemp("llama")))


def explain_with(text: str, lang: str = "en", model: str = "reader", **state):
    at = open_page("explain", {"text": text, "lang": lang}, state)
    if model != "reader":
        at.segmented_control(key="explain_model").set_value(model).run()
    return at


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
@pytest.mark.parametrize("name", ["empty", "whitespace"])
def test_explain_says_an_empty_text_has_nothing_to_explain(name, lang):
    at = explain_with(TEXTS[name], lang)
    assert_healthy(at)
    assert warnings(at) == [t("explain_empty", lang)]
    require_minilm()
    at = explain_with(TEXTS[name], lang, "minilm")
    assert_healthy(at)
    model = md_escape(t("explain_model_minilm", lang))
    assert warnings(at) == [t("explain_empty_model", lang, model=model)]


@pytest.mark.parametrize("model", ["reader", "minilm"])
def test_explain_refuses_a_million_characters_at_once(model):
    if model == "minilm":
        require_minilm()
    at = explain_with("", "zh-TW", model)  # the link's limit drops such a text: typed, then
    at.session_state["text"] = "字" * 1_000_000
    at.run()
    assert_healthy(at)
    said = warnings(at)[-1]
    assert said.startswith(t("explain_too_many_chars", "zh-TW", n=0, most=0).split("0")[0])
    assert f"{MAX_TEXT_CHARS}" in said and not at.get("progress")


@pytest.mark.parametrize("model", ["reader", "minilm"])
def test_explain_takes_emoji_and_keeps_markup_literal(model):
    if model == "minilm":
        require_minilm()
    for text in (TEXTS["emoji_zwj"], " ".join(MARKUP[:3])):  # within the reader's 64 units
        at = explain_with(text, "en", model, explain_second=MARKUP[1])  # MiniLM's, literal too
        assert_healthy(at)
        specs = charts(at)
        assert "explain_rows" in specs
        for key, spec in specs.items():
            try:
                assert_drawn_literally(spec)
            except AssertionError as error:
                raise AssertionError(f"chart {key}: {error}") from None


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_explain_refuses_a_target_token_the_model_cannot_predict(lang, tiny_llama_folder):
    reader = t("explain_model_reader", lang)
    for token, due in (
        ("qqqzzzx", t("explain_token_unknown", lang, token="qqqzzzx", model=reader)),
        (MARKUP[0], t("explain_token_unknown", lang, token=md_escape(MARKUP[0]), model=reader)),
        ("[BOS]", t("explain_token_barred", lang, token=md_escape("[BOS]"))),
    ):
        at = explain_with("中和有一個永和路", lang, explain_token=token)
        assert_healthy(at)
        assert warnings(at) == [due]
    key = f"pretrained:{tiny_llama_folder}"
    at = explain_with(
        "the cat sat", lang, key, _pretrained_model_name=tiny_llama_folder, explain_token="[PAD]"
    )
    assert_healthy(at)
    assert warnings(at) == [t("explain_token_padding", lang, token=md_escape("[PAD]"))]
