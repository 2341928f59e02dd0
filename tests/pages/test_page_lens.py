"""AppTest of pages/lens.py and pages/minimal_pairs.py against references computed here
from transformers itself (the packaged all-MiniLM-L6-v2 loaded directly, hooks on its own
modules), never from what the page drew: every view, the bad cases as messages, and a
language switch in the middle of a session. Skipped locally without the model, failed
under CI (tests/support/availability.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from attention_core.limits import EXACT
from tests.support import teaching
from tests.support.apptest import (  # noqa: F401 (offline: autouse)
    chart,
    charts,
    decode,
    md_unescape,
    offline,
    spy_bar_and_cancel,
    texts,
)
from tests.support.availability import needs_minilm, require_minilm
from tests.support.figures import assert_head_view_weights
from ui.headview import HEAD_VIEW_COMPONENT

SENTENCE = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
CHINESE = "中和有一個永和路"

pytestmark = needs_minilm


@pytest.fixture(scope="module")
def reference():
    """transformers itself: text → (tokens, attentions (L, H, n, n), value vectors per
    layer (n, H·D) seen by a forward hook, the model)."""
    folder = require_minilm()
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    model.eval()

    def run(text: str, knocked: tuple[tuple[int, int], ...] = ()):
        values: dict[int, torch.Tensor] = {}
        hooks = [
            layer.attention.self.value.register_forward_hook(
                lambda m, a, out, i=i: values.__setitem__(i, out[0])
            )
            for i, layer in enumerate(model.encoder.layer)
        ]

        def zero(layer: int):
            def hook(module, args, output):
                context = output[0].clone()  # (1, n, H·D)
                for at, head in knocked:
                    if at == layer:
                        context[..., head * 32 : (head + 1) * 32] = 0.0
                return (context, *output[1:])

            return hook

        hooks += [
            layer.attention.self.register_forward_hook(zero(i))
            for i, layer in enumerate(model.encoder.layer)
        ]
        enc = tokenizer(text, return_tensors="pt")
        try:
            with torch.no_grad():
                out = model(**enc, output_attentions=True)
        finally:
            for h in hooks:
                h.remove()
        tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
        return tokens, torch.cat(out.attentions).numpy(), values, out.last_hidden_state[0]

    return run, model


def open_lens(text: str = SENTENCE, *, lang: str = "en", **state: object) -> AppTest:
    at = teaching.open_page("lens", {"text": text, "lang": lang}, state)
    assert not at.exception, at.exception
    return at


def head_view_spec(at: AppTest) -> dict:
    (element,) = [
        e for e in at.get("bidi_component") if e.proto.component_name == HEAD_VIEW_COMPONENT
    ]
    return json.loads(json.loads(element.proto.json)["spec"])


def test_rollout_panels_are_the_product_of_the_models_layers(reference) -> None:
    run, _ = reference
    tokens, attentions, _, _ = run(SENTENCE)
    at = open_lens(lens_kind="rollout")
    spec = chart(at, "lens_map_chart")
    assert len(spec["data"]) == 6  # one panel per layer
    n = len(tokens)
    product = np.eye(n)
    for layer in range(6):
        mixed = 0.5 * np.eye(n) + 0.5 * attentions[layer].astype(np.float64).mean(0)
        mixed /= mixed.sum(-1, keepdims=True)
        product = mixed @ product
        np.testing.assert_allclose(decode(spec["data"][layer]["z"]), product, atol=1e-5)
    assert spec["data"][0]["x"][0] == "0:[CLS]"


def test_norm_weighted_layer_equals_weights_times_hooked_value_norms(reference) -> None:
    run, model = reference
    _tokens, attentions, values, _ = run(SENTENCE)
    at = open_lens(lens_kind="norm", lens_scope="layer", lens_layer=2)
    spec = chart(at, "lens_map_chart")
    dense = model.encoder.layer[2].attention.output.dense.weight  # (C, H·D)
    for head in (0, 7):
        v = values[2][:, head * 32 : (head + 1) * 32]  # (n, D)
        f = (v @ dense[:, head * 32 : (head + 1) * 32].T).norm(dim=-1)  # (n,)
        want = attentions[2, head] * f.detach().numpy()[None, :]
        np.testing.assert_allclose(decode(spec["data"][head]["z"]), want, atol=1e-4)
    assert "‖α_ij · f_h(x_j)‖" in texts(at)


def test_flow_is_refused_politely_for_a_long_text() -> None:
    at = open_lens(" ".join(["word"] * 60), lens_kind="flow")
    assert "limited to 48 tokens" in md_unescape(texts(at))
    assert not at.error


def test_words_pool_chinese_pieces_to_jieba_words(reference) -> None:
    run, _ = reference
    _tokens, attentions, _, _ = run(CHINESE)
    at = open_lens(CHINESE, lens_scope="layer", lens_layer=1, lens_words=True)
    trace = chart(at, "lens_map_chart")["data"][3]
    # [CLS] 中 和 有 一 [UNK] 永 和 [UNK] [SEP] → [CLS] 中和 有 一個 永和路 [SEP]
    assert trace["x"] == ["0:[CLS]", "1:中和", "2:有", "3:一個", "4:永和路", "5:[SEP]"]
    groups = [[0], [1, 2], [3], [4, 5], [6, 7, 8], [9]]
    a = attentions[1, 3]
    want = [[a[np.ix_(q, k)].sum(1).mean() for k in groups] for q in groups]
    np.testing.assert_allclose(decode(trace["z"]), want, atol=1e-5)


def test_head_view_carries_one_layers_weights_and_a_colour_per_head(reference) -> None:
    run, _ = reference
    tokens, attentions, _, _ = run(SENTENCE)
    at = open_lens(lens_view="head", lens_layer=4)
    spec = head_view_spec(at)
    assert spec["tokens"] == tokens
    assert_head_view_weights(spec, attentions[4], atol=6e-5)  # 4 decimals
    assert len({h["color"] for h in spec["heads"]}) == 12
    assert spec["filename"] == "head-view-layer4"


def test_neuron_view_rebuilds_the_models_weight(reference) -> None:
    run, _ = reference
    tokens, attentions, _, _ = run(SENTENCE)
    it, animal = tokens.index("it"), tokens.index("animal")
    at = open_lens(lens_view="neuron", lens_layer=3, lens_head=5, lens_query=it, lens_key=animal)
    z = decode(chart(at, "lens_neuron_chart")["data"][0]["z"])  # (3, D): q, k, q⊙k
    np.testing.assert_allclose(z[2], z[0] * z[1], atol=1e-5)
    caption = md_unescape(texts(at))
    want = attentions[3, 5, it, animal]
    assert f"(output_attentions) for this pair: {want:.6f}" in caption
    assert f"Rebuilt from q and k: {want:.6f}" in caption


def test_ablation_ranks_every_head_and_knocked_heads_move_the_output(reference) -> None:
    run, _ = reference
    _, _, _, original = run(SENTENCE)
    knocked = ((0, 3), (5, 1))
    _, _, _, hidden = run(SENTENCE, knocked)
    at = open_lens(lens_view="ablation", lens_knocked=["0-3", "5-1"])
    grid = chart(at, "lens_effect_chart")
    assert decode(grid["data"][0]["z"]).shape == (6, 12)
    assert grid["data"][1]["x"] == ["head 3", "head 1"] and grid["data"][1]["text"] == ["✕"] * 2
    a, b = hidden.mean(0).double(), original.mean(0).double()
    pooled = 1 - float(torch.nn.functional.cosine_similarity(a, b, dim=0))
    shown = [m.value for m in at.metric]
    assert shown[0] == f"{pooled:.4f}"
    at.multiselect(key="lens_knocked").set_value([]).run()
    assert not at.exception
    assert [m.value for m in at.metric] == ["0.0000", "0.0000"]
    assert "exactly" in texts(at)


def test_a_long_ablation_draws_its_bar_and_cancel_and_takes_them_away_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run expected to take over a second (here: every run) draws a bar that climbs to
    all 72 heads and a Cancel button while it runs; both are gone once the grid is there."""
    drawn = spy_bar_and_cancel(monkeypatch)
    at = open_lens("A new sentence for the bar.", lens_view="ablation")
    chart(at, "lens_effect_chart")
    assert "lens_ablation_cancel" in drawn
    bars = [t for t in drawn if isinstance(t, str) and t.startswith("Knocking out")]
    assert bars and bars[-1].endswith("72 of 72 heads done.")
    assert not at.get("progress") and "lens_ablation_cancel" not in [b.key for b in at.button]


