"""Watch it write: a decoder generating one token at a time, from its key/value cache.

A prompt (the trained reader's Traditional Chinese by default) and a model; ▶ writes one
more token, "Play" a few in a row, "Jump" to any step. Per head, the rows that chose each
token grow into a triangle (the newest framed); the prefix as a strip lit by the newest
row; the model's top-5 with their probabilities, each a button that branches the run
(`force={step: token}`), the two branches side by side with where their attention parts;
the logit lens (layers × steps); the cache growing. A teacher with an open class asks
"What comes next?" (the phones get the prefix and the top-5), reveals the class beside the
model, and the model writes its token. The runs are `attention_core.decode`'s, cached in
ui/cache_write.py; the figures are attention_core/figures/write.py's.
"""

from __future__ import annotations

import time

import streamlit as st
from streamlit.errors import StreamlitAPIException

from attention_core.decode import (
    MAX_DECODE_STEPS,
    PARTING_TOL,
    DecodeRefused,
    DecodeResult,
    parting,
    step_differences,
    written_text,
)
from attention_core.figures.write import (
    Triangle,
    lens_grid,
    plot_alternatives,
    plot_cache,
    plot_lens,
    plot_step_differences,
    plot_strip,
    plot_triangles,
    prefix_strip,
    triangle,
)
from attention_core.reader.card import shipped_shape
from ui.cache_write import PAGE_MAX_STEPS, horizon, model_keys, write_run
from ui.charts import show_chart
from ui.common import choose, entry_guard, md_escape, seeded
from ui.language import tr
from ui.models import MODEL_STATE
from ui.presenter import arrow_keys
from ui.write_class import class_panel

state = st.session_state
DEFAULT_PROMPT = "這個程式"  # the reader writes 的程式碼是一個程式碼。 after it
MAX_PROMPT_CHARS = 500
PLAY_STEPS = 5
PLAY_PAUSE_S = 0.35
ALTERNATIVES = 5


# --- callbacks ---------------------------------------------------------------------------
def _restart() -> None:
    state["write_steps"], state["write_branch"], state["write_play"] = 1, None, 0


def _go(steps: int) -> None:
    state["write_steps"], state["write_play"] = max(0, steps), 0


def _jump() -> None:
    asked = int(state["write_jump"])
    if asked > PAGE_MAX_STEPS:
        state["write_capped"] = asked
    _go(min(asked, PAGE_MAX_STEPS))


def _play() -> None:
    state["write_play"] = PLAY_STEPS


def _branch(step: int, token_id: int, written: bool) -> None:
    state["write_branch"] = None if written else (step, token_id)
    state["write_branch_same"] = written


def _model_name(key: str) -> str:
    kind, _, name = key.partition(":")
    if kind == "reader":
        return tr("write_model_reader")
    if kind == "tiny":
        return tr("write_model_tiny", family=name)
    return tr("write_model_pretrained", name=name)


# --- the run -----------------------------------------------------------------------------
def run_or_stop(key: str, prompt: str, steps: int, force: tuple = ()) -> DecodeResult:
    """The cached run, or the library's reason on the page and st.stop()."""
    try:
        with st.spinner(tr("write_running")):
            return write_run(key, prompt, horizon(steps), force)
    except DecodeRefused as error:
        st.error(tr("write_refused", reason=md_escape(str(error))))
    except ValueError as error:  # a prompt longer than the model's context
        st.error(tr("write_bad_prompt", reason=md_escape(str(error))))
    except Exception as error:
        st.error(tr("write_error", error=type(error).__name__))
    st.stop()


def _stop_reason(result: DecodeResult) -> str:
    if len(result.ids) >= result.context:
        return tr("write_context_full", context=result.context, steps=len(result.steps))
    return tr("write_end_token", step=len(result.steps))


def chart_title(text: str) -> None:
    """A chart's title as text above it: it wraps on a phone, where Plotly's would be cut."""
    st.markdown(f"**{md_escape(text)}**")


def _single(tri: Triangle, head: int) -> Triangle:
    return Triangle([tri.heads[head]], tri.rows, tri.columns, tri.layer)


# --- the page ----------------------------------------------------------------------------
entry_guard()
st.title(tr("write_title"))
st.caption(tr("write_intro"))
left, right = st.columns([2, 3], vertical_alignment="bottom")
with left:
    key = choose(
        st.selectbox,
        tr("write_model_label"),
        model_keys(state.get(MODEL_STATE, "")),
        key="write_model",
        format_func=_model_name,
        on_change=_restart,
    )
