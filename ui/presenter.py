"""Presenter mode: any page on a projector, and QR codes of links.

`?present=1` in the URL, or the sidebar's button, switches the whole app to presenter mode
(`presenter_mode`, called once from app.py, so every page has it): the sidebar and the
header are hidden, type is larger, columns stack so that each chart gets the width of the
screen, and every chart is scaled up until its smallest text is 24 px at 1080p and fills
what is left of the window below its top (`fitCharts` in _JS). A small QR code of the
current share link (the URL without `present`, and without the settings at their
defaults: a shorter link is a sparser code) stays in a corner beside the page, never over
a chart (with the address warning when phones cannot open it), so a class can scan the
view on the projector, and "Larger QR code" shows it large enough for the back of a
hall; "Leave presenter mode" (or Esc) restores the normal view. The mode is kept in the
session too: a page switch clears the URL, not the mode. The same hook
makes every page fit a phone (no sideways scrolling, 44 px tap targets), in presenter mode
or not.

Keyboard: `arrow_keys(next=..., prev=...)` on a page (the Step-by-step slides, the quiz)
names the buttons that → / PageDown and ← / PageUp click in presenter mode. It is a small
Streamlit components-v2 element (no iframe, like ui/charts.py's chart) whose script
listens on the page's document, ignores keys typed into inputs, and clicks the button of
the first named key that exists and is enabled.

QR codes are drawn here by segno (https://segno.readthedocs.io), no web service.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

from attention_core.figures.scales import DEFAULT_SCALE
from attention_core.settings import Settings
from ui.address import served_base
from ui.language import lang, tr
from ui.phone import PHONE_CSS, PHONE_MAX_PX, phone_controls

__all__ = [
    "PRESENT_PARAM",
    "address_warning",
    "arrow_keys",
    "in_presenter_mode",
    "page_url",
    "presenter_mode",
    "qr_png",
    "set_share_query",
    "share_link",
]

PRESENT_PARAM = "present"
_STATE = "_presenter"
_SHARE = "_share_query"  # {url_path: query}: pages whose share link is not the settings
_KEYS_COMPONENT = "attention_studio_presenter_keys"
_LARGE = "_presenter_qr_large"  # the QR code shown large, over the page

# Chart sizing is done here, by CSS and by re-laying out Plotly's own height, so that
# ui/charts.py stays the one place that draws charts.
_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stHeader"],
[data-testid="stToolbar"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { max-width: 100% !important;
  padding: 1.5rem 12rem 8rem 2.5rem !important; }  /* right: room for the corner */
[data-testid="stMain"] { font-size: 1.3rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stWidgetLabel"] p,
[data-testid="stBaseButton-secondary"] p, [data-testid="stBaseButton-primary"] p
  { font-size: 1.35rem !important; line-height: 1.5; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1rem !important; }
h1 { font-size: 3rem !important; } h2 { font-size: 2.4rem !important; }
h3 { font-size: 2rem !important; }
/* one chart per screen: columns stack, each chart gets the whole width */
[data-testid="stHorizontalBlock"]:has(.studio-chart) { flex-direction: column !important; }
[data-testid="stHorizontalBlock"]:has(.studio-chart) > [data-testid="stColumn"]
  { width: 100% !important; flex: 1 1 100% !important; }
.st-key-presenter_corner { position: fixed; right: 1rem; bottom: 1rem; z-index: 999990;
  width: 9.5rem; background: white; border-radius: 0.5rem; padding: 0.4rem;
  box-shadow: 0 0 0.6rem rgba(0, 0, 0, 0.25); gap: 0.3rem; }
.st-key-presenter_corner img { width: 100% !important; height: auto; }
.st-key-presenter_corner p, .st-key-presenter_corner code
  { font-size: 0.8rem !important; line-height: 1.3; }
.st-key-presenter_corner [data-testid="stAlert"] > div { padding: 0.4rem; }
.st-key-presenter_qr_large { position: fixed; top: 4vh; left: 50%; transform: translateX(-50%);
  z-index: 999995; background: white; padding: 1.5rem; border-radius: 0.75rem;
  box-shadow: 0 0 2rem rgba(0, 0, 0, 0.35); width: min(80vh, 90vw); align-items: center; }
.st-key-presenter_qr_large img { width: 100% !important; height: auto; }
/* a phone in presenter mode (rare: the QR code's link is not in presenter mode): no room
   beside the page, and nobody scans a phone's screen; the leave button stays in the flow */
@media (max-width: __PHONE__px) {
  [data-testid="stMainBlockContainer"] { padding: 1rem 0.75rem 2rem 0.75rem !important; }
  .st-key-presenter_corner { position: static; width: 100%; box-shadow: none; }
  .st-key-presenter_corner [data-testid="stImage"] { display: none; }
}
</style>
""".replace("__PHONE__", str(PHONE_MAX_PX))

