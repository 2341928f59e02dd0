"""Every page's own widgets, operated in real Chromium, in both languages.

AppTest sets widget values directly; here the browser sends them, as labels, the way a
student's clicks do (the language-switch crash: after a language switch the browser sent the old
language's label and the next click crashed the page). Each test opens a page, operates
its widgets, switches the language in the sidebar and operates them again; after every
step the charts must be painted and the page free of exception and error boxes. For the
hand-made, masks and positions pages this is the only browser coverage of their widgets.
Screenshots: tests/artifacts/widgets-*.png.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Locator, Page, expect

from attention_core.handmade import ARTICLE_MATRIX
from attention_core.i18n import t
from attention_core.tokenize import tokenize

from .checks import assert_no_exception, expected_errors, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .waits import expect_rerun, open_page, wait_for_charts, wait_for_heatmaps
from .widgets import edit_cell, main_area, pick_option, set_language, sidebar

pytestmark = pytest.mark.browser
ARTICLE = "中和有一個永和路"
SMALL = {"text": ARTICLE, "tokenizer": "jieba", "embed_dim": 8, "num_heads": 2}


def _painted(page: Page, *, allow_errors: list[re.Pattern[str]] | None = None) -> int:
    """The step's invariant: every chart painted, no exception or error box."""
    charts = wait_for_charts(page)
    assert_no_exception(page, allow_errors=allow_errors or ())
    return charts


def _segment(area: Locator, label: str, option: str) -> Locator:
    """An option of a segmented control (a radiogroup of buttons)."""
    return area.get_by_role("radiogroup", name=label).get_by_role("radio", name=option, exact=True)


def _selected(area: Locator, label: str) -> Locator:
    """The selected option(s) of the segmented control labelled `label`."""
    return area.get_by_role("radiogroup", name=label).locator('[aria-checked="true"]')


def _number_step(area: Locator, label: str, direction: str = "Up") -> Locator:
    """The +/- button of the number input labelled `label`."""
    widget = area.locator('[data-testid="stNumberInput"]').filter(has_text=label)
    return widget.get_by_test_id(f"stNumberInputStep{direction}")


def _heatmap_z(page: Page, chart: int = 0) -> np.ndarray:
    (trace,) = wait_for_heatmaps(page, 1, chart=chart)
    return np.array(trace["z"], dtype=float)


# --- the landing page ---------------------------------------------------------------------------
def test_heatmaps_highlight_and_mean_in_both_languages(page: Page, app_server: str) -> None:
    open_page(page, app_server, params=SMALL)
    wait_for_heatmaps(page, 2)
    main = main_area(page)
    for lang in ("en", "zh-TW"):
        if lang != "en":
            set_language(page, lang)
            wait_for_heatmaps(page, 3)  # the mean stays on across the switch
        box = main.get_by_role("combobox", name=t("highlight_label", lang))
        token = "2:一個" if lang == "en" else "3:永和路"
        with expect_rerun(page):
            pick_option(page, box, token)
        expect(box).to_have_value(token)
        where = token.split(":")[1]  # the sentence, that token's span highlighted
        expect(main.get_by_text(where, exact=True).first).to_be_visible()
        if lang == "en":
            with expect_rerun(page):
                main.get_by_text(t("show_mean_label", lang), exact=True).click()
        traces = wait_for_heatmaps(page, 3)
        assert traces[2]["name"] == t("mean_title", lang)
        _painted(page)
    screenshot(page, "widgets-heatmaps")


# --- compare -----------------------------------------------------------------------------------
def test_compare_modes_and_config_b(page: Page, app_server: str) -> None:
    open_page(page, app_server, "compare", SMALL)
    assert _painted(page) >= 3
    main = main_area(page)
    with expect_rerun(page):
        _segment(main, t("compare_mode_label", "en"), t("compare_mode_configs", "en")).click()
    assert _painted(page) >= 2
    with expect_rerun(page):
        _number_step(main, t("compare_b_seed_label", "en")).click()
    _painted(page)
    set_language(page, "zh-TW")
    _painted(page)
    tokenizer_b = main.get_by_role("combobox", name=t("compare_b_tokenizer_label", "zh-TW"))
    with expect_rerun(page):
        pick_option(page, tokenizer_b, t("tokenizer_char", "zh-TW"))
    _painted(page)
    expect(main.get_by_text(t("compare_tokens_differ", "zh-TW"))).to_be_visible()
    with expect_rerun(page):
        _segment(main, t("compare_mode_label", "zh-TW"), t("compare_mode_heads", "zh-TW")).click()
    assert _painted(page) >= 3
    screenshot(page, "widgets-compare")


