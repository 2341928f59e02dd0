"""The train page's tables: the model's answers at the step shown, and each head's statistics.

The rows come from `attention_core.train.live` (`example_table`, `head_table`); this
module only lays them out with the page's strings.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from attention_core.train import TASKS, Snapshot
from attention_core.train.live import LiveRun, example_table, head_table
from ui.language import tr
from ui.train_figures import run_head_names

__all__ = ["answers_table", "head_stats"]

# the measures of head_table shown with two decimals
_TWO_DECIMALS = ("entropy", "max_weight", "diagonal", "previous", "first", "distance", "focus")


def answers_table(run: LiveRun, shown: Snapshot, *, where: Any, key: str = "train_answers") -> None:
    """The task's example sequence: input, right answer, the model's answer at snapshot
    `shown`, and a mark per position (positions without an answer show a dot), drawn in
    slot `where` (playback redraws it with every frame, under a `key` of its own)."""
    with where.container():
        _answers(run, shown, key)


def _answers(run: LiveRun, shown: Snapshot, key: str) -> None:
    rc = run.config
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
    marks = [
        ("✓" if r else "✗") if a else "·" for r, a in zip(table["right"], has_answer, strict=True)
    ]
    rows.append({"": tr("train_row_right"), **{str(i): m for i, m in enumerate(marks)}})
    st.dataframe(rows, hide_index=True, key=key)
    if TASKS[rc.task].output == "position":
        st.caption(tr("train_answers_positions"))
    if not all(has_answer):
        st.caption(tr("train_no_answer"))


def head_stats(run: LiveRun) -> None:
    """One row per head of the last snapshot (`head_table`), its columns in the
    interface's language."""
    run_heads = run_head_names(run.config)
    st.subheader(tr("train_stats_header"), help=tr("train_stats_help"))
    st.dataframe(
        [
            {
                tr(f"train_col_{name}"): run_heads[v] if name == "head" else v
                for name, v in row.items()
            }
            for row in head_table(run)
        ],
        hide_index=True,
        key="train_stats",
        column_config={
            tr(f"train_col_{name}"): st.column_config.NumberColumn(format="%.2f")
            for name in _TWO_DECIMALS
        },
    )
