"""The pretrained page past 512 tokens: a real model whose context is longer (a
tiny Llama with an 8 192-token context: rotary positions, grouped-query attention) shows a
4 096-token text as a long map per layer, its overview and tiles equal to transformers' own
output_attentions; find and sentence aggregates; the bound that cut the text named; a model
whose map could not be its own numbers (Mistral past its sliding window) refused with the
reason; both languages. Tiny models are built offline; their tokenizer is the packaged
model's vocabulary (skipped locally without it, failed under CI)."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np
import pytest

from attention_core.i18n import t
from attention_core.limits import EXACT, MAX_INPUT_CHARS, MAX_LONG_TOKENS
from tests.support.apptest import chart, decode, long_map, weights_of
from tests.support.availability import needs_minilm
from tests.support.models import minilm_tokenizer, tiny_decoder
from tests.support.teaching import open_page
from ui.long import tiles
from ui.long.chart import LONG_CHART_COMPONENT

pytestmark = needs_minilm

SENTENCE = "the cat sat on the mat and then it slept. "  # 11 tokens
TEXT = SENTENCE * 400  # 4 402 tokens with [CLS] and [SEP]: cut at MAX_LONG_TOKENS


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> str:
    from attention_core.pretrained import build_tiny_model

    return str(build_tiny_model("llama", tmp_path_factory.mktemp("llama"), context=8192))


@functools.cache
def own_attentions(folder: str, text: str = TEXT) -> np.ndarray:
    """transformers' own eager weights for `text`'s first 4 096 tokens, (L, H, n, n)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        folder, attn_implementation="eager", local_files_only=True
    ).eval()
    enc = tokenizer(text, return_tensors="pt", truncation=True, max_length=MAX_LONG_TOKENS)
    with torch.no_grad():
        out = model(**enc, output_attentions=True)
    return torch.cat(out.attentions).numpy()  # (L, H, n, n)