with right:
    prompt = st.text_input(
        tr("write_prompt_label"),
        seeded("write_prompt", DEFAULT_PROMPT),
        key="write_prompt",
        max_chars=MAX_PROMPT_CHARS,
        help=tr("write_prompt_help"),
        on_change=_restart,
    )
if not prompt.strip():
    st.info(tr("write_empty_prompt"))


# ▶, Play, Jump, the layer and the branches rerun this part only: the sidebar and the
# navigation are not drawn again for a step (a step's run is then mostly the figures)
@st.fragment
def writer(key: str, prompt: str) -> None:
    """The step on screen: its controls, figures, branch and the class's question."""
    capped = state.pop("write_capped", None)
    if capped:
        st.warning(tr("write_capped", asked=capped, most=PAGE_MAX_STEPS))

    steps = int(seeded("write_steps", 1))
    result = run_or_stop(key, prompt, steps)
    available = len(result.steps)  # written within the horizon (fewer: the run stopped)
    if steps > available:
        steps = state["write_steps"] = available
    at_end = steps >= available
    if at_end and result.stopped:
        st.info(_stop_reason(result))

    state["write_jump"] = steps  # the field shows the step on screen
    back, step, play, jump = st.columns([1, 1, 1, 2], vertical_alignment="bottom")
    back.button(
        tr("write_back"),
        key="write_back",
        on_click=_go,
        args=(steps - 1,),
        disabled=steps <= 0,
        icon=":material/skip_previous:",
        width="stretch",
    )
    step.button(
        tr("write_next"),
        key="write_next",
        on_click=_go,
        args=(steps + 1,),
        disabled=at_end,
        icon=":material/skip_next:",
        type="primary",
        width="stretch",
    )
    play.button(
        tr("write_play", n=PLAY_STEPS),
        key="write_play_button",
        on_click=_play,
        disabled=at_end,
        icon=":material/play_arrow:",
        width="stretch",
    )
    jump.number_input(
        tr("write_jump_label"),
        min_value=0,
        max_value=10 * MAX_DECODE_STEPS,
        key="write_jump",
        on_change=_jump,
        help=tr("write_jump_help", most=PAGE_MAX_STEPS),
    )

    layers = result.steps[0].attention.shape[0] if result.steps else 1
    default_layer = shipped_shape().default_layer if key == "reader" else layers - 1
    layer = choose(
        st.selectbox,
        tr("write_layer_label"),
        range(layers),
        key="write_layer",
        default=min(default_layer, layers - 1),
        format_func=lambda i: tr("write_layer_option", layer=i),
    )
    text = written_text(result.tokens[: result.prompt_length + steps])
    st.markdown(md_escape(tr("write_status", step=steps, text=text)))

    # --- the newest row, the triangles ------------------------------------------------------------
    if steps:
        chart_title(tr("write_strip_title", layer=layer, token=result.steps[steps - 1].token))
    show_chart(
        plot_strip(
            prefix_strip(result, steps, layer),
            title="",
            empty=tr("write_no_step"),
        ),
        key="write_strip",
    )
    heads = result.steps[0].attention.shape[1] if result.steps else 0
    tri = triangle(result, steps, layer)
    chart_title(tr("write_triangles_title", layer=layer))
    show_chart(
        plot_triangles(
            tri,
            title="",
            head_titles=[tr("write_head_title", head=h) for h in range(heads)],
            colorbar_title=tr("write_weight"),
            hover=tr("write_hover"),
            empty=tr("write_no_step"),
        ),
        key="write_triangles",
    )

    # --- the alternatives (branch), the cache -----------------------------------------------------
    if steps > 0:
        newest = result.steps[steps - 1]
        ids = [int(i) for i in newest.top_ids[:ALTERNATIVES]]
        written = ids.index(newest.token_id) if newest.token_id in ids else None
        alt_col, cache_col = st.columns([3, 2])
        with alt_col:
            chart_title(tr("write_alternatives_title", step=steps))
            show_chart(
                plot_alternatives(
                    newest.top_tokens[:ALTERNATIVES],
                    newest.top_probs,
                    written=written,
                    title="",
                    x_title=tr("write_probability"),
                ),
                key="write_alternatives",
            )
            st.caption(tr("write_branch_caption", step=steps))
            with st.container(key="write_alts", horizontal=True):
                for j, (tok, prob) in enumerate(
                    zip(newest.top_tokens, newest.top_probs, strict=True)
                ):
                    st.button(
                        md_escape(tr("write_alt_button", token=tok, prob=float(prob))),
                        key=f"write_alt_{j}",
                        on_click=_branch,
                        args=(steps - 1, ids[j], j == written),
                    )
            if state.pop("write_branch_same", False):
                st.info(tr("write_branch_same"))
        with cache_col:
            cache = newest.cache
            most = result.steps[-1].cache.total_bytes
            chart_title(tr("write_cache_title", step=steps))
            show_chart(
                plot_cache(
                    int(cache.keys_bytes.sum()),
                    int(cache.values_bytes.sum()),
                    most_bytes=most,
                    title="",
                    keys_name=tr("write_keys"),
                    values_name=tr("write_values"),
                ),
                key="write_cache",
            )
            st.caption(
                tr(
                    "write_cache_caption",
                    positions=cache.positions,
                    layers=layers,
                    kv_heads=cache.kv_heads,
                    heads=cache.heads,
                    kib=f"{cache.total_bytes / 1024:.1f}",
                )
            )

    chart_title(tr("write_lens_title"))
    show_chart(
        plot_lens(
            lens_grid(result, steps),
            title="",
            layer_name=tr("write_lens_layer"),
            empty=tr("write_no_step"),
        ),
        key="write_lens",
    )

    # --- two branches side by side ----------------------------------------------------------------
    branch = state.get("write_branch")
    if branch and branch[0] < steps:
        other = run_or_stop(key, prompt, steps, (tuple(branch),))
        shown = min(steps, len(other.steps))
        parted = parting(result, other, steps=shown)
        where = (parted.layer, parted.head) if parted else (layer, 0)
        st.subheader(tr("write_branch_header"))
        for column, run, title in zip(
            st.columns(2),
            (result, other),
            (
                tr("write_branch_main"),
                tr("write_branch_other", token=other.steps[branch[0]].token, step=branch[0] + 1),
            ),
            strict=True,
        ):
            with column:
                st.markdown(f"**{md_escape(title)}**")
                st.markdown(md_escape(written_text(run.tokens[: run.prompt_length + shown])))
                one = _single(triangle(run, shown, where[0]), where[1])
                show_chart(
                    plot_triangles(
                        one,
                        title="",
                        head_titles=[tr("write_branch_row_title", layer=where[0], head=where[1])],
                        colorbar_title=tr("write_weight"),
                        hover=tr("write_hover"),
                    ),
                    key=f"write_branch_{int(run is other)}",
                )
        if parted:
            token = other.tokens[parted.position]
            st.markdown(
                md_escape(
                    tr(
                        "write_parting",
                        step=parted.step + 1,
                        layer=parted.layer,
                        head=parted.head,
                        position=parted.position,
                        token=token,
                        difference=parted.difference,
                    )
                )
            )
        else:
            st.markdown(md_escape(tr("write_no_parting", tol=PARTING_TOL, step=shown)))
        labels = [str(i + 1) for i in range(shown)]
        chart_title(tr("write_parting_title"))
        show_chart(
            plot_step_differences(
                step_differences(result, other, shown),
                labels,
                tol=PARTING_TOL,
                parted=parted.step if parted else None,
                title="",
                y_title=tr("write_difference"),
            ),
            key="write_parting",
        )
        st.button(
            tr("write_branch_clear"), key="write_branch_clear", on_click=_branch, args=(0, 0, True)
        )

    class_panel(result, steps, text)  # ui/write_class.py: a teacher's "What comes next?"

    # --- play: a few steps, one rerun each --------------------------------------------------------
    if state.get("write_play", 0) > 0:
        if at_end:
            state["write_play"] = 0
        else:
            time.sleep(PLAY_PAUSE_S)
            state["write_steps"] = steps + 1
            state["write_play"] -= 1
            try:
                st.rerun(scope="fragment")
            except StreamlitAPIException:  # a whole run (the app's first, AppTest's): all of it
                st.rerun()


writer(key, prompt)
arrow_keys(right=("write_next",), left=("write_back",))  # presenter mode: ← / → steps
