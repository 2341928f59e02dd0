"""The atlas page's other two views: one head's queries and keys in one picture
(AttentionViz), and one metric for the three models side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attention_core.atlas.models import MODELS
from attention_core.atlas.project import METHODS
from attention_core.atlas.query import build_command
from attention_core.atlas.rows import METRICS
from attention_core.figures.atlas import plot_models_side, plot_qk
from ui.atlas import head_key, metric_label, open_index
from ui.cache_atlas import atlas_qk
from ui.charts import show_chart
from ui.common import choose, md_escape
from ui.language import tr

if TYPE_CHECKING:
    from attention_core.atlas.query import Atlas

__all__ = ["QK_SENTENCES", "show_compare", "show_qk"]

QK_SENTENCES = 30  # corpus sentences whose tokens are projected (a few hundred points)


def show_qk(atlas: Atlas, model: str, text: str) -> None:
    """One head's queries and keys over corpus sentences and the user's, projected together."""
    keys = [head_key(la, h) for la in range(atlas.layers) for h in range(atlas.heads)]
    key = choose(
        st.selectbox,
        tr("atlas_head_label"),
        keys,
        key="atlas_head",
        format_func=lambda k: tr("atlas_head_name", l=k.split("-")[0], h=k.split("-")[1]),
    )
    layer, head = (int(v) for v in (key or "0-0").split("-"))
    colour = "kind"
    if model == "reader":
        colour = choose(
            st.segmented_control,
            tr("atlas_qk_color_label"),
            ("kind", "word"),
            key="atlas_qk_color",
            default="word",
            required=True,
            format_func=lambda v: tr(f"atlas_qk_color_{v}"),
        )
    method = choose(
        st.segmented_control,
        tr("atlas_qk_method_label"),
        METHODS,
        key="atlas_qk_method",
        default="pca",
        required=True,
        format_func=lambda v: tr(f"atlas_qk_method_{v}"),
        help=tr("atlas_qk_method_help"),
    )
    texts = tuple(atlas.sample(QK_SENTENCES))
    with st.spinner(tr("atlas_qk_computing")):
        points = atlas_qk(model, texts, layer, head, text.strip(), method or "pca")
    n = len(points.tokens)
    word_names = [tr("atlas_word_place", p=p + 1) for p in range(4)] + [tr("atlas_word_later")]
    figure = plot_qk(
        points.xy,
        points.tokens,
        [points.context(i) for i in range(n)],
        mine=points.sentence == points.mine,
        query_name=tr("atlas_qk_queries"),
        key_name=tr("atlas_qk_keys"),
        mine_name=tr("atlas_mine_name"),
        word_position=points.word_position if colour == "word" else None,
        word_names=word_names,
        axis_titles=(
            (tr("atlas_qk_axis", i=1, share=points.explained[0]) if method != "tsne" else ""),
            (tr("atlas_qk_axis", i=2, share=points.explained[1]) if method != "tsne" else ""),
        ),
    )
    show_chart(figure, key="atlas_qk", filename="queries-and-keys")
    st.caption(tr("atlas_qk_caption", tokens=n, sentences=len(points.texts)))


def show_compare() -> None:
    """One metric, layer × head, for every model that has an index, on one colour scale."""
    c1, c2 = st.columns(2)
    metric = choose(
        c1.selectbox,
        tr("atlas_compare_metric"),
        METRICS,
        key="atlas_compare_metric",
        default="previous",
        format_func=metric_label,
    )
    lang = choose(
        c2.selectbox,
        tr("atlas_lang_label"),
        ("all", "zh", "en"),
        key="atlas_compare_lang",
        format_func=lambda v: tr(f"atlas_lang_{v}"),
    )
    matrices, titles, counts, missing = [], [], [], []
    for model in MODELS:
        atlas = open_index(model)
        if atlas is None:
            missing.append(model)
            continue
        head_map = atlas.head_map(lang)
        values = head_map.values[metric].reshape(atlas.layers, atlas.heads)  # (L·H,) → (L, H)
        matrices.append(values)
        titles.append(tr(f"atlas_model_{model}"))
        counts.append(tr("atlas_compare_title", model=titles[-1], sentences=head_map.sentences))
    if matrices:
        figure = plot_models_side(
            matrices,
            titles,
            layer_title=tr("atlas_layer_tick"),
            head_title=tr("atlas_head_tick"),
            colorbar_title=metric_label(metric),
        )
        show_chart(figure, key="atlas_compare", filename="heads-compared")
        means = tr("atlas_list_sep").join(
            f"{t}: {np.nanmean(m):.3f}" if np.isfinite(m).any() else f"{t}: —"
            for t, m in zip(titles, matrices, strict=True)
        )
        st.caption(tr("atlas_compare_caption", metric=metric_label(metric), means=means))
        st.caption(tr("atlas_list_sep").join(counts))
    for model in missing:
        st.caption(
            md_escape(
                tr(
                    "atlas_compare_missing",
                    model=tr(f"atlas_model_{model}"),
                    command=build_command(model),
                )
            )
        )