def test_a_cancelled_ablation_says_so_and_starts_again_on_request(
    reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancel (drawn beside the bar of a run over a second) reruns the page, which stops
    the run; the page then measures nothing, says so, and one click starts it again. A
    cancel holds for its own sentence only: with another one the ablation runs."""
    import ui.lens_sources

    run, _ = reference
    tokens, _, _, _ = run(SENTENCE)
    monkeypatch.setattr(ui.lens_sources, "subject_key", lambda lensed: "|".join(lensed.tokens))
    other = open_lens(lens_view="ablation", lens_ablation_cancelled="[CLS]|another|[SEP]")
    assert not other.info and decode(chart(other, "lens_effect_chart")["data"][0]["z"]).size
    at = open_lens(lens_view="ablation", lens_ablation_cancelled="|".join(tokens))
    assert "Cancelled" in " ".join(i.value for i in at.info)
    assert "lens_effect_chart" not in charts(at) and not at.metric
    at.button(key="lens_ablation_again").click().run()
    assert not at.exception
    assert not at.info and decode(chart(at, "lens_effect_chart")["data"][0]["z"]).shape == (6, 12)


def test_sinks_show_each_heads_mass_on_cls(reference) -> None:
    run, _ = reference
    _, attentions, _, _ = run(SENTENCE)
    at = open_lens(lens_view="sinks", lens_sink="cls")
    z = decode(chart(at, "lens_sinks_chart")["data"][0]["z"])
    np.testing.assert_allclose(z, attentions[..., 0].mean(-1), atol=1e-5)  # column 0 = [CLS]
    at.segmented_control(key="lens_sink").set_value("punct").run()
    assert not at.exception
    chart(at, "lens_sinks_chart")


def test_language_switch_mid_session_keeps_the_lens_working() -> None:
    at = open_lens(lens_view="ablation", lens_knocked=["2-2"])
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception
    assert at.title[0].value == "工程師的透鏡：不只看原始的注意力權重"
    assert at.multiselect(key="lens_knocked").value == ["2-2"]
    at.segmented_control(key="lens_view").set_value("sinks").run()
    assert not at.exception and "注意力" in texts(at)
    at.segmented_control(key="lens_view").set_value("neuron").run()
    at.selectbox(key="lens_head").set_value(11).run()
    assert not at.exception
    chart(at, "lens_neuron_chart")


def test_minimal_pairs_rank_heads_by_the_change_of_its_row(reference) -> None:
    run, _ = reference
    tokens, a, _, _ = run(SENTENCE)
    _, b, _, _ = run(WIDE)
    at = teaching.open_page("minimal_pairs", {"text": SENTENCE}, {})
    assert not at.exception, at.exception
    it = tokens.index("it")
    assert at.selectbox(key="pairs_query").value == it
    z = decode(chart(at, "pairs_ranking_chart")["data"][0]["z"])
    same = [i for i in range(len(tokens)) if i != tokens.index("tired")]  # "wide" differs
    want = 0.5 * np.abs(a[:, :, it][..., same] - b[:, :, it][..., same]).sum(-1)
    np.testing.assert_allclose(z, want, atol=1e-5)
    top = np.unravel_index(np.argmax(want), want.shape)
    diff = decode(chart(at, "pairs_diff_chart")["data"][0]["z"])
    np.testing.assert_allclose(diff, b[top] - a[top], atol=1e-5)
    at.text_input(key="pairs_b").set_value("").run()
    assert not at.exception and "both boxes" in texts(at)


def test_the_lens_follows_a_decoder_and_explains_an_encoder_decoder(tmp_path) -> None:
    from attention_core.pretrained import build_tiny_model, load_model, run_model
    from ui.models import MODEL_STATE

    decoder = str(build_tiny_model("decoder", tmp_path / "gpt2"))
    state = {MODEL_STATE: decoder, "lens_view": "neuron", "lens_layer": 1, "lens_head": 3}
    at = open_lens(lens_query=4, lens_key=2, **state)
    want = run_model(load_model(decoder), SENTENCE).attentions[1, 3, 4, 2]  # causal softmax
    caption = md_unescape(texts(at))
    assert f"for this pair: {want:.6f}. Rebuilt from q and k: {want:.6f}" in caption
    at.segmented_control(key="lens_view").set_value("ablation").run()
    assert not at.exception
    assert decode(chart(at, "lens_effect_chart")["data"][0]["z"]).shape == (2, 4)

    seq2seq = str(build_tiny_model("encoder-decoder", tmp_path / "bart"))
    at = open_lens(**{MODEL_STATE: seq2seq, "lens_view": "sinks"})
    assert "encoder-only" in md_unescape(texts(at))  # a clear message, no traceback


def _colour_axes(spec: dict) -> list[dict]:
    """Each heatmap panel's colour axis (plot_heads), in panel order."""
    return [spec["layout"][t["coloraxis"]] for t in spec["data"] if t["type"] == "heatmap"]


def test_colour_scale_on_raw_rollout_and_flow_but_not_norm(reference) -> None:
    """The shared colour scale on the lens on the maps of weights (raw: the model
    view and one layer; rollout), flow only where its rows need not be distributions, and
    none on norm. z stays the weights throughout (hover reads them)."""
    run, _ = reference
    text = "The cat sat."
    tokens, attentions, _, _ = run(text)
    n = len(tokens)
    params = {"text": text, "lang": "en", "scale": "contrast"}
    at = teaching.open_page("lens", params, {})
    assert not at.exception, at.exception
    assert at.button_group(key="color_scale").value == "contrast"
    (grid,) = chart(at, "lens_map_chart")["data"]  # the model view: one tiled trace
    assert (grid["zmin"], grid["zmax"]) == (0, pytest.approx(float(attentions.max()), rel=1e-5))
    assert grid["colorbar"]["title"]["text"] == "% of the largest shown"
    np.testing.assert_allclose(decode(grid["z"])[:n, :n], attentions[0, 0], atol=EXACT)
    at.button_group(key="color_scale").set_value("relative").run()
    (grid,) = chart(at, "lens_map_chart")["data"]
    assert grid["zmax"] == pytest.approx(2 / n) and grid["colorscale"][0][1] == "rgb(5,48,97)"
    assert grid["colorbar"]["title"]["text"] == "× even share"

    at.segmented_control(key="lens_scope").set_value("layer").run()  # one layer, plot_heads
    assert all(a["cmax"] == pytest.approx(2 / n) for a in _colour_axes(chart(at, "lens_map_chart")))
    at.button_group(key="color_scale").set_value("contrast").run()
    tops = [a["cmax"] for a in _colour_axes(chart(at, "lens_map_chart"))]
    assert tops == pytest.approx(attentions[0].max(axis=(1, 2)).tolist(), rel=1e-5)

    at.segmented_control(key="lens_kind").set_value("rollout").run()  # rows sum to 1
    at.button_group(key="color_scale").set_value("relative").run()
    spec = chart(at, "lens_map_chart")
    assert all(a["cmax"] == pytest.approx(2 / n) for a in _colour_axes(spec))
    np.testing.assert_allclose(decode(spec["data"][0]["z"]).sum(-1), 1.0, atol=1e-5)

    at.segmented_control(key="lens_kind").set_value("flow").run()  # rows are no distributions
    assert not at.exception, at.exception
    spec = chart(at, "lens_map_chart")
    (axis,) = _colour_axes(spec)
    assert axis["cmax"] == 1 and axis["colorbar"]["title"]["text"] == "weight"  # absolute
    assert "rows are not distributions" in texts(at)
    assert decode(spec["data"][0]["z"]).sum(-1).max() > 1.0  # why: a row sums above 1
    at.button_group(key="color_scale").set_value("contrast").run()
    spec = chart(at, "lens_map_chart")
    (axis,) = _colour_axes(spec)
    assert axis["cmax"] == pytest.approx(float(decode(spec["data"][0]["z"]).max()), rel=1e-6)
    assert "rows are not distributions" not in texts(at)

    at.segmented_control(key="lens_kind").set_value("norm").run()  # its own 0 … top scale
    assert not at.exception, at.exception
    assert "color_scale" not in [w.key for w in at.button_group]
    spec = chart(at, "lens_map_chart")
    (axis,) = {a["cmax"]: a for a in _colour_axes(spec)}.values()  # one shared axis
    top = max(float(decode(t["z"]).max()) for t in spec["data"] if t["type"] == "heatmap")
    assert axis["cmax"] >= top and f"({axis['cmax']:.2f})" in texts(at)  # all layers' top
    assert axis["colorbar"]["title"]["text"] == "‖α·f(x)‖"  # its own unit, not a scale
    at.segmented_control(key="lens_kind").set_value("raw").run()  # the choice was kept
    assert at.button_group(key="color_scale").value == "contrast"


def _tiny_folder(folder, config_class: str, **settings) -> str:
    """A tiny random decoder of `config_class` saved with the packaged vocabulary."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(require_minilm())
    config = getattr(transformers, config_class)(vocab_size=tokenizer.vocab_size, **settings)
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_neuron_view_of_a_grouped_query_llama_a_gpt_neo_and_a_refusal(
    tmp_path, monkeypatch
) -> None:
    """A Llama's query head 3 reads key/value head 1 (4 heads on 2) after RoPE: drawn, its
    weight the model's own; GPT-Neo's unscaled scores and its local layer's own window of 4:
    drawn, the model's own; a layer whose scores the rebuild does not know (here: the
    rebuilt queries tripled behind the view's back) is a warning, no chart, no number."""
    import attention_core.lens.neuron as neuron_module
    from attention_core.pretrained import load_model, run_model
    from ui.models import MODEL_STATE

    small = {"hidden_size": 32, "num_attention_heads": 4, "max_position_embeddings": 128}
    llama = _tiny_folder(
        tmp_path / "llama", "LlamaConfig", intermediate_size=64, num_hidden_layers=2,
        num_key_value_heads=2, **small,
    )  # fmt: skip
    state = {MODEL_STATE: llama, "lens_view": "neuron", "lens_layer": 1, "lens_head": 3}
    at = open_lens(lens_query=4, lens_key=2, **state)
    want = run_model(load_model(llama), SENTENCE).attentions[1, 3, 4, 2]
    caption = md_unescape(texts(at))
    assert "query head 3 reads key/value head 1" in caption
    assert f"for this pair: {want:.6f}. Rebuilt from q and k: {want:.6f}" in caption
    chart(at, "lens_neuron_chart")

    neo = _tiny_folder(
        tmp_path / "neo", "GPTNeoConfig", num_layers=2, num_heads=4, hidden_size=32,
        max_position_embeddings=128, attention_types=[[["global", "local"], 1]], window_size=4,
    )  # fmt: skip
    at = open_lens(lens_query=6, lens_key=4, **{**state, MODEL_STATE: neo, "lens_head": 1})
    assert not at.exception and not at.warning
    want = run_model(load_model(neo), SENTENCE).attentions[1, 1, 6, 4]
    assert want > 0  # inside the window: keys 3 … 6
    assert f"for this pair: {want:.6f}. Rebuilt from q and k: {want:.6f}" in md_unescape(texts(at))

    original = neuron_module.queries_keys
    monkeypatch.setattr(
        neuron_module, "queries_keys", lambda *args: (original(*args)[0] * 3, original(*args)[1])
    )
    at = open_lens(lens_query=5, lens_key=1, **{**state, "lens_head": 0})  # not cached yet
    assert not at.exception
    assert "LlamaAttention makes its scores in a way the view does not rebuild" in " ".join(
        w.value for w in at.warning
    )
    assert "Rebuilt from q and k" not in md_unescape(texts(at))
    assert "lens_neuron_chart" not in charts(at)


def test_ablation_names_key_value_groups_and_knocks_one_out_in_one_click(tmp_path) -> None:
    """A Llama with 4 query heads on 2 key/value heads: the page names the groups and its
    button knocks out heads 2 and 3 of layer 1 together; the metric is `ablate` of that set."""
    from attention_core.lens import ablate
    from attention_core.pretrained import load_model
    from ui.models import MODEL_STATE

    small = {"hidden_size": 32, "num_attention_heads": 4, "max_position_embeddings": 128}
    llama = _tiny_folder(
        tmp_path / "llama", "LlamaConfig", intermediate_size=64, num_hidden_layers=2,
        num_key_value_heads=2, **small,
    )  # fmt: skip
    at = open_lens(**{MODEL_STATE: llama, "lens_view": "ablation"})
    assert "key/value head 1 (query heads 2, 3)" in md_unescape(texts(at))
    at.selectbox(key="lens_kv_layer").select(1).run()
    at.selectbox(key="lens_kv_group").select(1).run()
    at.button(key="lens_kv_knock").click().run()
    assert not at.exception, at.exception
    assert at.multiselect(key="lens_knocked").value == ["1-2", "1-3"]
    want = ablate(load_model(llama), SENTENCE, [(1, 2), (1, 3)]).pooled_distance
    assert at.metric[0].value == f"{want:.4f}"
    at.radio(key="lang").set_value("zh-TW").run()
    assert not at.exception and "鍵／值頭 1（查詢頭 2, 3）" in md_unescape(texts(at))
