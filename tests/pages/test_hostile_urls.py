"""Hostile and odd links and downloads, in AppTest: every URL value, bounded work, safe files.

Nothing a link holds may raise, show a traceback, render markup, or make the app produce an
unbounded amount of work or data: markup in the other URL values is rejected with an inert
warning, empty, huge, odd, repeated and unknown parameters give the due settings, and the
widest model on the longest text completes. Downloads have safe names and carry no
spreadsheet formula.

Also here: same URL → bit-identical matrices in two separate processes, and the download
buttons' deferred data holds exactly the matrices the chart shows.
"""

from __future__ import annotations

import base64
import csv
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
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from streamlit import config as st_config
from streamlit.runtime.media_file_manager import MediaFileManager

from attention_core.export import download_name, spreadsheet_text
from attention_core.i18n import t
from attention_core.limits import MAX_TOKENS, MAX_TRAIN_STEPS
from attention_core.settings import KEYS, parse_settings
from attention_core.train import TrainConfig
from tests.support.apptest import (
    APP,
    decode,
    drawn_charts,
    heatmaps,
    run_app,
    shown_labels,
    weights_of,
)
from tests.support.hostile import (
    ACTIVE,
    MARKUP,
    SMALL,
    TEXTS,
    assert_healthy,
    infos,
    unescaped,
    warnings,
)
from ui.common import md_escape

ROOT = Path(__file__).resolve().parents[2]


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


# --- 1b. markup in the other URL values, and in download names -------------------------------
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
    rejected |= {"weights", "layer"}  # the trained reader's two
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
def test_widest_model_on_the_longest_exact_text_completes():
    # the longest text drawn as exact heatmaps; longer ones are long maps
    # (tests/pages/test_page_heatmaps_long.py holds the widest model at 4 096 tokens)
    text = "ab " * MAX_TOKENS
    at = run_app({"text": text, "tokenizer": "word", "embed_dim": "1024", "num_heads": "64"})
    assert_healthy(at)
    assert not warnings(at)
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
sys.path.insert(0, {root!r})
from tests.support.apptest import heatmaps, run_app
at = run_app(json.loads(sys.argv[1]))
assert not at.exception, at.exception
print(json.dumps([[h["name"], h["x"], h.get("customdata", h["z"])["bdata"]] for h in heatmaps(at)]))
"""


def test_same_link_gives_bit_identical_matrices_in_two_processes():
    # A fresh interpreter (own caches, own torch state, another hash seed: no dict or set
    # order may leak into the result) against this test process.
    child = subprocess.run(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT)), json.dumps(SHARED_LINK)],
        cwd=Path(APP).parent,
        env={**os.environ, "PYTHONHASHSEED": "12345", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    there = json.loads(child.stdout.strip().splitlines()[-1])
    here = [
        [h["name"], h["x"], h.get("customdata", h["z"])["bdata"]]  # the weights shown
        for h in heatmaps(run_app(SHARED_LINK))
    ]
    assert len(here) == 3 and there == here
    z = np.frombuffer(base64.b64decode(here[0][2]), dtype=np.float32)
    assert np.isfinite(z).all() and not np.allclose(z, z[0])


def test_downloads_hold_exactly_what_the_chart_shows(deferred):
    at = run_app({**SHARED_LINK, "text": "<b>中和</b> | 有 | 一個 | 永和路", "tokenizer": "manual"})
    at.toggle(key="show_mean").set_value(True).run()
    assert_healthy(at)
    traces = heatmaps(at)
    assert len(traces) == 4  # 3 heads and their mean
    shown = {tr["name"]: weights_of(tr) for tr in traces}
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
