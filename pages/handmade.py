"""Hand-made attention: the article's worked example (中和 / 有 / 一個 / 永和路), editable.

The user edits the attention matrix and small token vectors; the page checks the rows and
shows the new representations as numbers and as the article's weighted sums. The two
tables are keyed `st.data_editor`s: their edits live in session state on top of a base
table kept in `_handmade_base`, which changes only when the tokens change, a row fix is
applied, or the matrix is reset. Then the editors are drawn under new keys: the browser
keeps a keyed editor's cell edits across value changes and would send the old ones back
(a 0.3 typed before "normalise" came back after the next click), so a new base table
gets a new editor, and the grid, the row check and the captions describe one matrix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.figures.heads import plot_matrix
from attention_core.handmade import (
    ARTICLE_MATRIX,
    ARTICLE_TOKENS,
    ARTICLE_VECTORS,
    MAX_HANDMADE_DIM,
    MAX_HANDMADE_TOKENS,
    axis_labels,
    carry_vectors,
    check_rows,
    default_matrix,
    mix,
    normalise_rows,
    parse_tokens,
    weighted_sum_lines,
)
from attention_core.limits import MAX_TEXT_CHARS
from attention_core.tokenize import tokenize
from ui.charts import show_chart
from ui.common import choose, current_settings, entry_guard, md_escape
from ui.language import tr

state = st.session_state
ARTICLE_TEXT = " | ".join(ARTICLE_TOKENS)
EDITORS = ("handmade_matrix", "handmade_vectors")
GENERATION = "_handmade_generation"  # bumped when an editor's edits are dropped
# Streamlit forgets a widget's state when another page runs; these widgets keep theirs
# in a private copy (`_<key>`) so the page comes back as the user left it.
KEPT = {"handmade_tokens": ARTICLE_TEXT, "handmade_dim": 3, "handmade_fill": "identity"}


def _set_tables(tables: dict[str, object], *editors: str) -> None:
    """New base tables (tokens, matrix, vectors); the given editors' edits are dropped."""
    state["_handmade_base"] = tables
    state["_handmade_live"] = tables
    for name in editors:
        state.pop(_editor_key(name), None)
        state[GENERATION] = {**state.get(GENERATION, {}), name: _generation(name) + 1}


def _generation(name: str) -> int:
    return state.get(GENERATION, {}).get(name, 0)


def _editor_key(name: str) -> str:
    """The widget key of editor `name` now: a new one for every new base table."""
    return f"{name}@{_generation(name)}"


def _fresh_matrix(tokens: list[str]) -> np.ndarray:
    if tuple(tokens) == ARTICLE_TOKENS:
        return ARTICLE_MATRIX.copy()
    return default_matrix(len(tokens), kind=state.get("handmade_fill") or "identity")


def _load_article() -> None:
    state["handmade_tokens"] = ARTICLE_TEXT
    state["handmade_dim"] = ARTICLE_VECTORS.shape[1]
    tables = {
        "tokens": list(ARTICLE_TOKENS),
        "matrix": ARTICLE_MATRIX.copy(),
        "vectors": ARTICLE_VECTORS.copy(),
    }
    _set_tables(tables, *EDITORS)


def _load_sidebar() -> None:
    settings = current_settings()
    state["_handmade_notice"] = None
    if not settings.text.strip():
        state["_handmade_notice"] = ("info", tr("handmade_sidebar_empty"))
        return
    try:
        tokens = [t.label for t in tokenize(settings.text[:MAX_TEXT_CHARS], settings.tokenizer)]
    except Exception as error:
        state["_handmade_notice"] = ("error", tr("error_generic", error=type(error).__name__))
        return
    # "|" separates tokens in the text box, so a token that is itself "|" cannot be kept
    tokens = [t for t in tokens if t.strip() and t != "|"]
    if len(tokens) > MAX_HANDMADE_TOKENS:
        state["_handmade_notice"] = (
            "warning",
            tr("handmade_sidebar_cut", total=len(tokens), limit=MAX_HANDMADE_TOKENS),
        )
    state["handmade_tokens"] = " | ".join(tokens[:MAX_HANDMADE_TOKENS])


def _normalise() -> None:
    live = state.get("_handmade_live")
    if live is not None:
        _set_tables({**live, "matrix": normalise_rows(live["matrix"])}, "handmade_matrix")


def _reset_matrix() -> None:
    live = state.get("_handmade_live")
    if live is not None:
        _set_tables({**live, "matrix": _fresh_matrix(live["tokens"])}, "handmade_matrix")


def _number_columns(columns: list[str]) -> dict[str, object]:
    return {c: st.column_config.NumberColumn(c, format="%.4g") for c in columns}


