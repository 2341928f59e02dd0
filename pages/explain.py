"""Is attention an explanation? The sidebar's sentence through the trained reader: its
next-token prediction attributed (integrated gradients, input × gradient, occlusion),
beside attention (rollout of the target's row, every head's row), a head that agrees and
one that does not, the table of every head, an honest text with the literature, a quiz.
The computing is in attention_core.attribution; the bar, Cancel and cache in ui/explain.py.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.attribution import METHODS, HeadRow
from attention_core.figures.attribution import plot_token_rows, token_rows
from attention_core.quiz import top_token_round
from ui.charts import show_chart
from ui.common import choose, current_settings, entry_guard, md_escape
from ui.explain import agreement_or_cancelled
from ui.language import tr

COLUMNS = ("layer", "head", "rho", "tau", "p", "norm", "ablation", "verdict")

entry_guard()
st.title(tr("page_explain"))
st.caption(tr("explain_intro"))

settings = current_settings()
method = choose(
    st.segmented_control,
    tr("explain_method"),
    METHODS,
    key="explain_method",
    default=METHODS[0],
    format_func=lambda m: tr(f"explain_method_{m}"),
    required=True,
)


def _refusal(text: str) -> str | None:
    """Why the reader cannot take `text` (from the catalog), or None."""
    from attention_core.reader import load_shipped
    from attention_core.reader.run import reader_tokens

    reader = load_shipped()
    read = reader_tokens(text, reader.vocab)
    if len(read.tokens) < 2:
        return tr("explain_empty")
    if len(read.tokens) > reader.config.context:
        return tr("explain_too_long", n=len(read.tokens), most=reader.config.context)
    return None


refused = _refusal(settings.text)
if refused:
    st.warning(refused)
    st.stop()
try:
    found = agreement_or_cancelled(settings.text, method or METHODS[0])
except Exception:  # a refusal or a failure: a message, never a traceback (a rerun or a
    # stop is a BaseException and passes)
    st.warning(tr("explain_failed"))
    st.stop()
if found is None:
    st.stop()

first = found.attributions[method or METHODS[0]]
keys = found.views.keys
labels = [first.tokens[int(k)] for k in keys]
magnitude = np.abs(first.scores[keys])
st.markdown(tr("explain_target", token=md_escape(first.target_token), logit=first.output))
if first.completeness_gap is not None:
    change = first.output - first.baseline_output
    st.caption(
        tr(
            "explain_gap",
            total=float(first.scores.sum()),
            change=change,
            gap=first.completeness_gap,
        )
    )
names = [tr("explain_row_attention"), tr("explain_row_attribution")]
rows = token_rows(labels, [found.views.rollout[-1], magnitude], names)
show_chart(plot_token_rows(rows, title=tr("explain_rows_title")), key="explain_rows")

st.subheader(tr("explain_cases"))
ranked = sorted(found.table, key=lambda r: r.rho if np.isfinite(r.rho) else 0.0)
agreeing = [r for r in reversed(ranked) if r.verdict == "agrees"]
sinks = [r for r in found.table if r.verdict == "sink"]
against = sinks or [r for r in ranked if r.verdict == "disagrees"]
for side, heads in (("agree", agreeing), ("disagree", against)):
    if not heads:
        st.info(tr("explain_case_none"))
        continue
    row = heads[0]
    if row.verdict == "sink":
        st.markdown(
            tr(
                "explain_case_sink",
                layer=row.layer,
                head=row.head,
                token=md_escape(row.sink or ""),
                rho=row.rho,
            )
        )
    else:
        st.markdown(
            tr(f"explain_case_{side}", layer=row.layer, head=row.head, rho=row.rho, p=row.p)
        )
    head_name = tr("explain_row_head", layer=row.layer, head=row.head)
    pair = token_rows(
        labels, [found.views.raw[row.layer, row.head], magnitude], [head_name, names[1]]
    )
    show_chart(plot_token_rows(pair), key=f"explain_case_{side}")

st.subheader(tr("explain_table"))
agree = sum(r.verdict == "agrees" for r in found.table)
st.caption(tr("explain_summary", agree=agree, heads=len(found.table), sinks=len(sinks)))


def _verdict(row: HeadRow) -> str:
    if row.verdict == "sink":
        return tr("nb_attribution_sink", token=row.sink)
    return tr(f"nb_attribution_{row.verdict}")


table = {
    tr(f"explain_col_{c}"): values
    for c, values in zip(
        COLUMNS,
        zip(
            *(
                (r.layer, r.head, r.rho, r.tau, r.p, r.norm_rho, r.ablation, _verdict(r))
                for r in found.table
            ),
            strict=True,
        ),
        strict=True,
    )
}
st.dataframe(table, hide_index=True, key="explain_table_view")
st.caption(tr("explain_table_help"))

question = top_token_round(first.scores[keys], found.views.rollout[-1])
st.markdown(tr("explain_quiz", lure=md_escape(labels[question.lure])))
guess = choose(
    st.selectbox,
    tr("explain_quiz_pick"),
    range(len(labels)),
    key="explain_quiz_pick",
    format_func=lambda i: f"{i}:{labels[i]}",
)
if st.button(tr("explain_quiz_check"), key="explain_quiz_check"):
    answer = md_escape(labels[question.answer])
    if question.is_correct(guess):
        st.success(tr("explain_quiz_right", answer=answer))
    else:
        st.error(tr("explain_quiz_wrong", answer=answer))
    st.caption(tr("explain_quiz_lure" if question.attention_was_right else "explain_quiz_fooled"))

st.markdown(tr("explain_honest"))
