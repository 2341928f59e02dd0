"""Section pace: the wall-clock figures the tests check only functionally.

- *places given back* (ui/slots.py): 4 × SLOTS script runs, each inside its place, each
  waiting 0.2 s inside `place_released` (a paced training run between two frames); the
  wall time until all are done. Released, they wait together: about 0.2 s. Had they kept
  their places it would be 4 × 0.2 s (tests/ui/test_slots.py checks that they all wait at
  once, not how long it takes).
- *watch pace* (the Train page, its default pace, ~10 s): one Chromium tab of a running
  server, ▶ Train on the default task (300 steps, 31 snapshots), until "Trained 300 steps":
  the distinct head pictures the browser painted and the seconds between the first and the
  last (tests/browser/test_train_browser.py checks that the run is drawn live).

The long map's zoom → exact tile (the page's own fetch → drawn clock) is `bench long`'s.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.app_server import streamlit_server
from bench.chromium import RECORD_FRAMES_JS, STOP_FRAMES_JS, VIEWPORT, chromium
from bench.tables import Table, fmt_s, median

__all__ = ["run"]

SLEEP_S = 0.2
REPEATS = 5
TIMEOUT_S = 120.0


def _places_given_back() -> float:
    """Seconds for 4 × SLOTS runs that each wait SLEEP_S with their place released."""
    from ui import slots

    def run() -> None:
        with slots.script_place(), slots.place_released():
            time.sleep(SLEEP_S)

    threads = [threading.Thread(target=run) for _ in range(4 * max(1, slots.SLOTS))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=TIMEOUT_S)
    return time.perf_counter() - started


def _watch_pace(browser: Any, server: Any) -> dict[str, float]:
    """One default-pace training run on the Train page: frames painted, their span, and
    click → "Trained 300 steps" shown."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(f"{server.url}/train", wait_until="commit")
        main = page.locator('[data-testid="stMain"]')
        train = main.get_by_role("button", name="▶ Train")
        expect(train).to_be_enabled(timeout=TIMEOUT_S * 1000)
        expect(main.get_by_role("radio", name="Watch (~10 s)")).to_be_checked()
        page.evaluate(RECORD_FRAMES_JS, 2)
        t0 = time.perf_counter()
        train.click()
        expect(main.get_by_text("Trained 300 steps")).to_be_visible(timeout=TIMEOUT_S * 1000)
        done = time.perf_counter() - t0
        frames = page.evaluate(STOP_FRAMES_JS)
        span = (frames[-1] - frames[0]) / 1000 if len(frames) > 1 else 0.0
        return {"frames": len(frames), "span": span, "done": done}
    finally:
        page.close()


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    from ui import slots

    repeats = 1 if quick else REPEATS
    given_back = [_places_given_back() for _ in range(repeats)]
    with streamlit_server() as server, chromium() as browser:
        server.wait_warm()
        watch = [_watch_pace(browser, server) for _ in range(1 if quick else 2)]
    table = Table(
        "Pace: what the tests check without a clock",
        ["what", "measured", "of", "expected"],
    )
    runs = 4 * max(1, slots.SLOTS)
    table.add(
        f"{runs} runs waiting {SLEEP_S} s with their place released (SLOTS {slots.SLOTS})",
        f"{fmt_s(median(given_back))} s",
        f"median of {repeats}",
        f"≈ {SLEEP_S} s (kept places: {runs // max(1, slots.SLOTS) * SLEEP_S:.1f} s)",
    )
    frames, span = median(w["frames"] for w in watch), median(w["span"] for w in watch)
    table.add(
        "Train page, watch pace: distinct head pictures painted",
        f"{frames:.0f}",
        f"median of {len(watch)} runs",
        "31 snapshots sent; a busy browser merges some",
    )
    table.add(
        "Train page, watch pace: first → last picture",
        f"{fmt_s(span, 1)} s",
        f"median of {len(watch)} runs",
        "≈ 10 s (≥ 6 s: spread over the pace, not dumped at the end)",
    )
    table.add(
        "Train page, watch pace: ▶ Train → 'Trained 300 steps'",
        f"{fmt_s(median(w['done'] for w in watch), 1)} s",
        f"median of {len(watch)} runs",
        "≈ 10 s",
    )
    table.notes.append(
        "the long map's zoom → exact tile painted (and the page's own fetch → drawn "
        "clock) is in `python -m bench long`."
    )
    return [table], {"places_given_back_s": given_back, "watch": watch}