# --- hand-made attention -----------------------------------------------------------------------
def test_handmade_edit_normalise_reset_and_sidebar_sentence(page: Page, app_server: str) -> None:
    open_page(page, app_server, "handmade", {"text": ARTICLE})
    main = main_area(page)
    matrix_editor = main.locator('[data-testid="stDataFrame"]').first
    assert np.allclose(_heatmap_z(page), ARTICLE_MATRIX)
    _painted(page)

    # a typed weight: the row no longer sums to 1, the heatmap shows the typed number
    with expect_rerun(page):
        edit_cell(page, matrix_editor, 0, 0, "0.3")
    z = _heatmap_z(page)
    assert z[0, 0] == pytest.approx(0.3)
    expect(
        main.get_by_text(t("handmade_problem_sum", "en", row="0:中和", total=0.8))
    ).to_be_visible()
    _painted(page)
    screenshot(page, "widgets-handmade-edited")

    with expect_rerun(page):
        main.get_by_role("button", name=t("handmade_normalise", "en")).click()
    z = _heatmap_z(page)
    assert z[0, 0] == pytest.approx(0.3 / 0.8) and np.allclose(z.sum(axis=1), 1)
    expect(main.get_by_text(t("handmade_rows_ok", "en"))).to_be_visible()
    _painted(page)
    with expect_rerun(page):
        main.get_by_role("button", name=t("handmade_reset", "en")).click()
    assert np.allclose(_heatmap_z(page), ARTICLE_MATRIX)

    # 中文: uniform fill, the sidebar's sentence, an edit and a fix in the other language
    set_language(page, "zh-TW")
    assert np.allclose(_heatmap_z(page), ARTICLE_MATRIX)
    with expect_rerun(page):
        _segment(
            main, t("handmade_fill_label", "zh-TW"), t("handmade_fill_uniform", "zh-TW")
        ).click()
    _painted(page)
    sentence = "小明把蘋果給了小華"  # six tokens: a new matrix (four would keep it)
    box = sidebar(page).get_by_role("textbox", name=t("text_label", "zh-TW"))
    box.fill(sentence)
    with expect_rerun(page):
        box.press("Control+Enter")
    with expect_rerun(page):
        main.get_by_role("button", name=t("handmade_load_sidebar", "zh-TW")).click()
    n = len(tokenize(sentence, "auto"))
    z = _heatmap_z(page)
    assert z.shape == (n, n) and np.allclose(z, 1 / n)  # a new matrix, uniform
    with expect_rerun(page):
        edit_cell(page, matrix_editor, 1, 1, "0")
    assert _heatmap_z(page)[1, 1] == 0.0
    with expect_rerun(page):
        main.get_by_role("button", name=t("handmade_normalise", "zh-TW")).click()
    assert np.allclose(_heatmap_z(page).sum(axis=1), 1)
    with expect_rerun(page):
        _number_step(main, t("handmade_dim_label", "zh-TW")).click()
    expect(main.get_by_role("textbox", name=t("handmade_tokens_label", "zh-TW"))).to_have_value(
        " | ".join(t.label for t in tokenize(sentence, "auto"))
    )
    _painted(page)
    screenshot(page, "widgets-handmade-zh")
    with expect_rerun(page):
        main.get_by_role("button", name=t("handmade_load_article", "zh-TW")).click()
    assert np.allclose(_heatmap_z(page), ARTICLE_MATRIX)
    _painted(page)


# --- steps and scaling -------------------------------------------------------------------------
def test_steps_next_query_head_and_all(page: Page, app_server: str) -> None:
    open_page(page, app_server, "steps", SMALL)
    main = main_area(page)
    _painted(page)
    for _ in range(2):  # to "scores": a query row is followed
        with expect_rerun(page):
            main.get_by_role("button", name=t("steps_next", "en")).click()
    _painted(page)
    set_language(page, "zh-TW")
    with expect_rerun(page):
        pick_option(
            page, main.get_by_role("combobox", name=t("steps_query_label", "zh-TW")), "2:一個"
        )
    with expect_rerun(page):
        pick_option(
            page,
            main.get_by_role("combobox", name=t("steps_head_label", "zh-TW")),
            t("steps_head_option", "zh-TW", i=1),
        )
    _painted(page)
    with expect_rerun(page):
        main.get_by_text(t("steps_all_label", "zh-TW"), exact=True).click()
    assert _painted(page) >= 8
    screenshot(page, "widgets-steps")


