"""AppTest of pages/train.py: Train runs to the end, the replay has one position per
snapshot, the heads are the library's own snapshots, bad settings give the library's
message instead of a run, Stop keeps the partial run, the trained heads reach the Compare
page's session key, and both languages render. Offline, no browser."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.limits import EXACT
from attention_core.train import default_config
from attention_core.train.induction import accuracy_without
from attention_core.train.live import LiveRun, example_labels, single_thread
from attention_core.train.live import live_config as _live_config
from tests.support.apptest import chart, decode, run_app, texts

PAGE = "pages/train.py"
RUN = "_train_live_run"
SETTINGS = ("seq_len", "vocab_size", "embed_dim", "num_heads", "steps", "lr", "seed")


def open_train(params: dict[str, str] | None = None, **state: object) -> AppTest:
    """The page at the "fast" pace (the default "watch" pace spreads a run over ~10 s)."""
    at = run_app({"pace": "fast", **(params or {})}, page=PAGE, **state)
    assert not at.exception, at.exception
    return at


def panels(at: AppTest, key: str) -> list[np.ndarray]:
    return [decode(t["z"]) for t in chart(at, key)["data"] if t["type"] == "heatmap"]


def plain(at: AppTest) -> str:
    """The page's text with md_escape's backslashes removed."""
    return texts(at).replace("\\", "")


def train_with(at: AppTest, **settings: object) -> AppTest:
    for name, value in settings.items():
        at.session_state[f"train_{name}"] = value
    at.run()
    at.button("train_run").click()
    at.run()
    assert not at.exception, at.exception
    return at


def accuracy_shown(at: AppTest) -> float:
    metrics = {m.label: m.value for m in at.metric}
    return float(metrics["Accuracy"].rstrip("%"))


def test_page_opens_with_the_reverse_defaults_and_its_target_pattern():
    at = open_train()
    reverse = default_config("reverse")
    assert at.selectbox(key="train_task").value == "reverse"
    for name in SETTINGS:
        assert at.session_state[f"train_{name}"] == getattr(reverse, name), name
    # the target: an anti-diagonal, one cell per row, labelled with the example sequence
    (target,) = panels(at, "train_target")
    np.testing.assert_array_equal(target, np.eye(6)[::-1])
    spec = chart(at, "train_target")
    assert spec["data"][0]["x"] == example_labels(reverse)
    assert "anti-diagonal" in plain(at)
    assert "Press Train" in plain(at)
    assert not at.button(key="train_run").disabled and at.button(key="train_stop").disabled


def test_train_runs_to_the_end_and_the_replay_shows_every_snapshot():
    at = train_with(open_train(), steps=20)
    run: LiveRun = at.session_state[RUN]
    assert run.status == "done"
    replay = at.select_slider(key="train_replay")
    assert [int(v) for v in replay.options] == [0, 10, 20] == [s.step for s in run.snapshots]
    assert int(replay.value) == 20
    heads = panels(at, "train_heads")
    assert len(heads) == 2 and all(h.shape == (6, 6) for h in heads)
    np.testing.assert_allclose(np.stack(heads).sum(-1), 1.0, atol=1e-5)  # rows sum to 1
    # the reference: the library's own training of the same config, on one thread
    config = _live_config("reverse", **{n: at.session_state[f"train_{n}"] for n in SETTINGS})
    with single_thread():
        last = LiveRun.start(config)
        last.run_to_end()
    np.testing.assert_array_equal(np.stack(heads), last.snapshots[-1].weights)
    # the curves: every snapshot's loss, and the marker at the replayed step
    loss = chart(at, "train_curves")["data"][0]
    np.testing.assert_allclose(decode(loss["y"]), last.losses, rtol=1e-6)
    assert any(s["x0"] == 20 for s in chart(at, "train_curves")["layout"]["shapes"])
    assert "Trained 20 steps" in plain(at)
    stats = at.dataframe[1].value  # [0] is the answers table
    assert len(stats) == 2 and "entropy" in stats.columns
    assert not at.button(key="train_run").disabled and at.button(key="train_stop").disabled

    # replay step 0: the untrained, random heads
    at.select_slider(key="train_replay").set_value(0).run()
    assert not at.exception
    np.testing.assert_array_equal(np.stack(panels(at, "train_heads")), last.snapshots[0].weights)
    assert "answers at step 0" in plain(at)


@pytest.mark.parametrize(
    ("settings", "message"),
    [  # the library's reason, in the catalog's words
        ({"steps": 0}, "Training steps must be from 1 to 5000, not 0"),
        ({"steps": 5001}, "Training steps must be from 1 to 5000, not 5001"),
        ({"seq_len": 1}, "Sequence length n must be from 2 to 16, not 1"),
        ({"task": "match", "seq_len": 5}, "the sequence length must be even, not 5"),
    ],
)
def test_bad_settings_show_the_library_message_and_do_not_train(settings, message):
    at = open_train()
    for name, value in settings.items():
        at.session_state[f"train_{name}"] = value
    at.run()
    assert not at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("cannot be trained" in w and message in w for w in warnings), warnings
    assert at.button(key="train_run").disabled
    assert RUN not in at.session_state


def test_train_callback_refuses_settings_changed_at_the_click():
    at = open_train()
    at.session_state["train_steps"] = 0  # changed in the same rerun as the click
    at.button("train_run").click()
    at.run()
    assert not at.exception
    assert RUN not in at.session_state
    message = "Training steps must be from 1 to 5000, not 0"
    assert any(message in w.value.replace("\\", "") for w in at.warning)


def test_heads_that_do_not_divide_embed_dim_are_reported_and_fixed():
    at = open_train(train_embed_dim=6, train_num_heads=4)
    # (the first run already set them to the defaults; set them again for the page)
    at.session_state["train_embed_dim"] = 6
    at.session_state["train_num_heads"] = 4
    at.run()
    assert not at.exception
    warning = " ".join(w.value.replace("\\", "") for w in at.warning)
    expected = "embed_dim = 6 cannot be split into 4 heads; possible numbers of heads: 1, 2, 3, 6"
    assert expected in warning
    assert at.select_slider(key="train_num_heads").value == 3  # the nearest divisor
    assert at.select_slider(key="train_num_heads").options == ["1", "2", "3", "6"]


def test_choosing_a_task_resets_the_settings_to_its_defaults():
    at = open_train()
    at.number_input(key="train_seed").set_value(7).run()
    at.selectbox(key="train_task").set_value("sort").run()
    assert not at.exception
    sort = default_config("sort")
    for name in SETTINGS:
        assert at.session_state[f"train_{name}"] == getattr(sort, name), name
    # sort's own defaults, not the ones shared by the other tasks
    assert at.session_state["train_num_heads"] == 1
    assert at.session_state["train_seed"] == sort.seed != 7


def test_stop_keeps_the_partial_run():
    at = open_train()
    config = _live_config("reverse", **{n: at.session_state[f"train_{n}"] for n in SETTINGS})
    run = LiveRun.start(config)
    run.advance()
    run.advance()  # steps 0 and 10: then the Stop click cut the script off ...
    run.request_stop()  # ... and its callback asked the run to stop (the browser test clicks)
    at.session_state[RUN] = run
    at.run()
    assert not at.exception, at.exception
    assert run.status == "stopped" and run.snapshots[-1].step == 11
    assert "Stopped at step 11 of 300" in plain(at)
    assert [int(v) for v in at.select_slider(key="train_replay").options] == [0, 10, 11]
    assert 0 <= accuracy_shown(at) <= 100  # the partial model was evaluated
    assert not at.button(key="train_run").disabled and at.button(key="train_stop").disabled


def test_train_while_running_keeps_the_one_run():
    at = open_train(train_steps=20)
    at.session_state["train_steps"] = 20
    at.run()
    config = _live_config("reverse", **{n: at.session_state[f"train_{n}"] for n in SETTINGS})
    run = LiveRun.start(config)
    run.advance()
    at.session_state[RUN] = run
    at.button("train_run").click()  # rendered enabled before the run was put in place
    at.run()
    assert not at.exception
    assert at.session_state[RUN] is run and run.status == "done"


def test_send_to_compare_stores_the_trained_heads_and_keeps_the_settings():
    at = open_train({"text": "中和有一個永和路", "seed": "5"})
    at = train_with(at, steps=20)
    at.button("train_send").click()
    at.run()
    assert not at.exception, at.exception
    sent = at.session_state["compare_trained"]
    run: LiveRun = at.session_state[RUN]
    assert sent["weights"].dtype == np.float32 and sent["weights"].shape == (2, 6, 6)
    np.testing.assert_array_equal(sent["weights"], run.snapshots[-1].weights)
    assert sent["labels"] == example_labels(run.config)
    assert re.fullmatch(r"Reverse the sequence · step 20", sent["title"])
    # the Compare page is shown, with the sidebar's settings (and the URL) intact
    assert [t.value for t in at.title] == ["Compare attention heads"]
    assert at.session_state["text"] == "中和有一個永和路" and at.session_state["seed"] == 5
    assert at.query_params["seed"] == "5"


def test_zh_tw_renders():
    at = train_with(open_train({"lang": "zh-TW"}), steps=10)
    text = plain(at)
    assert "即時訓練注意力" in text and "反對角線" in text and "保留資料評估" in text
    assert "已訓練 10 步" in text


def test_default_reverse_reaches_a_sharp_pattern_through_the_page():
    at = open_train()
    started = time.perf_counter()
    at.button("train_run").click()
    at.run()
    wall = time.perf_counter() - started
    assert not at.exception
    print(f"default reverse through the page: {wall:.1f} s wall")
    assert accuracy_shown(at) >= 95.0
    assert "puts" in plain(at)  # the sharp-head verdict, not the "train longer" one


# --- the induction task, pace, continue, playback, trained weights in the lessons -------------
def _finished(task: str = "reverse", **overrides: object) -> LiveRun:
    run = LiveRun.start(default_config(task, **overrides))
    run.run_to_end()
    return run


def test_induction_run_draws_the_detector_and_names_its_heads():
    at = open_train()
    at.selectbox(key="train_task").set_value("induction").run()
    assert at.session_state["train_seq_len"] == 24  # the task's defaults, beyond 16
    at.session_state["train_steps"] = 250  # the circuit forms by ~150 (bench/section_train.py)
    at.run()
    at.button("train_run").click().run()
    assert not at.exception, at.exception
    run: LiveRun = at.session_state[RUN]
    assert run.status == "done" and run.evaluation.accuracy >= 0.95
    detector = chart(at, "train_detector")
    assert len(detector["data"]) == 2 * 3  # two panels x (2 + 1) heads
    heads = chart(at, "train_heads")
    titles = [a["text"] for a in heads["layout"]["annotations"]]
    assert any("layer 1 · head 0: induction head" in title for title in titles), titles
    assert "layer 1 · head 0: induction head (score" in plain(at)
    assert "have no answer" in plain(at)  # the first period's positions

    # knocking each head out: the bars against the model's own knock-out path (its
    # forward(knock_out=...)), not the page's (lens.toy_head_effects, forward hooks)
    at.toggle(key="train_knockout").set_value(True).run()
    assert not at.exception, at.exception
    bars = chart(at, "train_knockout_chart")["data"][0]
    assert bars["x"] == ["layer 0 · head 0", "layer 0 · head 1", "layer 1 · head 0"]
    shown = decode(bars["y"])
    expected = [accuracy_without(run.model, run.config, [head]) for head in range(3)]
    np.testing.assert_allclose(shown, expected, atol=EXACT)
    assert shown[2] <= 0.3  # the induction head: near chance without it
    assert "Without layer 1 · head 0 the accuracy falls to" in plain(at)


def test_pace_comes_from_the_url_and_a_bad_value_is_reported():
    at = run_app({"pace": "slow"}, page=PAGE)
    assert at.session_state["train_pace"] == "slow" and at.query_params["pace"] == "slow"
    at = run_app({"pace": "warp"}, page=PAGE)
    assert at.session_state["train_pace"] == "watch"
    assert any("warp" in w.value for w in at.warning)


def test_continue_carries_a_stopped_run_to_the_end():
    run = LiveRun.start(default_config("reverse", steps=30))
    run.advance()
    run.request_stop()
    run.advance()  # stopped at step 1
    at = open_train(**{RUN: run})
    assert "Stopped at step 1 of 30" in plain(at)
    at.button("train_continue").click().run()
    assert not at.exception, at.exception
    assert at.session_state[RUN].status == "done"
    assert "Trained 30 steps" in plain(at)


def test_playback_moves_the_scrubber_from_the_start_to_the_end_and_before_after():
    at = open_train(**{RUN: _finished(steps=40)})
    at.select_slider(key="train_replay").set_value(0).run()
    assert int(at.select_slider(key="train_replay").value) == 0
    at.button("train_play").click().run()  # fast pace: no wait between frames
    assert not at.exception, at.exception
    assert int(at.select_slider(key="train_replay").value) == 40
    at.toggle(key="train_before_after").set_value(True).run()
    before, after = panels(at, "train_heads_before"), panels(at, "train_heads_after")
    run = at.session_state[RUN]
    np.testing.assert_array_equal(np.stack(before), run.snapshots[0].weights)
    np.testing.assert_array_equal(np.stack(after), run.snapshots[-1].weights)


def test_step_by_step_runs_on_a_finished_run_named_in_the_url():
    from attention_core.train.live import example_trace

    run = _finished("reverse", steps=30)
    at = run_app({"trained": "1", "step": "1"}, page="pages/steps.py", _trained_runs={1: run})
    assert not at.exception, at.exception
    x = decode(chart(at, "steps_chart_x")["data"][0]["z"])
    np.testing.assert_allclose(x, example_trace(run).trace["x"], atol=EXACT)
    assert at.query_params["trained"] == "1"
    assert "learned by the training run" in plain(at) and "seeded random" not in plain(at)
    # a run this session does not have: a clear message, the sentence instead
    at = run_app({"trained": "9"}, page="pages/steps.py", _trained_runs={1: run})
    assert not at.exception and any("“9”" in w.value for w in at.warning)


def test_the_quiz_asks_about_a_finished_run_named_in_the_url():
    run = _finished("previous", steps=300)
    # no other source (quiz_sources empty): the run is asked about on its own anyway
    at = run_app({"trained": "1"}, page="pages/quiz.py", _trained_runs={1: run}, quiz_sources=[])
    assert not at.exception, at.exception
    assert at.session_state["_quiz_kind"] == "session:1"
    assert at.session_state["_quiz_labels"] == run.labels
    assert "your training run 1" in plain(at)
    assert at.query_params["trained"] == "1"


def test_the_induction_models_heads_reach_compare_named_by_layer():
    run = _finished("induction", steps=30)
    at = open_train(**{RUN: run})
    at.button("train_send").click().run()
    assert not at.exception, at.exception
    payload = at.session_state["compare_trained"]
    assert payload["weights"].shape == (3, 24, 24)
    assert payload["names"] == ["layer 0 · head 0", "layer 0 · head 1", "layer 1 · head 0"]
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    assert "layer 1 · head 0" in plain(at) or any(
        "layer 1 · head 0" in str(o) for o in at.multiselect(key="compare_heads").options
    )


def _axes(at: AppTest, key: str) -> list[dict]:
    """The colour axis of each heatmap panel of chart `key`, in panel order."""
    spec = chart(at, key)
    return [spec["layout"][t["coloraxis"]] for t in spec["data"] if t["type"] == "heatmap"]


def test_colour_scale_on_the_target_the_heads_and_before_after():
    """The shared colour scale (?scale=, the widget) on every attention heatmap
    of the page; the z values stay the weights, so hover reads them."""
    at = open_train({"scale": "contrast"})
    assert at.button_group(key="color_scale").value == "contrast"
    (target,) = _axes(at, "train_target")
    assert target["cmax"] == 1  # one-hot rows: the largest weight is 1
    assert target["colorbar"]["title"]["text"] == "% of head's max"
    at = train_with(at, steps=20)  # the live view draws through the same function
    run: LiveRun = at.session_state[RUN]
    last = run.snapshots[-1].weights  # (2, 6, 6)
    tops = [a["cmax"] for a in _axes(at, "train_heads")]
    assert tops == pytest.approx([float(h.max()) for h in last], rel=1e-6)
    np.testing.assert_array_equal(np.stack(panels(at, "train_heads")), last)
    assert "%{z:.3f}" in chart(at, "train_heads")["data"][0]["hovertemplate"]

    at.button_group(key="color_scale").set_value("relative").run()
    assert not at.exception, at.exception
    n = 6
    for key in ("train_target", "train_heads"):
        for axis in _axes(at, key):
            assert (axis["cmin"], axis["cmax"]) == (0, pytest.approx(2 / n))
            assert axis["colorscale"][0][1] == "rgb(5,48,97)"  # RdBu_r
    at.toggle(key="train_before_after").set_value(True).run()
    for key in ("train_heads_before", "train_heads_after"):
        (axis,) = {a["cmax"]: a for a in _axes(at, key)}.values()  # one shared axis
        assert axis["cmax"] == pytest.approx(2 / n)
        assert axis["colorbar"]["title"]["text"] == "× even share"
    at.button_group(key="color_scale").set_value("absolute").run()
    assert all(a["cmax"] == 1 for a in _axes(at, "train_heads_after"))
    assert at.query_params["scale"] in ("absolute", ["absolute"])
