"""In front of the class, for real: defects found in the pages' state and text,
in AppTest: the induction heads' titles fit their columns and playback keeps the scrubber
and the answers table on the frame shown (Train); removing a question source says so and
starts at round 1 (Quiz); no "-0.00" entropy; the typed minimal pair survives a visit to
another page; the manual tokenizer's one-token case is recognised (`tokenize`).
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attention_core.figures.layout import text_px
from attention_core.i18n import t
from attention_core.tokenize import manual_without_separator, tokenize
from attention_core.train import default_config
from attention_core.train.live import LiveRun
from tests.support import teaching
from tests.support.apptest import (  # noqa: F401 (offline: autouse)
    away_and_back,
    catalog_line,
    chart,
    decode,
    md_unescape,
    offline,
    run_app,
    texts,
)
from tests.support.availability import needs_minilm

RUN = "_train_live_run"
PLAY_AT = "_train_play_at"
COLORBAR_PX = 100  # less than the layout keeps for the colour bar: lenient


@pytest.fixture(scope="module")
def induction() -> LiveRun:
    """A finished induction run whose detector names its heads (~3 s)."""
    run = LiveRun.start(default_config("induction", steps=250))
    run.run_to_end()
    return run


def open_train(run: LiveRun, lang: str = "en") -> AppTest:
    at = run_app({"pace": "fast", "lang": lang}, page="pages/train.py", **{RUN: run})
    assert not at.exception, at.exception
    return at


# --- 6. Train: head titles that fit, playback that moves everything ---------------------------
def assert_titles_fit(spec: dict[str, Any], key: str) -> None:
    """No two panel titles of a row run into each other at the width the chart is laid out
    for (layout.meta), each line measured at its font size."""
    layout = spec["layout"]
    width = layout["meta"]["studio_min_width"]
    plot = width - layout["margin"]["l"] - layout["margin"]["r"] - COLORBAR_PX
    rows: dict[float, list[tuple[float, float]]] = {}
    for note in layout["annotations"]:
        size = note["font"]["size"]
        lines = [html.unescape(line) for line in note["text"].split("<br>")]
        rows.setdefault(note["y"], []).append((note["x"], max(text_px(s, size) for s in lines)))
    assert any(len(row) > 1 for row in rows.values()), key  # titles side by side
    for row in rows.values():
        row.sort()
        for (x1, w1), (x2, w2) in itertools.pairwise(row):
            assert (w1 + w2) / 2 + 4 <= (x2 - x1) * plot, (key, w1, w2, (x2 - x1) * plot)


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_induction_head_titles_fit_their_columns(induction, lang):
    at = open_train(induction, lang)
    role = t("train_role_previous", lang)
    heads = chart(at, "train_heads")
    assert sum(role in html.unescape(a["text"]) for a in heads["layout"]["annotations"]) == 2
    assert_titles_fit(heads, "train_heads")
    at.toggle(key="train_before_after").set_value(True).run()  # two grids in half the width
    assert not at.exception, at.exception
    for key in ("train_heads_before", "train_heads_after"):
        assert_titles_fit(chart(at, key), key)


@contextmanager
def _no_wait() -> Iterator[None]:
    yield


def test_playback_keeps_the_scrubber_and_the_answers_on_the_frame_shown(monkeypatch):
    """Playback cut off after two frames (as when the browser looks mid-playback): the
    scrubber, the answers table, the curves' marker and the heads all show one step."""
    import ui.train_playback

    run = LiveRun.start(default_config("reverse", steps=40))
    run.run_to_end()
    at = run_app({"pace": "fast"}, page="pages/train.py", **{RUN: run})
    at.select_slider(key="train_replay").set_value(0).run()
    frames = iter(range(3))

    @contextmanager
    def two_frames() -> Iterator[None]:
        if next(frames) == 2:
            st.stop()  # the script ends here, the page as it was drawn
        yield

    monkeypatch.setattr(ui.train_playback, "place_released", two_frames)
    at.button("train_play").click().run()
    assert not at.exception, at.exception
    step = at.session_state[PLAY_AT]
    assert step == run.snapshots[2].step == 20
    label = t("train_replay_label", "en")
    (scrubber,) = [s for s in at.select_slider if s.label == label]
    assert int(scrubber.value) == step  # not the 0 playback started from
    header = catalog_line("train_answers_header")
    lines = [md_unescape(x.value).strip("*") for x in at.markdown]
    (answers,) = [line for line in lines if header.fullmatch(line)]
    assert int(header.fullmatch(answers)["step"]) == step
    marks = chart(at, "train_play_curves_2")["layout"]["shapes"]
    assert {s["x0"] for s in marks if "domain" not in s["xref"]} == {step}  # the marker
    shown = [decode(tr["z"]) for tr in chart(at, "train_play_heads_2")["data"]]
    np.testing.assert_array_equal(np.stack(shown), run.snapshot_at(step).weights)


# --- 8. Quiz: removing a source ----------------------------------------------------------------
def test_removing_a_question_source_says_so_and_starts_at_round_one():
    at = teaching.open_page("quiz", {}, {"quiz_sources": ["trained", "untrained"]})
    assert not at.exception, at.exception
    for _ in range(2):
        at.button(key="quiz_next").click().run()
    assert at.session_state["quiz_round_no"] == 2
    at.multiselect(key="quiz_sources").set_value(["trained"]).run()
    assert not at.exception, at.exception
    shown = [i.value for i in at.info]
    assert t("quiz_settings_changed", "en") not in shown  # the sentence did not change
    assert at.session_state["quiz_round_no"] == 0
    assert t("quiz_sources_changed", "en") in shown
    rounds = {m.label: m.value for m in at.metric}
    assert str(rounds[t("quiz_round", "en")]) == "1"
    at.session_state["text"] = "another sentence here"  # the sentence: the old message
    at.run()
    assert t("quiz_settings_changed", "en") in [i.value for i in at.info]


# --- 11. Negative zero, the minimal pair, the manual tokenizer ---------------------------------
@pytest.mark.parametrize("page", ["pages/heatmaps.py", "pages/scaling.py", "pages/compare.py"])
def test_a_single_manual_token_never_shows_negative_zero(page):
    at = run_app({"text": "hello world", "tokenizer": "manual"}, page=page)
    assert not at.exception, at.exception
    assert "-0.00" not in md_unescape(texts(at))
    for frame in at.dataframe:
        numbers = frame.value.select_dtypes("number").to_numpy(dtype=float)
        assert not np.signbit(numbers[numbers == 0]).any(), page


@needs_minilm
def test_the_typed_minimal_pair_survives_a_visit_to_another_page():
    page = "pages/minimal_pairs.py"
    at = run_app({"text": "hi"}, page=page)
    at.text_input(key="pairs_a").input("The trophy did not fit in the case because it was big.")
    at.text_input(key="pairs_b").input("The trophy did not fit in the case because it was small.")
    at.run()
    assert not at.exception, at.exception
    away_and_back(at, page)
    assert at.text_input(key="pairs_a").value.endswith("it was big.")
    assert at.text_input(key="pairs_b").value.endswith("it was small.")


def test_the_manual_tokenizer_without_a_bar_is_recognised():
    assert len(tokenize("hello world", "manual")) == 1
    assert manual_without_separator("hello world", "manual")
    assert manual_without_separator("中和有一個", "manual")
    assert not manual_without_separator("hello | world", "manual")
    assert not manual_without_separator("hello", "word") and not manual_without_separator(
        "a", "manual"
    )
