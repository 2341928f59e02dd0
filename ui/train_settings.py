"""The train page's settings: the widgets of a `TrainConfig`, their defaults and checks, the pace.

The settings widgets are train_<name>, <name> a `TrainConfig` field, so tests, session
state and the callbacks all use the same names. Every setting is locked while a run
trains. The pace (`?pace=`) says how a run and its playback are spread over the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attention_core.i18n import catalog, t
from attention_core.limits import MAX_TRAIN_STEPS
from attention_core.settings import MAX_SEED, head_options, nearest_heads
from attention_core.train import (
    MAX_TRAIN_EMBED_DIM,
    MAX_TRAIN_VOCAB,
    TASKS,
    SettingError,
    TrainConfig,
    default_config,
)
from attention_core.train.live import DEFAULT_PACE, PACES, live_config, parse_pace
from attention_core.train.tasks import max_seq_len
from ui.common import choose, md_escape
from ui.language import tr

__all__ = ["config_from_state", "pace_choice", "problem_of", "settings_form", "task_title"]

# TrainConfig field → the catalog name of its widget's label (train_<name>_label)
FIELD_LABELS = {"vocab_size": "vocab"}
# the settings widgets are train_<name>, <name> a TrainConfig field
SETTINGS = ("seq_len", "vocab_size", "embed_dim", "num_heads", "steps", "lr", "seed")
LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
state = st.session_state


def task_title(task: str, code: str) -> str:
    return t(f"train_task_{task}", code)


# --- defaults, callbacks ---------------------------------------------------------------------
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


def config_from_state() -> TrainConfig:
    """The `TrainConfig` the settings widgets show now."""
    return live_config(state["train_task"], **{name: state[f"train_{name}"] for name in SETTINGS})


def problem_of(config: TrainConfig) -> str | None:
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


# --- the widgets ---------------------------------------------------------------------------
def _number_field(
    where: Any,
    name: str,
    low: int,
    high: int | None = None,
    *,
    running: bool,
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


def settings_form(last: TrainConfig | None, code: str, *, running: bool) -> None:
    """The settings section: task, steps, learning rate, then the model's sizes and seed.
    `last` is the last run's config, shown when the widgets start again; `running` locks
    every widget."""
    keys = ["train_task", *(f"train_{name}" for name in SETTINGS)]
    if any(key not in state for key in keys) or state["train_task"] not in TASKS:
        # first visit, or back from another page (Streamlit forgets the widgets of pages
        # not shown): the last run's settings, else the defaults
        _load(last if last is not None else default_config())

    heads_note = None
    if state["train_num_heads"] not in head_options(state["train_embed_dim"]):
        wrong = TrainConfig(embed_dim=state["train_embed_dim"], num_heads=state["train_num_heads"])
        heads_note = problem_of(wrong)
        _fit_heads()
    lr_options = sorted({*LEARNING_RATES, state["train_lr"]})

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
    _number_field(mid, "steps", 0, running=running, step=50, help_max=MAX_TRAIN_STEPS)
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
    _number_field(cols[0], "seq_len", 1, max_seq_len(state["train_task"]), running=running)
    _number_field(cols[1], "vocab_size", 2, MAX_TRAIN_VOCAB, running=running)
    _number_field(
        cols[2], "embed_dim", 2, MAX_TRAIN_EMBED_DIM, running=running, on_change=_fit_heads
    )
    choose(
        cols[3].select_slider,
        tr("train_num_heads_label"),
        head_options(state["train_embed_dim"]),
        key="train_num_heads",
        disabled=running,
        help=tr("train_num_heads_help"),
    )
    _number_field(cols[4], "seed", 0, MAX_SEED, running=running)
    if heads_note is not None:
        st.warning(
            md_escape(tr("train_heads_fixed", error=heads_note, heads=state["train_num_heads"]))
        )


def pace_choice() -> str:
    """The pace widget (key train_pace), seeded once from `?pace=` and mirrored back into
    the URL; a bad `?pace=` is said, and the default used."""
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
    return pace