def own_tokens(folder: str, text: str) -> list[str]:
    """The model's tokens of `text`'s first 4 096, as transformers' tokenizer gives them."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    ids = tokenizer(text, truncation=True, max_length=MAX_LONG_TOKENS)["input_ids"]
    return tokenizer.convert_ids_to_tokens(ids)


def page(folder: str, **state: object):
    at = open_page(
        "pretrained", {"text": TEXT, "lang": "en"}, {"pretrained_model": folder, **state}
    )
    assert not at.exception, at.exception
    return at


def test_4096_tokens_through_a_llama_are_a_long_map_equal_to_its_own_weights(llama) -> None:
    at = page(llama)
    assert not at.error
    warnings = [w.value for w in at.warning]
    assert (
        t("long_tokens_cut", "en", count=t("long_count", "en", total=4402), limit=MAX_LONG_TOKENS)
        in warnings
    )
    assert any("its context: 8192 tokens" in c.value for c in at.caption)
    data = long_map(at)
    assert (data["n"], data["layer"], len(data["overview"])) == (4096, 0, 4)
    assert data["labels"][:3] == ["[CLS]", "the", "cat"]
    own = own_attentions(llama)  # (2, 4, 4096, 4096)
    # the overview of head 2, pooled as "share" (mass): 16 × 16 tokens a cell
    tile = data["overview"][2]
    shape = tile["shape"]
    got = np.frombuffer(__import__("base64").b64decode(tile["values"]), "<f4").reshape(shape)
    want = own[0, 2].reshape(256, 16, 256, 16).sum(axis=3).mean(axis=1)  # (256, 256)
    np.testing.assert_allclose(got, want, atol=EXACT)
    # layer 1, from the tile route's store: an exact rectangle equals the model's own
    at.selectbox(key="pretrained_long_layer").set_value(1).run()
    data = long_map(at)
    assert data["layer"] == 1
    exact = tiles.store().region(data["map"], 1, 3, slice(3000, 3040), slice(2980, 3040), size=256)
    assert exact is not None and exact.exact
    np.testing.assert_allclose(exact.values, own[1, 3, 3000:3040, 2980:3040], atol=EXACT)


def test_find_and_sentences_on_a_real_models_long_map(llama) -> None:
    at = page(llama, pretrained_long_find="slept")
    rows = at.selectbox(key="pretrained_long_find_row")
    assert rows.options[0].startswith("row 10")  # [CLS] the cat sat on the mat and then it slept
    assert long_map(at)["focus"]["row"] == 10
    at.segmented_control(key="pretrained_long_view").set_value("sentence").run()
    assert not at.exception
    first = chart(at, "pretrained_long_blocks_sentence")["data"][0]  # layer 0, head 0
    z = np.asarray(first["z"] if isinstance(first["z"], list) else decode(first["z"]))
    # sentences: [CLS] + the first 11 tokens, then 11 tokens each; the cut one ends at [SEP]
    starts = [0, *range(12, 4096, 11)]
    own = own_attentions(llama)[0, 0]  # (n, n)
    edges = [*starts, 4096]
    want = np.array(
        [
            [own[a:b, c:d].sum(axis=1).mean() for c, d in itertools.pairwise(edges)]
            for a, b in itertools.pairwise(edges)
        ]
    )  # (S, S): each block's rows' share of attention to each block
    np.testing.assert_allclose(z, want, atol=1e-4)
    at.radio(key="lang").set_value("zh-TW").run()  # and in Chinese, mid-session
    assert not at.exception
    assert any("上下文長度：8192" in c.value for c in at.caption)


def test_a_model_whose_window_is_shorter_than_the_text_is_refused(tmp_path: Path) -> None:
    tokenizer = minilm_tokenizer()
    own = {"num_key_value_heads": 2, "sliding_window": 256}
    tiny_decoder("MistralConfig", tokenizer.vocab_size, **own).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    at = page(str(tmp_path))
    assert len(at.error) == 1
    assert "sliding window" in at.error[0].value and "256" in at.error[0].value
    drawn = [e.proto.component_name for e in at.get("bidi_component")]
    assert LONG_CHART_COMPONENT not in drawn  # no map drawn


# --- the Lens page on the same text -----------------------------------------------------


def lens(folder: str, **state: object):
    params = {"text": TEXT, "lang": "en"}
    at = open_page("lens", params, {"_pretrained_model_name": folder, **state})
    assert not at.exception, at.exception
    return at


def pairs(folder: str):
    at = open_page("minimal_pairs", {"lang": "en"}, {"_pretrained_model_name": folder})
    assert not at.exception, at.exception
    return at


def test_the_lens_shows_where_a_llamas_attention_pools_at_4096_tokens(llama) -> None:
    at = lens(llama, lens_long_layer=1)
    assert not at.error
    own = own_attentions(llama)  # (L, H, n, n)
    received = chart(at, "lens_long_received")["data"]
    assert len(received) == 4
    for h, trace in enumerate(received):  # each key's weight, averaged over the queries
        np.testing.assert_allclose(decode(trace["y"]), own[1, h].mean(axis=0), atol=1e-6)
    sinks = chart(at, "lens_long_sinks")["data"][0]  # share on the first token, (L, H)
    np.testing.assert_allclose(weights_of(sinks), own[..., 0].mean(axis=-1), atol=1e-6)
    assert any("Flow" not in c.value and "max-flow" in c.value for c in at.caption)


def test_the_lens_rolls_out_a_llamas_last_token_through_every_layer(llama) -> None:
    at = lens(llama, lens_long_view="rollout")
    own = own_attentions(llama).astype(np.float64)
    # rollout written out for one row: v ← v·(0.5·I + 0.5·mean_h A_l), last layer first
    v = np.zeros(4096)
    v[4095] = 1.0
    for layer in reversed(range(own.shape[0])):
        v = 0.5 * v + 0.5 * (v @ own[layer].mean(axis=0))
    rolled, last = chart(at, "lens_long_rollout")["data"]
    np.testing.assert_allclose(decode(rolled["y"]), v, atol=1e-6)
    np.testing.assert_allclose(decode(last["y"]), own[-1, :, 4095].mean(axis=0), atol=1e-6)
    (table,) = [d.value for d in at.dataframe]
    assert len(table) == 10 and table.iloc[0, 1] == pytest.approx(v.max(), abs=1e-6)
    at.number_input(key="lens_long_row").set_value(10).run()
    assert not at.exception
    at.radio(key="lang").set_value("zh-TW").run()  # and in Chinese, mid-session
    assert not at.exception and "注意力展開" in chart(at, "lens_long_rollout")["data"][0]["name"]


@pytest.mark.parametrize("where", ["pretrained", "lens", "minimal_pairs"])
def test_a_million_characters_are_refused_before_tokenizing(llama, where: str, monkeypatch) -> None:
    at = {"pretrained": page, "lens": lens}.get(where, pairs)(llama)
    field = "pairs_a" if where == "minimal_pairs" else "text"
    at.session_state[field] = "字" * 1_000_000  # typed (a link cannot carry it)
    from ui.cache import loaded_model

    tokenizer_class = type(loaded_model(llama).tokenizer)
    calls: list[int] = []
    original = tokenizer_class.__call__

    def counting(self, text, *args, **kwargs):
        calls.append(len(text) if isinstance(text, str) else -1)
        return original(self, text, *args, **kwargs)

    monkeypatch.setattr(tokenizer_class, "__call__", counting)
    at.run()
    assert not at.exception
    assert not [c for c in calls if c > 1000]  # the text was never tokenized
    assert [e.value for e in at.error] == [
        t("text_refused", "en", n=1_000_000, limit=MAX_INPUT_CHARS)
    ]
    drawn = [e.proto.component_name for e in at.get("bidi_component")]
    assert LONG_CHART_COMPONENT not in drawn


# --- the Compare page on the same text ---------------------------------------------------


def test_compare_reads_every_weight_of_a_llamas_heads_at_4096_tokens(llama) -> None:
    from scipy.spatial.distance import jensenshannon

    from attention_core.stats import STAT_NAMES, head_stats

    params = {"text": TEXT, "lang": "en"}
    state = {"_pretrained_model_name": llama, "compare_source": "pretrained"}
    at = open_page("compare", params, {**state, "compare_long_layer": 1})
    assert not at.exception and not at.error
    own = own_attentions(llama)[1]  # (H, n, n): layer 1
    (table,) = [d.value for d in at.dataframe]
    want = head_stats(own)
    for h in range(4):  # every statistic of every head, as the exact page computes it
        row = table[table["head"] == f"head {h}"].iloc[0]
        for name in STAT_NAMES:
            assert row[name] == pytest.approx(getattr(want[h], name), abs=1e-4), (h, name)
    sim = weights_of(chart(at, "compare_sim_chart")["data"][0])  # (H, H) in similarity order
    names = chart(at, "compare_sim_chart")["data"][0]["x"]
    order = [int(str(x).split()[-1]) for x in names]
    for i, a in enumerate(order):  # 1 − mean JSD/ln 2 over rows, from scipy, pair by pair
        for j, b in enumerate(order):
            js = jensenshannon(own[a], own[b], axis=1, base=2) ** 2 if a != b else 0.0
            assert sim[i, j] == pytest.approx(1 - np.mean(js), abs=1e-4), (a, b)
    assert any("an A − B difference map is drawn" in i.value for i in at.info)


# --- Minimal pairs of long texts -------------------------------------------------------


def test_a_long_minimal_pair_ranks_heads_by_the_models_own_rows(llama) -> None:
    """Two 4 096-token prompts that differ in one word (sentence 300: cat → dog): the last
    token's row in every layer × head, against transformers' own weights of both texts."""
    from attention_core.lens.minimal_pairs import shared_tokens

    text_b = SENTENCE * 300 + SENTENCE.replace("cat", "dog") + SENTENCE * 99
    state = {"_pretrained_model_name": llama, "pairs_a": TEXT, "pairs_b": text_b}
    at = open_page("minimal_pairs", {"lang": "en"}, state)
    assert not at.exception and not at.error
    own_a, own_b = own_attentions(llama), own_attentions(llama, text_b)
    tokens_a, tokens_b = own_tokens(llama, TEXT), own_tokens(llama, text_b)
    pairs = shared_tokens(tokens_a, tokens_b)
    cols_a, cols_b = [i for i, _ in pairs], [j for _, j in pairs]
    rows_a = own_a[:, :, 4095, cols_a].astype(np.float64)  # (L, H, s): the last token's rows
    rows_b = own_b[:, :, 4095, cols_b].astype(np.float64)
    want = 0.5 * np.abs(rows_a - rows_b).sum(axis=-1)  # (L, H) total variation
    grid = chart(at, "pairs_long_ranking")["data"][0]
    np.testing.assert_allclose(weights_of(grid), want, atol=1e-5)
    lines = chart(at, "pairs_long_rows")["data"]
    layer, head = np.unravel_index(np.argmax(want), want.shape)
    np.testing.assert_allclose(decode(lines[1]["y"]), rows_b[layer, head], atol=EXACT)
    at.radio(key="lang").set_value("zh-TW").run()  # and in Chinese, mid-session
    assert not at.exception
