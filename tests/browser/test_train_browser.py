"""The "Train attention live" page in real headless Chromium.

What AppTest cannot show: the live loop drawing into the page while it trains, the Stop
button cutting a running script off (Streamlit interrupts the run; the next one must
finish the training as stopped), Plotly painting the trained heads, and st.switch_page to
the Compare page in a real server. Screenshot: tests/artifacts/train.png.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from bench.chromium import RECORD_FRAMES_JS, STOP_FRAMES_JS

from .checks import assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS as WAIT_MS
from .waits import expect_rerun, open_page, wait_for_heatmaps
from .widgets import main_area as _main
from .widgets import pick_option, set_language

pytestmark = pytest.mark.browser
HEADS_CHART = 1  # charts on the page: the target pattern, the heads, the curves
TASK_INDUCTION = "Induction: continue a repeated pattern (2 layers)"


def _open_train(
    page: Page, base_url: str, params: dict | None = None, *, pace: str | None = "fast"
) -> None:
    """Open the page (at the "fast" pace unless told: the default spreads a run over
    ~10 s) and wait until its target pattern is painted: open_page can return after a
    first, empty run of a fresh session, and typing into widgets that are still being
    drawn can send them odd values."""
    params = {**({"pace": pace} if pace else {}), **(params or {})}
    open_page(page, base_url, "train", params)
    wait_for_heatmaps(page, 1, chart=0)
    assert_no_exception(page)


def _set_steps(page: Page, steps: int) -> None:
    """Type the number of training steps and wait for the rerun that commits it."""
    box = _main(page).get_by_role("spinbutton", name="Training steps")
    with expect_rerun(page):
        box.fill(str(steps))
        box.press("Enter")


def test_default_reverse_trains_to_a_sharp_anti_diagonal(page, app_server):
    _open_train(page, app_server)
    main = _main(page)
    expect(main.get_by_role("heading", name="Train attention live")).to_be_visible()
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 300 steps")).to_be_visible(timeout=WAIT_MS)
    assert_no_exception(page)
    traces = wait_for_heatmaps(page, 2, chart=HEADS_CHART)
    assert [t["z_shape"] for t in traces] == [(6, 6), (6, 6)]
    # a head reads the mirror position in every row, as painted in the browser
    best = [np.argmax(np.array(t["z"]), axis=1).tolist() for t in traces]
    assert [5, 4, 3, 2, 1, 0] in best
    accuracy = main.locator('[data-testid="stMetricValue"]').first.inner_text()
    assert float(accuracy.rstrip("%")) >= 95.0
    expect(main.get_by_role("slider")).to_have_count(3)  # lr, num_heads, replay
    # the heads the class watches learn sit right under the controls, not a screen below
    button = main.get_by_role("button", name="▶ Train").bounding_box()
    heads = page.locator(".studio-chart.js-plotly-plot").nth(HEADS_CHART).bounding_box()
    assert button and heads and heads["y"] - button["y"] <= 450, (button, heads)
    screenshot(page, "train")


def test_stop_ends_a_long_training_and_keeps_the_steps_so_far(page, app_server):
    _open_train(page, app_server)
    main = _main(page)
    _set_steps(page, 5000)
    main.get_by_role("button", name="▶ Train").click()
    # the live view: progress and the heads are drawn while the script still runs
    expect(main.get_by_text(re.compile(r"Step [1-9]\d* of 5000"))).to_be_visible(timeout=WAIT_MS)
    expect(main.locator(".studio-chart")).to_have_count(3)
    main.get_by_role("button", name="■ Stop").click()
    stopped = main.get_by_text(re.compile(r"Stopped at step \d+ of 5000"))
    expect(stopped).to_be_visible(timeout=WAIT_MS)
    step = int(re.search(r"step (\d+)", stopped.inner_text()).group(1))
    assert 0 < step < 5000
    assert_no_exception(page)
    expect(main.get_by_role("button", name="▶ Train")).to_be_enabled()
    expect(main.get_by_role("button", name="■ Stop")).to_be_disabled()
    wait_for_heatmaps(page, 2, chart=HEADS_CHART)
    screenshot(page, "train-stopped")


def test_send_to_compare_opens_compare_with_the_settings_kept(page, app_server):
    _open_train(page, app_server, {"text": "中和有一個永和路", "seed": 5})
    main = _main(page)
    _set_steps(page, 20)
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 20 steps")).to_be_visible(timeout=WAIT_MS)
    main.get_by_role("button", name="Compare these trained heads →").click()
    expect(main.get_by_role("heading", name="Compare attention heads")).to_be_visible(
        timeout=WAIT_MS
    )
    page.wait_for_url(re.compile(r"/compare\?"), timeout=WAIT_MS)
    assert_no_exception(page)
    query = parse_qs(urlsplit(page.url).query)
    assert query["text"] == ["中和有一個永和路"] and query["seed"] == ["5"]


# --- watching a run, playback, the induction detector, in both languages ---------------------


def test_a_run_is_watched_live_at_the_default_pace(page, app_server):
    """A live run paints its snapshots as they arrive: three or more of its 31 seen (10 were
    on a machine also training a model, so the other test worker need not be paused)."""
    _open_train(page, app_server, pace=None)
    main = _main(page)
    # the default pace: the run takes ~10 s on screen, drawn snapshot by snapshot
    expect(main.get_by_role("radio", name="Watch (~10 s)")).to_be_visible()
    page.evaluate(RECORD_FRAMES_JS, 2)
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 300 steps")).to_be_visible(timeout=WAIT_MS)
    frames = page.evaluate(STOP_FRAMES_JS)
    # 31 snapshots at 10 steps each; a busy browser paints two that arrive within one of
    # its frames as one (18 of 31 seen in CI, 10 on a machine also training a model): a
    # picture between the first and the last is what proves a live run. How many, and
    # over how many seconds, is the machine's pace: `python -m bench pace` measures it.
    assert len(frames) >= 3, frames
    assert "pace=watch" in page.url
    assert_no_exception(page)


def test_a_run_is_replayed_and_an_induction_head_is_named_in_both_languages(page, app_server):
    """The rest of a lesson on the page, at the pace a teacher picks when in a hurry (only
    the watched run above needs the machine to itself)."""
    _open_train(page, app_server)
    main = _main(page)
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 300 steps")).to_be_visible(timeout=WAIT_MS)

    # playback from the start, at the watched pace; Pause stops it on the snapshot on screen
    with expect_rerun(page):
        main.get_by_role("radio", name="Watch (~10 s)").click()
    page.evaluate(RECORD_FRAMES_JS, 2)
    main.get_by_role("button", name="▶ Play").click()
    expect(main.get_by_role("button", name="❚❚ Pause")).to_be_enabled(timeout=WAIT_MS)
    # until the picture has moved (the frames asserted below), not a fixed 3 s of playback
    page.wait_for_function("(n) => window.__frames.length >= n", arg=5, timeout=WAIT_MS)
    with expect_rerun(page):
        # Each playback frame mounts its charts under new keys (ui/train_playback.py), so the
        # page reflows under the button several times a second and Playwright's hit test can
        # keep landing on a chart until playback ends (seen under CI). The click itself, as
        # the button receives it, is what is tested here; the reflow is a known defect.
        main.get_by_role("button", name="❚❚ Pause").dispatch_event("click")
    frames = page.evaluate(STOP_FRAMES_JS)
    assert len(frames) >= 5, frames  # the picture moved
    replay = main.get_by_role("slider", name=re.compile("Replay"))
    paused_at = int(replay.get_attribute("aria-valuetext") or replay.get_attribute("aria-valuenow"))
    assert 0 < paused_at < 300, paused_at
    expect(main.get_by_role("button", name="▶ Play")).to_be_enabled()
    screenshot(page, "train-playback")

    # the induction task at the fast pace: the detector names the heads
    with expect_rerun(page):
        main.get_by_role("radio", name="Fast").click()
    with expect_rerun(page):
        pick_option(page, main.get_by_role("combobox", name=re.compile("Task")), TASK_INDUCTION)
    main.get_by_role("button", name="▶ Train").click()
    expect(main.get_by_text("Trained 600 steps")).to_be_visible(timeout=WAIT_MS)
    named = main.get_by_text(re.compile(r"layer 1 · head 0: induction head \(score"))
    expect(named).to_be_visible()
    expect(main.get_by_text(re.compile(r"previous-token head \(score")).first).to_be_visible()
    wait_for_heatmaps(page, 3, chart=HEADS_CHART)  # target, heads, curves, detector
    assert_no_exception(page)
    screenshot(page, "train-induction")

    # switch language mid-session and keep using the page's widgets
    set_language(page, "zh-TW")
    expect(main.get_by_text(re.compile(r"第 1 層 · 頭 0：歸納頭（分數"))).to_be_visible()
    with expect_rerun(page):
        main.get_by_text("訓練前後並排", exact=True).click()
    wait_for_heatmaps(page, 3, chart=HEADS_CHART)  # before and after, where the heads were
    wait_for_heatmaps(page, 3, chart=HEADS_CHART + 1)
    assert_no_exception(page)
    screenshot(page, "train-induction-zh")

    # the trained weights through Step by step: the URL names the run (the session's 2nd)
    main.get_by_role("button", name="用這些權重逐步講解 →").click()
    page.wait_for_url(re.compile(r"/steps\?(.*&)?trained=2"), timeout=WAIT_MS)
    caption = main.get_by_text(re.compile(r"訓練好的權重：第 2 次訓練：歸納"))
    expect(caption).to_be_visible(timeout=WAIT_MS)
    wait_for_heatmaps(page, 1, chart=0)  # X of the example sequence
    assert_no_exception(page)
    screenshot(page, "steps-trained-zh")