def test_scaling_sliders_seed_and_head(page: Page, app_server: str) -> None:
    open_page(page, app_server, "scaling", SMALL)
    main = main_area(page)
    assert _painted(page) == 4
    with expect_rerun(page):
        main.get_by_role("slider", name=t("scaling_keys_label", "en")).press("ArrowRight")
    with expect_rerun(page):
        main.get_by_role("slider", name=t("scaling_temperature_label", "en")).press("ArrowRight")
    _painted(page)
    set_language(page, "zh-TW")
    with expect_rerun(page):
        _number_step(main, t("scaling_seed_label", "zh-TW")).click()
    with expect_rerun(page):
        pick_option(
            page,
            main.get_by_role("combobox", name=t("scaling_head_label", "zh-TW")),
            t("scaling_head_option", "zh-TW", i=1),
        )
    wait_for_heatmaps(page, 2, chart=3)
    assert _painted(page) == 4
    screenshot(page, "widgets-scaling")


# --- masks -------------------------------------------------------------------------------------
def test_masks_head_and_sentence_in_both_languages(page: Page, app_server: str) -> None:
    open_page(page, app_server, "masks", SMALL)
    main = main_area(page)
    wait_for_heatmaps(page, 1, chart=0)
    assert _painted(page) == 5  # encoder, decoder, key mask, allowed, padded weights
    for lang in ("en", "zh-TW"):
        head = main.get_by_role("combobox", name=t("masks_head_label", lang))
        if lang != "en":
            set_language(page, lang)
            _painted(page)
            # what was picked in English is still picked, now labelled in Chinese
            expect(head).to_have_value(t("head_title", lang, i=1))
            sentence = t("masks_sentence", lang, i=2)
            expect(_selected(main, t("masks_sentence_label", lang))).to_have_text([sentence])
        with expect_rerun(page):
            pick_option(page, head, t("masks_all_heads", lang))
        wait_for_heatmaps(page, 2, chart=0)  # every head, encoder
        wait_for_heatmaps(page, 2, chart=1)  # every head, decoder
        _painted(page)
        with expect_rerun(page):
            pick_option(page, head, t("head_title", lang, i=1))
        wait_for_heatmaps(page, 1, chart=0)
        pick = t("masks_sentence", lang, i=2 if lang == "en" else 1)
        with expect_rerun(page):
            _segment(main, t("masks_sentence_label", lang), pick).click()
        expect(main.get_by_text(t("masks_allowed_title", lang, name=pick))).to_be_visible()
        with expect_rerun(page):
            main.get_by_text(t("masks_padding_causal", lang), exact=True).click()
        assert _painted(page) == 5
        screenshot(page, f"widgets-masks-{lang}")
    second = main.get_by_role("textbox", name=t("masks_second_label", "zh-TW"))
    second.fill("貓")
    with expect_rerun(page):
        second.press("Enter")
    _painted(page)


# --- positions ---------------------------------------------------------------------------------
def test_positions_head_view_and_shuffle_in_both_languages(page: Page, app_server: str) -> None:
    open_page(page, app_server, "positions", SMALL)
    main = main_area(page)
    assert _painted(page) == 5  # without and with positions, each twice, and the table
    for lang in ("en", "zh-TW"):
        head = main.get_by_role("combobox", name=t("positions_head_label", lang))
        if lang != "en":
            set_language(page, lang)
            assert _painted(page) == 3
            # what was picked in English is still picked, now labelled in Chinese
            expect(head).to_have_value(t("head_title", lang, i=1))
            view = t("positions_view_positional", lang)
            expect(_selected(main, t("positions_view_label", lang))).to_have_text([view])
        with expect_rerun(page):
            pick_option(page, head, t("head_title", lang, i=1 if lang == "en" else 0))
        _painted(page)
        view = t("positions_view_label", lang)
        with expect_rerun(page):
            _segment(main, view, t("positions_view_plain", lang)).click()
        assert _painted(page) == 3
        with expect_rerun(page):
            _segment(main, view, t("positions_view_positional", lang)).click()
        assert _painted(page) == 3
        with expect_rerun(page):
            main.get_by_role("button", name=t("positions_shuffle", lang)).click()
        seed = 1 if lang == "en" else 2
        expect(main.get_by_text(t("positions_seed_caption", lang, seed=seed))).to_be_visible()
        assert _painted(page) == 3
        screenshot(page, f"widgets-positions-{lang}")
    with expect_rerun(page):
        _segment(
            main, t("positions_view_label", "zh-TW"), t("positions_view_both", "zh-TW")
        ).click()
    assert _painted(page) == 5