# Streamlit's English that no app can translate: the "Running… Stop" widget during a long
# run (training, playback), and a table's toolbar ("Download as CSV", "Search",
# "Fullscreen": the pages' own download buttons speak the language); the ⋮ menu is off in
# .streamlit/config.toml (toolbarMode).
_CHROME_CSS = """
<style>
[data-testid="stStatusWidget"] { display: none !important; }
[data-testid="stElementToolbar"] { display: none !important; }
</style>
"""

# A document-level listener, installed once per page; `data` says which buttons the arrows
# press now. In presenter mode it also makes every chart as tall as the window (Plotly's
# own relayout: a CSS height alone would not redraw the plot).
_JS = r"""
const TEXT_PX = 24; // the smallest chart text at a 1080 px tall window: read from the back row

// The smallest type a chart draws (its SVG texts: ticks, titles, cell numbers), in the
// chart's own pixels.
function smallestText(plot) {
  let smallest = Infinity;
  for (const text of plot.querySelectorAll("svg text")) {
    if (!text.textContent.trim()) continue;
    const px = parseFloat(text.style.fontSize || getComputedStyle(text).fontSize);
    if (px > 0) smallest = Math.min(smallest, px);
  }
  return smallest === Infinity ? 12 : smallest;
}

// Cell numbers that no longer fit their cells at the projector's layout are hidden (the
// colours and the hover stay); Plotly.react of the next figure brings them back.
function dropCrampedNumbers(plot) {
  const hide = [];
  (plot._fullData || []).forEach((trace, i) => {
    if (trace.type !== "heatmap" || !trace.texttemplate || !Array.isArray(trace.z)) return;
    const axis = plot._fullLayout[trace.xaxis.replace("x", "xaxis")];
    const cols = (trace.z[0] || []).length || 1;
    const size = (trace.textfont && trace.textfont.size) || 12;
    if (axis && axis._length / cols < 2.6 * size) hide.push(i);
  });
  if (hide.length) return window.Plotly.restyle(plot, { texttemplate: "" }, hide);
}

// A chart title wider than the chart at the projector's scale gets a smaller font, no
// smaller than the TEXT_PX rule allows (Plotly does not wrap titles).
function fitTitle(plot, zoom) {
  const title = plot.querySelector(".gtitle");
  const size = title && parseFloat(getComputedStyle(title).fontSize);
  if (!size) return;
  const wide = title.getBoundingClientRect().width;
  const room = 0.96 * plot.getBoundingClientRect().width;
  if (wide <= room) return;
  const floor = (TEXT_PX * window.innerHeight) / 1080 / zoom;
  return window.Plotly.relayout(plot, { "title.font.size": Math.max(floor, size * room / wide) });
}

// The colour bar's length in pixels, no longer than a chart `height` tall holds (a bar
// planned for the chart's own height would run off a shorter one)
function barFits(plot, height) {
  const bar = ((plot.layout.coloraxis || {}).colorbar) || {};
  if (bar.lenmode !== "pixels") return {};
  if (plot.__studioBar === undefined) plot.__studioBar = bar.len;
  const margin = plot._fullLayout.margin || { t: 0, b: 0 };
  const room = height - margin.t - margin.b - 20;
  return { "coloraxis.colorbar.len": Math.min(plot.__studioBar, room) };
}

// Whether any text of the chart is drawn outside it (labels cut at its edges).
function textCut(plot) {
  const box = plot.getBoundingClientRect();
  return [...plot.querySelectorAll("svg text")].some((text) => {
    if (!text.textContent.trim()) return false;
    const r = text.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false; // not drawn
    return r.bottom > box.bottom + 1 || r.top < box.top - 1 || r.right > box.right + 1;
  });
}

// Presenter mode: each chart is scaled up (a CSS transform, which Plotly's hover follows)
// so that its smallest text is TEXT_PX at 1080p, laid out at the width that fills its
// column at that scale, and as tall as what is left of the window below its top — or a
// whole window when little is left there, or when that height would cut its labels; a
// chart whose meta says `studio_keep_height` keeps its own height (a one-row strip).
// Out of presenter mode every chart is as it was drawn.
function fitCharts() {
  const state = window.__studioPresenter || {};
  for (const plot of document.querySelectorAll(".studio-chart.js-plotly-plot")) {
    const box = plot.parentElement;
    // (a phone in presenter mode keeps the phone's charts: no projector to fill)
    if (!state.present || window.innerWidth <= __PHONE__ || !window.Plotly || !box) {
      if (plot.__studioZoom && window.Plotly) {
        plot.__studioZoom = 0;
        plot.__studioWhole = false;
        plot.style.transform = plot.style.width = "";
        if (box) box.style.height = "";
        const bar = plot.__studioBar === undefined ? {}
          : { "coloraxis.colorbar.len": plot.__studioBar };
        plot.__studioBar = undefined;
        window.Plotly.relayout(plot, { width: null, height: plot.__studioHeight, autosize: true,
                                       ...bar });
      }
      continue;
    }
    const layout = plot._fullLayout;
    if (!layout || plot.__studioFitting) continue;
    if (!plot.__studioZoom) plot.__studioHeight = layout.height;
    let zoom = Math.max(1, (TEXT_PX * window.innerHeight) / 1080 / smallestText(plot));
    const top = box.getBoundingClientRect().top + window.scrollY;
    let room = window.innerHeight - top - 24;
    // a chart is never laid out smaller than its labels and cell numbers need (its
    // `studio_min_size`, figures/layout.py): a whole window when less is left below its
    // top, and the whole chart scaled down where even that is too small
    const least = (plot.layout.meta || {}).studio_min_size || [0, 0];
    zoom = Math.max(1, Math.min(zoom, box.clientWidth / least[0]));
    if (plot.__studioWhole || room < 0.3 * window.innerHeight || room < least[1] * zoom) {
      room = window.innerHeight - 48;
    }
    zoom = Math.max(1, Math.min(zoom, room / least[1]));
    const width = Math.max(Math.floor(box.clientWidth / zoom), least[0]);
    // a strip or a short bar chart keeps its own height (`studio_keep_height`), scaled
    const keep = (plot.layout.meta || {}).studio_keep_height && plot.__studioHeight;
    const height = keep || Math.max(150, Math.floor(room / zoom), least[1]);
    plot.__studioZoom = zoom;
    plot.style.transformOrigin = "0 0";
    plot.style.transform = `scale(${zoom})`;
    plot.style.width = width + "px";
    plot.style.minWidth = "";
    box.style.overflowX = "";
    box.style.height = Math.ceil(height * zoom) + "px";
    if (Math.abs(layout.width - width) > 4 || Math.abs(layout.height - height) > 4) {
      plot.__studioFitting = true;
      window.Plotly.relayout(plot, { width: width, height: height, ...barFits(plot, height) })
        .then(() => fitTitle(plot, zoom))
        .then(() => {
          if (textCut(plot)) plot.__studioWhole = true; // refitted on the next tick
          return dropCrampedNumbers(plot);
        })
        .finally(() => { plot.__studioFitting = false; });
    }
  }
}

// the app's root is "" in Streamlit's URL and "/" in the address bar
const same = (a, b) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

function press(direction) {
  const state = window.__studioPresenter || {};
  const page = state.page || {};
  // the arrows' buttons belong to the page that named them, not to the next page shown
  const keys = direction === "leave" ? ["presenter_leave"]
    : same(page.path || "", window.location.pathname) ? page[direction] || [] : [];
  for (const key of keys) {
    const button = document.querySelector(`.st-key-${CSS.escape(key)} button`);
    if (button && !button.disabled) { button.click(); return true; }
  }
  return false;
}

export default function (component) {
  const { data } = component;
  window.__studioPresenter = { ...(window.__studioPresenter || {}), ...data };
  if (!window.__studioPresenterInstalled) {
    window.__studioPresenterInstalled = true;
    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey || event.defaultPrevented) return;
      const state = window.__studioPresenter || {};
      if (!state.present) return;
      const busy = event.target && event.target.closest &&
        event.target.closest("input, textarea, select, [contenteditable='true'], [role='slider']");
      if (busy) return;
      const direction = { ArrowRight: "next", PageDown: "next", ArrowLeft: "prev",
                          PageUp: "prev", Escape: "leave" }[event.key];
      if (direction && press(direction)) event.preventDefault();
    });
    window.__studioFitCharts = fitCharts;
    window.setInterval(fitCharts, 400);
  }
}
""".replace("__PHONE__", str(PHONE_MAX_PX))
_keys = st.components.v2.component(_KEYS_COMPONENT, js=_JS, isolate_styles=False)


