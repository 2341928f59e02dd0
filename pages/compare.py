"""Compare heads: several heads on one colour scale, A − B differences, head statistics and
head-to-head similarity, for the project's module (one configuration or two) or for one
layer of the pretrained model.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from attention_core.compare import (
    difference_peak,
    head_difference,
    layer_view,
    pretrained_labels,
    same_tokens,
    stack_heads,
)
from attention_core.figures.compare import (
    plot_difference,
    without_cramped_text,
)
from attention_core.figures.heads import head_grid, plot_heads
from attention_core.figures.style import HALF_WIDTH_PX
from attention_core.settings import MAX_SEED, TOKENIZERS, head_options, nearest_heads
from attention_core.stats import STAT_NAMES, head_similarity, head_stats
from attention_core.tokenize import token_labels
from ui.attention_file import FILE_STATE
from ui.charts import show_chart
from ui.common import (
    analysis_or_stop,
    choose,
    colour_scale_choice,
    current_settings,
    entry_guard,
    forget,
    md_escape,
    seeded,
    token_chips,
)
from ui.compare_parts import similarity, statistics
from ui.language import tr
from ui.long.compare import show_long_compare
from ui.long.view import is_long, is_long_pretrained
from ui.models import MODEL_STATE, model_label, model_or_stop, result_or_stop, unknown_warning

if TYPE_CHECKING:
    import numpy as np

    from attention_core.settings import Settings

state = st.session_state
SOURCES = ("module", "pretrained")
MODES = ("heads", "configs")
SORT_KEYS = ("head", *STAT_NAMES)


def _reset_pair() -> None:
    """Another source or mode: heads A and B start again from their defaults."""
    forget("compare_a", "compare_b")


def _names(heads: int, template: str = "compare_head_name") -> list[str]:
    return [tr(template, i=i) for i in range(heads)]


def heads_side_by_side(weights: np.ndarray, labels: list[str], names: list[str]) -> None:
    """The chosen heads of one model on one shared colour scale."""
    H = weights.shape[0]
    st.subheader(tr("compare_heads_header"))
    picked = choose(
        st.multiselect,
        tr("compare_heads_label"),
        list(range(H)),
        key="compare_heads",
        default=list(range(min(H, 4))),
        format_func=names.__getitem__,
        help=tr("compare_heads_help"),
    )
    if not picked:
        st.info(tr("compare_pick_heads"))
        return
    grid = head_grid(
        weights, labels, heads=sorted(picked), head_title=tr("compare_head_name", i="{i}")
    )
    scale = colour_scale_choice()
    figure = plot_heads(grid, scale=scale, colorbar_title=tr(f"scale_bar_{scale}"))
    show_chart(without_cramped_text(figure), key="compare_heads_chart")


def difference(
    weights_a: np.ndarray,
    weights_b: np.ndarray,
    labels: list[str],
    names_a: list[str],
    names_b: list[str],
    *,
    default_b: int = 1,
) -> None:
    """A − B of one head from each stack, on the same tokens; diverging colours around 0."""
    st.subheader(tr("compare_diff_header"), help=tr("compare_diff_help"))
    left, right = st.columns(2)
    a = choose(
        left.selectbox,
        tr("compare_a_label"),
        range(len(names_a)),
        key="compare_a",
        default=0,
        format_func=names_a.__getitem__,
    )
    b = choose(
        right.selectbox,
        tr("compare_b_label"),
        range(len(names_b)),
        key="compare_b",
        default=min(default_b, len(names_b) - 1),
        format_func=names_b.__getitem__,
    )
    diff = head_difference(weights_a[a], weights_b[b])  # (n, n)
    peak = difference_peak(diff)
    if peak == 0.0:
        st.success(tr("compare_diff_zero"))
    else:
        st.caption(tr("compare_diff_max", value=peak))
    zoom = st.toggle(
        tr("compare_diff_zoom_label"),
        seeded("compare_diff_zoom", False),
        key="compare_diff_zoom",
        help=tr("compare_diff_zoom_help"),
        disabled=peak == 0.0,
    )
    zoomed = zoom and peak > 0.0
    colorbar = (
        tr("compare_diff_colorbar_zoomed", limit=peak) if zoomed else tr("compare_diff_colorbar")
    )
    show_chart(
        plot_difference(
            diff,
            labels,
            title=tr("compare_diff_title", a=names_a[a], b=names_b[b]),  # catalog text only
            colorbar_title=colorbar,
            zoom=zoomed,
        ),
        key="compare_diff_chart",
    )


def one_model(weights: np.ndarray, labels: list[str], names: list[str]) -> None:
    """Mode A: heads of one model (the module or one pretrained layer)."""
    heads_side_by_side(weights, labels, names)
    if weights.shape[0] > 1:  # a single head has nothing to be compared with
        difference(weights, weights, labels, names, names)
    statistics([(head_stats(weights), names, labels)])
    similarity(head_similarity(weights) if weights.shape[0] > 1 else None, names)


def config_b_widgets(settings: Settings) -> Settings:
    """Configuration B: the sidebar's settings with a few of them overridden."""
    st.subheader(tr("compare_configs_header"), help=tr("compare_configs_help"))
    b_seed = seeded("compare_b_seed", settings.seed + 1 if settings.seed < MAX_SEED else 0)
    if seeded("compare_b_num_heads", settings.num_heads) not in head_options(settings.embed_dim):
        state["compare_b_num_heads"] = nearest_heads(
            settings.embed_dim, state["compare_b_num_heads"]
        )
    c1, c2, c3, c4 = st.columns([1, 2, 2, 1], vertical_alignment="bottom")
    seed = c1.number_input(
        tr("compare_b_seed_label"), 0, MAX_SEED, b_seed, step=1, key="compare_b_seed"
    )
    num_heads = choose(
        c2.select_slider,
        tr("compare_b_num_heads_label"),
        head_options(settings.embed_dim),
        key="compare_b_num_heads",
        default=state["compare_b_num_heads"],
        disabled=settings.attention == "single",
    )
    tokenizer = choose(
        c3.selectbox,
        tr("compare_b_tokenizer_label"),
        TOKENIZERS,
        key="compare_b_tokenizer",
        default=settings.tokenizer,
        format_func=lambda option: tr(f"tokenizer_{option}"),
    )
    causal = c4.toggle(
        tr("compare_b_causal_label"),
        seeded("compare_b_causal", settings.causal),
        key="compare_b_causal",
    )
    positional = c4.toggle(
        tr("compare_b_positional_label"),
        seeded("compare_b_positional", settings.positional),
        key="compare_b_positional",
    )
    return replace(
        settings,
        seed=int(seed),
        num_heads=int(num_heads),
        tokenizer=tokenizer,
        causal=bool(causal),
        positional=bool(positional),
    )


