"""AppTest of pages/attention_file.py: a file opened in every format shows the weights it
holds (checked against the array written, by hand for rollout), reaches the Compare page,
survives page switches and a language switch, and every broken or hostile file is refused
with a reason from the catalog in the interface's language while nothing in it runs."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from attention_core.attention_file import FORMATS, MAX_FILE_BYTES, attention_bytes
from attention_core.i18n import catalog, t
from attention_core.limits import EXACT
from tests.support import teaching
from tests.support.apptest import away_and_back, chart, decode, drawn_charts, md_unescape, texts
from tests.support.figures import assert_head_view_weights
from tests.support.hostile import PWNED, RunsOnUnpickle

PAGE = "pages/attention_file.py"
ROOT = Path(__file__).resolve().parents[2]
TOKENS = ["[CLS]", "中和", "<b>x</b>", "有", "[SEP]"]  # markup stays text
L, H, N = 2, 3, len(TOKENS)


def _weights() -> np.ndarray:
    w = np.random.default_rng(7).random((L, H, N, N)) ** 4
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)  # (L, H, n, n)


def _open(
    data: bytes | None = None, name: str = "run.npz", *, lang: str = "en", **state
) -> AppTest:
    at = teaching.open_page("attention_file", {"lang": lang}, state)
    assert not at.exception, at.exception
    if data is not None:
        at.file_uploader(key="file_upload").set_value((name, data, "application/octet-stream"))
        at.run()
        assert not at.exception, at.exception
    return at


def _rollout_by_hand(weights: np.ndarray) -> np.ndarray:
    """Abnar & Zuidema: Ã = ½I + ½·mean over heads, rows renormalised, multiplied up."""
    out, current = [], np.eye(N)
    for layer in weights.astype(np.float64):
        mixed = 0.5 * np.eye(N) + 0.5 * layer.mean(0)
        mixed /= mixed.sum(-1, keepdims=True)
        current = mixed @ current
        out.append(current)
    return np.stack(out)


def test_without_a_file_the_page_says_how_to_open_one() -> None:
    at = _open()
    assert "No file is open yet" in md_unescape(texts(at)) and not drawn_charts(at)
    uploader = at.file_uploader(key="file_upload")
    assert sorted(uploader.allowed_type) == sorted(f".{f}" for f in FORMATS)
    zh = _open(lang="zh-TW")
    assert zh.title[0].value == "開啟注意力檔案" and "還沒有開啟檔案" in texts(zh)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_opens_and_every_view_shows_the_file_s_own_numbers(fmt: str) -> None:
    weights = _weights()
    at = _open(attention_bytes(weights, TOKENS, fmt), f"run.{fmt}")
    assert f"run.{fmt} · 2 layers × 3 heads · 5 tokens" in md_unescape(texts(at))
    tiles = decode(chart(at, "file_model_chart")["data"][0]["z"])  # one tiled trace
    for layer, head in [(0, 0), (1, 2)]:
        r, c = layer * (N + 1), head * (N + 1)
        np.testing.assert_allclose(tiles[r : r + N, c : c + N], weights[layer, head], atol=EXACT)

    at.segmented_control(key="file_view").set_value("layer").run()
    at.select_slider(key="file_layer").set_value(1).run()
    traces = chart(at, "file_layer_chart")["data"]
    assert len(traces) == H and traces[0]["x"][2] == "2:&lt;b&gt;x&lt;/b&gt;"
    for head, trace in enumerate(traces):
        np.testing.assert_allclose(decode(trace["z"]), weights[1, head], atol=EXACT)

    at.segmented_control(key="file_view").set_value("rollout").run()
    rolled = [decode(tr["z"]) for tr in chart(at, "file_map_chart")["data"]]
    np.testing.assert_allclose(np.stack(rolled), _rollout_by_hand(weights), atol=EXACT)
    assert not at.exception


def test_flow_and_the_head_view_take_the_file_too() -> None:
    import networkx as nx

    weights = _weights()
    at = _open(attention_bytes(weights, TOKENS, "npz"), file_view="flow")
    flow = decode(chart(at, "file_map_chart")["data"][0]["z"])  # (n, n)
    # max flow from input token j to the last layer's position i, built with networkx
    graph = nx.DiGraph()
    for layer in range(L):
        mixed = 0.5 * np.eye(N) + 0.5 * weights[layer].astype(np.float64).mean(0)
        mixed /= mixed.sum(-1, keepdims=True)
        for i in range(N):
            for j in range(N):
                graph.add_edge((layer, j), (layer + 1, i), capacity=mixed[i, j])
    for i, j in [(0, 0), (3, 1), (4, 4)]:
        value = nx.maximum_flow_value(graph, (0, j), (L, i))
        assert flow[i, j] == pytest.approx(value, abs=1e-5)
    at.segmented_control(key="file_view").set_value("head").run()
    assert not at.exception
    (view,) = [c for c in at.get("bidi_component") if "head" in c.proto.component_name]
    spec = json.loads(json.loads(view.proto.json)["spec"])
    assert spec["tokens"] == TOKENS  # sent as text, drawn as text nodes
    assert_head_view_weights(spec, weights[0], atol=1e-4)  # 4 decimals


def test_the_file_stays_open_across_pages_and_a_language_switch_and_closes() -> None:
    weights = _weights()
    at = _open(attention_bytes(weights, TOKENS, "safetensors"), "a.safetensors")
    at = away_and_back(at, PAGE)  # Streamlit forgets the uploader; the session keeps the file
    assert "a.safetensors" in md_unescape(texts(at))
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception and "檔案：a.safetensors · 2 層 × 3 個頭 · 5 個詞元" in md_unescape(
        texts(at)
    )
    at.button(key="file_close").click().run()
    assert not at.exception and "還沒有開啟檔案" in md_unescape(texts(at))
    assert "file_attention" not in at.session_state


def test_the_compare_page_opens_on_the_file_s_heads() -> None:
    weights = _weights()
    at = _open(attention_bytes(weights, TOKENS, "pt"), "a.pt")
    at.button(key="file_to_compare").click().run()  # the button switches to Compare…
    assert not at.exception, at.exception
    assert at.session_state["compare_source"] == "file"
    at.switch_page("pages/compare.py")  # …which AppTest's own reruns must be told
    at.run()
    at.select_slider(key="compare_file_layer").set_value(1).run()
    heads = chart(at, "compare_heads_chart")["data"]
    np.testing.assert_allclose(decode(heads[2]["z"]), weights[1, 2], atol=EXACT)
    assert len(chart(at, "compare_sim_chart")["data"][0]["x"]) == H
    assert len(at.dataframe[0].value) == H


def _pickled_pt() -> bytes:
    out = io.BytesIO()
    torch.save({"attentions": torch.from_numpy(_weights()), "tokens": RunsOnUnpickle()}, out)
    return out.getvalue()


def _npz(**arrays: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


BAD_FILES = {
    "not a file at all": (b"<script>alert(1)</script>", "x.npz", "not a readable .npz"),
    "a pickle": (_pickled_pt(), "evil.pt", "not a readable .pt"),
    "scores, not weights": (
        _npz(attentions=-np.ones((1, 1, 2, 2), np.float32), tokens=np.array(["a", "b"])),
        "s.npz",
        "negative numbers",
    ),
    "rows of an SDPA model": (
        _npz(attentions=np.zeros((1, 1, 2, 2), np.float32), tokens=np.array(["a", "b"])),
        "z.npz",
        "rows sum to 0…0, not 1",
    ),
    "tokens that do not match": (
        _npz(attentions=_weights(), tokens=np.array(["a"])),
        "m.npz",
        "1 tokens for attention over 5 positions",
    ),
    "a wrong shape": (
        _npz(attentions=np.ones((2, 3), np.float32), tokens=np.array(["a", "b"])),
        "w.npz",
        "the shape 2 × 3",
    ),
    "too long for the views": (
        attention_bytes(np.full((1, 1, 513, 513), 1 / 513, np.float32), ["a"] * 513, "npz"),
        "long.npz",
        "it holds 513 tokens, and the views here show at most 512",
    ),
    "too large": (
        b"\0" * (MAX_FILE_BYTES + 1),
        "big.npz",
        f"larger than {MAX_FILE_BYTES >> 20} MB",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_broken_or_hostile_file_is_refused_with_its_reason(case: str) -> None:
    data, name, reason = BAD_FILES[case]
    at = _open(data, name)
    (error,) = at.error
    message = md_unescape(error.value)
    assert f"This file cannot be shown ({name}): " in message and reason in message
    assert "No file is open yet" in md_unescape(texts(at)) and not PWNED.exists()
    at.run()  # a rerun reads it once only, and says it again
    assert not at.exception and len(at.error) == 1


def test_a_refused_file_keeps_the_file_before_it_open_and_speaks_chinese() -> None:
    at = _open(attention_bytes(_weights(), TOKENS, "npz"), "good.npz", lang="zh-TW")
    at.file_uploader(key="file_upload").set_value(("bad.npz", b"nope", "application/zip")).run()
    assert not at.exception
    assert "無法顯示這個檔案（bad.npz）：這不是能讀取的 .npz 注意力檔案" in md_unescape(
        at.error[0].value
    )
    assert "good.npz" in md_unescape(texts(at)) and chart(at, "file_model_chart")


def _codes(path: Path) -> set[str]:
    """Every `code="…"` an error is raised with in `path`."""
    return {
        kw.value.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "code" and isinstance(kw.value, ast.Constant)
    }


def test_every_reason_a_file_is_refused_for_has_words_in_both_languages() -> None:
    codes = set.union(
        *(
            _codes(ROOT / path)
            for path in (
                "attention_core/attention_file.py",
                "attention_core/notebook/inputs.py",
                "ui/attention_file.py",
            )
        )
    )
    assert len(codes) >= 12
    missing = {c for c in codes if f"file_error_{c}" not in catalog()}
    assert not missing, f"reasons without catalog text: {missing}"
    assert t("file_error_row_sums", "en", low=0.0, high=0.5).startswith("its rows sum to 0…0.5")
