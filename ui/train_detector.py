"""The train page's induction detector and knock-out sections.

On the 2-layer induction model the detector scores every head at every snapshot as a
previous-token head and as an induction head (`attention_core.train.induction`); the page
draws the scores and names the heads past the thresholds. The knock-out removes each head
alone and measures the accuracy left on held-out sequences (`lens.toy_head_effects`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from attention_core.figures.train import plot_detector, plot_knockout
from attention_core.lens import toy_head_effects
from attention_core.train import TrainConfig
from attention_core.train.induction import (
    INDUCTION_THRESHOLD,
    PREVIOUS_TOKEN_THRESHOLD,
    head_roles,
)
from attention_core.train.live import LiveRun
from ui.charts import show_chart
from ui.language import tr
from ui.train_figures import run_head_names

__all__ = ["detector_header", "has_detector", "knockout_section", "show_detector"]

KNOCKOUT = "_train_knockout"  # (run, step, lens.ToyEffects) of the last knock-out
state = st.session_state


def has_detector(config: TrainConfig) -> bool:
    """Whether runs of `config` have a detector: the 2-layer model, more heads than a layer."""
    return config.total_heads > config.num_heads


def detector_header(config: TrainConfig) -> None:
    """The detector's subheader, on the 2-layer model only."""
    if has_detector(config):
        st.subheader(
            tr("train_detector_header"),
            help=tr(
                "train_detector_help",
                previous=PREVIOUS_TOKEN_THRESHOLD,
                induction=INDUCTION_THRESHOLD,
            ),
        )


def _detector_figure(run: LiveRun, *, marker: int | None = None) -> object | None:
    scores = run.detector
    if scores is None:
        return None
    return plot_detector(
        run.steps,
        scores,
        run_head_names(run.config),
        thresholds=(PREVIOUS_TOKEN_THRESHOLD, INDUCTION_THRESHOLD),
        panel_titles=(tr("train_detector_previous"), tr("train_detector_induction")),
        step_title=tr("train_step"),
        threshold_title=tr("train_detector_threshold"),
        total_steps=run.config.steps if run.running else None,
        marker_step=marker,
    )


def _detector_lines(run: LiveRun, upto: int) -> list[str]:
    """One sentence per head the detector names at snapshot index `upto`, with the first
    step from which it kept that name."""
    scores = run.detector
    if scores is None:
        return []
    config = run.config
    names = run_head_names(config)
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


def show_detector(
    run: LiveRun, index: int, *, chart_slot: Any, named_slot: Any, key: str, marker: int | None
) -> None:
    """The detector's scores (a line at step `marker`) in `chart_slot` and, in
    `named_slot`, the heads it names at snapshot `index`; nothing for a 1-layer run."""
    detector = _detector_figure(run, marker=marker)
    if detector is None:
        return
    show_chart(detector, key=key, where=chart_slot)
    if has_detector(run.config):
        lines = _detector_lines(run, index)
        named_slot.markdown("\n".join(f"- {line}" for line in lines) or tr("train_detector_none"))


def knockout_section(run: LiveRun) -> None:
    """Which heads the model needs: each knocked out alone, on held-out sequences, once the
    toggle is on; kept per run and step, so a rerun does not measure it again."""
    rc, last = run.config, run.snapshots[-1]
    run_heads = run_head_names(rc)
    st.subheader(tr("train_knockout_header"), help=tr("train_knockout_help"))
    if not st.toggle(tr("train_knockout_label"), key="train_knockout"):
        return
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
