"""The Lens page on a text longer than MAX_TOKENS tokens, read by a model whose context is
longer: the views that scale to a long map, and for the others why not.

- Where attention pools: every head's received attention over the text's positions (one
  layer at a time), and lens.sinks' share of attention on [CLS] / [SEP] / the first token /
  punctuation for every layer × head (attention_core.long.lens, from the maps: never n²).
- Rollout of one token: its attention rollout through every layer next to its last layer's
  row, over the whole text, and the keys it ends on.
The computing is in attention_core.long.lens; the caches in ui.long.cache.
"""

from __future__ import annotations

import streamlit as st

from attention_core.lens import FLOW_MAX_TOKENS, SINK_KINDS
from attention_core.limits import MAX_TOKENS
from ui.charts import show_chart
from ui.common import choose, md_escape
from ui.language import tr
from ui.long.cache import LongSubject, long_rollout, long_sinks
from ui.long.view import long_cut_warning, row_input, subject_or_message

__all__ = ["show_long_lens"]

VIEWS = ("received", "rollout")
TOP_KEYS = 10  # keys listed under a rollout


def show_long_lens(name: str, label: str, text: str) -> None:
    """The long lens of `text` through the model `name` (named `label` on the page)."""
    source = ("pretrained", name, text)
    subject = subject_or_message(source)
    if subject is None:
        return
    long_cut_warning(subject, label)
    L, H = len(subject.maps), subject.num_heads
    st.caption(tr("lens_model_info", model=md_escape(label), layers=L, heads=H, n=subject.n))
    st.info(tr("lens_long_intro", n=subject.n, limit=MAX_TOKENS))
    view = choose(
        st.segmented_control,
        tr("lens_view_label"),
        VIEWS,
        key="lens_long_view",
        default="received",
        format_func=lambda option: tr(f"lens_long_view_{option}"),
        required=True,
    )
    with st.spinner(tr("computing")):
        if view == "rollout":
            _rollout(subject, source)
        else:
            _received(subject, source)
    st.caption(tr("lens_long_elsewhere", limit=MAX_TOKENS, flow=FLOW_MAX_TOKENS))


def _received(subject: LongSubject, source: tuple) -> None:
    from attention_core.figures.lens import plot_sinks
    from attention_core.figures.long_lens import plot_positions

    mass, present, got = long_sinks(source)  # (L, H) per kind, kinds present, (L, H, n)
    layer = choose(
        st.selectbox,
        tr("lens_layer_label"),
        range(len(subject.maps)),
        key="lens_long_layer",
        format_func=lambda i: tr("compare_layer_name", l=i),
    )
    st.caption(tr("lens_long_received_caption", even=1 / subject.n))
    heads = {tr("compare_head_name", i=h): got[layer, h] for h in range(subject.num_heads)}
    figure = plot_positions(heads, subject.labels, y_title=tr("lens_long_received_axis"), log=True)
    show_chart(figure, key="lens_long_received", filename="lens-long-received")
    kind = choose(
        st.segmented_control,
        tr("lens_sink_label"),
        SINK_KINDS,
        key="lens_long_sink",
        default="first",
        format_func=lambda option: tr(f"lens_sink_{option}"),
        required=True,
    )
    if not present[kind]:
        st.info(tr("lens_sink_absent"))
        return
    kind_name = tr(f"lens_sink_{kind}")
    st.caption(tr("lens_long_sinks_caption", kind=md_escape(kind_name)))
    show_chart(
        plot_sinks(
            mass[kind],
            layer_title=tr("compare_layer_name", l="{l}"),
            head_title=tr("compare_head_name", i="{i}"),
            colorbar_title=tr("lens_weight"),
        ),
        key="lens_long_sinks",
        filename=f"lens-long-sinks-{kind}",
    )


def _rollout(subject: LongSubject, source: tuple) -> None:
    from attention_core.figures.long_lens import plot_positions
    from attention_core.long.lens import top_keys

    n, labels = subject.n, subject.labels
    label, help_text = tr("lens_long_row_label"), tr("lens_long_row_help")
    row = row_input("lens_long_row", n, label=label, help=help_text)
    rolled, raw = long_rollout(source, row)  # (n,) each
    st.caption(tr("lens_long_rollout_caption", row=row, token=md_escape(labels[row])))
    series = {tr("lens_long_rollout_name"): rolled, tr("lens_long_last_name"): raw}
    last = row if subject.maps[0].causal else None  # a causal row reaches no later token
    figure = plot_positions(series, labels, y_title=tr("lens_weight"), log=True, last=last)
    show_chart(figure, key="lens_long_rollout", filename="lens-long-rollout")
    st.dataframe(
        {
            tr("lens_long_col_key"): [f"{i}:{labels[i]}" for i, _ in top_keys(rolled, TOP_KEYS)],
            tr("lens_long_rollout_name"): [v for _, v in top_keys(rolled, TOP_KEYS)],
            tr("lens_long_last_name"): [float(raw[i]) for i, _ in top_keys(rolled, TOP_KEYS)],
        },
        hide_index=True,
        key="lens_long_top",
    )
