"""The landing page above 512 tokens: a long map of up to 4 096 tokens, its tiles
over HTTP equal to the module's own weights, find, sentence aggregates, both languages, and
the bounds that cut or refuse a text, each named."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest
import torch

from attention_core.i18n import t
from attention_core.limits import EXACT, MAX_INPUT_CHARS, MAX_LONG_TOKENS, MAX_TEXT_CHARS
from attention_core.long.run import overview_size
from attention_core.long.scale import relative_values
from attention_core.long.stats import long_head_summary
from attention_core.pipeline import queries_keys
from attention_core.settings import ModelSettings
from attention_core.tokenize import tokenize
from tests.support.apptest import chart, drawn_charts, long_map, run_app
from ui.common import md_escape
from ui.long import tiles
from ui.long.chart import LONG_CHART_COMPONENT

LONG = {"text": "字" * 5000, "tokenizer": "char", "embed_dim": "64", "num_heads": "8"}
SENTENCES = " ".join(f"Sentence {i} has a few words in it." for i in range(600))  # 5 400 tokens


def values(tile: dict[str, Any], name: str = "values") -> np.ndarray:
    flat = np.frombuffer(base64.b64decode(tile[name]), dtype="<f4")
    return flat.reshape(tile["shape"])  # (R, C)


def reference_rows(model: ModelSettings, head: int, rows: slice) -> np.ndarray:
    """softmax(q·kᵀ/√D) of some rows, written out from the module's own q and k: (r, n)."""
    tokens = tokenize(model.text[:MAX_TEXT_CHARS], model.tokenizer)[:MAX_LONG_TOKENS]
    q, k, divisor = queries_keys(tokens, model)  # (H, n, D) each
    scores = (q[head, rows] / divisor) @ k[head].T  # (r, n)
    if model.causal:
        r = torch.arange(rows.start, rows.stop)[:, None]
        scores = scores.masked_fill(torch.arange(k.shape[1])[None, :] > r, -torch.inf)
    return torch.softmax(scores, dim=-1).numpy()