def in_presenter_mode() -> bool:
    """True while the session is in presenter mode."""
    return bool(st.session_state.get(_STATE, False))


def _larger() -> None:
    st.session_state[_LARGE] = not st.session_state.get(_LARGE, False)


def _set(on: bool) -> None:
    st.session_state[_STATE] = on
    if on:
        st.query_params[PRESENT_PARAM] = "1"
    else:
        st.query_params.pop(PRESENT_PARAM, None)


def _url_path(page: Any | None) -> str:
    """`page`'s path below the app's root; the page being shown when None (the browser's
    path without server.baseUrlPath)."""
    if page is not None:
        return str(getattr(page, "url_path", "") or "")
    prefix = str(st.get_option("server.baseUrlPath") or "").strip("/")
    path = urlsplit(st.context.url or "").path.strip("/")
    if prefix and (path == prefix or path.startswith(f"{prefix}/")):
        path = path[len(prefix) :].strip("/")
    return path


def page_url(page: Any | None = None) -> str:
    """The absolute URL of `page` (an st.Page; the page being shown when None), no query,
    at an address a student's phone can open (ui.address: a public URL, the LAN address,
    or the browser's own address, with `address_warning` when no phone can open it)."""
    return f"{served_base().base}/{_url_path(page)}"


def address_warning() -> str | None:
    """A warning with the fix, when no student's phone can open the share links; returns
    the warning's catalog key (None: phones can open them)."""
    problem = served_base().problem
    if problem:
        st.warning(tr(problem), icon=":material/wifi_off:")
    return problem


