"""A lecturer's whole lesson, scripted, in real Chromium: the walk that would have caught
the language-switch crash (switch the language, then click anything: the browser sent the
old language's label and the app crashed).

Load → 繁體中文 → type a sentence → change every sidebar widget → open every page from the
sidebar's navigation and operate at least one of its widgets (train a model, play a quiz
round, pick a pretrained view, edit a hand-made cell, ...) → back to English → a few more
steps. After EVERY step: no exception box, no error box (except the quiz's red "not this
time" after a wrong guess), no traceback in the server's log, every chart painted, and the
settings that were chosen still held by both the address bar and the sidebar's widgets.
Each page, once its steps are done in 繁體中文, speaks Chinese throughout (its strings
gathered and checked as tests/browser/language.py says; the English interface has its own
walk, test_language_browser.py). Screenshots of key steps: tests/artifacts/walk-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from attention_core.attention_file import attention_bytes
from attention_core.handmade import MAX_HANDMADE_TOKENS
from attention_core.tokenize import tokenize

from .checks import assert_atlas_heatmaps, assert_atlas_points, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .language import foreign_text, toolbar_titles
from .server import ARTIFACTS_DIR, ServerLog
from .waits import open_page, wait_for_heatmaps
from .walk import Walk
from .widgets import edit_cell, pick_option, sidebar

pytestmark = pytest.mark.browser
SENTENCE = "我愛自然語言處理，也愛注意力。"
EXAMPLE = "貓坐在墊子上，因為它很累。"  # one of the sidebar's examples (data/examples.json)
SENTENCE_B = "The animal didn't cross the street because it was too busy."  # minimal pairs


# --- what the walk does on each page (the page's url path → its steps) -----------------------
def heatmaps_page(walk: Walk) -> None:
    box = walk.combobox("highlight_label")
    walk.step("highlight a token", lambda: pick_option(walk.page, box, walk.labels()[1]))
    walk.step("add the mean", walk.main.get_by_text(walk.tr("show_mean_label"), exact=True).click)
    wait_for_heatmaps(walk.page, walk.heads() + 1)


def compare_page(walk: Walk) -> None:
    configs = walk.segment("compare_mode_label", walk.tr("compare_mode_configs"))
    walk.step("compare two configurations", configs.click, shot="compare-configs")
    up = walk.main.locator('[data-testid="stNumberInput"]').first.get_by_test_id(
        "stNumberInputStepUp"
    )
    walk.step("configuration B: next seed", up.click)
    heads = walk.segment("compare_mode_label", walk.tr("compare_mode_heads"))
    walk.step("back to the heads of one configuration", heads.click)


def handmade_page(walk: Walk) -> None:
    grid = walk.main.locator('[data-testid="stDataFrame"]').first
    walk.step("edit a cell", lambda: edit_cell(walk.page, grid, 0, 0, "0.3"))
    normalise = walk.main.get_by_role("button", name=walk.tr("handmade_normalise"))
    walk.step("normalise the rows", normalise.click)
    load = walk.main.get_by_role("button", name=walk.tr("handmade_load_sidebar"))
    walk.step("use the sidebar's sentence", load.click, shot="handmade")
    tokens = [tok.label for tok in tokenize(walk.expected["text"], walk.expected["tokenizer"])]
    n = min(len([tok for tok in tokens if tok.strip() and tok != "|"]), MAX_HANDMADE_TOKENS)
    (trace,) = wait_for_heatmaps(walk.page, 1)
    assert trace["z_shape"] == (n, n)


def steps_page(walk: Walk) -> None:
    following = walk.main.get_by_role("button", name=walk.tr("steps_next"))
    walk.step("next step", following.click)
    walk.step("next step again", following.click)
    query = walk.combobox("steps_query_label")
    walk.step("follow another query", lambda: pick_option(walk.page, query, walk.labels()[2]))


def scaling_page(walk: Walk) -> None:
    keys = walk.main.get_by_role("slider", name=walk.tr("scaling_keys_label"))
    walk.step("more keys per query", lambda: keys.press("ArrowRight"))


def masks_page(walk: Walk) -> None:
    head = walk.combobox("masks_head_label")
    walk.step("every head", lambda: pick_option(walk.page, head, walk.tr("masks_all_heads")))
    wait_for_heatmaps(walk.page, walk.heads(), chart=0)
    second = walk.segment("masks_sentence_label", walk.tr("masks_sentence", i=2))
    walk.step("the second sentence's mask", second.click, shot="masks")


def positions_page(walk: Walk) -> None:
    head = walk.combobox("positions_head_label")
    walk.step("head 1", lambda: pick_option(walk.page, head, walk.tr("head_title", i=1)))
    plain = walk.segment("positions_view_label", walk.tr("positions_view_plain"))
    walk.step("without positions only", plain.click)
    shuffle = walk.main.get_by_role("button", name=walk.tr("positions_shuffle"))
    walk.step("shuffle the words", shuffle.click, shot="positions")


def quiz_page(walk: Walk) -> None:
    label = walk.tr("quiz_guess_label")
    # every question starts without a guess, also after the settings changed mid-round;
    # the round may come from a toy model or the pretrained one, so its own options are read
    group = walk.main.get_by_role("radiogroup", name=label)
    if group.count():  # a radio per token (up to CELL_TEXT_MAX), else a selectbox
        expect(group.locator("input:checked")).to_have_count(0)
        walk.step("guess", group.locator("label").nth(1).click)
    else:
        box = walk.main.get_by_role("combobox", name=label)
        expect(box).to_have_value("")
        walk.step("guess", lambda: box.press("ArrowDown") or box.press("Enter"))
    submit = walk.main.get_by_role("button", name=walk.tr("quiz_submit"))
    walk.step("check the guess", submit.click, shot="quiz")
    wait_for_heatmaps(walk.page, 1)  # the revealed matrix


def train_page(walk: Walk) -> None:
    steps = walk.main.get_by_role("spinbutton", name=walk.tr("train_steps_label"))

    def fewer_steps() -> None:
        steps.fill("60")
        steps.press("Enter")

    walk.step("60 training steps", fewer_steps)
    # the Fast pace, as a lecturer who does not want the class to wait picks it (the default
    # spreads any run over ~10 s; test_train_browser.py watches a run at that pace)
    walk.step("fast pace", walk.segment("train_pace_label", walk.tr("train_pace_fast")).click)
    run = walk.main.get_by_role("button", name=walk.tr("train_run_label"))

    def train() -> None:
        run.click()
        done = re.escape(walk.tr("train_done", steps=60, seconds=0.0)).replace(r"0\.0", r"[\d.]+")
        expect(walk.main.get_by_text(re.compile(done))).to_be_visible(timeout=WAIT_MS)

    walk.step("train and wait for the end", train, shot="train")
    wait_for_heatmaps(walk.page, 2, chart=1)  # the trained heads (under the controls)


def glossary_page(walk: Walk) -> None:
    download = walk.main.get_by_role("button", name=walk.tr("glossary_download"))

    def fetch() -> None:
        with walk.page.expect_download() as info:
            download.click()
        assert info.value.suggested_filename.endswith(".csv")

    walk.step("download the glossary", fetch, rerun=False)


def pretrained_page(walk: Walk) -> None:
    layer = walk.segment("pretrained_view_label", walk.tr("pretrained_view_layer"))
    walk.step("one layer", layer.click)
    wait_for_heatmaps(walk.page, 12)
    contrast = walk.segment("pretrained_view_label", walk.tr("pretrained_view_contrast"))
    walk.step("trained vs untrained", contrast.click, shot="pretrained")


def write_page(walk: Walk) -> None:
    following = walk.main.get_by_role("button", name=walk.tr("write_next"))
    walk.step("write one token more", following.click)
    branch = walk.main.locator(".st-key-write_alt_1 button")
    walk.step("branch off on the second choice", branch.click, shot="write-branch")


def explain_page(walk: Walk) -> None:
    occlusion = walk.segment("explain_method", walk.tr("explain_method_occlusion"))
    walk.step("attribution by occlusion", occlusion.click, shot="explain")


def lens_page(walk: Walk) -> None:
    rollout = walk.segment("lens_kind_label", walk.tr("lens_kind_rollout"))
    walk.step("attention rollout", rollout.click, shot="lens-rollout")
    head_view = walk.segment("lens_view_label", walk.tr("lens_view_head"))
    walk.step("the head view", head_view.click)
    ablation = walk.segment("lens_view_label", walk.tr("lens_view_ablation"))
    walk.step("knock heads out, ranked", ablation.click, shot="lens-ablation")


def minimal_pairs_page(walk: Walk) -> None:
    token = walk.combobox("pairs_token_label")
    walk.step("follow another token", lambda: pick_option(walk.page, token, "2:animal"))
    second = walk.main.get_by_role("textbox", name=walk.tr("pairs_b_label"))

    def edit() -> None:
        second.fill(SENTENCE_B)
        second.press("Enter")

    walk.step("edit sentence B", edit, shot="minimal-pairs")


def attention_file_page(walk: Walk) -> None:
    path = ARTIFACTS_DIR / "課堂注意力.safetensors"  # a Chinese lesson's file, named in Chinese
    weights = np.full((2, 2, 3, 3), 1 / 3, dtype=np.float32)  # (L, H, n, n), uniform rows
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path.write_bytes(attention_bytes(weights, ["中和", "有", "<i>x</i>"], "safetensors"))
    uploader = walk.main.locator('[data-testid="stFileUploader"] input[type="file"]')
    walk.step("open an attention file", lambda: uploader.set_input_files(path))
    wait_for_heatmaps(walk.page, 1)
    walk.step(
        "its heads, one layer",
        walk.segment("pretrained_view_label", walk.tr("file_view_layer")).click,
    )
    wait_for_heatmaps(walk.page, 2)
    walk.step("close it", walk.main.get_by_role("button", name=walk.tr("file_close")).click)


def classroom_page(walk: Walk) -> None:
    # While a class is open the teacher's view refreshes itself (4 times a second), so the
    # app is never idle and the walk's checks could not settle: one step opens a class,
    # pushes the sidebar sentence's question, sees it, and closes the class again.
    # (tests/browser/test_classroom_browser.py plays a whole poll with phones.)
    def lesson() -> None:
        walk.main.get_by_role("button", name=walk.tr("poll_open")).click()
        walk.main.get_by_role("button", name=walk.tr("poll_push")).click()
        expect(walk.main.get_by_role("button", name=walk.tr("poll_reveal"))).to_be_enabled(
            timeout=WAIT_MS
        )
        screenshot(walk.page, f"walk-{walk.number:02d}-classroom-{walk.lang}")
        walk.main.get_by_role("button", name=walk.tr("poll_close")).click()
        expect(walk.main.get_by_role("button", name=walk.tr("poll_open"))).to_be_visible(
            timeout=WAIT_MS
        )

    walk.step("open a class, push a question, close it", lesson)


def atlas_page(walk: Walk) -> None:
    # an empty cache (no index built): the shipped reader's map, its 4 × 4 heads as points
    assert_atlas_points(walk.page, 16)
    expect(walk.main.get_by_text(walk.tr("atlas_build_more"))).to_be_visible(timeout=WAIT_MS)
    compare = walk.segment("atlas_view_label", walk.tr("atlas_view_compare"))
    walk.step("models side by side", compare.click)
    assert_atlas_heatmaps(walk.page, [(1, 4), (4, 4), (6, 12)])  # the three shipped indexes


PAGE_STEPS: dict[str, Callable[[Walk], None]] = {
    "": heatmaps_page,
    "compare": compare_page,
    "handmade": handmade_page,
    "steps": steps_page,
    "scaling": scaling_page,
    "masks": masks_page,
    "positions": positions_page,
    "quiz": quiz_page,
    "train": train_page,
    "glossary": glossary_page,
    "pretrained": pretrained_page,
    "write": write_page,
    "lens": lens_page,
    "explain": explain_page,
    "minimal_pairs": minimal_pairs_page,
    "classroom": classroom_page,
    "attention_file": attention_file_page,
    "atlas": atlas_page,
}


def _nav_paths(page: Page) -> list[str]:
    hrefs = (
        sidebar(page)
        .locator('[data-testid="stSidebarNavLink"]')
        .evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
    )
    return [urlsplit(href).path.strip("/") for href in hrefs]


def test_a_lecturer_walks_through_every_page_in_both_languages(
    page: Page, app_server: str, server_log: ServerLog
) -> None:
    walk = Walk(page, server_log)
    open_page(page, app_server)
    walk.step("load the app", shot="loaded")
    wait_for_heatmaps(page, 4)

    # --- 中文, and every sidebar widget -----------------------------------------------------
    assert "Download plot as a PNG" in toolbar_titles(page)
    walk.language("zh-TW")
    toolbars = toolbar_titles(page)  # Plotly's own tooltips follow the switch
    assert "下載圖表為 PNG 圖檔" in toolbars and "縮放" in toolbars and "平移" in toolbars, toolbars
    assert not {"Download plot as a PNG", "Zoom", "Pan", "Reset axes"} & set(toolbars), toolbars
    wait_for_heatmaps(page, 4)
    walk.type_sentence(SENTENCE)
    tokenizer = walk.combobox("tokenizer_label", area=walk.side)
    walk.step(
        "tokenizer: characters",
        lambda: pick_option(page, tokenizer, walk.tr("tokenizer_char")),
        tokenizer="char",
    )
    attention = walk.side.get_by_role("radiogroup", name=walk.tr("attention_label"))
    single = attention.get_by_text(walk.tr("attention_single"), exact=True)
    walk.step("single-head", single.click, attention="single")
    wait_for_heatmaps(page, 1)
    expect(walk.side.get_by_role("slider", name=walk.tr("num_heads_label"))).to_be_disabled()
    multi = attention.get_by_text(walk.tr("attention_multi"), exact=True)
    walk.step("multi-head", multi.click, attention="multi")
    walk.number_input("embed_dim", 12)  # 4 heads still divide 12
    slider = walk.side.get_by_role("slider", name=walk.tr("num_heads_label"))
    walk.step("num_heads: one notch up", lambda: slider.press("ArrowRight"), num_heads="6")
    walk.number_input("seed", 7)
    walk.toggle("causal")
    walk.toggle("positional")
    wait_for_heatmaps(page, 6)
    example = walk.combobox("example_label", area=walk.side)
    walk.step(
        "pick an example", lambda: pick_option(page, example, EXAMPLE), text=EXAMPLE, shot="sidebar"
    )
    expect(example).to_have_value("")  # the picker hands its sentence over and empties

    # --- every page from the navigation, one widget or more on each ------------------------
    paths = _nav_paths(page)
    unknown = sorted(set(paths) - set(PAGE_STEPS))
    assert not unknown, f"pages the walk has no steps for (add them to PAGE_STEPS): {unknown}"
    english: list[str] = []  # each page, once its steps are done, in Chinese throughout
    typed = " ".join((SENTENCE, EXAMPLE, SENTENCE_B))
    for path in paths[1:] + paths[:1]:  # the landing page last: it is open already
        walk.nav(path)
        PAGE_STEPS[path](walk)
        english += foreign_text(page, "zh-TW", path, typed)
    assert walk.visited == set(paths)
    assert not english, "the Chinese interface shows English:\n" + "\n".join(english)

    # --- back to English, and a few steps more -------------------------------------------
    walk.language("en")
    wait_for_heatmaps(page, walk.heads() + 1)  # the mean is still shown
    walk.number_input("seed", 8)
    walk.toggle("causal")
    walk.nav("masks")
    head = walk.combobox("masks_head_label")
    expect(head).to_have_value(walk.tr("masks_all_heads"))  # kept from the 中文 visit
    walk.step("head 0", lambda: pick_option(page, head, walk.tr("head_title", i=0)))
    walk.nav("quiz")
    quiz_page(walk)
    walk.nav("handmade")
    grid = walk.main.locator('[data-testid="stDataFrame"]').first
    walk.step("edit a cell in English", lambda: edit_cell(page, grid, 1, 1, "0.5"))
    walk.nav("")
    walk.type_sentence("The cat sat on the mat.")
    walk.step("the end", shot="end")