def two_configs(settings: Settings) -> None:
    """Mode B: two configurations of the project's module, side by side."""
    settings_b = config_b_widgets(settings)
    if settings_b == settings:
        st.caption(tr("compare_same_config"))
    a = analysis_or_stop(settings)
    b = analysis_or_stop(settings_b)
    names_a = _names(a.weights.shape[0], "compare_a_head_name")
    names_b = _names(b.weights.shape[0], "compare_b_head_name")
    left, right = st.columns(2)
    for column, analysis, title, key in (
        (left, a, "compare_config_a", "compare_grid_a"),
        (right, b, "compare_config_b", "compare_grid_b"),
    ):
        s = analysis.settings
        column.markdown(
            tr(
                title,
                seed=s.seed,
                heads=s.heads,
                tokenizer=tr(f"tokenizer_{s.tokenizer}"),
                causal=tr("compare_on") if s.causal else tr("compare_off"),
                positional=tr("compare_on") if s.positional else tr("compare_off"),
            )
        )
        show_chart(
            without_cramped_text(
                plot_heads(
                    head_grid(
                        analysis.weights,
                        analysis.labels,
                        head_title=tr("compare_head_name", i="{i}"),
                    ),
                    colorbar_title=tr("compare_weight"),
                    cols=2 if analysis.weights.shape[0] > 1 else 1,
                    panel_px=260,
                ),
                width_px=HALF_WIDTH_PX,
            ),
            key=key,
            where=column,
        )
    tokens_a = [t.label for t in a.tokens]
    tokens_b = [t.label for t in b.tokens]
    both = [(head_stats(a.weights), names_a, a.labels), (head_stats(b.weights), names_b, b.labels)]
    if same_tokens(tokens_a, tokens_b):
        # B's head 0 against A's head 0 first: the same head under another configuration
        difference(a.weights, b.weights, a.labels, names_a, names_b, default_b=0)
        statistics(both)
        similarity(head_similarity(stack_heads(a.weights, b.weights)), names_a + names_b)
    else:
        st.subheader(tr("compare_diff_header"))
        st.info(tr("compare_tokens_differ"))
        st.markdown(tr("compare_tokens_a", n=len(tokens_a)))
        token_chips(tokens_a)
        st.markdown(tr("compare_tokens_b", n=len(tokens_b)))
        token_chips(tokens_b)
        statistics(both)
        st.subheader(tr("compare_sim_header"))
        st.info(tr("compare_sim_tokens_differ"))


