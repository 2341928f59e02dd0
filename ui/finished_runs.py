"""A finished training run of this session, for the pages that teach with weights.

The "Train attention live" page `remember`s every run that ends (done or stopped); Step by
step and the Quiz offer those runs next to the sidebar's sentence (`trained_source`), so
each number they show can be the trained model's on its task's example sequence. The URL
names the run (`?trained=2`); runs live in the session only, so a link to a run this
session does not have gets a clear message and the sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention_core.train.live import ExampleTrace, LiveRun, example_trace
from ui.common import choose, md_escape
from ui.language import tr

__all__ = ["TrainedView", "finished_runs", "remember", "run_name", "trained_source"]

RUNS = "_trained_runs"  # session state: run number → LiveRun (finished runs only)
MAX_RUNS = 5  # the oldest is dropped beyond this (a run holds its snapshots)
SENTENCE = "sentence"
URL_KEY = "trained"
state = st.session_state


@dataclass(frozen=True)
class TrainedView:
    """What a page shows of a finished run: its number and name, the final heads on the
    example sequence (H, n, n) and one layer's every step (`ExampleTrace`)."""

    number: int
    name: str
    weights: np.ndarray  # (H, n, n) every head of the model, layer 0 first
    example: ExampleTrace

    @property
    def labels(self) -> list[str]:
        return self.example.labels


def finished_runs() -> dict[int, LiveRun]:
    """Run number → finished run of this session, oldest first (a stopped run that was
    continued and is training again is left out until it ends)."""
    return {number: run for number, run in _kept().items() if not run.running}


def _kept() -> dict[int, LiveRun]:
    return state.setdefault(RUNS, {})


def remember(run: LiveRun) -> int:
    """Keep a finished run for the other pages; returns its number (the same run twice
    keeps its number)."""
    runs = _kept()
    for number, kept in runs.items():
        if kept is run:
            return number
    number = max(runs, default=0) + 1
    runs[number] = run
    while len(runs) > MAX_RUNS:
        runs.pop(min(runs))
    return number


def run_name(number: int, run: LiveRun) -> str:
    step = run.snapshots[-1].step if run.snapshots else 0
    return tr(
        "trained_run_name", number=number, task=tr(f"train_task_{run.config.task}"), step=step
    )


def trained_source(key: str, *, layer_key: str | None = None) -> TrainedView | None:
    """The page's "Weights" picker (widget `key`): the sidebar's sentence (None) or a
    finished run of this session, kept in the URL as ?trained=. With `layer_key`, a layer
    picker for the 2-layer model. Draws nothing when the session has no finished run."""
    runs = finished_runs()
    raw = st.query_params.get(URL_KEY)
    if key not in state and raw is not None:  # first visit: the link decides
        number = int(raw) if raw.strip().isdigit() else None
        if number in runs:
            state[key] = number
        else:
            st.warning(md_escape(tr("trained_missing", value=raw[:20])))
            st.query_params.pop(URL_KEY, None)
    if not runs:
        return None
    options: list[int | str] = [SENTENCE, *runs]
    if state.get(key) not in options:
        state[key] = SENTENCE
    picked = choose(
        st.selectbox,
        tr("trained_source_label"),
        options,
        key=key,
        default=SENTENCE,
        format_func=lambda o: (
            tr("trained_source_sentence") if o == SENTENCE else run_name(o, runs[o])
        ),
        help=tr("trained_source_help"),
    )
    if picked == SENTENCE or picked not in runs:
        st.query_params.pop(URL_KEY, None)
        return None
    st.query_params[URL_KEY] = str(picked)
    run = runs[picked]
    layer = 0
    if layer_key is not None and run.config.total_heads > run.config.num_heads:
        layer = choose(
            st.segmented_control,
            tr("trained_layer_label"),
            [0, 1],
            key=layer_key,
            default=0,
            required=True,
            help=tr("trained_layer_help"),
        )
        layer = 0 if layer is None else int(layer)
    view = TrainedView(
        number=picked,
        name=run_name(picked, run),
        weights=np.ascontiguousarray(run.snapshots[-1].weights),
        example=example_trace(run, layer),
    )
    tokens = " ".join(label.split(":", 1)[1] for label in view.labels)
    st.caption(md_escape(tr("trained_caption", name=view.name, tokens=tokens)))
    if view.example.mask_self:
        st.caption(tr("trained_mask_note"))
    return view
