"""Step by step: the article's five steps (and the multi-head extras) for the current sentence.

One step at a time, for a lecturer presenting one step per slide: the step number lives in
the URL (`?step=3`), prev/next buttons move it, and a toggle shows all steps at once.
Every matrix is an array of `Analysis.trace`, i.e. exactly what `forward()` computes.
"""

from __future__ import annotations

import streamlit as st

from attention_core.figures.steps import (
    display_matrix,
    head_columns,
    merge_heads,
    outline_cells,
    plot_query_row,
    plot_step_matrix,
    query_row,
)
from attention_core.figures.style import HALF_WIDTH_PX, THIRD_WIDTH_PX
from attention_core.settings import parse_step
from ui.charts import show_chart
from ui.common import analysis_or_stop, choose, current_settings, entry_guard, md_escape
from ui.finished_runs import trained_source
from ui.language import tr
from ui.presenter import arrow_keys

SINGLE_STEPS = ("project", "scores", "scale", "softmax", "mix")
MULTI_STEPS = ("project", "split", "scores", "scale", "softmax", "mix", "concat", "out")
STEP_TITLES = {
    "project": "steps_project_title",
    "split": "steps_split_title",
    "scores": "steps_scores_step_title",
    "scale": "steps_scale_title",
    "softmax": "steps_softmax_title",
    "mix": "steps_mix_title",
    "concat": "steps_concat_step_title",
    "out": "steps_out_title",
}
ROW_STEPS = ("scores", "scale", "softmax")  # the steps that follow the query row


def _move(delta: int, count: int) -> None:
    """Prev/next: the URL is the single source of truth for the current step."""
    step = parse_step(st.query_params.get("step"), count) or 1
    st.query_params["step"] = str(min(max(step + delta, 1), count))


entry_guard()
st.title(tr("steps_title"))
st.markdown(md_escape(tr("steps_intro")))

settings = current_settings()
# the sidebar's sentence on the untrained module, or a finished training run (?trained=)
trained = trained_source("steps_trained", layer_key="steps_layer")
if trained is None:
    analysis = analysis_or_stop(settings, with_trace=True)
    trace, labels, divisor = analysis.trace, analysis.labels, analysis.divisor
    multi, causal = settings.attention == "multi", settings.causal
else:
    trace, labels, divisor = trained.example.trace, trained.labels, trained.example.divisor
    multi, causal = trained.example.multi, trained.example.causal
# which weights the captions speak of: a Train-page run, the trained reader, or seeded
origin = "trained" if trained is not None else "reader" if settings.trained else "steps"
H, n, D = trace["q"].shape  # heads, tokens, head_dim (d_k)
C = trace["x"].shape[1]  # embed_dim
steps = MULTI_STEPS if multi else SINGLE_STEPS
count = len(steps)
dims = [str(j) for j in range(C)]  # feature columns 0 … C-1

# --- which step: from the URL, validated, written back -----------------------------------
raw_step = st.query_params.get("step")
step = parse_step(raw_step, count)
if step is None:
    if raw_step is not None:
        st.warning(tr("steps_bad_step", value=md_escape(raw_step[:20]), n=count))
    step = 1
if st.query_params.get("step") != str(step):
    st.query_params["step"] = str(step)

# --- controls ----------------------------------------------------------------------------
show_all = st.toggle(tr("steps_all_label"), key="steps_all", help=tr("steps_all_help"))
left, right = st.columns(2)
query = choose(
    left.selectbox,
    tr("steps_query_label"),
    range(n),
    key="steps_query",
    default=0,
    format_func=lambda i: labels[i],
    help=tr("steps_query_help"),
)
head = 0
if multi:
    head = choose(
        right.selectbox,
        tr("steps_head_label"),
        range(H),
        key="steps_head",
        default=0,
        format_func=lambda i: tr("steps_head_option", i=i),
        help=tr("steps_head_help"),
    )
sub = f"_{{{head}}}" if multi else ""  # LaTeX subscript of the per-head symbols
cols_of_head = head_columns(head, D)
row = query_row(trace, head=head, query=query)


def shape(name: str, rows: int, cols: int) -> None:
    st.caption(tr("steps_shape", name=name, rows=rows, cols=cols))


def chart(fig: object, key: str) -> None:
    show_chart(fig, key=key)


def with_query_row(fig: object) -> object:
    return outline_cells(fig, rows=(query, query + 1), cols=(0, n))


