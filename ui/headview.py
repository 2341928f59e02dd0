"""The head view in the app: BertViz's picture of one layer, drawn in the browser.

The renderer is the library's (`attention_core.figures.headview`, also what a notebook
shows), mounted here as a Streamlit components-v2 element (no iframe), so a hover costs no
round trip; the data is `attention_core.figures.lens.head_view_data`.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from attention_core.figures.headview import (
    EVERY_WEIGHT_MAX,
    HEAD_VIEW_CSS,
    HEAD_VIEW_JS,
    MIN_WEIGHT,
    left_out_params,
)
from ui.language import tr

__all__ = ["HEAD_VIEW_COMPONENT", "every_weight_toggle", "show_head_view"]

HEAD_VIEW_COMPONENT = "attention_studio_head_view"

_head_view = st.components.v2.component(
    HEAD_VIEW_COMPONENT,
    js=HEAD_VIEW_JS + "\nexport default renderHeadView;\n",
    css=HEAD_VIEW_CSS,
    isolate_styles=False,
)


def show_head_view(spec: dict[str, Any], *, key: str, filename: str = "head-view") -> None:
    """Draw the head view of `spec` (`figures.lens.head_view_data`) under `key`."""
    left_out = left_out_params(spec["sparse"])
    payload = {
        **spec,
        "filename": filename,
        "text": {
            "svg": tr("lens_head_view_svg"),
            "hint": tr("lens_head_view_hint"),
            "note": "" if left_out is None else tr("hv_left_out", **left_out),
            "open_cap": tr("hv_open_cap", shown="{shown}", total="{total}"),
        },
    }
    _head_view(key=key, data={"spec": json.dumps(payload)})


def every_weight_toggle(weights: int, *, key: str) -> bool:
    """The switch that sends every weight of a head view of `weights` weights (H·n²), off
    (and disabled) past EVERY_WEIGHT_MAX; by default lines under MIN_WEIGHT are left out,
    and the view says how many."""
    fits = weights <= EVERY_WEIGHT_MAX
    on = st.toggle(
        tr("hv_every_weight_label"),
        key=key,
        help=tr("hv_every_weight_help", bound=f"{MIN_WEIGHT:g}", limit=f"{EVERY_WEIGHT_MAX:,}"),
        disabled=not fits,
    )
    return bool(on) and fits
