"""The landing page in AppTest: the issue's example, single-head, URL validation, language."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from apptest_helpers import (
    catalog_line,
    decode,
    drawn_charts,
    heatmaps,
    md_unescape,
    run_app,
    shown_labels,
    shown_text,
    texts,
)
from helpers_teaching import EXAMPLE_LINK as EXAMPLE

from ui.common import md_escape


def test_default_run_has_no_exception():
    at = run_app()
    assert not at.exception
    assert len(heatmaps(at)) == 4  # default: 16 dims, 4 heads


def test_issue_example_two_heads_of_four_by_four():
    at = run_app(EXAMPLE)
    assert not at.exception
    traces = heatmaps(at)
    assert len(traces) == 2
    for trace in traces:
        z = decode(trace["z"])
        assert z.shape == (4, 4)
        np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-5)
        assert trace["x"] == trace["y"] == ["0:中和", "1:有", "2:一個", "3:永和路"]
    assert dict(at.query_params)["num_heads"] == ["2"] or at.query_params["num_heads"] == "2"


def summary_by_hand(z: np.ndarray, labels: list[str]) -> dict[str, float | str]:
    """The summary line's statistics of one drawn (n, n) matrix, from their definitions
    (Clark et al. 2019, as attention_core/stats.py documents them), averaged over query rows:
    entropy of a row in nats / ln n (0 = one-hot, 1 = uniform); max weight = the row's
    largest weight; diagonal = weight on the query itself; previous = weight on the token
    just before (rows 1..n-1); top = the key with the largest column sum."""
    n = len(z)
    rows = [[float(w) for w in row] for row in z]
    entropy = [-sum(w * math.log(w) for w in row if w > 0) for row in rows]
    column_sums = [sum(row[j] for row in rows) for j in range(n)]
    ranked = sorted(range(n), key=column_sums.__getitem__, reverse=True)
    assert column_sums[ranked[0]] - column_sums[ranked[1]] > 1e-4, "no clear top key"
    return {
        "entropy": sum(entropy) / n / math.log(n),
        "max_weight": sum(max(row) for row in rows) / n,
        "diagonal": sum(rows[i][i] for i in range(n)) / n,
        "previous": sum(rows[i][i - 1] for i in range(1, n)) / (n - 1),
        "top": labels[ranked[0]],
    }


CAT = {"text": "The cat sat on the mat because it was tired.", "embed_dim": "12", "num_heads": "3"}


@pytest.mark.parametrize(
    ("params", "lang"),
    [
        (EXAMPLE, "en"),
        # heads look most at 6:because, 5:mat and 10:. (a label shown escaped)
        ({**CAT, "seed": "1", "positional": "true"}, "zh-TW"),
        ({**CAT, "seed": "3", "causal": "true", "positional": "true"}, "en"),
    ],
)
def test_summary_lines_show_each_drawn_heads_statistics(params, lang):
    """Every number the summary prints equals, to its printed precision, the statistic
    computed here from the matrix the chart draws for that head."""
    at = run_app({**params, "lang": lang})
    assert not at.exception
    traces = heatmaps(at)
    pattern = catalog_line("summary_line", lang)
    lines = [m for v in at.markdown if (m := pattern.fullmatch(md_unescape(str(v.value))))]
    assert len(lines) == len(traces) > 1  # one line per head
    for trace, line in zip(traces, lines, strict=True):
        assert line["head"] == shown_text([trace["name"]])[0]
        z = decode(trace["z"]).astype(np.float64)
        expected = summary_by_hand(z, shown_labels(trace))
        assert line["top"] == expected["top"]
        for stat in ("entropy", "max_weight", "diagonal", "previous"):
            printed = line[stat]
            half_unit = 0.5 * 10.0 ** -len(printed.split(".")[1])  # rounding to what is shown
            assert abs(float(printed) - expected[stat]) <= half_unit + 1e-6, (stat, printed)


def test_single_head_mode_gives_one_matrix_and_mean_toggle_adds_one():
    assert len(heatmaps(run_app({**EXAMPLE, "attention": "single"}))) == 1
    at = run_app(EXAMPLE)
    at.toggle(key="show_mean").set_value(True).run()
    traces = heatmaps(at)
    assert len(traces) == 3
    mean = decode(traces[2]["z"])
    np.testing.assert_allclose(
        mean, (decode(traces[0]["z"]) + decode(traces[1]["z"])) / 2, atol=1e-6
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"embed_dim": "8", "num_heads": "5"},
        {"embed_dim": "-3"},
        {"seed": "abc"},
        {"embed_dim": "999999999", "num_heads": "0", "seed": "1e99"},
        {"tokenizer": "x" * 10_000},
    ],
)
def test_invalid_params_give_a_message_and_a_valid_view(bad):
    at = run_app(bad)
    assert not at.exception
    assert at.warning, "a visible message about the rejected value"
    assert heatmaps(at)


def test_language_switch_changes_the_strings():
    at = run_app(EXAMPLE)
    assert "Every attention head" in texts(at)
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception
    assert "即時看見每一個注意力頭" in texts(at)
    assert at.text_area(key="text").label == "句子"
    at = run_app({**EXAMPLE, "lang": "zh-TW"})
    assert "即時看見每一個注意力頭" in texts(at)


def test_changing_embed_dim_keeps_heads_valid():
    at = run_app(EXAMPLE)
    at.number_input(key="embed_dim").set_value(6).run()
    assert not at.exception
    assert 6 % at.session_state["num_heads"] == 0
    assert at.query_params["embed_dim"] in ("6", ["6"])


@pytest.mark.parametrize("text", ["", "   \n ", "|||", "！？。"])
def test_empty_or_tokenless_text_gives_a_prompt_not_an_error(text):
    at = run_app({"text": text, "tokenizer": "manual" if text == "|||" else "auto"})
    assert not at.exception
    assert not drawn_charts(at) or text == "！？。"
    assert at.info or heatmaps(at)


def test_hostile_text_is_shown_literally():
    evil = ["<img src=x onerror=alert(1)>", "**bold**", "$$x$$", "[a](javascript:alert(1))"]
    at = run_app({"text": " | ".join(evil), "tokenizer": "manual"})
    assert not at.exception
    chips = next(m.value for m in at.markdown if "background[" in m.value)
    for token in evil:
        assert md_escape(token) in chips
    assert re.search(r"(?<!\\)[<*$\[]", chips.replace("-background[", "")) is None
    assert shown_labels(heatmaps(at)[0]) == [f"{i}:{t}" for i, t in enumerate(evil)]


def test_long_text_is_truncated_with_a_warning():
    at = run_app({"text": "字" * 3000, "tokenizer": "char", "embed_dim": "8", "num_heads": "2"})
    assert not at.exception
    assert any("512" in w.value for w in at.warning)
    assert decode(heatmaps(at)[0]["z"]).shape == (512, 512)


@pytest.mark.legacy_pages
def test_entry_guard_keeps_sidebar_and_settings_in_legacy_pages_mode():
    at = run_app(EXAMPLE)
    at.run()  # AppTest re-enters Streamlit's legacy pages/ mode before every run
    assert not at.exception
    assert at.sidebar.text_area(key="text").value == "中和有一個永和路"
    assert len(heatmaps(at)) == 2


def test_large_grid_sends_pictures_but_one_chosen_head_exact():
    at = run_app({"text": "字" * 600, "tokenizer": "char", "embed_dim": "8", "num_heads": "4"})
    assert not at.exception
    assert len(heatmaps(at)) == 1  # the other three heads are images
    at.selectbox(key="exact_head").set_value(2).run()
    (trace,) = heatmaps(at)
    assert trace["name"].endswith("2")
    assert decode(trace["z"]).shape == (512, 512)