# --- the steps -----------------------------------------------------------------------------
def step_project() -> None:
    st.latex(r"Q = XW_q + b_q,\qquad K = XW_k + b_k,\qquad V = XW_v + b_v")
    st.markdown(md_escape(tr("steps_project_text", n=n, c=C)))
    if origin != "steps":
        st.caption(tr(f"{origin}_x_note", layer=settings.layer))
    st.caption(tr(f"{origin}_weights_shape", c=C))
    a, b = st.columns(2)
    with a:
        chart(
            plot_step_matrix(
                trace["x"], labels, dims, title=tr("steps_x_title"), width_px=HALF_WIDTH_PX
            ),
            "steps_chart_x",
        )
        shape("X", n, C)
    with b:
        which = choose(
            st.segmented_control,
            tr("steps_proj_label"),
            ["q", "k", "v"],
            key="steps_proj",
            default="q",
            format_func=str.upper,
            required=True,
        )
        which = which or "q"
        title = tr(f"steps_{which}_title")
        chart(
            plot_step_matrix(
                merge_heads(trace[which]), labels, dims, title=title, width_px=HALF_WIDTH_PX
            ),
            "steps_chart_proj",
        )
        shape(which.upper(), n, C)


def step_split() -> None:
    st.latex(
        rf"Q{sub} = Q[\,:,\; {cols_of_head.start} : {cols_of_head.stop}\,],"
        rf"\qquad d_k = C / H = {C} / {H} = {D}"
    )
    start, stop = cols_of_head.start, cols_of_head.stop - 1
    st.markdown(
        md_escape(tr("steps_split_text", c=C, heads=H, d=D, h=head, start=start, stop=stop, n=n))
    )
    fig = plot_step_matrix(
        merge_heads(trace["q"]), labels, dims, title=tr("steps_full_q_title", c=C, h=head)
    )
    chart(
        outline_cells(fig, rows=(0, n), cols=(cols_of_head.start, cols_of_head.stop)),
        "steps_chart_q_full",
    )
    shape("Q", n, C)
    st.markdown(f"**{tr('steps_head_q_title', h=head)}**")
    head_dims = [str(j) for j in cols_of_head]
    for column, name in zip(st.columns(3), ("q", "k", "v"), strict=True):
        with column:
            title = f"{name.upper()}_{head}"
            chart(
                plot_step_matrix(
                    trace[name][head], labels, head_dims, title=title, width_px=THIRD_WIDTH_PX
                ),
                f"steps_chart_{name}_head",
            )
            shape(title, n, D)


def step_scores() -> None:
    st.latex(
        rf"S{sub} = Q{sub}\, K{sub}^{{\top}},\qquad "
        rf"S{sub}[i,j] = \sum_{{m=1}}^{{d_k}} Q{sub}[i,m]\; K{sub}[j,m]"
    )
    st.markdown(md_escape(tr("steps_scores_text", d=D, n=n)))
    fig = plot_step_matrix(trace["scores"][head], labels, labels, title=tr("steps_scores_title"))
    chart(with_query_row(fig), "steps_chart_scores")
    shape("S" + (f"_{head}" if multi else ""), n, n)


def step_scale() -> None:
    mask = r" + M,\quad M[i,j] = -\infty \text{ for } j > i" if causal else ""
    st.latex(
        rf"\tilde S{sub} = \frac{{S{sub}}}{{\sqrt{{d_k}}}}{mask},\qquad "
        rf"\sqrt{{d_k}} = \sqrt{{{D}}} = {divisor:.4g}"
    )
    st.markdown(md_escape(tr("steps_scale_text", d=D, divisor=divisor)))
    if causal:
        st.caption(tr("steps_scale_causal"))
    scaled = display_matrix(trace["scaled"][head])
    fig = plot_step_matrix(scaled, labels, labels, title=tr("steps_scaled_title"))
    chart(with_query_row(fig), "steps_chart_scaled")
    shape("S / √d_k", n, n)


def step_softmax() -> None:
    st.latex(
        rf"A{sub} = \operatorname{{softmax}}(\tilde S{sub}),\qquad "
        rf"A{sub}[i,j] = \frac{{e^{{\tilde S{sub}[i,j]}}}}{{\sum_{{j'}} e^{{\tilde S{sub}[i,j']}}}}"
    )
    top = labels[row.top]
    st.markdown(
        md_escape(
            tr(
                "steps_softmax_text",
                query=labels[query],
                total=row.total,
                weight=row.weights[row.top],
                top=top,
            )
        )
    )
    fig = plot_step_matrix(
        trace["weights"][head],
        labels,
        labels,
        title=tr("steps_weights_title"),
        colorscale="Blues",
        zmin=0.0,
        zmax=1.0,
    )
    chart(with_query_row(fig), "steps_chart_weights")
    shape("A" + (f"_{head}" if multi else ""), n, n)


def query_bars() -> None:
    st.markdown(f"**{md_escape(tr('steps_row_header', query=labels[query]))}**")
    titles = (tr("steps_row_raw"), tr("steps_row_scaled"), tr("steps_row_weights"))
    chart(plot_query_row(row, labels, titles=titles), "steps_chart_row")
    caption = tr(
        "steps_row_caption" if multi else "steps_row_caption_single",
        query=labels[query],
        h=head,
        top=labels[row.top],
        weight=row.weights[row.top],
        total=row.total,
    )
    st.caption(md_escape(caption))


