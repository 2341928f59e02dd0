"""Attention lens: the engineer's views of a real model, beyond raw weights.

The sidebar's sentence through the model loaded on the Pretrained page (the packaged
all-MiniLM-L6-v2 by default) or through the project's trained reader (ui.lens_sources,
one interface for both). One view at a time: maps (raw, rollout, flow, norm-weighted;
every layer × head or one layer; pieces pooled to jieba words), BertViz's head view and
neuron view, head ablation (click heads to knock them out), and attention sinks.
The computing is in attention_core.lens; the caches in ui.cache.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.figures.compare import model_view, plot_model_view, without_cramped_text
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.figures.lens import (
    head_view_data,
    plot_effect_grid,
    plot_effect_vs,
    plot_neuron_view,
    plot_sinks,
)
from attention_core.lens import (
    FLOW_MAX_TOKENS,
    SINK_KINDS,
    RebuildRefused,
    is_causal,
    rollout,
    sinks,
)
from attention_core.stats import head_stats
from ui.charts import show_chart
from ui.common import (
    choose,
    colour_bar_title,
    colour_scale_choice,
    current_settings,
    entry_guard,
    md_escape,
    token_chips,
)
from ui.headview import every_weight_toggle, show_head_view
from ui.language import tr
from ui.lens_sources import SOURCES, effects_or_cancelled, subject
from ui.long.lens import show_long_lens
from ui.long.view import is_long_pretrained
from ui.maps import show_flow, show_rollout
from ui.models import MODEL_STATE, model_label, model_or_stop

state = st.session_state
VIEWS = ("maps", "head", "neuron", "ablation", "sinks")
KINDS = ("raw", "rollout", "flow", "norm")
SCOPES = ("grid", "layer")
STATS = ("entropy", "cls", "special")
KNOCKED = "lens_knocked"


def _keep_in_range(key: str, size: int) -> None:
    """An index kept from a longer sentence or a bigger model would be out of range."""
    if not 0 <= state.get(key, 0) < size:
        state[key] = 0


def _head_key(layer: int, head: int) -> str:
    return f"{layer}-{head}"


def _head_pair(key: str) -> tuple[int, int]:
    layer, head = key.split("-")
    return int(layer), int(head)


def _kv_group_knockout(groups: list[list[int]], layers: int, options: list[str]) -> None:
    """Which query heads share a key/value head, and a button that knocks out one group."""
    names = tr("lens_list_sep").join(
        tr("lens_kv_group_name", kv=g, heads=", ".join(map(str, heads)))
        for g, heads in enumerate(groups)
    )
    st.caption(tr("lens_kv_groups_caption", groups=names))
    c1, c2, c3 = st.columns([2, 2, 2], vertical_alignment="bottom")
    layer = choose(c1.selectbox, tr("lens_layer_label"), range(layers), key="lens_kv_layer")
    group = choose(
        c2.selectbox,
        tr("lens_kv_group_label"),
        range(len(groups)),
        key="lens_kv_group",
        format_func=lambda g: tr("lens_kv_group_name", kv=g, heads=", ".join(map(str, groups[g]))),
    )

    def knock_out() -> None:
        chosen = [k for k in state.get(KNOCKED, []) if k in options]
        added = [_head_key(layer, h) for h in groups[group]]
        state[KNOCKED] = chosen + [k for k in added if k not in chosen]

    c3.button(tr("lens_kv_knock"), key="lens_kv_knock", on_click=knock_out)


entry_guard()
st.title(tr("lens_title"))
st.caption(tr("lens_intro"))

settings = current_settings()
source = choose(
    st.segmented_control,
    tr("lens_source_label"),
    SOURCES,
    key="lens_source",
    default="reader" if settings.trained else "pretrained",  # the sidebar's weights
    format_func=lambda option: tr(f"lens_source_{option}"),
    help=tr("lens_source_help"),
    required=True,
)
if (source or "pretrained") == "pretrained":  # past 512 tokens, within the model's context
    name = state.get(MODEL_STATE, "")
    if is_long_pretrained(name, model_or_stop(name), settings.text):
        show_long_lens(name, model_label(name), settings.text)
        st.stop()
lensed = subject(source or "pretrained", settings)
L, H, n = lensed.attentions.shape[:3]
st.caption(tr("lens_model_info", model=md_escape(lensed.name), layers=L, heads=H, n=n))
token_chips(lensed.shown_tokens)
if lensed.readable is not None:  # a byte-level tokenizer's pieces, shown as characters
    st.caption(tr("lens_readable_note", pieces=n, n=len(lensed.shown_tokens)))
labels = lensed.labels
layer_name = tr("compare_layer_name", l="{l}")
head_name = tr("compare_head_name", i="{i}")

view = choose(
    st.segmented_control,
    tr("lens_view_label"),
    VIEWS,
    key="lens_view",
    default="maps",
    format_func=lambda option: tr(f"lens_view_{option}"),
    required=True,
)
view = view or "maps"
_keep_in_range("lens_layer", L)
_keep_in_range("lens_head", H)
_keep_in_range("lens_query", n)
_keep_in_range("lens_key", n)

try:
    if view == "maps":
        c1, c2 = st.columns([3, 2])
        kind = choose(
            c1.segmented_control,
            tr("lens_kind_label"),
            KINDS,
            key="lens_kind",
            default="raw",
            format_func=lambda option: tr(f"lens_kind_{option}"),
            help=tr("lens_kind_help"),
            required=True,
        )
        kind = kind or "raw"
        has_offsets = any(b > a for a, b in lensed.offsets)
        words = c2.toggle(
            tr("lens_words_label"),
            key="lens_words",
            help=tr("lens_words_help"),
            disabled=not has_offsets,
        )
        if words and not has_offsets:
            st.info(tr("lens_words_unavailable"))
        words = words and has_offsets
        # maps of weights (rows are distributions) take the colour scale shared with the
        # other pages; "norm" (weights × value norms, not probabilities) keeps its own 0…top
        scale = "absolute" if kind == "norm" else colour_scale_choice()

        def pooled(weights: np.ndarray) -> tuple[list[str], np.ndarray]:
            """(…, n, n) → (labels, (…, m, m)): byte pieces pooled to the characters they
            make, and to jieba words when asked."""
            return lensed.pooled(weights, settings.text, words=words)

        if kind in ("raw", "norm"):
            scope = choose(
                st.segmented_control,
                tr("lens_scope_label"),
                SCOPES,
                key="lens_scope",
                default="grid",
                format_func=lambda option: tr(f"lens_scope_{option}"),
                required=True,
            )
            weights = lensed.attentions  # (L, H, n, n)
            if kind == "norm":
                norms = lensed.value_norms()  # (L, H, n)
                weights = weights * norms[:, :, None, :]  # α_ij · ‖f_h(x_j)‖
            shown_labels, shown = pooled(weights)
            top = float(shown.max()) if shown.size else 1.0
            if kind == "raw":
                st.caption(tr("lens_raw_caption"))
                top = 1.0
            else:
                st.caption(tr("lens_norm_caption", top=top))
            raw = kind == "raw"
            if scope == "layer":
                layer = choose(st.select_slider, tr("lens_layer_label"), range(L), key="lens_layer")
                grid = head_grid(shown[layer], shown_labels, head_title=head_name)
                bar = colour_bar_title(scale) if raw else tr("lens_norm_unit")
                figure = plot_heads(grid, scale=scale, zmax=top, colorbar_title=bar)
                figure = without_cramped_text(figure)
                show_chart(figure, key="lens_map_chart", filename=f"lens-{kind}-layer{layer}")
            else:
                grid = model_view(shown, shown_labels, layer_title=layer_name, head_title=head_name)
                bar = colour_bar_title(scale, one_axis=True) if raw else tr("lens_norm_unit")
                show_chart(
                    plot_model_view(grid, scale=scale, zmax=top, colorbar_title=bar),
                    key="lens_map_chart",
                    filename=f"lens-{kind}",
                )
        elif kind == "rollout":
            shown_labels, shown = pooled(rollout(lensed.attentions))  # (L, m, m)
            show_rollout(shown, shown_labels, scale, key="lens_map_chart", filename="lens-rollout")
        else:  # flow
            if n > FLOW_MAX_TOKENS:
                st.info(tr("lens_flow_too_long", limit=FLOW_MAX_TOKENS, n=n))
            else:
                with st.spinner(tr("pretrained_running")):
                    flows = lensed.flow()  # (n, n)
                shown_labels, shown = pooled(flows)  # (m, m)
                show_flow(shown, shown_labels, L, scale, key="lens_map_chart", filename="lens-flow")

    elif view == "head":
        layer = choose(st.select_slider, tr("lens_layer_label"), range(L), key="lens_layer")
        st.caption(tr("lens_head_view_caption", layer=layer))
        heads = [head_name.format(i=h) for h in range(H)]
        every = every_weight_toggle(lensed.attentions[layer].size, key="lens_every_weight")
        shown = lensed.pool(lensed.attentions[layer])  # (H, m, m): characters, not byte pieces
        spec = head_view_data(shown, lensed.shown_tokens, heads, every_weight=every)
        show_head_view(spec, key="lens_head_view", filename=f"head-view-layer{layer}")

    elif view == "neuron":
        c1, c2, c3, c4 = st.columns(4)
        layer = choose(c1.selectbox, tr("lens_layer_label"), range(L), key="lens_layer")
        head = choose(c2.selectbox, tr("lens_head_label"), range(H), key="lens_head")
        query = choose(
            c3.selectbox,
            tr("lens_query_label"),
            range(n),
            key="lens_query",
            format_func=labels.__getitem__,
        )
        key = choose(
            c4.selectbox,
            tr("lens_key_label"),
            range(n),
            key="lens_key",
            format_func=labels.__getitem__,
        )
        try:  # checked against the model's own weights in the library
            neuron = lensed.neuron(layer, head)
        except RebuildRefused as refused:
            st.warning(tr(f"lens_rebuild_{refused.code}", **refused.params))
            st.stop()
        causal = is_causal(lensed.attentions)
        rebuilt = neuron.weights(query, causal=causal)
        raw = neuron.raw_scores(query)[key]
        gap = neuron.gap(query, lensed.attentions[layer, head, query], causal=causal)
        if not gap <= lensed.tolerance:  # a rebuilt number that is not the model's: never shown
            st.warning(tr("lens_neuron_refused", gap=gap, source=lensed.own))
            st.stop()
        if neuron.kv_head is not None:
            st.caption(tr("lens_neuron_shared_kv", head=head, kv=neuron.kv_head))
        unscaled = "_unscaled" if neuron.scaling == 1.0 else ""  # GPT-Neo: no ÷√d
        if lensed.readable is not None:  # one q and one k per piece: the model's own rows
            st.caption(tr("lens_neuron_pieces"))
        st.caption(
            tr(
                f"lens_neuron_caption{unscaled}",
                query=md_escape(lensed.piece_names[query]),
                key=md_escape(lensed.piece_names[key]),
                layer=layer,
                head=head,
                scaling=neuron.scaling,
            )
        )
        rows = tr("lens_neuron_rows", query=lensed.piece_names[query], key=lensed.piece_names[key])
        title = tr(
            f"lens_neuron_title{unscaled}",
            raw=raw,
            scaled=raw * neuron.scaling,
            weight=rebuilt[key],
        )
        figure = plot_neuron_view(
            neuron.q[query],
            neuron.k[key],
            rows=rows.split("|"),
            title=title,
            hover=tr("lens_neuron_hover") + "<extra></extra>",
        )
        show_chart(figure, key="lens_neuron_chart", filename=f"neuron-l{layer}-h{head}")
        st.caption(
            tr(
                "lens_neuron_check",
                source=lensed.own,
                model=float(lensed.attentions[layer, head, query, key]),
                rebuilt=float(rebuilt[key]),
            )
        )

    elif view == "ablation":
        st.caption(tr(lensed.ablation_caption))
        found = effects_or_cancelled(lensed)  # a bar and Cancel when it takes a while
        if found is None:  # cancelled: the page says so and offers to start again
            st.stop()
        effect, ranking = found  # (L, H), largest first
        options = [_head_key(layer, head) for layer in range(L) for head in range(H)]
        knocked_now = [k for k in state.get(KNOCKED, []) if k in options]
        clicked = show_chart(
            plot_effect_grid(
                effect,
                [_head_pair(k) for k in knocked_now],
                layer_title=layer_name,
                head_title=head_name,
                colorbar_title=tr("lens_ablation_effect"),
            ),
            key="lens_effect_chart",
            filename="lens-ablation",
            clicks=True,
        )
        if clicked and clicked.get("curve") == 0:  # a cell of the heatmap: toggle that head
            layer = [layer_name.format(l=i) for i in range(L)].index(clicked["y"])
            head = [head_name.format(i=i) for i in range(H)].index(clicked["x"])
            picked = _head_key(layer, head)
            knocked_now = [k for k in knocked_now if k != picked] + (
                [] if picked in knocked_now else [picked]
            )
            state[KNOCKED] = knocked_now
            st.rerun()  # redraw the grid with the new ✕ marks
        knocked = choose(
            st.multiselect,
            tr("lens_knocked_label"),
            options,
            key=KNOCKED,
            default=[],
            format_func=lambda k: tr("lens_head_name", layer=k.split("-")[0], head=k.split("-")[1]),
            help=tr("lens_knocked_help"),
        )
        groups = lensed.kv_groups()
        if len(groups[0]) > 1:  # grouped-query attention: a key/value head's whole group
            _kv_group_knockout(groups, L, options)
            knocked = state[KNOCKED]
        pairs = tuple(_head_pair(k) for k in knocked)
        metrics = lensed.knock_out(pairs)
        for column, metric in zip(st.columns(len(metrics)), metrics, strict=True):
            column.metric(metric.label, metric.value, metric.delta, delta_color=metric.delta_color)
        if not pairs:
            st.caption(tr("lens_ablation_none"))
        top = ranking[:3]
        st.caption(
            tr(
                "lens_ablation_top",
                heads=tr("lens_list_sep").join(
                    tr("lens_head_name", layer=a, head=b) for a, b in top
                ),
            )
        )
        stat = choose(
            st.segmented_control,
            tr("lens_stat_label"),
            STATS,
            key="lens_stat",
            default="cls",
            format_func=lambda option: tr(f"lens_stat_{option}"),
            required=True,
        )
        a = lensed.attentions.astype(np.float64)
        if stat == "entropy":
            values = np.array([[s.entropy for s in head_stats(a[i])] for i in range(L)])
        elif stat == "special":
            values = a[..., np.asarray(lensed.special, dtype=bool)].sum(-1).mean(-1)
        else:
            values = a[..., 0].mean(-1)  # (L, H): mean attention on the first token
        names = [tr("lens_head_name", layer=i, head=j) for i in range(L) for j in range(H)]
        show_chart(
            plot_effect_vs(
                effect,
                values,
                x_title=tr(f"lens_stat_{stat}"),
                y_title=tr("lens_ablation_effect"),
                names=names,
            ),
            key="lens_effect_vs_chart",
            filename="lens-effect-vs",
        )
        st.caption(tr("lens_effect_vs_caption"))

    else:  # sinks
        norms = lensed.value_norms()  # (L, H, n)
        found = sinks(lensed.attentions, norms, lensed.piece_text, lensed.special)
        kind = choose(
            st.segmented_control,
            tr("lens_sink_label"),
            SINK_KINDS,
            key="lens_sink",
            default="cls",
            format_func=lambda option: tr(f"lens_sink_{option}"),
            required=True,
        )
        kind = kind or "cls"
        kind_name = tr(f"lens_sink_{kind}")
        if not found.present[kind]:
            st.info(tr("lens_sink_absent"))
        else:
            st.caption(tr("lens_sinks_caption", kind=md_escape(kind_name)))
            show_chart(
                plot_sinks(
                    found.mass[kind],
                    layer_title=layer_name,
                    head_title=head_name,
                    colorbar_title=tr("lens_weight"),
                    custom=found.norm[kind],
                    hover=tr("lens_sinks_hover") + "<extra></extra>",
                ),
                key="lens_sinks_chart",
                filename=f"lens-sinks-{kind}",
            )
            heavy = found.mass[kind] > 0.5
            st.caption(
                tr(
                    "lens_sinks_norms",
                    kind=md_escape(kind_name),
                    sink=float(np.nanmean(found.norm[kind])),
                    other=float(np.nanmean(found.other_norm)),
                    count=int(heavy.sum()),
                    total=L * H,
                )
            )
except (ValueError, RuntimeError) as error:  # a model this lens cannot read: say so, no more
    st.error(tr("lens_failed", error=md_escape(str(error))))
