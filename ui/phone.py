"""Phones: a student's 390 px screen, in presenter mode or not.

`PHONE_CSS` (drawn on every page by ui/presenter.py): no sideways scrolling of the page,
44 px tap targets, charts no wider than the screen. `phone_controls`: the language and the
sentence in the main area, since a phone folds the sidebar away. `sidebar_folded` /
`unfold_on_open`: the sidebar's settings widgets are drawn once a phone opens its sidebar.
"""

from __future__ import annotations

import streamlit as st

from ui.common import language_radio, preset
from ui.language import lang, tr

__all__ = [
    "PHONE_CSS",
    "PHONE_MAX_PX",
    "on_a_phone",
    "phone_controls",
    "sidebar_folded",
    "unfold_on_open",
]

# Phones (a student at 390 px): no sideways scrolling of the page, tap targets of at least
# 44 px (Apple's and Material's guidance), charts no wider than the screen. On every page,
# presenter mode or not.
PHONE_MAX_PX = 640  # a window this wide or narrower is laid out as a phone

PHONE_CSS = """
<style>
@media (max-width: __PHONE__px) {
  [data-testid="stMainBlockContainer"] { padding-left: 0.75rem !important;
    padding-right: 0.75rem !important; }
  [data-testid="stMain"] { overflow-x: hidden; }
  [data-testid^="stBaseButton-"], button[data-variant] { min-height: 44px; }
  [data-testid="stRadio"] label { min-height: 44px; align-items: center; }
  [data-testid="stExpander"] summary, [data-testid="stSelectbox"] [role="group"]
    { min-height: 44px; }
  .studio-chart { max-width: 100%; overflow-x: auto; }
  [data-testid="stMarkdownContainer"] { overflow-wrap: anywhere; }
  /* Streamlit's own small targets: the sidebar's arrow, toggles, page links, help icons,
     a multiselect tag's ×, the chart toolbar (below the chart: it covered titles) */
  [data-testid="stExpandSidebarButton"], [data-testid$="CollapseButton"] button,
  [data-testid="stTooltipHoverTarget"], [data-testid="stTooltipIcon"],
  [data-testid="stMultiSelect"] button
    { min-width: 44px !important; min-height: 44px !important; display: inline-flex;
      align-items: center; justify-content: center; }
  [data-testid="stCheckbox"] label, [data-testid$="NavLink"],
  [data-testid="stMultiSelectTagsContainer"] [data-tag]
    { min-height: 44px !important; align-items: center; }
  [data-testid="stButtonGroup"] > div { flex-wrap: wrap; }
  [data-testid="stButtonGroup"] button { min-height: 44px; height: auto; }
  [data-testid="stButtonGroup"] button p { white-space: normal; }
  .studio-chart { padding-bottom: 48px; }
  .studio-chart .modebar-container { top: auto !important; bottom: -48px; }
  .studio-chart .modebar-btn { min-width: 44px; min-height: 44px; display: inline-flex !important;
    align-items: center; justify-content: center; }
  .st-key-phone_controls { display: flex !important; }
}
.st-key-phone_controls { display: none; }
</style>
""".replace("__PHONE__", str(PHONE_MAX_PX))

# A phone's sidebar is folded away behind a small arrow, and its ~15 settings widgets were
# 0.1–0.15 s of a new phone's first paint (interleaved A/B, a phone's User-Agent: 1.50 →
# 1.41 s, 1.64 → 1.49 s). So on a
# phone they are drawn once the sidebar is first opened: this element, in the sidebar,
# watches it open and asks for a run that draws them (sticky for the session: a widget
# drawn once must be drawn on every run, or Streamlit forgets its value).
_SIDEBAR_SEEN = "_sidebar_drawn"
_UNFOLD_JS = r"""
export default function (component) {
  const sidebar = component.parentElement.closest('[data-testid="stSidebar"]');
  if (!sidebar) return;
  const opened = () => {
    if (sidebar.getAttribute("data-collapsed") !== "false" || sidebar.__studioAsked) return;
    sidebar.__studioAsked = true;
    component.setTriggerValue("open", true);
  };
  const watch = new MutationObserver(opened);
  watch.observe(sidebar, { attributes: true, attributeFilter: ["data-collapsed"] });
  opened();
  return () => watch.disconnect();
}
"""
_unfold = st.components.v2.component(
    "attention_studio_sidebar_unfold", js=_UNFOLD_JS, isolate_styles=False
)


def sidebar_folded() -> bool:
    """True while the session is a phone whose sidebar was never opened: app.py then draws
    no settings widgets there (the settings stay in the session and the URL) and calls
    `unfold_on_open`. False from the run the sidebar opens on, and always off a phone."""
    state = st.session_state
    if not state.get(_SIDEBAR_SEEN) and not on_a_phone():
        state[_SIDEBAR_SEEN] = True
    return not state.get(_SIDEBAR_SEEN)


def _unfolded() -> None:
    st.session_state[_SIDEBAR_SEEN] = True


def unfold_on_open() -> None:
    """The sidebar's watcher: opening the sidebar reruns the script with its widgets drawn."""
    with st.sidebar:
        _unfold(key="sidebar_unfold", data=None, on_open_change=_unfolded)


def on_a_phone() -> bool:
    """Whether the browser says it is a phone ("Mobi" in its User-Agent, Mozilla's advice):
    only there the main area gets the language and the sentence (`phone_controls`)."""
    return "Mobi" in str(st.context.headers.get("User-Agent") or "")


def phone_controls() -> None:
    """The language and the sentence in the main area, for a phone (`on_a_phone`; shown
    up to PHONE_MAX_PX wide only, PHONE_CSS): there the sidebar is folded away behind a small arrow.
    Each mirrors the sidebar's widget (app.py's keys `lang` and `text`): it starts from it
    and writes to it."""
    if not on_a_phone():
        return
    state = st.session_state

    def _to_sidebar() -> None:
        preset("lang", state["phone_lang"])
        state["text"] = state["phone_text"]
        state["_phone_controls_open"] = True  # changed in the expander: it was open

    preset("phone_lang", lang())
    state["phone_text"] = state.get("text", "")
    with st.container(key="phone_controls"):
        # a switch of language made in it redraws it under its new label: open again
        opened = bool(state.pop("_phone_controls_open", False))
        with st.expander(tr("phone_controls_label"), opened, icon=":material/translate:"):
            language_radio("phone_lang", on_change=_to_sidebar)
            st.text_area(tr("text_label"), key="phone_text", height=90, on_change=_to_sidebar)