def test_4096_tokens_overview_and_an_exact_zoom_equal_to_the_model(monkeypatch) -> None:
    def every_weight(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a long text must not run the (H, n, n) analysis")

    monkeypatch.setattr("attention_core.pipeline.analyze", every_weight)
    at = run_app({**LONG, "causal": "true"})
    assert not at.exception and not at.error
    assert t(
        "long_tokens_cut", "en", count=t("long_count", "en", total=5000), limit=MAX_LONG_TOKENS
    ) in [w.value for w in at.warning]
    data = long_map(at)
    n = MAX_LONG_TOKENS
    assert data["n"] == n == len(data["labels"]) and data["reduce"] == "mass"
    assert data["bytes"] <= 8e6  # the overview of 4 096 × 8 heads travels in ≤ 8 MB
    assert len(data["overview"]) == 8
    for tile in data["overview"]:  # every row and column in a cell, none dropped
        assert tile["rows"][0] == 0 and tile["rows"][-1] == n and tile["cols"][-1] == n
        assert np.allclose(values(tile).sum(axis=1), 1, atol=1e-4)  # mass rows sum to 1
    # a zoom: the browser asks the tile route with the page's id
    query = f"map={data['map']}&head=5&r0=2000&r1=2040&c0=1990&c1=2050&size=256"
    status, tile = tiles.answer(query)
    assert status == 200 and tile["exact"]
    model = ModelSettings(text=LONG["text"], tokenizer="char", embed_dim=64, num_heads=8)
    want = reference_rows(replace_causal(model), 5, slice(2000, 2040))[:, 1990:2050]
    np.testing.assert_allclose(values(tile), want, atol=EXACT, rtol=0)
    # colours relative to each row's own even share 1/(i + 1), said in the caption and the bar
    assert data["scale"]["kind"] == "relative" and data["causal"] is True
    captions = [c.value for c in at.caption]
    assert t("long_scale_caption_relative_causal", "en", n=n, last=n - 1, uniform=1 / n) in captions
    assert data["strings"]["bar"] == "Colours: relative to even (× 1/n) · × even share"
    # what each head does: every weight's statistics, streamed
    stats, _ = long_head_summary(tiles.store().get(data["map"])[0])
    assert t("summary_header", "en") in [h.value for h in at.subheader]
    assert t("long_stats_caption", "en", n=n) in captions
    s = stats[5]
    line = t(
        "summary_line",
        "en",
        head="head 5",
        entropy=s.entropy,
        max_weight=s.max_weight,
        peak=s.peak,
        diagonal=s.diagonal,
        previous=s.previous,
        top=f"{s.top_key}:{data['labels'][s.top_key]}",
    )
    assert any(md_escape(line) in m.value for m in at.markdown)


def test_colour_scales_and_relative_max_cells_from_the_server() -> None:
    at = run_app({**LONG, "embed_dim": "16", "num_heads": "2", "scale": "absolute", "causal": "1"})
    assert not at.exception
    data = long_map(at)
    n = MAX_LONG_TOKENS
    assert data["scale"]["kind"] == "absolute" and data["scale"]["top"] == 1.0
    assert "relative" not in data["overview"][0]  # mass cells: the browser computes them
    assert t("long_scale_caption_absolute", "en", n=n, last=n - 1, uniform=1 / n) in [
        c.value for c in at.caption
    ]
    at.segmented_control(key="color_scale").set_value("relative").run()
    at.segmented_control(key="long_reduce").set_value("max").run()
    assert at.query_params["scale"] == "relative"
    data = long_map(at)
    assert data["scale"]["kind"] == "relative" and data["causal"] is True
    layer = tiles.store().get(data["map"])[0]
    for head, sent in enumerate(data["overview"]):  # causal max cells: their relative values
        tile = layer.overview(head, size=overview_size(2 * 2), reduce="max")
        assert sent["shape"] == list(tile.values.shape)
        np.testing.assert_allclose(values(sent, "relative"), relative_values(layer, tile))
    query = f"map={data['map']}&head=1&r0=0&r1=4096&c0=0&c1=600&size=64&reduce=max"
    status, tile = tiles.answer(query + "&scale=relative")
    assert status == 200 and not tile["exact"] and "relative" in tile
    assert "relative" not in tiles.answer(query + "&scale=absolute")[1]


def replace_causal(model: ModelSettings) -> ModelSettings:
    from dataclasses import replace

    return replace(model, causal=True)


def test_find_jumps_to_the_row_and_blocks_sum_to_one() -> None:
    at = run_app({"text": SENTENCES, "tokenizer": "word", "embed_dim": "16", "num_heads": "2"})
    assert not at.exception
    at.text_input(key="long_find").set_value("Sentence 417 has").run()
    data = long_map(at)
    row = data["focus"]["row"]
    assert data["labels"][row] == "Sentence" and data["labels"][row + 1] == "417"
    at.text_input(key="long_find").set_value("zebra").run()
    assert long_map(at)["focus"] is None
    assert t("long_find_none", "en", query="zebra") in [i.value for i in at.info]
    at.segmented_control(key="long_view").set_value("sentence").run()
    assert not at.exception
    spec = chart(at, "long_blocks_sentence")
    first = spec["data"][0]
    z = np.asarray(first["z"] if isinstance(first["z"], list) else _typed(first["z"]))
    s = -(-MAX_LONG_TOKENS // 9)  # 9 tokens a sentence ("Sentence 5 has … it ."), the last cut
    assert z.shape == (s, s)
    np.testing.assert_allclose(z.sum(axis=1), 1, atol=1e-4)
    at.segmented_control(key="long_view").set_value("paragraph").run()  # one line: one paragraph
    assert not at.exception and t("long_blocks_one", "en") in [i.value for i in at.info]


def _typed(array: dict[str, Any]) -> np.ndarray:
    from tests.support.apptest import decode

    return decode(array)


def test_traditional_chinese_and_a_million_characters_refused() -> None:
    at = run_app({**LONG, "lang": "zh-TW"})
    assert not at.exception
    data = long_map(at)
    assert data["strings"]["hover_pooled"] == t("long_hover_mass", "zh-TW")
    scale, unit = t("scale_relative", "zh-TW"), t("scale_bar_relative", "zh-TW")
    assert data["strings"]["bar"] == t("long_scale_bar", "zh-TW", scale=scale, unit=unit)
    assert data["strings"]["pick"] == t("long_head_pick", "zh-TW")
    assert t("long_reduce_caption_mass", "zh-TW") in [c.value for c in at.caption]
    big = run_app({"tokenizer": "char"})
    big.session_state["text"] = "字" * 1_000_000  # typed (a link cannot carry it)
    big.run()
    assert not big.exception
    assert [e.value for e in big.error] == [
        t("text_refused", "en", n=1_000_000, limit=MAX_INPUT_CHARS)
    ]
    drawn = [e.proto.component_name for e in big.get("bidi_component")]
    assert not drawn_charts(big) and LONG_CHART_COMPONENT not in drawn


@pytest.mark.parametrize("reduce", ["max", "mean"])
def test_reduce_changes_what_a_pixel_says(reduce: str) -> None:
    at = run_app({**LONG, "embed_dim": "16", "num_heads": "2"})
    at.segmented_control(key="long_reduce").set_value(reduce).run()
    data = long_map(at)
    assert data["reduce"] == reduce and data["overview"][0]["reduce"] == reduce
    assert data["strings"]["hover_pooled"] == t(f"long_hover_{reduce}", "en")
    assert "relative" not in data["overview"][0]  # no mask: the browser computes every cell


def test_widest_model_at_4096_tokens_stays_within_the_payload(monkeypatch) -> None:
    # the payload only: its 64 heads' statistics (~6 s) are tested on 8 heads above
    monkeypatch.setattr("ui.long.stats.long_stats", lambda *_: ([], []))
    at = run_app({**LONG, "embed_dim": "1024", "num_heads": "64"})
    assert not at.exception
    data = long_map(at)
    assert len(data["overview"]) == 64 and data["overview"][0]["shape"] == [128, 128]
    assert data["bytes"] <= 8e6
