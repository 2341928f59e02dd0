"""The train page's live run: Train, Stop and Continue, the loop that draws it, its outcome.

The run is this session's `LiveRun` (key `RUN`), trained in the script thread: a click
reruns the script and cuts the loop off, and the next run carries on with the same run
(see pages/train.py). At a paced speed every snapshot is a frame; at "fast" the charts
are redrawn at most every `REDRAW_S` seconds.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import streamlit as st

from attention_core.train.live import PACES, SHARP_FOCUS, LiveRun, frame_delay
from ui.charts import show_chart
from ui.common import md_escape
from ui.language import tr
from ui.slots import place_released
from ui.train_detector import show_detector
from ui.train_figures import curves_figure, heads_figure, run_head_names
from ui.train_settings import config_from_state, problem_of

__all__ = [
    "RunView",
    "controls",
    "current_run",
    "draw_frame",
    "run_or_stop",
    "show_outcome",
    "train_button",
    "train_live",
]

RUN = "_train_live_run"  # the LiveRun of this session (not a widget)
START_PROBLEM = "_train_start_problem"  # set by the Train callback when it refused to start
REDRAW_S = 0.3  # at the "fast" pace, redraw curves and heads at most this often
state = st.session_state


@dataclass(frozen=True)
class RunView:
    """Where the page draws a run: placeholders and containers, made once in page order,
    drawn into by the live run, the replay and playback."""

    progress: Any
    evaluation: Any
    curves: Any
    detector: Any
    named: Any
    replay: Any
    scrubber: Any  # in `replay`: the step scrubber, which playback moves frame by frame
    heads: Any
    answers: Any  # the model's answers at the step shown


def current_run() -> LiveRun | None:
    """This session's run, if it has one."""
    return state.get(RUN)


# --- callbacks -------------------------------------------------------------------------------
def _start() -> None:
    """Train: a fresh run of the settings as they are now (one run at a time)."""
    run = state.get(RUN)
    if run is not None and run.running:
        state[START_PROBLEM] = tr("train_busy")
        return
    config = config_from_state()
    problem = problem_of(config)
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


# --- the controls ----------------------------------------------------------------------------
def train_button(
    where: Any, name: str, *, on_click: Callable[[], None], disabled: bool, **options: Any
) -> None:
    """A button of the page's controls in `where`: key train_<name>, label and help from
    the catalog (train_<name>_label, train_<name>_help), as wide as its column."""
    where.button(
        tr(f"train_{name}_label"),
        key=f"train_{name}",
        on_click=on_click,
        disabled=disabled,
        help=tr(f"train_{name}_help"),
        width="stretch",
        **options,
    )


def controls(*, running: bool, problem: str | None) -> None:
    """Train, Stop and Continue; then why the last click on Train started nothing, unless
    the settings' own warning (`problem`) already says so."""
    run_col, stop_col, continue_col, _ = st.columns([1, 1, 1, 2])
    train_button(
        run_col, "run", type="primary", on_click=_start, disabled=running or problem is not None
    )
    train_button(stop_col, "stop", on_click=_stop, disabled=not running)
    stopped_run = state.get(RUN)
    train_button(
        continue_col,
        "continue",
        on_click=_continue,
        disabled=stopped_run is None or stopped_run.status != "stopped",
    )
    refused = state.pop(START_PROBLEM, None)
    if refused is not None and problem is None:
        st.warning(md_escape(refused))


def run_or_stop() -> LiveRun:
    """This session's run; without one, the page ends with a hint to press Train."""
    run = state.get(RUN)
    if run is None:
        st.info(tr("train_idle"))
        st.stop()
    return run


# --- drawing ---------------------------------------------------------------------------------
def draw_frame(
    run: LiveRun,
    view: RunView,
    index: int,
    scale: str,
    *,
    keys: str,
    marker: int | None,
    heads: bool = True,
) -> None:
    """Curves, detector and (with `heads`) the heads of snapshot `index` into `view`, each
    chart under key `keys.format(name)`, a line at step `marker` if given."""
    show_chart(curves_figure(run, marker=marker), key=keys.format("curves"), where=view.curves)
    show_detector(
        run,
        index,
        chart_slot=view.detector,
        named_slot=view.named,
        key=keys.format("detector"),
        marker=marker,
    )
    if heads:
        show_chart(
            heads_figure(run, run.snapshots[index], scale),
            key=keys.format("heads"),
            where=view.heads,
        )


def _progress_text(run: LiveRun) -> str:
    snap = run.snapshots[-1]
    return tr(
        "train_progress",
        step=snap.step,
        steps=run.config.steps,
        loss=snap.loss,
        accuracy=snap.accuracy,
    )


def train_live(run: LiveRun, view: RunView, scale: str, pace: str) -> NoReturn:
    """While `run` trains: one snapshot at a time, redrawn a few times a second (every
    snapshot at a paced speed); then the page again, as it is now."""
    redraw_ids = itertools.count()

    def draw_live() -> None:
        # fresh keys: two identical figures in one run would clash, and the live views
        # must not take the keys of the final ones
        redraw = next(redraw_ids)
        draw_frame(
            run, view, len(run.snapshots) - 1, scale, keys=f"train_live_{{}}_{redraw}", marker=None
        )

    last_draw = float("-inf")
    # the pace's clock: a run carried on after a rerun keeps the time it had reached
    clock = time.monotonic() - PACES[pace] * run.progress
    if run.snapshots:  # carrying on after a rerun: show what there is at once
        view.progress.progress(run.progress, text=_progress_text(run))
        draw_live()
        last_draw = time.monotonic()
    while run.running:
        if run.advance() is None:
            break
        if pace != "fast":  # one frame per snapshot, on the pace's clock
            with place_released():  # ui/slots.py: other sessions run meanwhile
                time.sleep(frame_delay(pace, run.progress, time.monotonic() - clock))
        view.progress.progress(run.progress, text=_progress_text(run))
        if pace != "fast" or not run.running or time.monotonic() - last_draw >= REDRAW_S:
            draw_live()
            last_draw = time.monotonic()
    if run.snapshots:
        state["train_replay"] = run.snapshots[-1].step  # the replay starts at the end
    # the widgets above were drawn for a running training (disabled settings, Stop
    # enabled): draw the page again as it is now
    st.rerun()


def show_outcome(run: LiveRun, view: RunView) -> None:
    """How the finished run ended (done or stopped), and its evaluation on held-out
    sequences: accuracies, the best head and how sharply it focuses."""
    rc, last = run.config, run.snapshots[-1]
    if run.status == "done":
        view.progress.success(tr("train_done", steps=last.step, seconds=run.train_seconds))
    else:
        view.progress.info(
            tr("train_stopped", step=last.step, steps=rc.steps, seconds=run.train_seconds)
        )

    evaluation = run.evaluation
    run_heads = run_head_names(rc)
    with view.evaluation:
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
