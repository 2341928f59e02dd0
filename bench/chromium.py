"""Headless Chromium for the benchmarks, and what "painted" means for a Plotly heatmap.

Debian's /usr/bin/chromium through Playwright (never `playwright install`). How Plotly
(plotly.js 3/4, the one Streamlit bundles) draws a heatmap trace: it computes every cell's
colour in JavaScript into a canvas — one pixel per cell when there are no gaps between
cells and the axes are evenly spaced (the "fast" path, scaled up by the browser with
`image-rendering: pixelated`), else one rectangle per cell — and puts the canvas into the
SVG as one `<image href="data:image/png;base64,...">` inside the trace's `g.hm` group
(under `g.heatmaplayer`). So a chart with P heatmap traces is painted when its graph div
(`.js-plotly-plot`, which holds `_fullData`) has P heatmap traces and P `g.hm image`
elements with a data: URL; the benchmark then waits two animation frames so the browser
has composited that frame too. Panels that attention_core/figures/heads.py sends as
pictures (layout images, for very large grids) are drawn as `g.imagelayer image` with the
PNG's data: URL and count the same way (image traces, `g.im image`, too: older versions of
the app drew them). Every such image must also have been decoded (`SVGImageElement.decode`)
before the two frames: the browser decodes a data: URL after it is set.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

__all__ = [
    "CHROMIUM",
    "FLAGS",
    "RECORD_FRAMES_JS",
    "STOP_FRAMES_JS",
    "VIEWPORT",
    "app_url",
    "chromium",
    "mark_chart",
    "next_frames",
    "wait_painted",
]

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 1000}

# `arg` = [P, chart]: true once chart `chart` is a fresh figure (not the one `mark_chart`
# tagged) with P panels (heatmap or image traces, layout images), each painted as an <image>
# with a data: URL (heatmaps in `g.hm`, image traces in `g.im`, layout images in
# `g.imagelayer`).
_IMAGES = "g.hm image, g.im image, g.imagelayer image"
_PAINTED_JS = """([count, chart]) => {
  const plots = document.querySelectorAll('.js-plotly-plot');
  const gd = plots[chart];
  if (!gd || !gd._fullData || !gd.data || gd.data[0] === window.__benchOld) return false;
  const traces = gd._fullData.filter((t) => t.type === 'heatmap' || t.type === 'image');
  const pictures = (gd._fullLayout.images || []).filter((i) => i.visible !== false);
  if (traces.length + pictures.length !== count) return false;
  const images = gd.querySelectorAll('__IMAGES__');
  if (images.length !== count) return false;
  for (const img of images) {
    const href = img.getAttribute('href') || img.getAttribute('xlink:href') || '';
    if (!href.startsWith('data:image')) return false;
  }
  return true;
}""".replace("__IMAGES__", _IMAGES)

# resolves once every painted <image> of chart `chart` is decoded
_DECODED_JS = """(chart) => {
  const gd = document.querySelectorAll('.js-plotly-plot')[chart];
  const images = gd ? [...gd.querySelectorAll('__IMAGES__')] : [];
  return Promise.all(images.map((img) => (img.decode ? img.decode().catch(() => null) : null)));
}""".replace("__IMAGES__", _IMAGES)

_MARK_JS = """(chart) => {
  const gd = document.querySelectorAll('.js-plotly-plot')[chart];
  window.__benchOld = gd && gd.data ? gd.data[0] : undefined;
  return window.__benchOld !== undefined;
}"""

_FRAMES_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"

# what the page shows when waiting failed: for the error message
_STATE_JS = """(chart) => {
  const gd = document.querySelectorAll('.js-plotly-plot')[chart];
  const app = document.querySelector('[data-testid="stApp"]');
  const shown = '[data-testid="stAlert"], [data-testid="stException"]';
  const alerts = [...document.querySelectorAll(shown)];
  return {
    script: app ? app.getAttribute('data-test-script-state') : null,
    charts: document.querySelectorAll('.js-plotly-plot').length,
    traces: gd && gd._fullData ? gd._fullData.map((t) => t.type) : null,
    images: gd ? gd.querySelectorAll('__IMAGES__').length : 0,
    fresh: !!(gd && gd.data && gd.data[0] !== window.__benchOld),
    alerts: alerts.map((a) => a.innerText.slice(0, 120)),
  };
}""".replace("__IMAGES__", _IMAGES)


@contextmanager
def chromium() -> Iterator[Any]:
    """A Playwright Browser on Debian's Chromium; closed when the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def app_url(base: str, params: dict[str, object]) -> str:
    """The app's URL with its settings in the query string (the app reads them once)."""
    query = {k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()}
    return f"{base}/?{urlencode(query)}"


def mark_chart(page: Any, chart: int = 0) -> bool:
    """Tag the figure chart `chart` shows now, so `wait_painted` waits for a new one."""
    return bool(page.evaluate(_MARK_JS, chart))


def next_frames(page: Any) -> None:
    """Return after two animation frames: what was drawn has been composited."""
    page.evaluate(_FRAMES_JS)


def wait_painted(page: Any, count: int, *, chart: int = 0, timeout_s: float = 120.0) -> float:
    """Wait until chart `chart` shows a new figure with `count` painted panels (heatmaps and
    pictures), each decoded.

    Returns time.perf_counter() after the two frames that follow.
    """
    page.wait_for_function(_PAINTED_JS, arg=[count, chart], polling="raf", timeout=timeout_s * 1000)
    page.evaluate(_DECODED_JS, chart)
    next_frames(page)
    return time.perf_counter()


# Records every distinct picture of `heads` heatmaps the page paints (a live training run's
# frames): a frame is a chart with exactly `heads` painted heatmaps whose numbers differ from
# every picture seen before; STOP_FRAMES_JS returns their performance.now() times (ms).
RECORD_FRAMES_JS = """
(heads) => {
  window.__frames = [];
  const seen = new Set();
  window.__frameTimer = setInterval(() => {
    for (const plot of document.querySelectorAll('.studio-chart.js-plotly-plot')) {
      const maps = (plot._fullData || []).filter((t) => t.type === 'heatmap');
      if (maps.length !== heads) continue;
      const painted = [...plot.querySelectorAll('g.hm image')].filter((img) =>
        (img.getAttribute('href') || '').startsWith('data:image')).length;
      if (painted !== heads) continue;
      const key = maps.map((t) => JSON.stringify(t.z)).join('|');
      if (!seen.has(key)) { seen.add(key); window.__frames.push(performance.now()); }
    }
  }, 30);
}
"""
STOP_FRAMES_JS = "() => { clearInterval(window.__frameTimer); return window.__frames; }"
