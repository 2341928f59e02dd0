"""The train page's replay of a finished run: the step scrubber, Play/Pause, before/after.

Playback shows the recorded snapshots again, one frame at a time, spread over the pace's
time like the live run; every frame moves the scrubber and the answers table with the
curves and heads, so everything on screen speaks of the same step. Pause stops on the
step shown (`PLAY_AT`); a playback that ends leaves the scrubber where it stopped
(`REPLAY_NEXT`, set before the scrubber is drawn on the next run, since a widget's value
cannot change once it is drawn).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NoReturn

import streamlit as st

from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.train import Snapshot
from attention_core.train.live import PACES, LiveRun
from ui.charts import show_chart
from ui.common import choose
from ui.language import tr
from ui.slots import place_released
from ui.train_figures import heads_figure
from ui.train_run import RunView, current_run, draw_frame, train_button
from ui.train_tables import answers_table

__all__ = ["Replay", "play", "replay_controls", "show_replay"]

PLAY = "_train_playing"  # playback running (not a widget)
PLAY_AT = "_train_play_at"  # the step playback shows now, for Pause to stop on
REPLAY_NEXT = "_train_replay_next"  # the scrubber's position after a playback run
state = st.session_state


@dataclass(frozen=True)
class Replay:
    """What the replay controls chose: the step shown, whether playback runs, and whether
    the heads are shown before and after training side by side."""

    step: int
    playing: bool
    before_after: bool


def _play() -> None:
    run = current_run()
    if run is None or len(run.snapshots) < 2:
        return
    if state.get("train_replay") == run.snapshots[-1].step:  # at the end: from the start
        state["train_replay"] = run.snapshots[0].step
    state[PLAY] = True


def _pause() -> None:
    state[PLAY] = False
    if PLAY_AT in state:
        state["train_replay"] = state.pop(PLAY_AT)


def replay_controls(run: LiveRun, view: RunView) -> Replay:
    """The scrubber over `run`'s snapshots (key train_replay), Play, Pause and the
    before/after toggle, in the view's replay box; a run of one snapshot has none."""
    steps = run.steps.tolist()
    if REPLAY_NEXT in state:  # where a playback ended
        state["train_replay"] = state.pop(REPLAY_NEXT)
    if state.get("train_replay") not in steps:
        state["train_replay"] = steps[-1]
    playing = bool(state.get(PLAY)) and len(steps) > 1
    if len(steps) <= 1:
        return Replay(steps[0], playing, before_after=False)
    with view.replay:
        step = choose(
            view.scrubber.select_slider,
            tr("train_replay_label"),
            steps,
            key="train_replay",
            help=tr("train_replay_help"),
            disabled=playing,
        )
        play_col, pause_col, side_col = st.columns([1, 1, 3], vertical_alignment="center")
        train_button(play_col, "play", on_click=_play, disabled=playing)
        train_button(pause_col, "pause", on_click=_pause, disabled=not playing)
        before_after = side_col.toggle(
            tr("train_before_after_label"),
            key="train_before_after",
            help=tr("train_before_after_help"),
        )
    return Replay(step, playing, before_after)


def show_replay(run: LiveRun, view: RunView, replay: Replay, scale: str) -> Snapshot:
    """The run at the chosen step (curves, detector, heads), or its heads before and after
    training side by side; returns the snapshot shown."""
    index = run.steps.tolist().index(replay.step)
    draw_frame(
        run, view, index, scale, keys="train_{}", marker=replay.step, heads=not replay.before_after
    )
    if replay.before_after:
        last = run.snapshots[-1]
        with view.heads.container():
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
                    heads_figure(run, last, scale, width_px=HALF_WIDTH_PX),
                    key="train_heads_after",
                )
    return run.snapshot_at(replay.step)


def _scrubber_at(view: RunView, steps: list[int], step: int, index: int) -> None:
    """The scrubber during playback, at the step of the frame shown: the widget itself
    cannot move once drawn, so a disabled copy (labels are step numbers, the same in
    every language; it never sends a value back) takes its place, frame by frame."""
    view.scrubber.select_slider(
        tr("train_replay_label"),
        steps,
        value=step,
        key=f"train_replay_at_{index}",
        help=tr("train_replay_help"),
        disabled=True,
    )


def play(run: LiveRun, view: RunView, replay: Replay, scale: str, pace: str) -> NoReturn:
    """Playback: the snapshots after the chosen step, one frame at a time, the whole run
    in the pace's time; then the page again, the scrubber where playback stopped."""
    steps = run.steps.tolist()
    delay = PACES[pace] / max(len(steps) - 1, 1)  # the whole run in the pace's time
    for index in range(steps.index(replay.step) + 1, len(steps)):
        with place_released():  # ui/slots.py: other sessions run meanwhile
            time.sleep(delay)
        snap = run.snapshots[index]
        state[PLAY_AT] = snap.step
        draw_frame(run, view, index, scale, keys=f"train_play_{{}}_{index}", marker=snap.step)
        _scrubber_at(view, steps, snap.step, index)
        answers_table(run, snap, where=view.answers, key=f"train_answers_{index}")
    state[PLAY] = False
    state[REPLAY_NEXT] = state.pop(PLAY_AT, steps[-1])
    st.rerun()