# --- the page -----------------------------------------------------------------------------
entry_guard()
st.title(tr("compare_title"))
st.caption(tr("compare_intro"))
settings = current_settings()

# heads trained on the "Train attention live" page, sent here with its button; a file
# opened on the "Open an attention file" page
trained = state.get("compare_trained")
opened = state.get(FILE_STATE)
sources = (*SOURCES, *(("trained",) if trained else ()), *(("file",) if opened else ()))
source = (
    choose(
        st.segmented_control,
        tr("compare_source_label"),
        sources,
        key="compare_source",
        # the page opened from a button (the train page's, the file page's) shows its heads
        default="file"
        if state.pop("compare_open_file", False) and opened
        else ("trained" if trained else "module"),
        format_func=lambda option: tr(f"compare_source_{option}"),
        required=True,
        on_change=_reset_pair,
    )
    or "module"
)

if source == "trained":
    st.caption(tr("compare_trained_caption", title=md_escape(trained["title"])))
    # the induction model names its heads by layer ("layer 1 · head 0")
    names = trained.get("names") or _names(trained["weights"].shape[0])
    one_model(trained["weights"], trained["labels"], names)
elif source == "file":
    weights = opened["weights"]  # (L, H, n, n)
    L, H = weights.shape[:2]
    st.caption(tr("compare_file_caption", name=md_escape(opened["name"]), layers=L, heads=H))
    layer = choose(
        st.select_slider, tr("compare_file_layer_label"), range(L), key="compare_file_layer"
    )
    one_model(weights[layer], token_labels(opened["tokens"]), _names(H))
elif source == "pretrained":
    name = state.get(MODEL_STATE, "")
    model = model_or_stop(name)
    if is_long_pretrained(name, model, settings.text):  # past 512 tokens, within its context
        show_long_compare(("pretrained", name, settings.text), model_label(name))
        st.stop()
    result = result_or_stop(name, settings.text)
    unknown_warning(model, result, settings.text, key="compare_to_reader")
    st.caption(
        tr(
            "compare_model_caption",
            model=md_escape(model_label(name)),
            layers=model.num_layers,
            heads=model.num_heads,
        )
    )
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    layer = choose(
        c1.select_slider, tr("compare_layer_label"), range(model.num_layers), key="compare_layer"
    )
    hide = c2.toggle(
        tr("pretrained_hide_special_label"),
        key="compare_hide_special",
        help=tr("pretrained_special_help"),
    )
    if hide:
        st.info(tr("pretrained_hide_special_note"))
    one_model(
        layer_view(result, layer, hide_special=hide),
        pretrained_labels(result, hide_special=hide),
        _names(model.num_heads),
    )
else:
    mode = (
        choose(
            st.segmented_control,
            tr("compare_mode_label"),
            MODES,
            key="compare_mode",
            default="heads",
            format_func=lambda option: tr(f"compare_mode_{option}"),
            required=True,
            on_change=_reset_pair,
        )
        or "heads"
    )
    if mode == "heads" and is_long(settings):  # the landing page's long map's heads
        show_long_compare(("module", settings.model), None)
    elif mode == "heads":
        analysis = analysis_or_stop(settings)
        one_model(analysis.weights, analysis.labels, _names(analysis.weights.shape[0]))
    else:
        two_configs(settings)
