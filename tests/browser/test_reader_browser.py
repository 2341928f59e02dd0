"""The trained reader in real Chromium, as a lecturer in Taiwan would show it: the article's
中和有一個永和路 in zh-TW on a projector (1920 × 1080), the sidebar's 已訓練的讀者模型, its
four jieba words, another layer, the characters themselves, English mid-session, the
one-click contrast with the untrained module and back, and the same view on a phone
(390 × 844). Every picture is checked against the model's own numbers (computed here, in
the test's process, through attention_core). Screenshots: tests/artifacts/reader-*.png.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from attention_core.i18n import t
from attention_core.limits import EXACT
from attention_core.pipeline import analyze
from attention_core.reader.card import shipped_shape
from attention_core.settings import DEFAULT_TEXT, ModelSettings

from .checks import ARTIFACTS_DIR, assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .chromium import configure
from .waits import expect_rerun, open_page, wait_for_heatmaps
from .widgets import main_area, pick_option, set_language, sidebar, url_params

pytestmark = pytest.mark.browser
PROJECTOR = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}
SHAPE = shipped_shape()
FIRST = SHAPE.default_layer if SHAPE else 0  # the layer of the best same-word head (the card)
OTHER = 3 if FIRST != 3 else 0  # a layer chosen by hand


def expected(tokenizer: str, layer: int, weights: str = "trained") -> tuple[list[str], np.ndarray]:
    a = analyze(ModelSettings(text=DEFAULT_TEXT, tokenizer=tokenizer, weights=weights, layer=layer))
    return a.labels, a.weights


def heads_show(page: Page, labels: list[str], weights: np.ndarray) -> None:
    """Chart 0 holds one painted heatmap per head over `labels`, with exactly `weights`."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        traces = wait_for_heatmaps(page, len(weights), chart=0)
        if [tr["x"] for tr in traces] == [labels] * len(weights):
            break
        assert time.monotonic() < deadline, f"still {traces[0]['x']}, not {labels}"
        page.wait_for_timeout(200)
    drawn = np.array([tr["weights"] for tr in traces], dtype=np.float64)  # (H, n, n)
    np.testing.assert_allclose(drawn, weights, atol=EXACT, rtol=0)


def choose_radio(page: Page, label: str) -> None:
    with expect_rerun(page):
        sidebar(page).locator('[data-testid="stRadioOption"]', has_text=label).click()


