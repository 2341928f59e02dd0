"""The head view in the app: BertViz's picture of one layer, drawn in the browser.

The renderer is the library's (`attention_core.figures.headview`, also what a notebook
shows), mounted here as a Streamlit components-v2 element (no iframe), so a hover costs no
round trip; the data is `attention_core.figures.lens.head_view_data`.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from attention_core.figures.headview import HEAD_VIEW_CSS, HEAD_VIEW_JS
from ui.language import tr

__all__ = ["HEAD_VIEW_COMPONENT", "show_head_view"]

HEAD_VIEW_COMPONENT = "attention_studio_head_view"

_head_view = st.components.v2.component(
    HEAD_VIEW_COMPONENT,
    js=HEAD_VIEW_JS + "\nexport default renderHeadView;\n",
    css=HEAD_VIEW_CSS,
    isolate_styles=False,
)


def show_head_view(spec: dict[str, Any], *, key: str, filename: str = "head-view") -> None:
    """Draw the head view of `spec` (`figures.lens.head_view_data`) under `key`."""
    payload = {
        **spec,
        "filename": filename,
        "text": {"svg": tr("lens_head_view_svg"), "hint": tr("lens_head_view_hint")},
    }
    _head_view(key=key, data={"spec": json.dumps(payload)})
