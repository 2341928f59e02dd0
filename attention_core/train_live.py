"""The old import path of `attention_core.train.live`, kept so `from attention_core.train_live
import LiveRun` still works (tests/test_train_live.py and tests/test_page_train.py use it).
New code imports from `attention_core.train.live`; nothing lives here but the names."""

from __future__ import annotations

from attention_core.train.live import (
    MAX_SNAPSHOTS,
    SHARP_FOCUS,
    LiveRun,
    compare_payload,
    example_labels,
    example_table,
    head_table,
    live_config,
    single_thread,
    target_matrix,
)

__all__ = [
    "MAX_SNAPSHOTS",
    "SHARP_FOCUS",
    "LiveRun",
    "compare_payload",
    "example_labels",
    "example_table",
    "head_table",
    "live_config",
    "single_thread",
    "target_matrix",
]
