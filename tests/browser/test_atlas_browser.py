"""The head atlas in real Chromium, on a server of its own whose index is a fixture built
here (24 sentences, untrained module and trained reader): the map painted with every head,
a click on a point choosing that head (Plotly's click sent back to Python), its top
sentence's attention drawn, 中文 mid-session, and the queries-and-keys view. Screenshots:
tests/artifacts/atlas-en.png, atlas-zh-TW.png, atlas-qk.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from attention_core.atlas.query import Atlas
from attention_core.i18n import t

from .checks import assert_no_exception, screenshot
from .chromium import new_context
from .server import serve_app
from .waits import expect_rerun, open_page, plotly_traces, wait_for_charts
from .widgets import main_area, set_language

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def atlas_server(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    from tests.support.atlas import build_fixture_index

    index = build_fixture_index(tmp_path_factory.mktemp("atlas-browser") / "index")
    before = os.environ.get("ATTENTION_STUDIO_ATLAS")
    os.environ["ATTENTION_STUDIO_ATLAS"] = str(index)  # the server inherits it
    try:
        with serve_app("server-atlas") as (url, log):
            yield url, index
        log.assert_no_traceback(what="the atlas browser test")
    finally:
        if before is None:
            os.environ.pop("ATTENTION_STUDIO_ATLAS", None)
        else:
            os.environ["ATTENTION_STUDIO_ATLAS"] = before


def _click_point(page: Page, x: float, y: float) -> None:
    """Click the map's point at data coordinates (x, y)."""
    box = page.evaluate(
        """([x, y]) => {
            const gd = document.querySelectorAll('.studio-chart')[0];
            const l = gd._fullLayout, r = gd.getBoundingClientRect();
            return [r.left + l._size.l + l.xaxis.d2p(x), r.top + l._size.t + l.yaxis.d2p(y)];
        }""",
        [x, y],
    )
    page.mouse.click(box[0], box[1])


def test_the_atlas_walk_in_both_languages(atlas_server: tuple[str, Path], browser: Browser) -> None:
    url, index = atlas_server
    context = new_context(browser)
    page = context.new_page()
    try:
        open_page(page, url, "atlas", {"lang": "en", "text": "中和有一個永和路"})
        wait_for_charts(page)
        assert_no_exception(page)
        expect(main_area(page).get_by_text(t("atlas_title", "en"))).to_be_visible()
        head_map = Atlas.open("reader", index).head_map()
        points = plotly_traces(page, 0)[0]
        assert len(points["x"]) == 16
        # click the point of layer 3, head 0: the page picks that head
        target = 12
        with expect_rerun(page):
            _click_point(
                page, head_map.values["previous"][target], head_map.values["entropy"][target]
            )
        wait_for_charts(page)
        expect(
            main_area(page).get_by_text(t("atlas_head_name", "en", l=3, h=0)).first
        ).to_be_visible()
        top = Atlas.open("reader", index).top_sentences(3, 0, "previous", k=1)[0]
        expect(main_area(page).get_by_text(top["text"]).first).to_be_visible()
        screenshot(page, "atlas-en")

        set_language(page, "zh-TW")
        wait_for_charts(page)
        assert_no_exception(page)
        expect(main_area(page).get_by_text(t("atlas_title", "zh-TW"))).to_be_visible()
        expect(
            main_area(page).get_by_text(t("atlas_head_name", "zh-TW", l=3, h=0)).first
        ).to_be_visible()
        screenshot(page, "atlas-zh-TW")

        with expect_rerun(page):
            main_area(page).get_by_role("radio", name=t("atlas_view_qk", "zh-TW")).click()
        wait_for_charts(page)
        assert_no_exception(page)
        names = {tr["name"] for tr in plotly_traces(page, 0)}
        assert t("atlas_mine_name", "zh-TW") in names
        screenshot(page, "atlas-qk")
        pca = sorted(x for tr in plotly_traces(page, 0) for x in tr["x"])

        # the same points laid out by t-SNE: other coordinates, axes without components
        with expect_rerun(page):
            main_area(page).get_by_role("radio", name=t("atlas_qk_method_tsne", "zh-TW")).click()
        wait_for_charts(page)
        assert_no_exception(page)
        tsne = sorted(x for tr in plotly_traces(page, 0) for x in tr["x"])
        assert len(tsne) == len(pca) and tsne != pca
        expect(main_area(page).get_by_text("第 1 主成分")).to_have_count(0)
        screenshot(page, "atlas-qk-tsne")
    finally:
        context.close()


SHOTS = Path(__file__).resolve().parents[2] / "docs" / "images"


def _shot(page: Page, name: str) -> None:
    """The main area down to its last chart, 256 colours, as docs/images/<name>.png."""
    from PIL import Image

    page.set_viewport_size({"width": 1400, "height": 3200})
    wait_for_charts(page)
    bottom = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('.studio-chart')]"
        ".map((c) => c.getBoundingClientRect().bottom))"
    )
    path = SHOTS / f"{name}.png"
    page.screenshot(
        path=str(path), clip={"x": 0, "y": 0, "width": 1400, "height": int(bottom) + 60}
    )
    with Image.open(path) as shot:
        flat = shot.convert("RGB").quantize(256, Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    flat.save(path, optimize=True)


@pytest.mark.readme_shots  # writes tracked files from the indexes in default_index_dir()
def test_atlas_screenshots_for_readme(app_server: str, page: Page) -> None:
    """The atlas on the full held-out corpus (built beforehand with `python -m
    attention_core.atlas build --model M` for the three models), as the docs show it."""
    from attention_core.atlas.build import chunk_dirs, default_index_dir

    missing = [
        m for m in ("untrained", "reader", "minilm") if not chunk_dirs(default_index_dir() / m)
    ]
    assert not missing, (
        f"build the indexes first: python -m attention_core.atlas build --model {missing[0]}"
    )
    main = main_area(page)
    open_page(
        page, app_server, "atlas", {"lang": "zh-TW", "text": "小貓跳到桌子上，它把杯子推倒了。"}
    )
    with expect_rerun(page):
        main.get_by_role("radio", name=t("atlas_model_minilm", "zh-TW")).click()
    with expect_rerun(page):
        main.get_by_role("button", name=t("atlas_search_preset", "zh-TW")).click()
    with expect_rerun(page):
        main.get_by_text(t("atlas_mine_label", "zh-TW")).click()
    assert_no_exception(page)
    _shot(page, "atlas-map-zh-TW")
    open_page(page, app_server, "atlas", {"lang": "en", "text": "中和有一個永和路"})
    with expect_rerun(page):
        main.get_by_role("radio", name=t("atlas_view_qk", "en")).click()
    assert_no_exception(page)
    _shot(page, "atlas-qk-reader")
    with expect_rerun(page):
        main.get_by_role("radio", name=t("atlas_view_compare", "en")).click()
    assert_no_exception(page)
    _shot(page, "atlas-compare-en")