def _edited_table(name: str, values: np.ndarray, rows: list[str], columns: list[str]) -> np.ndarray:
    """Editor `name` under its header and caption, on `values`; what it holds now, blank
    cells as NaN."""
    st.subheader(tr(f"{name}_header"))
    st.caption(tr(f"{name}_caption"))
    edited = st.data_editor(
        pd.DataFrame(values, index=rows, columns=columns),
        key=_editor_key(name),
        num_rows="fixed",
        column_config=_number_columns(columns),
    )
    return edited.to_numpy(dtype=float, na_value=np.nan)


# --- title and the article's example ------------------------------------------------------
entry_guard()
st.title(tr("handmade_title"))
st.markdown(tr("handmade_intro"))
st.caption(tr("handmade_sidebar_note"))

for key, default in KEPT.items():
    if key not in state:
        state[key] = state.get(f"_{key}", default)
st.text_input(tr("handmade_tokens_label"), key="handmade_tokens", help=tr("handmade_tokens_help"))
left, middle, right = st.columns(3)
left.button(tr("handmade_load_sidebar"), key="handmade_load", on_click=_load_sidebar)
middle.button(tr("handmade_load_article"), key="handmade_article", on_click=_load_article)
right.number_input(tr("handmade_dim_label"), 1, MAX_HANDMADE_DIM, step=1, key="handmade_dim")
choose(
    st.segmented_control,
    tr("handmade_fill_label"),
    ["identity", "uniform"],
    key="handmade_fill",
    format_func=lambda kind: tr(f"handmade_fill_{kind}"),
    help=tr("handmade_fill_help"),
)
for key in KEPT:
    state[f"_{key}"] = state[key]
notice = state.pop("_handmade_notice", None)
if notice:
    getattr(st, notice[0])(md_escape(notice[1]))

tokens = parse_tokens(state["handmade_tokens"])
if len(tokens) > MAX_HANDMADE_TOKENS:
    st.warning(tr("handmade_too_many", total=len(tokens), limit=MAX_HANDMADE_TOKENS))
    tokens = tokens[:MAX_HANDMADE_TOKENS]
if not tokens:
    st.info(tr("handmade_no_tokens"))
    st.stop()

# --- keep the base tables in step with the tokens and the vector size ---------------------
dim = int(state["handmade_dim"])
base = state.get("_handmade_base")
live = state.get("_handmade_live")
if live is not None and not any(_editor_key(name) in state for name in EDITORS):
    base = live  # back from another page: the editors forgot their edits, the copy did not
if base is None or base["tokens"] != tokens or base["vectors"].shape[1] != dim:
    before = live or base
    if before is None:
        matrix = _fresh_matrix(tokens)
        vectors = carry_vectors([], np.zeros((0, dim)), tokens, dim=dim)
    else:
        same_count = len(before["tokens"]) == len(tokens)
        matrix = before["matrix"] if same_count else _fresh_matrix(tokens)
        vectors = carry_vectors(before["tokens"], before["vectors"], tokens, dim=dim)
    base = {"tokens": tokens, "matrix": matrix, "vectors": vectors}
    _set_tables(base, *EDITORS)

labels = axis_labels(tokens)
columns = [f"x{j + 1}" for j in range(dim)]

# --- the two editable tables --------------------------------------------------------------
matrix = _edited_table("handmade_matrix", base["matrix"], labels, labels)  # (n, n)
vectors = _edited_table("handmade_vectors", base["vectors"], labels, columns)  # (n, d)
state["_handmade_live"] = {"tokens": tokens, "matrix": matrix, "vectors": vectors}

# --- are the rows valid attention rows? ------------------------------------------------------
problems = check_rows(matrix)
if problems:
    for p in problems:
        where = ", ".join(labels[j] for j in p.columns)
        message = tr(f"handmade_problem_{p.kind}", row=labels[p.row], total=p.row_sum, where=where)
        st.warning(md_escape(message))
else:
    st.success(tr("handmade_rows_ok"))
left, right, _ = st.columns([1, 1, 3])
left.button(
    tr("handmade_normalise"),
    key="handmade_normalise",
    on_click=_normalise,
    disabled=not problems,
    help=tr("handmade_normalise_help"),
)
right.button(tr("handmade_reset"), key="handmade_reset", on_click=_reset_matrix)

# --- the new representations ----------------------------------------------------------------
st.subheader(tr("handmade_result_header"))
st.caption(tr("handmade_result_caption"))
st.code("\n".join(weighted_sum_lines(tokens, matrix)), language=None)
st.dataframe(
    pd.DataFrame(mix(matrix, vectors), index=labels, columns=columns),
    key="handmade_result",
    column_config=_number_columns(columns),
)
st.markdown(f"**{tr('handmade_heatmap_title')}**")
show_chart(
    plot_matrix(
        matrix,
        labels,
        labels,
        colorscale="Blues",
        zmid=None,
        zmin=0.0,
        zmax=1.0,
    ),
    key="handmade_chart",
)
article = tuple(tokens) == ARTICLE_TOKENS and np.array_equal(matrix, ARTICLE_MATRIX)
st.caption(tr("handmade_outro" if article else "handmade_outro_own"))
