"""Hostile and odd input, in AppTest: a classroom opens one link and some type nonsense.

Nothing a student types or puts in a link may raise, show a traceback, render markup, or
make the app produce an unbounded amount of work or data. Each case asserts the page stays
healthy (no exception element, no error box, no unescaped `<` in any markdown), gives the
message that is due (empty text, no tokens, cut text, truncated tokens, rejected URL value),
and shows the same tokens as the library computes for that text (the reference is
`attention_core.tokenize`, the wiring under test is the page).

Also here: same URL → bit-identical matrices in two separate processes, and the download
buttons' deferred data holds exactly the matrices the chart shows.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest
from apptest_helpers import (
    APP,
    assert_drawn_literally,
    decode,
    drawn_charts,
    drawn_strings,
    heatmaps,
    run_app,
    shown_labels,
    texts,
)
from availability import require_minilm
from helpers_teaching import charts, open_page
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from streamlit import config as st_config
from streamlit.runtime.media_file_manager import MediaFileManager

from attention_core.export import download_name, spreadsheet_text
from attention_core.i18n import t
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS, MAX_TRAIN_STEPS
from attention_core.pipeline import token_labels
from attention_core.settings import KEYS, parse_settings
from attention_core.tokenize import TOKENIZER_MODES, tokenize
from attention_core.train import TrainConfig
from ui.common import md_escape

TESTS_DIR = Path(__file__).resolve().parent
SMALL = {"embed_dim": "8", "num_heads": "2"}  # the model size does not matter for input tests
MARKDOWN_KINDS = ("markdown", "caption", "info", "warning", "error", "success")
# Characters that would start HTML, a link, emphasis, LaTeX, a directive or code in markdown.
ACTIVE = "<>[]()*_$`:!&#|~=\\"

ZWJ_FAMILY = "👩\u200d👩\u200d👧\u200d👦"
ZALGO = "Z\u0335\u0322\u031b\u0319a\u0338\u0347l\u0336\u0359g\u0337\u0353o\u0334\u0346"
TEXTS = {
    "empty": "",
    "whitespace": " \t\n\u3000\u00a0\r\n ",
    "long_100k": ("中和有一個永和路。The cat sat on the mat! " * 4000)[:100_000],
    "repeat_5000": "字" * 5000,
    "one_word_5000": "a" * 5000,
    "emoji_zwj": f"{ZWJ_FAMILY} family 👨🏽\u200d💻 codes 🇹🇼 flag ❤️",
    "combining": "cafe\u0301 e\u0301 " + ZALGO,
    "combining_flood": "e" + "\u0301" * 5000,  # one cluster of 5 001 code points
    "zwj_flood": "a" + "\u200d" * 3000 + "b",
    "rtl": "مرحبا بالعالم שלום עולם",
    "control": "a\x00b \x1b[31mred\x1b[0m \u202eevil\u202c \x07\x08\x7f \ufeffend",
    "only_controls": "\x00\x01\x02\x1b\x7f",
    "mixed_scripts": "The cat 坐在墊子上 Привет 안녕하세요 ١٢٣ Ελληνικά 🙂",
    "punctuation": "!!! ??? ... ，。！？「」 --- |",
    "line_breaks": "line1\nline2\r\nline3\u2028line4\u2029line5",
    "pipes_only": "|||| || |",
}
MARKUP = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "javascript:alert(1)",
    "[x](javascript:alert(1))",
    "![pic](https://evil.example/x.png)",
    "<a href='https://evil.example'>click</a>",
    "**bold** _it_ ~~gone~~",
    "$$\\latex$$",
    ":red[x] :material/home:",
    "`code` # heading > quote",
    "&lt;b&gt;entity&lt;/b&gt;",
    "\\<script\\>",
    "{{7*7}} ${7*7}",
]


# --- helpers -------------------------------------------------------------------------------
def markdown_values(at) -> list[str]:
    return [str(e.value) for kind in MARKDOWN_KINDS for e in at.get(kind)]


def unescaped(text: str, chars: str) -> list[str]:
    """The characters of `chars` in `text` that no backslash escapes (`\\x` is inert)."""
    found, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2  # an escaped character, whatever it is
            continue
        if text[i] in chars:
            found.append(text[i])
        i += 1
    return found


def assert_healthy(at) -> None:
    """No exception element, no error box, no traceback, no raw `<` in any markdown."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert "Traceback" not in texts(at)
    for value in markdown_values(at):
        assert not unescaped(value, "<"), value


