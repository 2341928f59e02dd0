"""Every pretrained view is honest about unknown tokens, in AppTest with
the packaged MiniLM: Compare, Lens, Minimal pairs and Pretrained say how much of the text
became [UNK] and offer the trained reader in one click; Minimal pairs refuses to rank heads
on two sentences the model reads as one; the quiz never asks about an [UNK] row."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.i18n import t
from attention_core.quiz import QuizSource, decisive_rows, draw_round
from tests.support.apptest import md_unescape
from tests.support.availability import needs_minilm
from tests.support.teaching import open_page

CLASS = "老師在教室裡用投影機講解注意力機制，學生們都聽得非常認真喔。"  # 24 of 30 [UNK]
TIRED, SOFT = "貓坐在墊子上，因為它很累。", "貓坐在墊子上，因為它很軟。"


def warnings(at) -> str:
    return md_unescape(" ".join(str(w.value) for w in at.warning))


@needs_minilm
@pytest.mark.parametrize(
    ("page", "button", "state"),
    [
        ("pretrained", "pretrained_to_reader", {}),
        ("compare", "compare_to_reader", {"compare_source": "pretrained"}),
        ("lens", "lens_to_reader", {}),
    ],
)
def test_a_view_of_unknown_text_says_how_much_and_opens_the_reader_in_one_click(
    page, button, state
):
    at = open_page(page, {"text": CLASS}, state)
    assert not at.exception, at.exception
    shown = warnings(at)
    assert "[UNK]" in shown and "24 of 30" in shown, shown
    at.button(key=button).click().run()
    assert not at.exception
    assert at.session_state["weights"] == "trained"
    assert at.query_params["weights"] == "trained"  # now on the landing page, trained
    assert [s.value for s in at.subheader if "trained reader learned" in s.value]


@needs_minilm
def test_minimal_pairs_will_not_rank_heads_the_model_cannot_tell_apart():
    at = open_page("minimal_pairs", {}, {"pairs_a": TIRED, "pairs_b": SOFT})
    assert not at.exception, at.exception
    assert t("pairs_same_input", "en", unk="[UNK]") in [md_unescape(i.value) for i in at.info]
    assert "[UNK]" in warnings(at)
    assert not [e for e in at.get("bidi_component") if "pairs_ranking" in str(e.proto)]
    assert at.button(key="pairs_to_reader_a") is not None


def test_the_quiz_never_asks_about_an_unknown_tokens_row():
    w = np.full((1, 4, 4), 0.1)
    w[0, :, 0] = 0.7  # every row decisive: its first key
    source = QuizSource("pretrained", w, [f"{i}:t" for i in range(4)], [(0, 0)], (1, 3))
    assert len(decisive_rows(w)) == 4
    asked = {draw_round([source], seed=s).query for s in range(40)}
    assert asked == {0, 2}
    all_unknown = QuizSource("pretrained", w, source.labels, [(0, 0)], (0, 1, 2, 3))
    assert draw_round([all_unknown]) is None
