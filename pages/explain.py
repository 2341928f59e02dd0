"""Is attention an explanation? The sidebar's sentence through the model chosen on the
page (the trained reader, MiniLM against a second sentence, the Pretrained page's
model): its prediction attributed (integrated gradients, input × gradient, occlusion),
beside attention (rollout of the target's row, every head's row), a head that agrees and
one that does not (a side with no head offers an example sentence that has both), the
table of every head, an honest text with the literature, a quiz.
The computing is in attention_core.attribution; the models, refusals and cache in
ui/explain.py; the bar and Cancel in ui/cancellable.py.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.attribution import METHODS, HeadRow
from attention_core.figures.attribution import plot_token_rows, token_rows
from attention_core.limits import MAX_INPUT_CHARS
from attention_core.quiz import top_token_round
from ui.charts import show_chart
from ui.common import choose, current_settings, entry_guard, md_escape, seeded
from ui.explain import (
    READER,
    agreement_or_cancelled,
    model_keys,
    model_kind,
    model_name,
    model_or_stop_for,
    refusal,
)
from ui.language import lang, tr
from ui.models import MODEL_STATE

COLUMNS = ("layer", "head", "rho", "tau", "p", "norm", "ablation", "verdict")
# per interface language, one of the sidebar's examples on which the reader has heads on
# both sides and a sink: offered when the sentence typed has a side with no head
EVERYDAY = {
    "zh-TW": "這家餐廳的牛肉麵很好吃，可是要排很久。",
    "en": "The bank raised interest rates, so I walked along the river bank.",
}


def use_sentence(text: str) -> None:
    """The sidebar's sentence becomes `text` (a callback: it runs before the next run)."""
    st.session_state["text"] = text


entry_guard()
st.title(tr("page_explain"))
st.caption(tr("explain_intro"))

settings = current_settings()
key = choose(
    st.segmented_control,
    tr("explain_model"),
    model_keys(st.session_state.get(MODEL_STATE, "")),
    key="explain_model",
    default=READER,
    format_func=model_name,
    required=True,
    help=tr("explain_model_help"),
)
key = key or READER
method = choose(
    st.segmented_control,
    tr("explain_method"),
    METHODS,
    key="explain_method",
    default=METHODS[0],
    format_func=lambda m: tr(f"explain_method_{m}"),
    required=True,
)
model = model_or_stop_for(key)  # a message and a stop when it cannot load
kind = model_kind(model)
second = token = ""
if kind == "encoder":
    second = st.text_input(
        tr("explain_second"),
        value=seeded("explain_second", tr("explain_second_default")),
        key="explain_second",
        max_chars=MAX_INPUT_CHARS,
    )
elif kind != "encoder-decoder":
    token = st.text_input(
        tr("explain_token"),
        value=seeded("explain_token", ""),
        key="explain_token",
        max_chars=64,
        help=tr("explain_token_help"),
    ).strip()

refused = refusal(key, model, settings.text, second, token)
if refused:
    st.warning(refused)
    st.stop()
target = second if kind == "encoder" else token or None
try:
    found = agreement_or_cancelled(key, model, settings.text, method or METHODS[0], target)
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
if kind == "encoder":
    said = tr(
        "explain_target_similarity",
        model=md_escape(model_name(key)),
        second=md_escape(first.target_token),
        value=first.output,
    )
elif kind == READER and not token:
    said = tr("explain_target", token=md_escape(first.target_token), logit=first.output)
else:
    said = tr(
        "explain_target_model",
        model=md_escape(model_name(key)),
        token=md_escape(first.target_token),
        logit=first.output,
    )
st.markdown(said)
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
        suggested = EVERYDAY.get(lang(), EVERYDAY["en"])
        if key == READER and settings.text != suggested:  # a sentence with both cases
            st.button(
                tr("explain_try_everyday", text=suggested),
                key=f"explain_try_{side}",
                on_click=use_sentence,
                args=(suggested,),
            )
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


# the ablation column names what it changes: the target's logit, or MiniLM's similarity
column = {"ablation": "ablation_similarity"} if kind == "encoder" else {}
table = {
    tr(f"explain_col_{column.get(c, c)}"): values
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