def mix_factors(v_dims: list[str]) -> None:
    """A and V side by side, the two factors of the product shown below them."""
    a_col, v_col = st.columns(2)
    with a_col:
        fig = plot_step_matrix(
            trace["weights"][head],
            labels,
            labels,
            title="A" + (f"_{head}" if multi else ""),
            colorscale="Blues",
            zmin=0.0,
            zmax=1.0,
            width_px=HALF_WIDTH_PX,
        )
        chart(with_query_row(fig), "steps_chart_mix_a")
        shape("A" + (f"_{head}" if multi else ""), n, n)
    with v_col:
        title = "V" + (f"_{head}" if multi else "")
        fig = plot_step_matrix(
            trace["v"][head], labels, v_dims, title=title, width_px=HALF_WIDTH_PX
        )
        chart(
            outline_cells(fig, rows=(query, query + 1), cols=(0, len(v_dims))), "steps_chart_mix_v"
        )
        shape(title, n, len(v_dims))


def step_mix() -> None:
    if not multi:
        st.latex(r"\text{output} = A V,\qquad \text{output}_i = \sum_j A[i,j]\, V_j")
        st.markdown(md_escape(tr("steps_mix_text_single", n=n, c=C)))
        mix_factors(dims)
        fig = plot_step_matrix(trace["output"], labels, dims, title=tr("steps_mix_title_single"))
        chart(outline_cells(fig, rows=(query, query + 1), cols=(0, C)), "steps_chart_output")
        shape(tr("steps_output_name"), n, C)
        return
    st.latex(
        rf"\text{{head}}{sub} = A{sub}\, V{sub},\qquad "
        rf"\text{{head}}{sub}[i] = \sum_j A{sub}[i,j]\; V{sub}[j]"
    )
    st.markdown(md_escape(tr("steps_mix_text_multi", h=head, n=n, d=D)))
    head_dims = [str(j) for j in cols_of_head]
    mix_factors(head_dims)
    fig = plot_step_matrix(
        trace["head_outputs"][head], labels, head_dims, title=tr("steps_mix_title_multi", h=head)
    )
    chart(outline_cells(fig, rows=(query, query + 1), cols=(0, D)), "steps_chart_mix")
    shape(f"head_{head}", n, D)


def step_concat() -> None:
    st.latex(
        rf"\text{{Concat}}(\text{{head}}_0, \dots, \text{{head}}_{{{H - 1}}})"
        rf" \in \mathbb{{R}}^{{{n} \times {C}}}"
    )
    st.markdown(md_escape(tr("steps_concat_text", heads=H, n=n, d=D, c=C, h=head)))
    fig = plot_step_matrix(
        trace["concat"], labels, dims, title=tr("steps_concat_title", last=H - 1)
    )
    chart(
        outline_cells(fig, rows=(0, n), cols=(cols_of_head.start, cols_of_head.stop)),
        "steps_chart_concat",
    )
    shape("Concat", n, C)


def step_out() -> None:
    st.latex(r"\text{output} = \text{Concat}(\text{head}_0, \dots, \text{head}_{H-1})\, W_o + b_o")
    st.markdown(md_escape(tr("steps_out_text", c=C, n=n)))
    st.caption(tr(f"{origin}_wo_shape", c=C))
    chart(
        plot_step_matrix(trace["output"], labels, dims, title=tr("steps_output_title")),
        "steps_chart_output",
    )
    shape(tr("steps_output_name"), n, C)


RENDER = {
    "project": step_project,
    "split": step_split,
    "scores": step_scores,
    "scale": step_scale,
    "softmax": step_softmax,
    "mix": step_mix,
    "concat": step_concat,
    "out": step_out,
}


def show(i: int) -> None:
    name = steps[i - 1]
    st.subheader(tr("steps_position", i=i, n=count, title=tr(STEP_TITLES[name])))
    RENDER[name]()


if show_all:
    for i in range(1, count + 1):
        show(i)
        if steps[i - 1] == "softmax":  # the query's bars once, after its last stage
            query_bars()
        st.divider()
else:
    prev_col, progress_col, next_col = st.columns([1, 4, 1], vertical_alignment="center")
    prev_col.button(
        tr("steps_prev"),
        key="steps_prev",
        on_click=_move,
        args=(-1, count),
        disabled=step == 1,
        width="stretch",
    )
    progress_col.progress(step / count)
    next_col.button(
        tr("steps_next"),
        key="steps_next",
        on_click=_move,
        args=(1, count),
        disabled=step == count,
        width="stretch",
    )
    show(step)
    if steps[step - 1] in ROW_STEPS:
        query_bars()
    arrow_keys(right=("steps_next",), left=("steps_prev",))  # presenter mode: ← / → slides
