"""Minimal pairs: two sentences that differ in one place, through the same model.

"The animal didn't cross the street because it was too tired / wide": which heads change
where "it" looks? Every head is ranked by how much the chosen token's row changes
(attention_core.lens.row_change); the top head's two rows and, when the sentences have the
same length, its whole difference map are drawn. The model is the Pretrained page's.
"""

from __future__ import annotations

import streamlit as st

from attention_core.compare import pretrained_labels
from attention_core.figures.compare import plot_difference
from attention_core.figures.lens import plot_effect_grid, plot_row_pair
from attention_core.lens import row_change
from attention_core.limits import MAX_INPUT_CHARS
from ui.cache import pretrained_result
from ui.charts import show_chart
from ui.common import choose, entry_guard, md_escape, seeded
from ui.language import tr
from ui.long.pairs import show_long_pairs
from ui.long.view import is_long_pretrained
from ui.models import MODEL_STATE, cut_warning, model_label, model_or_stop, unknown_warning

state = st.session_state
EXAMPLE_A = "The animal didn't cross the street because it was too tired."
EXAMPLE_B = "The animal didn't cross the street because it was too wide."
FOLLOW = "it"  # the token the example is about

entry_guard()
st.title(tr("pairs_title"))
st.caption(tr("pairs_intro"))

name = state.get(MODEL_STATE, "").strip()
left, right = st.columns(2)
# persist_state: the typed pair (and the token, layer, head below) outlive a visit to
# another page, as the hand-made matrix does
text_a = left.text_input(
    tr("pairs_a_label"), seeded("pairs_a", EXAMPLE_A), key="pairs_a", persist_state="session"
)
text_b = right.text_input(
    tr("pairs_b_label"), seeded("pairs_b", EXAMPLE_B), key="pairs_b", persist_state="session"
)
if not text_a.strip() or not text_b.strip():
    st.info(tr("pairs_empty"))
    st.stop()
if max(len(text_a), len(text_b)) > MAX_INPUT_CHARS:  # refused before anything is tokenized
    st.error(tr("text_refused", n=max(len(text_a), len(text_b)), limit=MAX_INPUT_CHARS))
    st.stop()
model = model_or_stop(name)
st.caption(md_escape(model_label(name)))
if is_long_pretrained(name, model, text_a) or is_long_pretrained(name, model, text_b):
    show_long_pairs(name, model_label(name), text_a, text_b)  # past 512 tokens, in context
    st.stop()
with st.spinner(tr("pretrained_running")):
    a = pretrained_result(name, text_a)
    b = pretrained_result(name, text_b)
for result, text, side in ((a, text_a, "a"), (b, text_b, "b")):
    cut_warning(name, result, text)
    unknown_warning(model, result, text, key=f"pairs_to_reader_{side}")
if a.tokens == b.tokens and text_a != text_b:  # e.g. 累 and 軟 both [UNK]: one input twice
    st.info(tr("pairs_same_input", unk=md_escape(model.tokenizer.unk_token or "[UNK]")))
    st.stop()
labels_a = pretrained_labels(a)
n = len(a.tokens)
if "pairs_query" not in state or not 0 <= state["pairs_query"] < n:
    state["pairs_query"] = a.tokens.index(FOLLOW) if FOLLOW in a.tokens else 0
query = choose(
    st.selectbox,
    tr("pairs_token_label"),
    range(n),
    key="pairs_query",
    format_func=labels_a.__getitem__,
    help=tr("pairs_token_help"),
    persist_state="session",
)
change = row_change(a.attentions, a.tokens, b.attentions, b.tokens, query)
if change is None:
    st.info(tr("pairs_no_shared"))
    st.stop()

layer_name = tr("compare_layer_name", l="{l}")
head_name = tr("compare_head_name", i="{i}")
ranking = change.ranking()
top = tr("lens_list_sep").join(tr("lens_head_name", layer=la, head=h) for la, h in ranking[:3])
st.caption(tr("pairs_ranking_caption", token=md_escape(a.tokens[query]), heads=top))
show_chart(
    plot_effect_grid(
        change.change,
        [ranking[0]],
        layer_title=layer_name,
        head_title=head_name,
        colorbar_title=tr("pairs_change"),
    ),
    key="pairs_ranking_chart",
    filename="minimal-pairs-ranking",
)

c1, c2 = st.columns(2)
if "pairs_layer" not in state:
    state["pairs_layer"], state["pairs_head"] = ranking[0]
layer = choose(
    c1.selectbox,
    tr("lens_layer_label"),
    range(model.num_layers),
    key="pairs_layer",
    persist_state="session",
)
head = choose(
    c2.selectbox,
    tr("lens_head_label"),
    range(model.num_heads),
    key="pairs_head",
    persist_state="session",
)
shared = [f"{i}:{a.tokens[i]}" for i, _ in change.pairs]
st.caption(tr("pairs_rows_caption", layer=layer, head=head, token=md_escape(a.tokens[query])))
show_chart(
    plot_row_pair(
        change.rows_a[layer, head],
        change.rows_b[layer, head],
        shared,
        names=(tr("pairs_row_a"), tr("pairs_row_b"), tr("pairs_row_diff")),
    ),
    key="pairs_rows_chart",
    filename=f"minimal-pairs-l{layer}-h{head}",
)
if len(a.tokens) == len(b.tokens):
    st.caption(tr("pairs_diff_caption"))
    diff = b.attentions[layer, head] - a.attentions[layer, head]  # (n, n)
    show_chart(
        plot_difference(diff, labels_a, colorbar_title=tr("pairs_row_diff")),
        key="pairs_diff_chart",
        filename=f"minimal-pairs-diff-l{layer}-h{head}",
    )
else:
    st.info(tr("pairs_diff_unaligned"))
