"""Train attention live: press Train and watch random heads learn a toy task's pattern.

The article ends on untrained weights whose attention "means nothing yet"; here the
project's own attention module is trained (`attention_core.train`) on a puzzle that only
the right attention pattern solves, and the page draws every head while it learns.

Training runs in the script thread, one run per session, held in session_state as a
`attention_core.train.live.LiveRun`: any click reruns the script and cuts the loop off,
so the next run simply carries on with the same run, and Stop is a flag the run reads
before its next step. Everything trained so far is kept (curves, replay, evaluation), and
Continue carries a stopped run on. The pace (`?pace=`) spreads a run over ~10 s on screen
by default, one frame per snapshot; playback replays the snapshots the same way. A run
that ends is kept for Step by step and the Quiz (`ui.finished_runs`).

The parts live in `ui/`: `train_settings` (the settings and the pace), `train_run` (the
live run and its controls), `train_playback` (the replay), `train_detector` (the
induction detector and knock-out), `train_tables` and `train_figures`.
"""

from __future__ import annotations

import streamlit as st

from attention_core.figures.heads import head_grid
from attention_core.train import example_sequence
from attention_core.train.live import compare_payload, example_labels, head_names, target_matrix
from ui.charts import show_chart
from ui.common import colour_scale_choice, entry_guard, forget, md_escape
from ui.finished_runs import remember
from ui.language import lang, tr
from ui.train_detector import detector_header, knockout_section
from ui.train_figures import scaled_heads
from ui.train_playback import play, replay_controls, show_replay
from ui.train_run import RunView, controls, current_run, run_or_stop, show_outcome, train_live
from ui.train_settings import config_from_state, pace_choice, problem_of, settings_form, task_title
from ui.train_tables import answers_table, head_stats

state = st.session_state

entry_guard()
code = lang()
st.title(tr("train_title"))
st.markdown(tr("train_intro"))
st.caption(tr("train_sidebar_note"))

# --- settings ------------------------------------------------------------------------------
last_run = current_run()
running = last_run is not None and last_run.running
settings_form(last_run.config if last_run is not None else None, code, running=running)
config = config_from_state()
problem = problem_of(config)
# the heatmaps' colours below (target, live heads, replay), shared with the other pages
scale = colour_scale_choice()

# --- the task, and the pattern a solution shows ----------------------------------------------
task = state["train_task"]
text_col, target_col = st.columns([3, 2])
with text_col:
    st.markdown(tr(f"train_task_{task}_explain"))
    st.markdown(tr("train_pattern_line", pattern=tr(f"train_pattern_{task}")))
if problem is None:
    with target_col:
        target = head_grid(
            target_matrix(config)[None], example_labels(config), head_title=tr("train_target_title")
        )
        show_chart(
            scaled_heads(target, scale, panel_px=220),
            key="train_target",
        )
        tokens = " ".join(str(tok) for tok in example_sequence(config))
        st.caption(tr("train_target_caption", tokens=tokens))
else:
    st.warning(md_escape(tr("train_invalid", error=problem)))

# --- pace (also ?pace=), train / stop / continue -----------------------------------------------
pace = pace_choice()
controls(running=running, problem=problem)
run = run_or_stop()

rc = run.config
st.caption(
    tr(
        "train_this_run" if run.running else "train_last_run",
        task=task_title(rc.task, code),
        n=rc.seq_len,
        embed_dim=rc.embed_dim,
        heads=rc.num_heads,
        steps=rc.steps,
        lr=f"{rc.lr:g}",
        seed=rc.seed,
    )
)
progress_slot = st.empty()
# the heads right under the controls: the class watches them learn, not the button
st.subheader(tr("train_heads_header"))
st.caption(tr("train_heads_caption"))
replay_box = st.container()
heads_slot = st.empty()
evaluation_box = st.container()
st.subheader(tr("train_curves_header"))
curves_slot = st.empty()
detector_header(rc)
detector_slot = st.empty()
named_slot = st.empty()
view = RunView(
    progress=progress_slot,
    evaluation=evaluation_box,
    curves=curves_slot,
    detector=detector_slot,
    named=named_slot,
    replay=replay_box,
    scrubber=replay_box.empty(),
    heads=heads_slot,
    answers=st.empty(),
)

# --- while it trains: one snapshot at a time, then the page again ------------------------------
if run.running:
    train_live(run, view, scale, pace)

# --- afterwards: evaluation, replay, answers, head statistics ---------------------------------
number = remember(run)  # for Step by step and the Quiz (ui.finished_runs)
show_outcome(run, view)
replay = replay_controls(run, view)
shown = show_replay(run, view, replay, scale)
answers_table(run, shown, where=view.answers)
head_stats(run)

# --- which heads the model needs: each knocked out alone, on held-out sequences ----------------
knockout_section(run)

send_col, steps_col, quiz_col = st.columns(3)
if send_col.button(tr("train_send_label"), key="train_send", help=tr("train_send_help")):
    title = tr("train_compare_title", task=task_title(rc.task, code), step=run.snapshots[-1].step)
    names = head_names(rc, tr("compare_head_name", i="{i}"), tr("train_layer_head_title"))
    state["compare_trained"] = compare_payload(run, title=title, names=names)
    forget("compare_source")  # the Compare page opens on the heads just sent
    st.switch_page("pages/compare.py")
if steps_col.button(tr("train_steps_link"), key="train_to_steps"):
    state["steps_trained"] = number
    st.switch_page("pages/steps.py", query_params={"trained": str(number)})
if quiz_col.button(tr("train_quiz_link"), key="train_to_quiz"):
    state["quiz_trained"] = number
    st.switch_page("pages/quiz.py", query_params={"trained": str(number)})

# --- playback: the recorded snapshots again, one frame at a time --------------------------------
if replay.playing:
    play(run, view, replay, scale, pace)
