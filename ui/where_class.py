""" "Where does this head look?": a class question on the trained reader, for the Classroom
page (pages/classroom.py). The teacher chooses a sentence, a layer and a head, and a query
character, and pushes the question; each phone shows the sentence as characters to tap,
the query highlighted; the reveal puts the class's taps beside the reader's own attention
row for that query, the query's jieba word outlined.

The row, the word and the [UNK] characters come from `attention_core.reader.where`
(cached in `ui.cache.where_round`), the question from `attention_core.poll.question_where`,
the reveal's figure from `attention_core.figures.where`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from attention_core.figures.where import plot_where_reveal, where_reveal
from attention_core.poll import Question
from attention_core.reader.card import ReaderError, shipped_shape
from ui.cache import where_round
from ui.charts import show_chart
from ui.classroom import guarded_callback, poll_store_or_stop, push_question, teacher_class
from ui.common import md_escape
from ui.language import tr

__all__ = ["TAP_PX", "option_name", "where_panel", "where_reveal_view", "where_taps"]

TAP_PX = 48  # a character's tap target, wide and high (Apple's and Material's 44 px and more)
TAPS_CSS = (
    "<style>.st-key-where_taps button { min-width: __PX__px; min-height: __PX__px;"
    " padding: 0 0.5rem; } .st-key-where_taps button p { font-size: 1.5rem; }</style>"
).replace("__PX__", str(TAP_PX))


def option_name(question: Question, j: int) -> str:
    """Option `j` as a message names it: a "where" sentence's character that occurs twice
    (上 … 上) with its place in the sentence, any other as it reads."""
    label = question.options[j]
    if question.kind == "where" and question.options.count(label) > 1:
        return tr("where_char_at", char=label, index=j)
    return label


def _listed(labels: Sequence[str], picks: Sequence[int]) -> str:
    return "、".join(labels[j] for j in picks)


@guarded_callback
def _push(number: int, text: str, layer: int, head: int, query: int) -> None:
    from attention_core.reader.where import question_of

    found = teacher_class()
    if found is None:
        return
    info = poll_store_or_stop().info(found[0])
    if info is not None and (info.question.number if info.question else 0) != number:
        return  # a second trigger of the same click: the question was pushed already
    push_question(question_of(where_round(text, layer, head, query)))


def where_panel(number: int) -> None:
    """The teacher's choice of sentence, layer, head and query, and the push button (for
    the class this tab teaches; `number`: the last question pushed)."""
    found = teacher_class()
    if found is None or not st.toggle(tr("where_toggle"), key="where_open"):
        return
    shape = shipped_shape()
    with st.container(key="where_teacher", border=True):
        st.subheader(tr("where_header"))
        st.caption(tr("where_intro"))
        if shape is None:
            st.error(tr("where_no_reader"))
            return
        state = st.session_state
        state.setdefault("where_text", tr("where_default_sentence"))
        state.setdefault("where_layer", shape.default_layer)
        text = st.text_input(tr("where_sentence"), key="where_text")
        left, right = st.columns(2)
        choose = tr("where_choose")
        layer = left.selectbox(tr("where_layer"), range(shape.num_layers), key="where_layer",
                               placeholder=choose)  # fmt: skip
        head = right.selectbox(tr("where_head"), range(shape.num_heads), key="where_head",
                               placeholder=choose)  # fmt: skip
        try:
            labels = where_round(text, int(layer), int(head), None).labels
        except ReaderError:  # its files missing or corrupted: said, never a traceback
            st.error(tr("where_no_reader"))
            return
        except ValueError:
            st.warning(tr("where_empty"))
            return
        choices = list(range(1, len(labels)))
        if state.get("where_query") not in choices:
            state["where_query"] = choices[-1]  # the last character sees the whole sentence
        query = st.selectbox(tr("where_query"), choices, key="where_query", placeholder=choose,
                             format_func=lambda j: f"{j}: {labels[j]}")  # fmt: skip
        found_round = where_round(text, int(layer), int(head), int(query))
        if found_round.dropped:
            most = len(found_round.labels) - 1
            st.warning(md_escape(tr("where_cut", most=most, dropped=found_round.dropped)))
        if found_round.unknown:
            chars = _listed(found_round.labels, found_round.unknown)
            st.warning(md_escape(tr("where_unknown", chars=chars)))
        word = "".join(found_round.labels[j] for j in found_round.word)
        preview = tr("where_preview", query=labels[query], index=query, word=word)
        st.markdown(md_escape(preview))
        st.button(
            tr("where_push", code=found[0]),
            key="where_push",
            on_click=_push,
            args=(number, text, int(layer), int(head), int(query)),
            icon=":material/cast_for_education:",
            type="primary",
        )


def where_taps(question: Question, answer: Callable[[str, int, int], None], class_id: str) -> None:
    """A phone's sentence: one tap target per character (TAP_PX square at least), the query
    highlighted; a tap calls `answer(class_id, number, option)`."""
    st.html(TAPS_CSS)
    st.caption(md_escape(tr("where_tap", query=question.options[question.query])))
    if question.unknown:
        st.caption(
            md_escape(tr("where_unknown_phone", chars=_listed(question.options, question.unknown)))
        )
    with st.container(key="where_taps", horizontal=True, gap="small"):
        for j, label in enumerate(question.options):
            st.button(
                md_escape(label),
                key=f"where_tap_{question.number}_{j}",
                on_click=answer,
                args=(class_id, question.number, j),
                type="primary" if j == question.query else "secondary",
            )


def where_reveal_view(counts: dict[int, int], question: Question, *, key: str) -> None:
    """A revealed "where" question: the class's taps beside the reader's row, the query's
    jieba word outlined, and a line saying what the row is."""
    data = where_reveal(counts, question)
    word = "".join(question.options[j] for j in question.word)
    figure = plot_where_reveal(
        data,
        title=tr("where_reveal_title"),
        class_name=tr("where_reveal_class"),
        model_name=tr("where_reveal_model"),
        y_title=tr("where_reveal_share"),
        query_mark=tr("where_reveal_query"),
        word_name=tr("where_reveal_word", word=word),
    )
    show_chart(figure, key=key)
    caption = tr(
        "where_reveal_caption",
        layer=question.layer,
        head=question.head,
        query=question.options[question.query],
        answer="、".join(option_name(question, j) for j in question.answers),
        taps=data.taps,
        word=word,
    )
    st.caption(md_escape(caption))