def set_share_query(query: dict[str, str] | None) -> None:
    """Links to the page being shown (its presenter QR code too) carry `query` and the
    interface language instead of the view's settings; None: the settings again. The
    Classroom page while a class is open: the class's join link."""
    own = dict(st.session_state.get(_SHARE, {}))
    url_path = _url_path(None)
    if query is None:
        own.pop(url_path, None)
    else:
        own[url_path] = dict(query)
    st.session_state[_SHARE] = own


def share_link(page: Any | None = None) -> str:
    """The link that reproduces this view (every URL parameter but `present`), or the
    page's own link (`set_share_query`)."""
    own = st.session_state.get(_SHARE, {}).get(_url_path(page))
    if own is None:  # a setting at its default is left out: a shorter link, a sparser code
        defaults = _defaults()
        params = {
            k: v
            for k, v in st.query_params.to_dict().items()
            if k != PRESENT_PARAM and defaults.get(k) != v
        }
    else:
        params = {**own, "lang": lang()}
    query = urlencode(params)
    return page_url(page) + (f"?{query}" if query else "")


def _defaults() -> dict[str, str]:
    """The URL values a view has when its link leaves them out (never the language: the
    phones open the view in the teacher's)."""
    defaults = {**Settings().to_query_params(), "scale": DEFAULT_SCALE}
    defaults.pop("lang", None)
    return defaults


