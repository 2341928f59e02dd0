"""The train page's figures of a run in the interface's language: curves, heads, head names.

The figures themselves are `attention_core.figures` builders fed plain data; this module
only gives them the page's strings and the colour scale chosen on the page.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from attention_core.figures.heads import HeadGrid, head_grid, plot_heads
from attention_core.figures.layout import NOMINAL_WIDTH_PX
from attention_core.figures.train import plot_curves
from attention_core.train import Snapshot, TrainConfig
from attention_core.train.induction import head_roles
from attention_core.train.live import LiveRun, head_names
from ui.language import tr

__all__ = ["curves_figure", "heads_figure", "run_head_names", "scaled_heads"]


def run_head_names(config: TrainConfig) -> list[str]:
    """Every head's name in the interface's language, layer 0 first (`head_names`)."""
    return head_names(config, tr("train_head_title", i="{i}"), tr("train_layer_head_title"))


def _titles_of(config: TrainConfig, snap: Snapshot) -> list[str]:
    """Head titles; on the 2-layer model, a head the detector names says what it is."""
    names = run_head_names(config)
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
    """Every head of `run` at snapshot `snap`, titled by what the detector names them."""
    grid = replace(head_grid(snap.weights, run.labels), titles=_titles_of(run.config, snap))
    return scaled_heads(grid, scale, width_px=width_px)


def curves_figure(run: LiveRun, *, marker: int | None = None) -> object:
    """Loss and accuracy over the steps so far, with a line at step `marker` if given."""
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