# --- quiz --------------------------------------------------------------------------------------
def test_quiz_rounds_in_both_languages(page: Page, app_server: str) -> None:
    wrong = expected_errors("quiz_wrong")  # a wrong guess is shown in red, by design
    open_page(page, app_server, "quiz", SMALL)
    main = main_area(page)
    for lang in ("en", "zh-TW"):
        if lang != "en":
            set_language(page, lang)
        guesses = main.get_by_role("radiogroup", name=t("quiz_guess_label", lang))
        with expect_rerun(page):
            guesses.locator("label").nth(1).click()  # the round may be a toy model's
        with expect_rerun(page):
            main.get_by_role("button", name=t("quiz_submit", lang)).click()
        wait_for_heatmaps(page, 1)
        assert _painted(page, allow_errors=wrong) == 2  # the matrix and the clue (scores)
        screenshot(page, f"widgets-quiz-{lang}")
        with expect_rerun(page):
            main.get_by_role("button", name=t("quiz_next", lang)).click()
        assert _painted(page) == 0  # the next matrix is hidden again
    expect(main.get_by_text("/ 2", exact=False).first).to_be_visible()  # two answered
    with expect_rerun(page):
        main.get_by_role("button", name=t("quiz_reset", "zh-TW")).click()
    _painted(page)


# --- train -------------------------------------------------------------------------------------
def test_train_task_steps_and_replay(page: Page, app_server: str) -> None:
    open_page(page, app_server, "train", {"pace": "fast"})  # not the ~10 s a class watches
    main = main_area(page)
    wait_for_heatmaps(page, 1)
    set_language(page, "zh-TW")
    with expect_rerun(page):
        pick_option(
            page,
            main.get_by_role("combobox", name=t("train_task_label", "zh-TW")),
            t("train_task_previous", "zh-TW"),
        )
    steps = main.get_by_role("spinbutton", name=t("train_steps_label", "zh-TW"))
    steps.fill("40")
    with expect_rerun(page):
        steps.press("Enter")
    main.get_by_role("button", name=t("train_run_label", "zh-TW")).click()
    done = re.escape(t("train_done", "zh-TW", steps=40, seconds=0.0)).replace(r"0\.0", r"[\d.]+")
    expect(main.get_by_text(re.compile(done))).to_be_visible(timeout=WAIT_MS)
    assert _painted(page) == 3  # target, curves, heads
    with expect_rerun(page):
        main.get_by_role("slider", name=t("train_replay_label", "zh-TW")).press("Home")
    assert _painted(page) == 3
    set_language(page, "en")
    assert _painted(page) == 3
    screenshot(page, "widgets-train")


# --- pretrained --------------------------------------------------------------------------------
def test_pretrained_views_layer_and_heads(page: Page, app_server: str) -> None:
    open_page(page, app_server, "pretrained", {"text": ARTICLE})
    main = main_area(page)
    wait_for_heatmaps(page, 1)
    view = t("pretrained_view_label", "en")
    with expect_rerun(page):
        _segment(main, view, t("pretrained_view_layer", "en")).click()
    wait_for_heatmaps(page, 12)
    with expect_rerun(page):
        main.get_by_role("slider", name=t("pretrained_layer_label", "en")).press("End")
    wait_for_heatmaps(page, 12)
    _painted(page)
    set_language(page, "zh-TW")
    with expect_rerun(page):
        _segment(
            main, t("pretrained_view_label", "zh-TW"), t("pretrained_view_contrast", "zh-TW")
        ).click()
    assert _painted(page) == 2
    with expect_rerun(page):
        pick_option(
            page,
            main.get_by_role("combobox", name=t("pretrained_own_head_label", "zh-TW")),
            "1",
        )
    with expect_rerun(page):
        main.get_by_text(t("pretrained_hide_special_label", "zh-TW"), exact=True).click()
    assert _painted(page) == 2
    screenshot(page, "widgets-pretrained")
