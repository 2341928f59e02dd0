"""The positions page, through AppTest: the shuffled matrix it shows is P·A·Pᵀ of the matrix
without positions, and not with them; the shuffle button moves the seed. A is recomputed here
from the module's nn.Linear layers (tests/support/teaching.py), not by the pipeline under test."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.positions import permutation
from attention_core.settings import DEFAULT_TEXT
from tests.support.apptest import charts, decode, drawn_charts, open_after_first_run
from tests.support.teaching import reference_weights

PAGE = "pages/positions.py"


def open_page(params: dict[str, str] | None = None, **state: object) -> AppTest:
    """The page after its first render (`params` in the URL, `state` set before it runs)."""
    return open_after_first_run(PAGE, params, **state)


def z(spec: dict[str, Any]) -> np.ndarray:
    return decode(spec["data"][0]["z"])


def p_matrix(perm: np.ndarray) -> np.ndarray:
    p = np.zeros((len(perm), len(perm)))
    p[np.arange(len(perm)), perm] = 1.0  # shuffled position i holds original token perm[i]
    return p


def test_shuffled_matrix_is_pap_t_only_without_positions() -> None:
    at = open_page()
    figs = charts(at)
    assert set(figs) == {
        "positions_plain_original",
        "positions_plain_shuffled",
        "positions_positional_original",
        "positions_positional_shuffled",
        "positions_table",
    }
    plain = reference_weights(DEFAULT_TEXT)[0]  # head 0 of the default sentence
    p = p_matrix(permutation(4, 0))
    np.testing.assert_allclose(z(figs["positions_plain_original"]), plain, atol=EXACT)
    np.testing.assert_allclose(z(figs["positions_plain_shuffled"]), p @ plain @ p.T, atol=EXACT)
    positional = reference_weights(DEFAULT_TEXT, positional=True)[0]
    np.testing.assert_allclose(z(figs["positions_positional_original"]), positional, atol=EXACT)
    shuffled = z(figs["positions_positional_shuffled"])
    assert np.abs(shuffled - p @ positional @ p.T).max() > 1e-3
    assert "P·A·Pᵀ" in at.success[0].value and "≠" in at.info[0].value


def test_shuffle_button_moves_the_seed_and_the_order() -> None:
    at = open_page({"text": "The cat sat on the mat because it was tired."})
    first = charts(at)["positions_plain_shuffled"]["data"][0]["x"]
    at.button(key="positions_shuffle").click().run()
    assert not at.exception
    assert at.session_state["positions_seed"] == 1
    second = charts(at)["positions_plain_shuffled"]["data"][0]["x"]
    assert first != second
    n = len(second)
    perm = permutation(n, 1)
    labels = charts(at)["positions_plain_original"]["data"][0]["x"]
    assert second == [labels[i] for i in perm]
    assert "Shuffle #1" in [c.value for c in at.caption][1]


def test_repeated_word_is_reported() -> None:
    at = open_page({"text": "the cat saw the dog"})
    lines = [m.value for m in at.markdown if "“the”" in m.value]
    assert len(lines) == 1 and "0\\.0e\\+00" in lines[0]


def test_views_and_heads() -> None:
    at = open_page(positions_view="plain", positions_head=2)
    figs = charts(at)
    assert set(figs) == {"positions_plain_original", "positions_plain_shuffled", "positions_table"}
    np.testing.assert_allclose(
        z(figs["positions_plain_original"]), reference_weights(DEFAULT_TEXT)[2], atol=EXACT
    )


def test_the_encoding_table_is_sinusoidal() -> None:
    at = open_page({"embed_dim": "6", "num_heads": "2"})
    table = z(charts(at)["positions_table"])
    assert table.shape == (4, 6)
    for p in range(4):
        for i in range(3):
            angle = p / 10000 ** (2 * i / 6)
            assert table[p, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[p, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)


@pytest.mark.parametrize(
    ("params", "key"),
    [({"text": "貓"}, "positions_one_token"), ({"text": ""}, "empty_text")],
)
def test_one_token_or_none_gives_a_message(params: dict[str, str], key: str) -> None:
    at = open_page(params)
    assert any(i.value == t(key, "en") for i in at.info)
    assert not drawn_charts(at)


def test_many_tokens() -> None:
    at = open_page({"text": " ".join(f"w{i}" for i in range(120)), "attention": "single"})
    assert len(charts(at)) == 5
    assert at.success  # still an exact permutation without positions


def test_traditional_chinese() -> None:
    at = open_page(lang="zh-TW")
    assert at.title[0].value == t("positions_title", "zh-TW")
    assert "P·A·Pᵀ" in at.success[0].value and "打亂" in at.success[0].value