def chips_markdown(at) -> str:
    return next(v for v in markdown_values(at) if "-background[" in v)


def chip_payload(chips: str) -> str:
    """The token chips' contents, without the app's own `:blue-background[i:...]` syntax.

    A chip ends at its first unescaped `]`: if user text could close it early, the rest
    would be left here with unescaped characters, and the caller's check fails.
    """
    return re.sub(r":(?:blue|orange)-background\[\d+:((?:\\.|[^\\\]])*)\]", r"\1", chips)


def infos(at) -> list[str]:
    return [i.value for i in at.info]


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


@pytest.fixture(scope="module")
def session_for():
    """One app session per tokenizer mode; each test types its text into it (a rerun)."""
    sessions = {}

    def get(mode: str):
        if mode not in sessions:
            sessions[mode] = run_app({"tokenizer": mode, **SMALL})
        return sessions[mode]

    return get


@pytest.fixture
def deferred(monkeypatch):
    """The download buttons' deferred data callables, as the page registers them."""
    registered: dict[str, dict] = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        registered[mimetype] = {"data": data_callable, "file_name": file_name}
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return registered


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
    shown = all_tokens[:MAX_TOKENS]
    if not text.strip():
        assert infos(at) == [t("empty_text", "en")] and not drawn_charts(at)
    elif not shown:
        no_tokens = t("no_tokens", "en", tokenizer=t(f"tokenizer_{mode}", "en"))
        assert infos(at) == [no_tokens] and not drawn_charts(at)
    else:
        labels = token_labels(shown)
        traces = heatmaps(at)
        assert shown_labels(traces[0], "x") == shown_labels(traces[0], "y") == labels
        assert decode(traces[0]["z"]).shape == (len(shown), len(shown))
        chips = chips_markdown(at)
        assert all(md_escape(tok.label) in chips for tok in shown)
        assert not unescaped(chip_payload(chips), ACTIVE)
    cut = t("text_cut", "en", limit=MAX_TEXT_CHARS)
    assert (cut in warnings(at)) == (len(text) > MAX_TEXT_CHARS)
    truncated = t("tokens_truncated", "en", total=len(all_tokens), limit=MAX_TOKENS)
    assert (truncated in warnings(at)) == (len(all_tokens) > MAX_TOKENS)


def test_long_text_finishes_in_zh_tw_with_both_warnings():
    at = run_app({"text": TEXTS["long_100k"], "tokenizer": "char", "lang": "zh-TW", **SMALL})
    assert_healthy(at)
    total = len(tokenize(TEXTS["long_100k"][:MAX_TEXT_CHARS], "char"))
    assert warnings(at) == [
        t("text_cut", "zh-TW", limit=MAX_TEXT_CHARS),
        t("tokens_truncated", "zh-TW", total=total, limit=MAX_TOKENS),
    ]


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
    assert f":orange-background[{md_escape(MARKUP[last])}]" in highlighted[0]
    assert not unescaped(highlighted[0].replace(":orange-background[", "", 1), "<>[*$`")
    # The picked index no longer exists after the student shortens the sentence.
    at.session_state["text"] = "only | two"
    at.run()
    assert_healthy(at)
    assert heatmaps(at)[0]["x"] == ["0:only", "1:two"]


@pytest.mark.parametrize("key", ["tokenizer", "attention", "lang", "embed_dim", "seed", "causal"])
def test_markup_in_other_url_values_is_rejected_with_an_inert_warning(key):
    value = "<img src=x onerror=alert(1)>[x](javascript:alert(1))**b**$$x$$"
    at = run_app({key: value, **({"embed_dim": "8"} if key != "embed_dim" else {})})
    assert_healthy(at)
    (warning,) = warnings(at)
    assert md_escape(value[:39] + "…") in warning
    assert not unescaped(warning, ACTIVE)  # the whole line is escaped, not only the value
    assert heatmaps(at)


@pytest.mark.parametrize("text", [*MARKUP, *TEXTS.values(), "../../etc/passwd", "CON", ".."])
def test_download_names_are_safe_for_any_text(text):
    for ext in ("csv", "json", "png"):
        name = download_name(text, ext)
        assert re.fullmatch(r"attention(-[A-Za-z0-9_][A-Za-z0-9_-]*)?\." + ext, name), name
        assert len(name) <= 64 and ".." not in name