def qr_png(text: str, *, scale: int = 6) -> bytes:
    """A QR code of `text` as PNG bytes (segno, error correction M, a 2-module border)."""
    out = io.BytesIO()
    segno.make(text, error="m", micro=False).save(out, kind="png", scale=scale, border=2)
    return out.getvalue()


def presenter_mode(page: Any | None = None) -> None:
    """The presenter switch, for every page: call once in app.py after the navigation is
    known (`page`, to link the right page in the QR code), before `page.run()`."""
    state = st.session_state
    st.html(PHONE_CSS + _CHROME_CSS)
    wanted = st.query_params.get(PRESENT_PARAM)
    if wanted is not None:  # the URL decides when it says something
        state[_STATE] = wanted in ("1", "true", "yes", "on")
    if not in_presenter_mode():
        phone_controls()  # on a phone only
        st.query_params.pop(PRESENT_PARAM, None)
        with st.sidebar:  # tells the page's key listener that the mode is off
            _keys(key="presenter_keys_app", data={"present": False})
        st.sidebar.button(
            tr("presenter_enter"),
            key="presenter_enter",
            on_click=_set,
            args=(True,),
            icon=":material/co_present:",
            help=tr("presenter_enter_help"),
        )
        return
    if st.query_params.get(PRESENT_PARAM) != "1":
        st.query_params[PRESENT_PARAM] = "1"  # a page switch cleared it
    st.html(_CSS)
    with st.container(key="presenter_corner"):
        link = share_link(page)
        state["_presenter_link"] = link  # what the QR code says (tests read it)
        st.image(qr_png(link), caption=tr("presenter_qr_caption"))
        st.button(tr("presenter_qr_larger"), key="presenter_qr_larger", on_click=_larger,
                  width="stretch", icon=":material/qr_code_2:")  # fmt: skip
        # beside the QR code it concerns, not above the page: the chart keeps the screen
        address_warning()
        st.button(
            tr("presenter_leave"),
            key="presenter_leave",
            on_click=_set,
            args=(False,),
            width="stretch",
            help=tr("presenter_leave_help"),
        )
        _keys(key="presenter_keys_app", data={"present": True})
    if state.get(_LARGE):  # the same code, large enough to scan from the back of a hall
        with st.container(key="presenter_qr_large"):
            st.image(qr_png(link, scale=12), caption=tr("presenter_qr_caption"))
            st.button(tr("presenter_qr_close"), key="presenter_qr_close", on_click=_larger)


def arrow_keys(*, right: Sequence[str] = (), left: Sequence[str] = ()) -> None:
    """In presenter mode, → / PageDown press the first enabled button of keys `right`, ←
    / PageUp of `left` (button keys of this page). Call once on a page; no-op otherwise."""
    if in_presenter_mode():
        path = urlsplit(st.context.url or "").path
        data = {"page": {"path": path, "next": list(right), "prev": list(left)}}
        _keys(key="presenter_keys_page", data=data)
