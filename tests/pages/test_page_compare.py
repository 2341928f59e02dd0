"""AppTest of pages/compare.py: the figures show the attention weights (recomputed here from
the module's nn.Linear layers, tests/teaching.py, not by the pipeline under test) and
the pretrained model's, A − B is zero for identical configurations and not for different
seeds, tokens that differ are reported instead of subtracted, and both languages render.
Offline; the pretrained case skips without the packaged model locally, fails under CI."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.limits import EXACT
from tests.support import apptest, teaching
from tests.support.apptest import chart, charts, decode
from tests.support.availability import needs_minilm
from tests.support.teaching import reference_weights

PAGE = "pages/compare.py"
TEXT = "中和有一個永和路"  # jieba: 中和 / 有 / 一個 / 永和路


@pytest.fixture(autouse=True, scope="module")
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


def open_page(*, lang: str = "en", **state: object) -> AppTest:
    """The page in one run, sidebar from the URL (default settings, TEXT), widgets preset."""
    at = teaching.open_page("compare", {"text": TEXT, "lang": lang}, state)
    assert not at.exception, at.exception
    return at


def has_chart(at: AppTest, key: str) -> bool:
    return key in charts(at)


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def test_default_view_shows_heads_difference_stats_and_similarity():
    at = open_page()
    weights = reference_weights(TEXT)  # (4, 4, 4): the sidebar's defaults
    heads = chart(at, "compare_heads_chart")["data"]
    assert len(heads) == 4
    for h, trace in enumerate(heads):
        np.testing.assert_array_equal(decode(trace["z"]), weights[h])
    diff = chart(at, "compare_diff_chart")["data"][0]  # head 0 − head 1 by default
    np.testing.assert_allclose(decode(diff["z"]), weights[0] - weights[1], atol=EXACT)
    assert diff["zmid"] == 0.0 and diff["zmin"] == -diff["zmax"]
    sim = chart(at, "compare_sim_chart")["data"][0]
    z = decode(sim["z"])
    np.testing.assert_allclose(z, z.T, atol=EXACT)
    np.testing.assert_allclose(np.diag(z), 1.0)
    assert sorted(sim["x"]) == ["head 0", "head 1", "head 2", "head 3"]
    assert len(at.dataframe) == 1 and has_chart(at, "compare_stats_chart")


def test_chosen_heads_share_one_scale_and_a_head_minus_itself_is_zero():
    at = open_page(compare_heads=[1, 3], compare_a=2, compare_b=2)
    weights = reference_weights(TEXT)
    spec = chart(at, "compare_heads_chart")
    assert [t["name"] for t in spec["data"]] == ["head 1", "head 3"]
    np.testing.assert_array_equal(decode(spec["data"][1]["z"]), weights[3])
    # one shared colour axis; default colours relative to 1/n (n = 4): 0 … 2/4
    assert [t["coloraxis"] for t in spec["data"]] == ["coloraxis"] * 2
    axis = spec["layout"]["coloraxis"]
    assert axis["cmin"] == 0 and axis["cmax"] == 0.5
    diff = chart(at, "compare_diff_chart")["data"][0]
    assert not decode(diff["z"]).any()
    assert "identical" in texts(at.success)


def test_difference_and_statistics_scales_start_where_their_meaning_does():
    at = open_page(compare_a=0, compare_b=1, compare_metric="entropy")
    weights = reference_weights(TEXT)
    diff = chart(at, "compare_diff_chart")["data"][0]
    assert (diff["zmin"], diff["zmax"]) == (-1.0, 1.0)  # noise stays pale
    bars = chart(at, "compare_stats_chart")
    assert bars["layout"]["yaxis"]["range"] == [0.0, 1.0]
    sim = chart(at, "compare_sim_chart")["data"][0]
    assert (sim["zmin"], sim["zmax"]) == (0.0, 1.0)
    at.toggle(key="compare_diff_zoom").set_value(True).run()
    zoomed = chart(at, "compare_diff_chart")
    peak = float(np.abs(weights[0] - weights[1]).max())
    assert zoomed["data"][0]["zmax"] == pytest.approx(peak, rel=1e-5)
    assert f"±{peak:.3f}" in zoomed["data"][0]["colorbar"]["title"]["text"]  # it says so


def test_stats_table_sorted_by_the_chosen_metric():
    at = open_page(compare_sort="max_weight", compare_metric="diagonal")
    table = at.dataframe[0].value
    assert list(table["max_weight"]) == sorted(table["max_weight"], reverse=True)
    bars = chart(at, "compare_stats_chart")["data"][0]
    assert bars["x"] == list(table["head"])  # bars in the table's order
    np.testing.assert_allclose(decode(bars["y"]), table["diagonal"], rtol=1e-6)


def test_configs_seed_0_vs_seed_1_differ():
    at = open_page(compare_mode="configs", compare_b_seed=1)
    a = reference_weights(TEXT, seed=0)
    b = reference_weights(TEXT, seed=1)
    grid_b = chart(at, "compare_grid_b")["data"]
    np.testing.assert_array_equal(decode(grid_b[2]["z"]), b[2])
    diff = decode(chart(at, "compare_diff_chart")["data"][0]["z"])  # A head 0 − B head 0
    assert np.abs(diff).max() > 0.01
    np.testing.assert_allclose(diff, a[0] - b[0], atol=EXACT)
    assert "B · head 0" in chart(at, "compare_sim_chart")["data"][0]["x"]


def test_configs_identical_show_a_zero_difference():
    at = open_page(compare_mode="configs", compare_b_seed=0)
    assert "B is the same as A" in texts(at.caption)
    diff = chart(at, "compare_diff_chart")["data"][0]
    assert not decode(diff["z"]).any()
    assert "identical" in texts(at.success)


def test_configs_with_other_tokens_explain_instead_of_subtracting():
    at = open_page(compare_mode="configs", compare_b_tokenizer="char", compare_b_num_heads=8)
    assert "A − B is not defined" in texts(at.info)
    assert not has_chart(at, "compare_diff_chart")
    assert len(chart(at, "compare_grid_b")["data"]) == 8
    chips = texts(at.markdown)
    assert "0:中和" in chips and "4:個" in chips  # both token lists are shown


@needs_minilm
def test_pretrained_source_compares_one_layer_of_the_model():
    from attention_core.pretrained import load_model, run_model

    at = open_page(compare_source="pretrained", compare_layer=2, compare_heads=[0, 11])
    reference = run_model(load_model(), TEXT).attentions[2]  # (12, n, n), checked vs HF elsewhere
    heads = chart(at, "compare_heads_chart")["data"]
    np.testing.assert_allclose(decode(heads[1]["z"]), reference[11], atol=EXACT)
    assert heads[0]["x"][0] == "0:[CLS]"
    assert len(chart(at, "compare_sim_chart")["data"][0]["x"]) == 12
    assert len(at.dataframe[0].value) == 12


def test_zh_tw():
    at = open_page(lang="zh-TW", compare_mode="configs", compare_b_seed=0)
    assert at.title[0].value == "比較注意力頭"
    assert "B 與 A 相同" in texts(at.caption)
    assert "頭 0" in chart(at, "compare_diff_chart")["layout"]["title"]["text"]


def test_heads_sent_from_the_training_page_are_a_source():
    weights = np.stack([np.eye(3), np.fliplr(np.eye(3))]).astype(np.float32)  # (2, 3, 3)
    sent = {"weights": weights, "labels": ["0:a", "1:b", "2:c"], "title": "reverse · step 9"}
    at = apptest.run_app(page=PAGE, compare_trained=sent)
    assert not at.exception
    assert at.session_state["compare_source"] == "trained"
    traces = apptest.heatmaps(at)
    assert [t["x"] for t in traces[:2]] == [sent["labels"]] * 2
    np.testing.assert_array_equal(decode(traces[1]["z"]), weights[1])


def test_a_long_text_compares_the_modules_heads_over_every_weight() -> None:
    """Past 512 tokens the module's heads are compared from their maps: statistics and
    similarity equal to the exact numbers (pipeline.analyze up to 600 tokens)."""
    from attention_core.pipeline import analyze
    from attention_core.settings import ModelSettings
    from attention_core.stats import STAT_NAMES, head_similarity, head_stats

    text = "字" * 600
    params = {"text": text, "tokenizer": "char", "embed_dim": "16", "num_heads": "4"}
    at = teaching.open_page("compare", {**params, "causal": "true", "lang": "en"})
    assert not at.exception and not at.error
    model = ModelSettings(text=text, tokenizer="char", embed_dim=16, num_heads=4, causal=True)
    weights = analyze(model, max_tokens=600).weights  # (H, n, n): every weight, for reference
    assert any("600 tokens, more than the 512" in i.value for i in at.info)  # the long path
    (table,) = [d.value for d in at.dataframe]
    for h, want in enumerate(head_stats(weights)):
        row = table[table["head"] == f"head {h}"].iloc[0]
        for name in STAT_NAMES:
            assert row[name] == pytest.approx(getattr(want, name), abs=1e-4), (h, name)
    drawn = chart(at, "compare_sim_chart")["data"][0]
    order = [int(str(x).split()[-1]) for x in drawn["x"]]
    want = head_similarity(weights)[np.ix_(order, order)]
    np.testing.assert_allclose(decode(drawn["z"]), want, atol=1e-4)