def test_the_page_offers_safe_file_names_for_markup(deferred):
    text = "<img src=x onerror=alert(1)> ../../etc/passwd"
    at = run_app({"text": text, **SMALL})
    assert_healthy(at)
    names = sorted(d["file_name"] for d in deferred.values())
    config = drawn_charts(at)[0].config
    png = config["toImageButtonOptions"]["filename"]
    assert names == ["attention-img-src-x-onerror-alert-1-etc-pa.csv",
                     "attention-img-src-x-onerror-alert-1-etc-pa.json"]  # fmt: skip
    assert png == "attention-img-src-x-onerror-alert-1-etc-pa"


def test_csv_download_cannot_carry_a_spreadsheet_formula(deferred):
    formulas = [
        '=HYPERLINK("https://evil.example","x")',
        "@SUM(1+1)",
        "+1+1",
        "-1+cmd|' /C calc'!A0",
    ]
    at = run_app({"text": " | ".join(formulas), "tokenizer": "manual", **SMALL})
    assert_healthy(at)
    rows = list(csv.DictReader(io.StringIO(deferred["text/csv"]["data"]())))
    cells = {r[k] for r in rows for k in ("query_token", "key_token", "head")}
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    shown = [label.split(":", 1)[1] for label in shown_labels(heatmaps(at)[0])]
    assert [spreadsheet_text(r["query_token"]) for r in rows[: len(shown)]] == [shown[0]] * len(
        shown
    )
    assert [spreadsheet_text(r["key_token"]) for r in rows[: len(shown)]] == shown


# --- 1c. URL parameters ------------------------------------------------------------------------
def test_every_parameter_empty():
    at = run_app({key: "" for key in KEYS})
    assert_healthy(at)
    assert infos(at) == [t("empty_text", "en")]
    rejected = {"tokenizer", "attention", "lang", "embed_dim", "seed", "causal", "positional"}
    assert len(warnings(at)) == len(rejected) + 1  # num_heads="" is rejected too


def test_every_parameter_ten_kilobytes():
    at = run_app({key: "9" * 10_000 if key != "text" else "x" * 10_000 for key in KEYS})
    assert_healthy(at)
    assert heatmaps(at)[0]["x"] == ["0:" + "x" * 10_000]
    assert len(warnings(at)) == len(KEYS) - 1  # all but the text
    assert all(len(w) < 600 for w in warnings(at)), "rejected values are shortened for display"
    assert "text" not in at.query_params, "a 10 kB text is kept out of the shared link"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1e3", 16),
        ("0x10", 16),
        ("8.0", 16),
        ("NaN", 16),
        ("inf", 16),
        ("-0", 16),
        ("99999999999999999999999", 16),
        (" 8 ", 8),
        ("+8", 8),
        ("0008", 8),
        ("１６", 16),  # full-width digits are digits (int() accepts them)
        ("%38", 16),  # a double-encoded '8' stays a string
    ],
)
def test_odd_embed_dim_values(raw, expected):
    at = run_app({"embed_dim": raw, "text": "a b"})
    assert_healthy(at)
    assert at.session_state["embed_dim"] == expected
    assert 0 < at.session_state["num_heads"] <= expected
    assert expected % at.session_state["num_heads"] == 0


def test_repeated_parameters_take_the_last_value():
    at = run_app({"seed": ["1", "2"], "embed_dim": ["8", "abc"], "tokenizer": ["char", "word"]})
    assert_healthy(at)
    assert (at.session_state["seed"], at.session_state["tokenizer"]) == (2, "word")
    assert at.session_state["embed_dim"] == 16 and len(warnings(at)) == 1
    # parse_settings with the list shape a raw query string gives (parse_qs)
    s, problems = parse_settings(parse_qs("seed=1&seed=2&causal=true&causal=nope"))
    assert s.seed == 2 and not s.causal and [p.key for p in problems] == ["causal"]


def test_unknown_and_prototype_keys_are_ignored():
    junk = {"__proto__": "x", "constructor": "y", "Seed": "5", "seed ": "6", "x" * 500: "z"}
    at = run_app({**junk, "text": "a b", **SMALL})
    assert_healthy(at)
    assert not warnings(at) and at.session_state["seed"] == 0


QUERY_STRINGS = st.one_of(
    st.text(max_size=200),
    st.lists(st.tuples(st.sampled_from([*KEYS, "x"]), st.text(max_size=40)), max_size=8).map(
        lambda pairs: "&".join(f"{k}={v}" for k, v in pairs)
    ),
)


@hsettings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(QUERY_STRINGS)
def test_the_app_survives_any_query_string(query):
    at = run_app(parse_qs(query, keep_blank_values=True))
    assert_healthy(at)
    assert drawn_charts(at) or infos(at)


