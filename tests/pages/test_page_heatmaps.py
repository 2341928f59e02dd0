"""The landing page in AppTest: the issue's example, single-head, URL validation, language."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from attention_core.i18n import catalog
from attention_core.limits import EXACT
from tests.support.apptest import (
    catalog_line,
    decode,
    drawn_charts,
    heatmaps,
    long_map,
    md_unescape,
    run_app,
    shown_labels,
    shown_text,
    texts,
)
from tests.support.teaching import EXAMPLE_LINK as EXAMPLE
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
        "peak": max(max(row) for row in rows),
        "diagonal": sum(rows[i][i] for i in range(n)) / n,
        "previous": sum(rows[i][i - 1] for i in range(1, n)) / (n - 1),
        "top": labels[ranked[0]],
    }


CAT = {"text": "The cat sat on the mat because it was tired.", "embed_dim": "12", "num_heads": "3"}


def _summary_lines(at) -> list[str]:
    """Every line of every markdown element, unescaped, bold marks stripped (the summary
    is one element: a paragraph per head, its plain sentence in bold, a line break, then
    its statistics)."""
    return [
        md_unescape(line).strip("*")
        for m in at.markdown
        for paragraph in str(m.value).split("\n\n")
        for line in paragraph.split("  \n")
    ]


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
    lines = [m for text in _summary_lines(at) if (m := pattern.fullmatch(text))]
    assert len(lines) == len(traces) > 1  # one line per head
    for trace, line in zip(traces, lines, strict=True):
        assert line["head"] == shown_text([trace["name"]])[0]
        z = decode(trace.get("customdata", trace["z"])).astype(np.float64)
        expected = summary_by_hand(z, shown_labels(trace))
        assert line["top"] == expected["top"]
        for stat in ("entropy", "max_weight", "peak", "diagonal", "previous"):
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
        mean, (decode(traces[0]["z"]) + decode(traces[1]["z"])) / 2, atol=EXACT
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


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
@pytest.mark.parametrize(
    ("start", "via", "forced"), [((16, 4), 17, 1), ((32, 4), 33, 3), ((24, 8), 20, 10)]
)
def test_the_chosen_head_count_comes_back_when_embed_dim_allows(start, via, forced, lang):
    """From the lecturer walk: 16/4 → 17 gave 1 head and back to 16 kept 1; now the chosen 4
    come back, and the sidebar says why the count changed in between."""
    dim, heads = start
    at = run_app({**EXAMPLE, "embed_dim": str(dim), "num_heads": str(heads), "lang": lang})
    at.number_input(key="embed_dim").set_value(via).run()
    assert at.session_state["num_heads"] == forced
    said = [c.value for c in at.sidebar.caption]
    wanted = catalog()["heads_forced"][lang].format(wanted=heads, embed_dim=via, heads=forced)
    assert wanted in said
    at.number_input(key="embed_dim").set_value(dim).run()
    assert not at.exception
    assert at.session_state["num_heads"] == heads
    assert wanted not in [c.value for c in at.sidebar.caption]


def test_a_head_count_chosen_on_the_slider_is_the_one_that_comes_back():
    at = run_app({**EXAMPLE, "embed_dim": "16", "num_heads": "4"})
    at.select_slider(key="num_heads").set_value(8).run()
    at.number_input(key="embed_dim").set_value(12).run()  # 8 does not divide 12: 6 for now
    assert at.session_state["num_heads"] == 6
    at.number_input(key="embed_dim").set_value(16).run()
    assert at.session_state["num_heads"] == 8


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


def test_a_text_beyond_512_tokens_is_a_long_map_not_truncated():
    # long prompts: up to MAX_LONG_TOKENS the landing page shows every token (its tests:
    # tests/pages/test_page_heatmaps_long.py); no heatmap of the first 512, no truncation warning
    at = run_app({"text": "字" * 3000, "tokenizer": "char", "embed_dim": "8", "num_heads": "2"})
    assert not at.exception and not at.warning and not drawn_charts(at)
    assert long_map(at)["n"] == 3000


@pytest.mark.legacy_pages
def test_entry_guard_keeps_sidebar_and_settings_in_legacy_pages_mode():
    at = run_app(EXAMPLE)
    at.run()  # AppTest re-enters Streamlit's legacy pages/ mode before every run
    assert not at.exception
    assert at.sidebar.text_area(key="text").value == "中和有一個永和路"
    assert len(heatmaps(at)) == 2


def test_large_grid_sends_pictures_but_one_chosen_head_exact():
    at = run_app({"text": "字" * 512, "tokenizer": "char", "embed_dim": "8", "num_heads": "4"})
    assert not at.exception
    assert len(heatmaps(at)) == 1  # the other three heads are images
    at.selectbox(key="exact_head").set_value(2).run()
    (trace,) = heatmaps(at)
    assert trace["name"].endswith("2")
    assert decode(trace["z"]).shape == (512, 512)


# --- colours, why flat, the way to meaning, plain-language patterns -----------------------------

SENTENCE_30 = {  # 30 words, a lecturer's case
    "text": " ".join(
        "the quick brown fox jumps over the lazy dog while the teacher writes on a board "
        "and the students in the class watch the heads of attention light up one by one".split()[
            :30
        ]
    ),
    "tokenizer": "word",
    "embed_dim": "64",
    "num_heads": "8",
}


def _colour_axis(at) -> dict:
    (chart,) = [c for c in drawn_charts(at) if c.key == "heads_chart"]
    return chart.spec["layout"]["coloraxis"]


def test_default_colours_are_relative_and_use_half_the_range_at_30_tokens():
    at = run_app(SENTENCE_30)
    assert not at.exception
    traces = heatmaps(at)
    n = len(traces[0]["x"])
    assert n == 30
    axis = _colour_axis(at)
    assert axis["cmin"] == 0 and axis["cmax"] == pytest.approx(2 / n)  # 0 … 2 × 1/n
    assert at.query_params["scale"] in ("relative", ["relative"])
    z = np.stack([decode(t["z"]) for t in traces])  # absolute weights, as hover reads them
    np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-5)
    shown = np.clip(z, axis["cmin"], axis["cmax"])
    assert (shown.max() - shown.min()) / (axis["cmax"] - axis["cmin"]) >= 0.5
    assert (z.max() - z.min()) < 0.25  # on 0…1 the same heads would use under a quarter
    caption = next(c.value for c in at.caption if "1/n" in c.value)
    assert f"{1 / n:.3f}" in caption and f"n = {n}" in caption


@pytest.mark.parametrize("scale", ["absolute", "contrast"])
def test_scale_from_the_url_and_the_widget(scale):
    at = run_app({**EXAMPLE, "scale": scale})
    assert not at.exception
    assert at.session_state["color_scale"] == scale
    axis = _colour_axis(at)
    z = decode(heatmaps(at)[0]["z"])
    expected = 1.0 if scale == "absolute" else float(z.max())
    assert axis["cmax"] == pytest.approx(expected, rel=1e-6)
    assert axis["colorbar"]["title"]["text"] == catalog()[f"scale_bar_{scale}"]["en"]
    at.button_group(key="color_scale").set_value("relative").run()
    assert _colour_axis(at)["cmax"] == pytest.approx(2 / 4)
    assert at.query_params["scale"] in ("relative", ["relative"])
    at.radio(key="lang").set_value("zh-TW").run()  # the choice survives a language switch
    assert not at.exception and at.session_state["color_scale"] == "relative"
    assert _colour_axis(at)["colorbar"]["title"]["text"] == catalog()["scale_bar_relative"]["zh-TW"]


def test_bad_scale_in_the_url_warns_and_falls_back():
    at = run_app({**EXAMPLE, "scale": "<b>rainbow</b>"})
    assert not at.exception
    assert any("rainbow" in w.value for w in at.warning)
    assert _colour_axis(at)["cmax"] == pytest.approx(2 / 4)


def _flat_numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+\.\d+", md_unescape(text))]


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_flat_attention_is_explained_with_this_sentences_numbers(lang):
    from attention_core.pipeline import analyze
    from attention_core.settings import ModelSettings

    at = run_app({**SENTENCE_30, "lang": lang})
    assert not at.exception
    header = catalog()["flat_header"][lang]
    assert header in [h.value for h in at.subheader]
    (info,) = [m.value for m in at.markdown if "q·k/√d_k" in md_unescape(m.value)]
    spread, _, factor, low, high, uniform = _flat_numbers(info)[:6]
    # the reference: the trace's own scaled scores (torch), not the weights the page used
    settings = ModelSettings(text=SENTENCE_30["text"], tokenizer="word", embed_dim=64, num_heads=8)
    scaled = analyze(settings, with_trace=True).trace["scaled"].astype(np.float64)
    assert spread == pytest.approx(scaled.std(-1).mean(), abs=0.006)
    assert factor == pytest.approx(math.exp(spread), abs=0.02)
    z = np.stack([decode(t["z"]) for t in heatmaps(at)])
    assert low == pytest.approx(np.percentile(z, 5), abs=6e-4)
    assert high == pytest.approx(np.percentile(z, 95), abs=6e-4)
    assert uniform == pytest.approx(1 / 30, abs=6e-4)
    assert low < uniform < high < 3 * uniform  # flat: all near 1/n


def _plain_pattern_by_hand(z: np.ndarray) -> str | None:
    n = len(z)
    places = {
        "previous": np.mean([z[i, i - 1] for i in range(1, n)]),
        "first": np.mean(z[1:, 0]),
        "self": np.mean(np.diag(z)),
        "last": np.mean(z[:-1, -1]),
    }
    name = max(places, key=places.get)
    if places[name] >= 0.5:
        return name
    entropy = np.mean([-(r[r > 0] * np.log(r[r > 0])).sum() for r in z]) / np.log(n)
    return "broad" if entropy >= 0.9 else None


@pytest.mark.parametrize(
    "params",
    [SENTENCE_30, {**EXAMPLE, "causal": "true"}, {**CAT, "seed": "3", "causal": "true"}],
)
def test_each_head_gets_one_plain_language_sentence(params):
    at = run_app(params)
    assert not at.exception
    shown = _summary_lines(at)
    for trace in heatmaps(at):
        head = shown_text([trace["name"]])[0]
        pattern = _plain_pattern_by_hand(
            decode(trace.get("customdata", trace["z"])).astype(np.float64)
        )
        key = f"pattern_{pattern}" if pattern else "pattern_none"
        line = catalog_line(key)
        found = [m for text in shown if (m := line.fullmatch(text)) and m["head"] == head]
        assert len(found) == 1, (head, key)
    (summary,) = [h for h in at.subheader if h.value == catalog()["summary_header"]["en"]]
    assert "50%" in summary.help and "0.90" in summary.help


def test_one_click_to_the_pretrained_model_and_back_keeps_the_sentence():
    from tests.support.availability import require_minilm

    require_minilm()
    at = run_app(SENTENCE_30)
    at.button(key="to_pretrained").click().run()
    assert not at.exception
    assert at.session_state["pretrained_view"] == "contrast"
    assert at.sidebar.text_area(key="text").value == SENTENCE_30["text"]
    assert {c.key for c in drawn_charts(at)} >= {"pretrained_real_chart", "pretrained_own_chart"}
    at.switch_page("pages/heatmaps.py")
    at.run()
    assert not at.exception
    assert at.sidebar.text_area(key="text").value == SENTENCE_30["text"]
    assert len(heatmaps(at)[0]["x"]) == 30


@pytest.mark.parametrize("page", ["pages/train.py", "pages/handmade.py"])
def test_links_to_training_and_the_hand_made_matrix_and_back(page):
    at = run_app(EXAMPLE)
    links = {link.proto.page for link in at.get("page_link")}
    assert page.split("/")[1].removesuffix(".py") in links, links
    at.switch_page(page)
    at.run()
    assert not at.exception
    at.switch_page("pages/heatmaps.py")
    at.run()
    assert at.sidebar.text_area(key="text").value == "中和有一個永和路"
    assert len(heatmaps(at)) == 2


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_a_manual_text_without_bars_says_why_it_is_one_token(lang):
    """From the lecturer walk: the manual tokenizer without "|" gave one token and no hint."""
    hint = catalog()["manual_no_separator"][lang]
    at = run_app({"text": "hello world", "tokenizer": "manual", "lang": lang})
    assert not at.exception and hint in [box.value for box in at.info]
    at = run_app({"text": "hello | world", "tokenizer": "manual", "lang": lang})
    assert hint not in [box.value for box in at.info]


def test_the_picked_token_stands_out_in_its_chip_and_in_the_text():
    """From the lecturer walk: the selected token's highlight was very faint."""
    at = run_app({"text": "alpha beta gamma", "tokenizer": "word"})
    at.selectbox(key="highlight_token").set_value(1).run()
    shown = [m.value for m in at.markdown]
    assert any(":orange-background[**▸ 1:beta**]" in v for v in shown)
    assert any(v == "alpha :orange-background[**beta**] gamma" for v in shown)
