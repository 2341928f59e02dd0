"""Why divide by √d_k: the article's step (3) as an experiment, then on the user's sentence.

Random queries and keys show the spread of q·k growing like √d_k and unscaled softmax
collapsing to one-hot; the sentence in the sidebar is then drawn with the scores divided
by 1 and by √d_k · T side by side. The numbers come from `attention_core.scaling`.
"""

from __future__ import annotations

import streamlit as st

from attention_core.figures.heads import plot_heads
from attention_core.figures.steps import pair_grid, plot_dot_spread, plot_peakedness
from attention_core.scaling import scaled_divisor
from attention_core.settings import MAX_SEED
from attention_core.stats import head_stats
from ui.cache import cached_analysis, scaling_result
from ui.charts import show_chart
from ui.common import (
    analysis_or_stop,
    choose,
    colour_scale_choice,
    current_settings,
    entry_guard,
    md_escape,
)
from ui.language import tr

KEY_CHOICES = (4, 8, 16, 32, 64, 128)


entry_guard()
st.title(tr("scaling_title"))
st.markdown(md_escape(tr("scaling_intro")))

# --- the experiment's knobs ------------------------------------------------------------------
seed_col, keys_col, temp_col = st.columns(3)
seed = seed_col.number_input(
    tr("scaling_seed_label"),
    0,
    MAX_SEED,
    0,
    step=1,
    key="scaling_seed",
    help=tr("scaling_seed_help"),
)
n_keys = choose(
    keys_col.select_slider, tr("scaling_keys_label"), KEY_CHOICES, key="scaling_keys", default=16
)
temperature = temp_col.slider(
    tr("scaling_temperature_label"),
    0.1,
    4.0,
    1.0,
    step=0.1,
    key="scaling_temperature",
    help=tr("scaling_temperature_help"),
)
result = scaling_result(int(seed), int(n_keys), float(temperature))
st.caption(md_escape(tr("scaling_setup", samples=result.n_samples, keys=result.n_keys)))
last = -1  # the headline numbers quote the largest d_k

# --- 1: the spread of q·k ----------------------------------------------------------------------
st.subheader(tr("scaling_spread_header"))
st.markdown(
    md_escape(
        tr(
            "scaling_spread_text",
            dim=result.dims[last],
            measured=result.dot_std[last],
            expected=result.sqrt_dims[last],
        )
    )
)
show_chart(
    plot_dot_spread(
        result.dims,
        result.dot_std,
        measured_name=tr("scaling_measured"),
        reference_name=tr("scaling_reference"),
        title=tr("scaling_spread_title"),
        x_title=tr("scaling_axis_dk"),
        y_title=tr("scaling_axis_std"),
    ),
    key="scaling_chart_spread",
)

# --- 2: what it does to softmax ------------------------------------------------------------
st.subheader(tr("scaling_softmax_header"))
st.markdown(
    md_escape(
        tr(
            "scaling_softmax_text",
            keys=result.n_keys,
            dim=result.dims[last],
            entropy_u=result.entropy_unscaled[last],
            max_u=result.max_weight_unscaled[last],
            entropy_s=result.entropy_scaled[last],
            max_s=result.max_weight_scaled[last],
        )
    )
)
# the two statistics side by side: how spread out (entropy) and how peaked (max weight)
columns = st.columns(2)
curves = {
    "entropy": (result.entropy_unscaled, result.entropy_scaled),
    "max": (result.max_weight_unscaled, result.max_weight_scaled),
}
for where, (stat, (unscaled_values, scaled_values)) in zip(columns, curves.items(), strict=True):
    show_chart(
        plot_peakedness(
            result.dims,
            unscaled_values,
            scaled_values,
            unscaled_name=tr("scaling_unscaled_name"),
            scaled_name=tr("scaling_scaled_name"),
            title=tr(f"scaling_{stat}_title"),
            x_title=tr("scaling_axis_dk"),
            y_title=tr(f"scaling_{stat}_axis"),
        ),
        key=f"scaling_chart_{stat}",
        where=where,
    )

# --- 3: the sentence in the sidebar (last: an empty sentence stops only this part) --------
st.subheader(tr("scaling_sentence_header"))
settings = current_settings()
head_dim = settings.embed_dim // settings.heads
divisor = scaled_divisor(head_dim, temperature=temperature)
unscaled = analysis_or_stop(settings, divisor=1.0)
# T = 1 is the default divisor √d_k: reuse the analysis every other page has cached
scaled = cached_analysis(settings, divisor=None if temperature == 1.0 else divisor)
st.markdown(
    md_escape(
        tr("scaling_sentence_text", d=head_dim, temperature=temperature, divisor=scaled.divisor)
    )
)
heads = scaled.weights.shape[0]
head = choose(
    st.selectbox,
    tr("scaling_head_label"),
    range(heads),
    key="scaling_head",
    default=0,
    format_func=lambda i: tr("scaling_head_option", i=i),
    disabled=heads == 1,
)
titles = (tr("scaling_panel_unscaled"), tr("scaling_panel_scaled", divisor=scaled.divisor))
grid = pair_grid(unscaled.weights[head], scaled.weights[head], scaled.labels, titles=titles)
scale = colour_scale_choice()  # shared with the other pages' heads, and kept in the URL
show_chart(
    plot_heads(grid, scale=scale, colorbar_title=tr(f"scale_bar_{scale}"), cols=2),
    key="scaling_chart_sentence",
)
stats_u, stats_s = head_stats(unscaled.weights)[head], head_stats(scaled.weights)[head]
st.caption(
    tr(
        "scaling_sentence_stats",
        entropy_u=stats_u.entropy,
        entropy_s=stats_s.entropy,
        max_u=stats_u.max_weight,
        max_s=stats_s.max_weight,
    )
)