# --- 1d. resource bounds ----------------------------------------------------------------------
def test_widest_model_on_the_longest_text_completes_with_a_message():
    at = run_app({"text": "ab " * 600, "tokenizer": "word", "embed_dim": "1024", "num_heads": "64"})
    assert_healthy(at)
    assert t("tokens_truncated", "en", total=600, limit=MAX_TOKENS) in warnings(at)
    # too many cells to send as numbers: one exact head, the others as pictures, and a note
    assert t("image_view_note", "en", n=MAX_TOKENS) in [c.value for c in at.caption]
    drawn = drawn_charts(at)[0]
    figure = drawn.spec
    assert [a["text"] for a in figure["layout"]["annotations"]] == [f"head {i}" for i in range(64)]
    assert [tr["name"] for tr in figure["data"]] == ["head 0"]  # the exact head
    assert len(figure["layout"]["images"]) == 63  # the pictures
    assert decode(figure["data"][0]["z"]).shape == (MAX_TOKENS, MAX_TOKENS)
    # The largest view fits in one websocket message (else the browser would get nothing).
    assert drawn.size < st_config.get_option("server.maxMessageSize") * 1e6


def test_training_steps_are_bounded():
    for steps in (10**9, MAX_TRAIN_STEPS + 1, 0, -1):
        with pytest.raises(ValueError, match="steps"):
            TrainConfig(steps=steps).validate()
    TrainConfig(steps=MAX_TRAIN_STEPS).validate()


# --- 5. determinism and downloads -------------------------------------------------------------
SHARED_LINK = {
    "text": "中和有一個永和路，The cat sat.",
    "tokenizer": "jieba",
    "embed_dim": "12",
    "num_heads": "3",
    "seed": "7",
    "causal": "true",
    "positional": "true",
}
_CHILD = """
import base64, json, sys
sys.path.insert(0, {tests!r})
from apptest_helpers import heatmaps, run_app
at = run_app(json.loads(sys.argv[1]))
assert not at.exception, at.exception
print(json.dumps([[h["name"], h["x"], h["z"]["bdata"]] for h in heatmaps(at)]))
"""


def test_same_link_gives_bit_identical_matrices_in_two_processes():
    # A fresh interpreter (own caches, own torch state, another hash seed: no dict or set
    # order may leak into the result) against this test process.
    child = subprocess.run(
        [sys.executable, "-c", _CHILD.format(tests=str(TESTS_DIR)), json.dumps(SHARED_LINK)],
        cwd=Path(APP).parent,
        env={**os.environ, "PYTHONHASHSEED": "12345", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    there = json.loads(child.stdout.strip().splitlines()[-1])
    here = [[h["name"], h["x"], h["z"]["bdata"]] for h in heatmaps(run_app(SHARED_LINK))]
    assert len(here) == 3 and there == here
    z = np.frombuffer(base64.b64decode(here[0][2]), dtype=np.float32)
    assert np.isfinite(z).all() and not np.allclose(z, z[0])


def test_downloads_hold_exactly_what_the_chart_shows(deferred):
    at = run_app({**SHARED_LINK, "text": "<b>中和</b> | 有 | 一個 | 永和路", "tokenizer": "manual"})
    at.toggle(key="show_mean").set_value(True).run()
    assert_healthy(at)
    traces = heatmaps(at)
    assert len(traces) == 4  # 3 heads and their mean
    shown = {tr["name"]: decode(tr["z"]) for tr in traces}
    labels = shown_labels(traces[0])
    rows = list(csv.DictReader(io.StringIO(deferred["text/csv"]["data"]())))
    from_csv = {name: np.zeros_like(z) for name, z in shown.items()}
    for r in rows:
        i, j = int(r["query_index"]), int(r["key_index"])
        from_csv[r["head"]][i, j] = np.float32(float(r["weight"]))
        query, key = spreadsheet_text(r["query_token"]), spreadsheet_text(r["key_token"])
        assert f"{i}:{query}" == labels[i] and f"{j}:{key}" == labels[j]
    assert len(rows) == len(shown) * len(labels) ** 2
    doc = json.loads(deferred["application/json"]["data"]())
    assert [f"{i}:{tok}" for i, tok in enumerate(doc["tokens"])] == labels
    assert doc["config"]["seed"] == "7" and doc["config"]["n_tokens"] == len(labels)
    for name, z in shown.items():
        np.testing.assert_array_equal(from_csv[name], z)
        np.testing.assert_array_equal(np.asarray(doc["heads"][name], dtype=np.float32), z)
