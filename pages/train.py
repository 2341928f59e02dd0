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
that ends is kept for Step by step and the Quiz (`ui.trained`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import streamlit as st

from attention_core.figures.heads import HeadGrid, head_grid, plot_heads
from attention_core.figures.layout import NOMINAL_WIDTH_PX
from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.figures.train import plot_curves, plot_detector, plot_knockout
from attention_core.i18n import catalog, t
from attention_core.lens import toy_head_effects
from attention_core.limits import MAX_TRAIN_STEPS
from attention_core.settings import MAX_SEED, head_options, nearest_heads
from attention_core.train import (
    MAX_TRAIN_EMBED_DIM,
    MAX_TRAIN_VOCAB,
    TASKS,
    SettingError,
    Snapshot,
    TrainConfig,
    default_config,
    example_sequence,
)
from attention_core.train.induction import (
    INDUCTION_THRESHOLD,
    PREVIOUS_TOKEN_THRESHOLD,
    head_roles,
)
from attention_core.train.live import (
    DEFAULT_PACE,
    PACES,
    SHARP_FOCUS,
    LiveRun,
    compare_payload,
    example_labels,
    example_table,
    frame_delay,
    head_names,
    head_table,
    live_config,
    parse_pace,
    target_matrix,
)
from attention_core.train.tasks import max_seq_len
from ui.charts import show_chart
from ui.common import choose, colour_scale_choice, entry_guard, forget, lang, md_escape, tr
from ui.trained import remember

RUN = "_train_live_run"  # the LiveRun of this session (not a widget)
START_PROBLEM = "_train_start_problem"  # set by the Train callback when it refused to start
# TrainConfig field → the catalog name of its widget's label (train_<name>_label)
FIELD_LABELS = {"vocab_size": "vocab"}
# the settings widgets are train_<name>, <name> a TrainConfig field
SETTINGS = ("seq_len", "vocab_size", "embed_dim", "num_heads", "steps", "lr", "seed")
LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
REDRAW_S = 0.3  # at the "fast" pace, redraw curves and heads at most this often
PLAY = "_train_playing"  # playback running (not a widget)
PLAY_AT = "_train_play_at"  # the step playback shows now, for Pause to stop on
REPLAY_NEXT = "_train_replay_next"  # the scrubber's position after a playback run
KNOCKOUT = "_train_knockout"  # (run, step, lens.ToyEffects) of the last knock-out
state = st.session_state


# --- settings: defaults, callbacks -------------------------------------------------------
def _load(config: TrainConfig) -> None:
    """Show `config` in the settings widgets."""
    state["train_task"] = config.task
    for name in SETTINGS:
        state[f"train_{name}"] = getattr(config, name)


def _task_changed() -> None:
    """A new task starts from that task's measured defaults."""
    defaults = default_config(state["train_task"])
    for name in SETTINGS:
        state[f"train_{name}"] = getattr(defaults, name)


def _fit_heads() -> None:
    """Keep num_heads a divisor of embed_dim when embed_dim changes."""
    state["train_num_heads"] = nearest_heads(state["train_embed_dim"], state["train_num_heads"])


def _config_from_state() -> TrainConfig:
    return live_config(state["train_task"], **{name: state[f"train_{name}"] for name in SETTINGS})


def _problem(config: TrainConfig) -> str | None:
    """Why `config` cannot be trained, in the interface's language, else None."""
    try:
        config.validate()
    except SettingError as error:
        params = dict(error.params)
        if "name" in params:  # a field: say it as its widget's label does
            label = f"train_{FIELD_LABELS.get(str(params['name']), params['name'])}_label"
            params["name"] = tr(label) if label in catalog() else params["name"]
        return tr(f"train_error_{error.reason}", **params)
    except ValueError as error:
        return str(error)
    return None


def _start() -> None:
    """Train: a fresh run of the settings as they are now (one run at a time)."""
    run = state.get(RUN)
    if run is not None and run.running:
        state[START_PROBLEM] = tr("train_busy")
        return
    config = _config_from_state()
    problem = _problem(config)
    if problem is not None:
        state[START_PROBLEM] = tr("train_invalid", error=problem)
        return
    state[RUN] = LiveRun.start(config)


def _stop() -> None:
    run = state.get(RUN)
    if run is not None:
        run.request_stop()


def _continue() -> None:
    run = state.get(RUN)
    if run is not None:
        run.resume()


def _play() -> None:
    run = state.get(RUN)
    if run is None or len(run.snapshots) < 2:
        return
    if state.get("train_replay") == run.snapshots[-1].step:  # at the end: from the start
        state["train_replay"] = run.snapshots[0].step
    state[PLAY] = True


def _pause() -> None:
    state[PLAY] = False
    if PLAY_AT in state:
        state["train_replay"] = state.pop(PLAY_AT)


def task_title(task: str, code: str) -> str:
    return t(f"train_task_{task}", code)


# --- figures -------------------------------------------------------------------------------
def titles_of(config: TrainConfig, snap: Snapshot) -> list[str]:
    """Head titles; on the 2-layer model, a head the detector names says what it is."""
    names = head_names(config, tr("train_head_title", i="{i}"), tr("train_layer_head_title"))
    if snap.detector is None:
        return names
    for head, role in head_roles(config, snap.detector).items():
        names[head] = tr("train_head_with_role", head=names[head], role=tr(f"train_role_{role}"))
    return names


def scaled_heads(grid: HeadGrid, scale: str, **layout: Any) -> object:
    """`plot_heads` on the colour scale chosen on the page (`colour_scale_choice`, shared
    with the other pages): the colour bar names the scale, hover reads the weight."""
    return plot_heads(grid, scale=scale, colorbar_title=tr(f"scale_bar_{scale}"), **layout)


def heads_figure(
    run: LiveRun, snap: Snapshot, scale: str, *, width_px: float = NOMINAL_WIDTH_PX
) -> object:
    grid = replace(head_grid(snap.weights, run.labels), titles=titles_of(run.config, snap))
    return scaled_heads(grid, scale, width_px=width_px)


def detector_figure(run: LiveRun, *, marker: int | None = None) -> object | None:
    scores = run.detector
    if scores is None:
        return None
    names = head_names(run.config, tr("train_head_title", i="{i}"), tr("train_layer_head_title"))
    return plot_detector(
        run.steps,
        scores,
        names,
        thresholds=(PREVIOUS_TOKEN_THRESHOLD, INDUCTION_THRESHOLD),
        panel_titles=(tr("train_detector_previous"), tr("train_detector_induction")),
        step_title=tr("train_step"),
        threshold_title=tr("train_detector_threshold"),
        total_steps=run.config.steps if run.running else None,
        marker_step=marker,
    )


def detector_lines(run: LiveRun, upto: int) -> list[str]:
    """One sentence per head the detector names at snapshot index `upto`, with the first
    step from which it kept that name."""
    scores = run.detector
    if scores is None:
        return []
    config = run.config
    names = head_names(config, tr("train_head_title", i="{i}"), tr("train_layer_head_title"))
    lines = []
    for head, role in head_roles(config, scores[upto]).items():
        since = upto
        while since > 0 and head_roles(config, scores[since - 1]).get(head) == role:
            since -= 1
        row = 0 if role == "previous" else 1
        lines.append(
            tr(
                "train_detector_named",
                head=names[head],
                role=tr(f"train_role_{role}"),
                score=float(scores[upto, row, head]),
                step=int(run.steps[since]),
            )
        )
    return lines


def curves_figure(run: LiveRun, *, marker: int | None = None) -> object:
    return plot_curves(
        run.steps,
        run.losses,
        run.accuracies,
        # while training, the axis spans every step so the curves grow to the right;
        # afterwards (also when stopped early) it ends at the last snapshot
        total_steps=run.config.steps if run.running else None,
        marker_step=marker,
        chance=1 / run.config.num_classes,
        loss_title=tr("train_loss"),
        accuracy_title=tr("train_accuracy"),
        step_title=tr("train_step"),
        chance_title=tr("train_chance"),
    )


def progress_text(run: LiveRun) -> str:
    snap = run.snapshots[-1]
    return tr(
        "train_progress",
        step=snap.step,
        steps=run.config.steps,
        loss=snap.loss,
        accuracy=snap.accuracy,
    )


entry_guard()
code = lang()
st.title(tr("train_title"))
st.markdown(tr("train_intro"))
st.caption(tr("train_sidebar_note"))

# --- settings ------------------------------------------------------------------------------
run: LiveRun | None = state.get(RUN)
running = run is not None and run.running
keys = ["train_task", *(f"train_{name}" for name in SETTINGS)]
if any(key not in state for key in keys) or state["train_task"] not in TASKS:
    # first visit, or back from another page (Streamlit forgets the widgets of pages
    # not shown): the last run's settings, else the defaults
    _load(run.config if run is not None else default_config())

heads_note = None
if state["train_num_heads"] not in head_options(state["train_embed_dim"]):
    wrong = TrainConfig(embed_dim=state["train_embed_dim"], num_heads=state["train_num_heads"])
    heads_note = _problem(wrong)
    _fit_heads()
lr_options = sorted({*LEARNING_RATES, state["train_lr"]})


def number_field(
    where: Any,
    name: str,
    low: int,
    high: int | None = None,
    *,
    step: int = 1,
    help_max: int | None = None,
    on_change: Callable[[], None] | None = None,
) -> None:
    """The number widget of TrainConfig field `name` (key train_<name>) in `where`, from
    `low` to `high`; label and help from the catalog, the help naming `help_max` (default
    `high`) as {max}. Like every setting, it is locked while a run trains."""
    label = FIELD_LABELS.get(name, name)
    where.number_input(
        tr(f"train_{label}_label"),
        min_value=low,
        max_value=high,
        step=step,
        value=state[f"train_{name}"],
        key=f"train_{name}",
        on_change=on_change,
        disabled=running,
        help=tr(f"train_{label}_help", max=help_max if help_max is not None else high),
    )


# every widget gets its current value as default too: see ui.common.seeded
st.subheader(tr("train_settings_header"))
left, mid, right = st.columns([2, 1, 1])
choose(
    left.selectbox,
    tr("train_task_label"),
    list(TASKS),
    key="train_task",
    format_func=lambda task: task_title(task, code),
    on_change=_task_changed,
    disabled=running,
    help=tr("train_defaults_note"),
)
number_field(mid, "steps", 0, step=50, help_max=MAX_TRAIN_STEPS)
choose(
    right.select_slider,
    tr("train_lr_label"),
    lr_options,
    key="train_lr",
    format_func=lambda value: f"{value:g}",
    disabled=running,
    help=tr("train_lr_help"),
)
cols = st.columns(5)
number_field(cols[0], "seq_len", 1, max_seq_len(state["train_task"]))
number_field(cols[1], "vocab_size", 2, MAX_TRAIN_VOCAB)
number_field(cols[2], "embed_dim", 2, MAX_TRAIN_EMBED_DIM, on_change=_fit_heads)
choose(
    cols[3].select_slider,
    tr("train_num_heads_label"),
    head_options(state["train_embed_dim"]),
    key="train_num_heads",
    disabled=running,
    help=tr("train_num_heads_help"),
)
number_field(cols[4], "seed", 0, MAX_SEED)
if heads_note is not None:
    st.warning(md_escape(tr("train_heads_fixed", error=heads_note, heads=state["train_num_heads"])))

config = _config_from_state()
problem = _problem(config)
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

# --- pace (also ?pace=) -------------------------------------------------------------------
if "train_pace" not in state:
    raw_pace = st.query_params.get("pace")
    state["train_pace"] = parse_pace(raw_pace) or DEFAULT_PACE
    if raw_pace is not None and parse_pace(raw_pace) is None:
        st.warning(
            md_escape(
                tr(
                    "train_bad_pace",
                    value=raw_pace[:20],
                    valid=", ".join(PACES),
                    fallback=DEFAULT_PACE,
                )
            )
        )
pace = (
    choose(
        st.segmented_control,
        tr("train_pace_label"),
        list(PACES),
        key="train_pace",
        default=DEFAULT_PACE,
        format_func=lambda option: tr(f"train_pace_{option}"),
        required=True,
        help=tr("train_pace_help"),
    )
    or DEFAULT_PACE
)
if st.query_params.get("pace") != pace:
    st.query_params["pace"] = pace

# --- train / stop / continue -----------------------------------------------------------------
run_col, stop_col, continue_col, _ = st.columns([1, 1, 1, 2])
run_col.button(
    tr("train_run_label"),
    key="train_run",
    type="primary",
    on_click=_start,
    disabled=running or problem is not None,
    help=tr("train_run_help"),
    width="stretch",
)
stop_col.button(
    tr("train_stop_label"),
    key="train_stop",
    on_click=_stop,
    disabled=not running,
    help=tr("train_stop_help"),
    width="stretch",
)
stopped_run = state.get(RUN)
continue_col.button(
    tr("train_continue_label"),
    key="train_continue",
    on_click=_continue,
    disabled=stopped_run is None or stopped_run.status != "stopped",
    help=tr("train_continue_help"),
    width="stretch",
)
refused = state.pop(START_PROBLEM, None)
if refused is not None and problem is None:
    st.warning(md_escape(refused))

run = state.get(RUN)
if run is None:
    st.info(tr("train_idle"))
    st.stop()

rc = run.config
st.caption(
    tr(
        "train_last_run",
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
evaluation_box = st.container()
st.subheader(tr("train_curves_header"))
curves_slot = st.empty()
induction = rc.total_heads > rc.num_heads
if induction:
    st.subheader(
        tr("train_detector_header"),
        help=tr(
            "train_detector_help",
            previous=PREVIOUS_TOKEN_THRESHOLD,
            induction=INDUCTION_THRESHOLD,
        ),
    )
detector_slot = st.empty()
named_slot = st.empty()
st.subheader(tr("train_heads_header"))
st.caption(tr("train_heads_caption"))
replay_box = st.container()
heads_slot = st.empty()


def show_named(index: int) -> None:
    if induction:
        lines = detector_lines(run, index)
        named_slot.markdown("\n".join(f"- {line}" for line in lines) or tr("train_detector_none"))


# --- while it trains: one snapshot at a time, redrawn a few times a second --------------------
if run.running:
    redraw_ids = itertools.count()

    def draw_live() -> None:
        redraw = next(redraw_ids)
        # fresh keys: two identical figures in one run would clash, and the live views
        # must not take the keys of the final ones below
        show_chart(curves_figure(run), key=f"train_live_curves_{redraw}", where=curves_slot)
        detector = detector_figure(run)
        if detector is not None:
            show_chart(detector, key=f"train_live_detector_{redraw}", where=detector_slot)
            show_named(len(run.snapshots) - 1)
        show_chart(
            heads_figure(run, run.snapshots[-1], scale),
            key=f"train_live_heads_{redraw}",
            where=heads_slot,
        )

    last_draw = float("-inf")
    # the pace's clock: a run carried on after a rerun keeps the time it had reached
    clock = time.monotonic() - PACES[pace] * run.progress
    if run.snapshots:  # carrying on after a rerun: show what there is at once
        progress_slot.progress(run.progress, text=progress_text(run))
        draw_live()
        last_draw = time.monotonic()
    while run.running:
        if run.advance() is None:
            break
        if pace != "fast":  # one frame per snapshot, on the pace's clock
            time.sleep(frame_delay(pace, run.progress, time.monotonic() - clock))
        progress_slot.progress(run.progress, text=progress_text(run))
        if pace != "fast" or not run.running or time.monotonic() - last_draw >= REDRAW_S:
            draw_live()
            last_draw = time.monotonic()
    if run.snapshots:
        state["train_replay"] = run.snapshots[-1].step  # the replay starts at the end
    # the widgets above were drawn for a running training (disabled settings, Stop
    # enabled): draw the page again as it is now
    st.rerun()

# --- afterwards: evaluation, replay, answers, head statistics ---------------------------------
number = remember(run)  # for Step by step and the Quiz (ui.trained)
last = run.snapshots[-1]
if run.status == "done":
    progress_slot.success(tr("train_done", steps=last.step, seconds=run.train_seconds))
else:
    progress_slot.info(
        tr("train_stopped", step=last.step, steps=rc.steps, seconds=run.train_seconds)
    )

evaluation = run.evaluation
run_heads = head_names(rc, tr("train_head_title", i="{i}"), tr("train_layer_head_title"))
with evaluation_box:
    st.subheader(tr("train_eval_header"), help=tr("train_eval_help"))
    a, b, c, d = st.columns(4)
    a.metric(tr("train_eval_accuracy"), f"{evaluation.accuracy:.1%}")
    b.metric(tr("train_eval_sequences"), f"{evaluation.sequence_accuracy:.1%}")
    c.metric(tr("train_eval_best_head"), run_heads[evaluation.best_head])
    d.metric(tr("train_eval_focus"), f"{evaluation.focus:.1%}")
    if evaluation.focus >= SHARP_FOCUS:
        st.success(
            tr("train_eval_sharp", head=run_heads[evaluation.best_head], focus=evaluation.focus)
        )
    else:
        st.warning(tr("train_eval_diffuse", focus=evaluation.focus))

steps = run.steps.tolist()
if REPLAY_NEXT in state:  # where a playback ended
    state["train_replay"] = state.pop(REPLAY_NEXT)
if state.get("train_replay") not in steps:
    state["train_replay"] = steps[-1]
playing = bool(state.get(PLAY)) and len(steps) > 1
with replay_box:
    if len(steps) > 1:
        step = choose(
            st.select_slider,
            tr("train_replay_label"),
            steps,
            key="train_replay",
            help=tr("train_replay_help"),
            disabled=playing,
        )
        play_col, pause_col, side_col = st.columns([1, 1, 3], vertical_alignment="center")
        play_col.button(
            tr("train_play_label"),
            key="train_play",
            on_click=_play,
            disabled=playing,
            help=tr("train_play_help"),
            width="stretch",
        )
        pause_col.button(
            tr("train_pause_label"),
            key="train_pause",
            on_click=_pause,
            disabled=not playing,
            help=tr("train_pause_help"),
            width="stretch",
        )
        before_after = side_col.toggle(
            tr("train_before_after_label"),
            key="train_before_after",
            help=tr("train_before_after_help"),
        )
    else:
        step, before_after = steps[0], False
shown = run.snapshot_at(step)
show_chart(curves_figure(run, marker=step), key="train_curves", where=curves_slot)
detector = detector_figure(run, marker=step)
if detector is not None:
    show_chart(detector, key="train_detector", where=detector_slot)
    show_named(steps.index(step))
if before_after:
    with heads_slot.container():
        first_col, last_col = st.columns(2)
        with first_col:
            st.markdown(f"**{tr('train_before_title')}**")
            show_chart(
                heads_figure(run, run.snapshots[0], scale, width_px=HALF_WIDTH_PX),
                key="train_heads_before",
            )
        with last_col:
            st.markdown(f"**{tr('train_after_title', step=last.step)}**")
            show_chart(
                heads_figure(run, last, scale, width_px=HALF_WIDTH_PX), key="train_heads_after"
            )
else:
    show_chart(heads_figure(run, shown, scale), key="train_heads", where=heads_slot)

table = example_table(rc, shown.predictions)
has_answer = [a >= 0 for a in table["answer"]]  # induction: a first occurrence has none
st.markdown(
    "**"
    + tr(
        "train_answers_header",
        step=shown.step,
        right=sum(r for r, a in zip(table["right"], has_answer, strict=True) if a),
        n=sum(has_answer),
    )
    + "**"
)
rows = [
    {
        "": tr(f"train_row_{name}"),
        **{
            str(i): str(v) if name == "input" or has_answer[i] else "·"
            for i, v in enumerate(table[name])
        },
    }
    for name in ("input", "answer", "model")
]
marks = [("✓" if r else "✗") if a else "·" for r, a in zip(table["right"], has_answer, strict=True)]
rows.append({"": tr("train_row_right"), **{str(i): m for i, m in enumerate(marks)}})
st.dataframe(rows, hide_index=True, key="train_answers")
if TASKS[rc.task].output == "position":
    st.caption(tr("train_answers_positions"))
if not all(has_answer):
    st.caption(tr("train_no_answer"))

st.subheader(tr("train_stats_header"), help=tr("train_stats_help"))
st.dataframe(
    [
        {tr(f"train_col_{name}"): run_heads[v] if name == "head" else v for name, v in row.items()}
        for row in head_table(run)
    ],
    hide_index=True,
    key="train_stats",
    column_config={
        tr(f"train_col_{name}"): st.column_config.NumberColumn(format="%.2f")
        for name in ("entropy", "max_weight", "diagonal", "previous", "first", "distance", "focus")
    },
)

# --- which heads the model needs: each knocked out alone, on held-out sequences ----------------
st.subheader(tr("train_knockout_header"), help=tr("train_knockout_help"))
if st.toggle(tr("train_knockout_label"), key="train_knockout"):
    kept = state.get(KNOCKOUT)
    if kept is None or kept[0] is not run or kept[1] != last.step:
        kept = (run, last.step, toy_head_effects(run.model, rc))
        state[KNOCKOUT] = kept
    effects = kept[2]
    knocked = effects.knocked[~np.isnan(effects.knocked)]  # (total heads,) layer 0 first
    show_chart(
        plot_knockout(
            run_heads,
            knocked,
            accuracy=effects.accuracy,
            chance=1 / rc.num_classes,
            accuracy_title=tr("train_accuracy"),
            base_title=tr("train_knockout_all"),
            chance_title=tr("train_chance"),
        ),
        key="train_knockout_chart",
    )
    needed = int(np.argmin(knocked))
    st.caption(
        tr(
            "train_knockout_caption",
            head=run_heads[needed],
            knocked=float(knocked[needed]),
            accuracy=effects.accuracy,
            chance=1 / rc.num_classes,
        )
    )

send_col, steps_col, quiz_col = st.columns(3)
if send_col.button(tr("train_send_label"), key="train_send", help=tr("train_send_help")):
    title = tr("train_compare_title", task=task_title(rc.task, code), step=last.step)
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
if playing:
    start = steps.index(step)
    delay = PACES[pace] / max(len(steps) - 1, 1)  # the whole run in the pace's time
    for index in range(start + 1, len(steps)):
        time.sleep(delay)
        snap = run.snapshots[index]
        state[PLAY_AT] = snap.step
        show_chart(
            curves_figure(run, marker=snap.step),
            key=f"train_play_curves_{index}",
            where=curves_slot,
        )
        detector = detector_figure(run, marker=snap.step)
        if detector is not None:
            show_chart(detector, key=f"train_play_detector_{index}", where=detector_slot)
            show_named(index)
        show_chart(
            heads_figure(run, snap, scale), key=f"train_play_heads_{index}", where=heads_slot
        )
    state[PLAY] = False
    state[REPLAY_NEXT] = state.pop(PLAY_AT, steps[-1])
    st.rerun()
