"""The hand-made attention page, through AppTest: the article's example by default, edits
through the editors' session state, row checks, normalising, user tokens shown as text."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.handmade import ARTICLE_MATRIX, MAX_HANDMADE_TOKENS
from tests.support.apptest import away_and_back, open_after_first_run

PAGE = "pages/handmade.py"
ARTICLE_LINES = (
    "中和 = 0.5×中和 + 0×有 + 0×一個 + 0.5×永和路\n"
    "有 = 0×中和 + 1×有 + 0×一個 + 0×永和路\n"
    "一個 = 0×中和 + 0×有 + 1×一個 + 0×永和路\n"
    "永和路 = 0.5×中和 + 0×有 + 0×一個 + 0.5×永和路"
)
XSS = "<img src=x onerror=alert(1)>"
UNESCAPED_TAG = re.compile(r"(?<!\\)<")  # a "<" that markdown could read as HTML


def open_page(params: dict[str, str] | None = None, **state: object) -> AppTest:
    """The page after its first render; `params` are URL parameters (the sidebar's settings
    come from the URL on a session's first run), `state` is set just before the page runs.
    """
    return open_after_first_run(PAGE, params, **state)


def editor_key(at: AppTest, name: str) -> str:
    """The widget key editor `name` has now: `<name>@<n>`, a new n for each new base table."""
    (key,) = [e.key for e in at.data_editor if e.key.split("@")[0] == name]
    return key


def edit(at: AppTest, name: str, rows: dict[int, dict[str, float]]) -> AppTest:
    """Apply cell edits to a rendered editor, as the browser would, and rerun."""
    at.session_state[editor_key(at, name)] = edits(rows)
    at.run()
    assert not at.exception
    return at


def edits(rows: dict[int, dict[str, float]]) -> dict[str, object]:
    """A data_editor's edit state, as the browser sends it."""
    return {"edited_rows": rows, "added_rows": [], "deleted_rows": []}


def result_table(at: AppTest) -> np.ndarray:
    (table,) = [d for d in at.dataframe if d.editing_mode == "read_only"]
    return table.value.to_numpy()


def test_defaults_are_the_articles_example() -> None:
    at = open_page()
    assert at.title[0].value == "Hand-made attention: the article's example"
    assert at.code[0].value == ARTICLE_LINES
    matrix, vectors = at.data_editor
    assert matrix.key.startswith("handmade_matrix@") and vectors.key.startswith("handmade_vectors@")
    np.testing.assert_array_equal(matrix.value.to_numpy(), ARTICLE_MATRIX)
    assert list(matrix.value.columns) == ["0:中和", "1:有", "2:一個", "3:永和路"]
    # by hand: 中和 = 0.5·(2, 0, 1) + 0.5·(4, 1, 0)
    np.testing.assert_array_equal(
        result_table(at), [[3, 0.5, 0.5], [0, 3, 0], [0, 0, 2], [3, 0.5, 0.5]]
    )
    assert len(at.success) == 1 and not at.warning


def test_an_edited_row_is_checked_and_normalised() -> None:
    at = edit(open_page(), "handmade_matrix", {0: {"0:中和": -0.5}, 2: {"3:永和路": 1.0}})
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 3  # row 0: negative and sum 0; row 2: sum 2
    assert "0\\:中和" in warnings[0] and "negative" in warnings[0]
    assert "2\\:一個" in warnings[2] and "sums to 2" in warnings[2]
    assert at.code[0].value.splitlines()[0] == "中和 = -0.5×中和 + 0×有 + 0×一個 + 0.5×永和路"
    # the new vectors use the edited weights: 0.5·(4, 1, 0) - 0.5·(2, 0, 1)
    np.testing.assert_array_equal(result_table(at)[0], [1.0, 0.5, -0.5])

    at.button(key="handmade_normalise").click()
    at.run()
    assert not at.exception and not at.warning
    lines = at.code[0].value.splitlines()
    assert lines[0] == "中和 = 0×中和 + 0×有 + 0×一個 + 1×永和路"
    assert lines[2] == "一個 = 0×中和 + 0×有 + 0.5×一個 + 0.5×永和路"
    np.testing.assert_allclose(at.data_editor[0].value.to_numpy().sum(1), 1.0)


def test_edited_vectors_change_the_result() -> None:
    at = edit(open_page(), "handmade_vectors", {1: {"x1": 10.0}})
    np.testing.assert_array_equal(result_table(at)[1], [10.0, 3.0, 0.0])


def test_changing_the_token_count_resizes_everything() -> None:
    at = open_page()
    at.text_input(key="handmade_tokens").set_value("a | b | c | d | e").run()
    assert not at.exception
    matrix, vectors = at.data_editor
    np.testing.assert_array_equal(matrix.value.to_numpy(), np.eye(5))
    assert vectors.value.shape == (5, 3)
    assert at.code[0].value.splitlines()[0] == "a = 1×a + 0×b + 0×c + 0×d + 0×e"

    at.segmented_control(key="handmade_fill").set_value("uniform").run()
    at.button(key="handmade_reset").click().run()
    assert not at.exception
    np.testing.assert_allclose(at.data_editor[0].value.to_numpy(), 0.2)


def test_a_renamed_token_keeps_its_vector_edit() -> None:
    at = edit(open_page(), "handmade_vectors", {3: {"x2": 7.0}})
    at.text_input(key="handmade_tokens").set_value("中和 | 有 | 一個 | 永和路口").run()
    assert not at.exception
    assert at.data_editor[1].value.to_numpy()[3, 1] == 7.0
    np.testing.assert_array_equal(at.data_editor[0].value.to_numpy(), ARTICLE_MATRIX)


def test_user_tokens_are_shown_literally_never_as_html() -> None:
    at = open_page(handmade_tokens=f"中和 | {XSS}")
    assert at.code[0].value.splitlines() == [
        f"中和 = 1×中和 + 0×{XSS}",
        f"{XSS} = 0×中和 + 1×{XSS}",
    ]
    # make a row invalid so the token also appears in a warning (markdown): it must be escaped
    edit(at, "handmade_matrix", {1: {f"1:{XSS}": 0.5}})
    assert XSS.replace("<", "\\<").replace("=", "\\=")[:12] in at.warning[0].value
    for element in [*at.markdown, *at.warning, *at.caption, *at.success, *at.info]:
        assert UNESCAPED_TAG.search(element.value) is None, element.value
        assert not getattr(element.proto, "allow_html", False)


def test_load_the_sidebar_sentence_and_back_to_the_article() -> None:
    at = open_page({"text": "The cat sat on the mat.", "tokenizer": "word"})
    at.button(key="handmade_load").click().run()
    assert not at.exception
    assert at.text_input(key="handmade_tokens").value == "The | cat | sat | on | the | mat | ."
    assert at.data_editor[0].value.shape == (7, 7)
    at.button(key="handmade_article").click().run()
    assert at.code[0].value == ARTICLE_LINES


def test_a_long_sidebar_sentence_is_cut() -> None:
    words = " ".join(f"w{i}" for i in range(MAX_HANDMADE_TOKENS + 5))
    at = open_page({"text": words, "tokenizer": "word"})
    at.button(key="handmade_load").click().run()
    assert not at.exception and at.warning
    assert at.data_editor[0].value.shape == (MAX_HANDMADE_TOKENS, MAX_HANDMADE_TOKENS)


def test_empty_sidebar_sentence_gives_a_message() -> None:
    at = open_page({"text": ""})
    at.button(key="handmade_load").click().run()
    assert not at.exception and at.info


@pytest.mark.parametrize("tokens", ["", "   ", " | | "])
def test_no_tokens_gives_a_message(tokens: str) -> None:
    at = open_page(handmade_tokens=tokens)
    assert at.info and not at.data_editor


def test_one_and_many_tokens() -> None:
    at = open_page(handmade_tokens="獨")
    assert at.code[0].value == "獨 = 1×獨"
    many = " ".join(f"t{i}" for i in range(40))
    at = open_page(handmade_tokens=many)
    assert at.warning and at.data_editor[0].value.shape == (12, 12)


def test_vector_size() -> None:
    at = open_page()
    at.number_input(key="handmade_dim").set_value(5).run()
    assert not at.exception
    assert at.data_editor[1].value.shape == (4, 5)
    np.testing.assert_array_equal(at.data_editor[1].value.to_numpy()[:, :3][0], [2, 0, 1])


def test_traditional_chinese() -> None:
    at = open_page(lang="zh-TW")
    assert at.title[0].value == "手動注意力：文章裡的例子"
    assert at.code[0].value == ARTICLE_LINES
    assert at.success[0].value.startswith("每一列都非負")


def test_tokens_and_edits_survive_a_visit_to_another_page() -> None:
    at = open_page()
    at.text_input(key="handmade_tokens").set_value("a | b").run()
    edit(at, "handmade_matrix", {0: {"1:b": 0.5}})
    assert at.warning  # row 0 now sums to 1.5
    away_and_back(at, PAGE)
    assert at.text_input(key="handmade_tokens").value == "a | b"
    assert at.code[0].value.splitlines()[0] == "a = 1×a + 0.5×b"
    assert at.warning


def outro(at: AppTest) -> str:
    """The closing caption, which says whose matrix is shown."""
    (text,) = [c.value for c in at.caption if "softmax(QKᵀ/√d_k)" in c.value]
    return text


def test_grid_warning_and_caption_agree_after_every_click() -> None:
    """Type 0.3, normalise, then load the sidebar's sentence (here the article's own tokens):
    the grid keeps the normalised row, no warning, and the caption no longer calls it the
    article's matrix. Before, the editor sent the raw 0.3 back ("row sums to 1.3")."""
    at = edit(open_page(), "handmade_matrix", {0: {"1:有": 0.3}})
    assert len(at.warning) == 1 and "1\\.3" in at.warning[0].value  # markdown-escaped
    assert "no longer the article's" in outro(at)
    before = editor_key(at, "handmade_matrix")

    at.button(key="handmade_normalise").click().run()
    assert not at.exception and not at.warning and at.success
    assert editor_key(at, "handmade_matrix") != before  # a new editor: no stale cell edits
    row = at.data_editor[0].value.to_numpy()[0]
    np.testing.assert_allclose(row, np.array([0.5, 0.3, 0.0, 0.5]) / 1.3)
    assert "no longer the article's" in outro(at)

    at.button(key="handmade_load").click().run()  # the sidebar's default: 中和有一個永和路
    assert not at.exception and not at.warning and at.success
    np.testing.assert_allclose(at.data_editor[0].value.to_numpy()[0], row)
    assert at.code[0].value.splitlines()[0].startswith("中和 = 0.3846×中和")
    assert "no longer the article's" in outro(at)

    at.button(key="handmade_article").click().run()
    assert at.code[0].value == ARTICLE_LINES and not at.warning
    assert outro(at).startswith("In the article's matrix")


def test_zh_tw_reruns_like_english() -> None:
    at = open_page(lang="zh-TW")
    edit(at, "handmade_matrix", {0: {"1:有": 0.3}})
    at.button(key="handmade_normalise").click().run()
    assert not at.exception and not at.warning
    assert outro(at).startswith("這已經是你自己的矩陣")