def test_a_lecturer_shows_the_trained_reader_on_the_articles_sentence(page, app_server, browser):
    page.set_viewport_size(PROJECTOR)
    open_page(page, app_server, "", {"lang": "zh-TW", "tokenizer": "jieba"})
    assert_no_exception(page)
    untrained = analyze(ModelSettings(text=DEFAULT_TEXT, tokenizer="jieba"))
    heads_show(page, untrained.labels, untrained.weights)

    # 1. the sidebar's weights: the article's four words, pooled from the reader's characters
    choose_radio(page, t("weights_trained", "zh-TW"))
    labels, weights = expected("jieba", FIRST)
    assert labels == ["0:[BOS]", "1:中和", "2:有", "3:一個", "4:永和路"]
    heads_show(page, labels, weights)
    assert url_params(page)["weights"] == "trained" and url_params(page)["layer"] == str(FIRST)
    main = main_area(page)
    heading = t("learned_header", "zh-TW", layer=FIRST)
    expect(main.get_by_role("heading", name=heading)).to_be_visible()
    expect(sidebar(page).get_by_text(t("trained_fixed", "zh-TW", embed_dim=128, heads=4,
        head_dim=32, layers=4, context=64))).to_be_visible()  # fmt: skip
    assert_no_exception(page)
    screenshot(page, "reader-zh-TW-words")

    # 2. another layer, then the characters themselves
    layer_box = sidebar(page).get_by_role("combobox", name=t("layer_label", "zh-TW"))
    with expect_rerun(page):
        pick_option(page, layer_box, t("layer_option", "zh-TW", i=OTHER))
    heads_show(page, *expected("jieba", OTHER))
    assert url_params(page)["layer"] == str(OTHER)
    tokenizer_box = sidebar(page).get_by_role("combobox", name=t("tokenizer_label", "zh-TW"))
    with expect_rerun(page):
        pick_option(page, tokenizer_box, t("tokenizer_char", "zh-TW"))
    heads_show(page, *expected("char", OTHER))
    screenshot(page, "reader-zh-TW-characters")

    # 3. English mid-session: the same view, its words in English
    set_language(page, "en")
    heads_show(page, *expected("char", OTHER))
    expect(main.get_by_role("heading", name=t("learned_header", "en", layer=OTHER))).to_be_visible()
    assert_no_exception(page)

    # 4. one click to the untrained module and one click back; the layer is kept
    with expect_rerun(page):
        main.get_by_role("button", name=t("switch_to_untrained", "en")).click()
    seeded = analyze(ModelSettings(text=DEFAULT_TEXT, tokenizer="char"))
    heads_show(page, seeded.labels, seeded.weights)
    assert "weights" not in url_params(page) and "layer" not in url_params(page)
    with expect_rerun(page):
        main.get_by_role("button", name=t("switch_to_trained", "en")).click()
    heads_show(page, *expected("char", OTHER))
    assert url_params(page)["layer"] == str(OTHER)
    assert_no_exception(page)

    # 5. the link, opened on a student's phone: the same view, the heads on its screen
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        tab = configure(phone).new_page()
        tab.goto(page.url)
        heads_show(tab, *expected("char", OTHER))
        assert_no_exception(tab)
        chart = tab.locator(".studio-chart").first
        chart.scroll_into_view_if_needed()
        ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS_DIR / "reader-phone.png"))
    finally:
        phone.close()


EVERYDAY = "我們明天早上八點在學校門口集合。"  # one of the sidebar's everyday examples


def test_a_lecturer_shows_the_taught_word_head_on_an_everyday_sentence(page, app_server):
    """zh-TW on a projector: the sidebar's everyday example, the trained reader at the
    layer of the head taught its word, characters: every character known, the heads
    exactly the model's, that head named as taught with its everyday ratio; one click to
    the untrained module and back."""
    from attention_core.reader import load_shipped

    card = load_shipped().card
    layer, head = card["word_head"]
    words = card["everyday"]["same_word"]
    ratio = words["observed"][layer][head] / words["shuffled"][layer][head]
    page.set_viewport_size(PROJECTOR)
    params = {"lang": "zh-TW", "weights": "trained", "tokenizer": "char", "layer": str(layer)}
    open_page(page, app_server, "", params)
    example = sidebar(page).get_by_role("combobox", name=t("example_label", "zh-TW"))
    with expect_rerun(page):
        pick_option(page, example, EVERYDAY)
    want = analyze(ModelSettings(text=EVERYDAY, tokenizer="char", weights="trained", layer=layer))
    assert not want.unknown
    heads_show(page, want.labels, want.weights)
    main = main_area(page)
    taught = t("learned_taught", "zh-TW", head=t("head_title", "zh-TW", i=head), value=ratio)
    expect(main.get_by_text(taught).first).to_be_visible()
    assert ratio >= 2.0
    assert_no_exception(page)
    screenshot(page, "reader-zh-TW-everyday")
    with expect_rerun(page):
        main.get_by_role("button", name=t("switch_to_untrained", "zh-TW")).click()
    seeded = analyze(ModelSettings(text=EVERYDAY, tokenizer="char"))
    heads_show(page, seeded.labels, seeded.weights)
    with expect_rerun(page):
        main.get_by_role("button", name=t("switch_to_trained", "zh-TW")).click()
    heads_show(page, want.labels, want.weights)
    assert_no_exception(page)
