"""Open an attention file: attention saved by a notebook or downloaded from the Pretrained
page (.npz, .safetensors, .pt: every layer's weights and their tokens), on the views that
need only the weights: every layer × head, one layer's heads, rollout, flow, the head view.
Its heads can also be compared on the Compare page (source "attention file").

The file is read by attention_core.attention_file (nothing in it runs, nothing is
unpickled) and kept in the session until another file is opened or it is closed.
"""

from __future__ import annotations

import streamlit as st

from attention_core.attention_file import FORMATS, MAX_FILE_BYTES, AttentionFileError
from attention_core.figures.compare import model_view, plot_model_view, without_cramped_text
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.figures.lens import head_view_data
from attention_core.lens import FLOW_MAX_TOKENS, rollout
from attention_core.tokenize import token_labels
from ui.attention_file import FILE_STATE, close_file, open_upload
from ui.cache import attention_flow
from ui.charts import show_chart
from ui.common import (
    choose,
    colour_bar_title,
    colour_scale_choice,
    entry_guard,
    forget,
    md_escape,
    token_chips,
)
from ui.headview import every_weight_toggle, show_head_view
from ui.language import tr
from ui.maps import show_flow, show_rollout
from ui.scale_notes import scale_caption

state = st.session_state
VIEWS = ("model", "layer", "rollout", "flow", "head")


def _keep_in_range(key: str, size: int) -> None:
    """A layer index kept from a file with more layers would be out of range for this one."""
    if not 0 <= state.get(key, 0) < size:
        state[key] = 0


entry_guard()
st.title(tr("file_title"))
st.caption(tr("file_intro"))

upload = st.file_uploader(
    tr("file_upload_label"),
    type=list(FORMATS),
    key="file_upload",
    help=tr("file_upload_help", mb=MAX_FILE_BYTES // 2**20),
    max_upload_size=MAX_FILE_BYTES // 2**20,
)
if upload is not None:
    try:
        open_upload(upload)
    except AttentionFileError as error:  # said here; a file opened before stays open
        reason = tr(f"file_error_{error.code}", **error.params)
        st.error(tr("file_refused", name=md_escape(upload.name), reason=reason))

opened = state.get(FILE_STATE)
if opened is None:
    st.info(tr("file_none", endings=", ".join(f".{f}" for f in FORMATS)))
    st.stop()

weights, tokens = opened["weights"], opened["tokens"]  # (L, H, n, n), n
L, H, n = weights.shape[0], weights.shape[1], len(tokens)
info, close = st.columns([4, 1], vertical_alignment="center")
info.caption(tr("file_info", name=md_escape(opened["name"]), layers=L, heads=H, n=n))
close.button(tr("file_close"), key="file_close", on_click=close_file)
token_chips(tokens)
labels = token_labels(tokens)
layer_name = tr("compare_layer_name", l="{l}")
head_name = tr("compare_head_name", i="{i}")
if st.button(tr("file_compare_label"), key="file_to_compare", help=tr("file_compare_help")):
    state["compare_open_file"] = True
    forget("compare_source")  # the Compare page opens on this file's heads
    st.switch_page("pages/compare.py")

view = choose(
    st.segmented_control,
    tr("pretrained_view_label"),
    VIEWS,
    key="file_view",
    default="model",
    format_func=lambda option: tr(f"file_view_{option}"),
    required=True,
)
view = view or "model"
_keep_in_range("file_layer", L)

if view == "model":
    scale = colour_scale_choice()  # the landing page's choice, kept across pages and in the URL
    grid = model_view(weights, labels, layer_title=layer_name, head_title=head_name)
    st.caption(tr("pretrained_model_view_caption", layers=L, heads=H))
    st.caption(scale_caption(scale, n, one_axis=True))
    if grid.block > 1:
        st.caption(tr("pretrained_thumbs_note", n=n, block=grid.block))
    show_chart(
        plot_model_view(grid, scale=scale, colorbar_title=colour_bar_title(scale, one_axis=True)),
        key="file_model_chart",
        filename="attention-file-model",
    )

elif view == "layer":
    layer = choose(st.select_slider, tr("pretrained_layer_label"), range(L), key="file_layer")
    scale = colour_scale_choice()
    st.caption(tr("pretrained_layer_caption", layer=layer, heads=H, n=n))
    st.caption(scale_caption(scale, n))
    figure = plot_heads(
        head_grid(weights[layer], labels, head_title=head_name),  # (H, n, n)
        scale=scale,
        colorbar_title=tr(f"scale_bar_{scale}"),
    )
    show_chart(
        without_cramped_text(figure), key="file_layer_chart", filename=f"attention-file-{layer}"
    )

elif view == "rollout":
    rolled = rollout(weights)  # (L, n, n), rows sum to 1
    show_rollout(
        rolled,
        labels,
        colour_scale_choice(),
        key="file_map_chart",
        filename="attention-file-rollout",
    )

elif view == "flow":
    if n > FLOW_MAX_TOKENS:
        st.info(tr("lens_flow_too_long", limit=FLOW_MAX_TOKENS, n=n))
    else:
        with st.spinner(tr("file_flow_running")):
            flows = attention_flow(opened["id"], weights)  # (n, n)
        show_flow(
            flows,
            labels,
            L,
            colour_scale_choice(),
            key="file_map_chart",
            filename="attention-file-flow",
        )

else:  # the head view of one layer
    layer = choose(st.select_slider, tr("lens_layer_label"), range(L), key="file_layer")
    st.caption(tr("lens_head_view_caption", layer=layer))
    every = every_weight_toggle(weights[layer].size, key="file_every_weight")
    names = [head_name.format(i=h) for h in range(H)]
    spec = head_view_data(weights[layer], tokens, names, every_weight=every)
    show_head_view(spec, key="file_head_view", filename=f"head-view-file-layer{layer}")
