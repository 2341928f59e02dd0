"""Tests for ui/classroom.py's `live_view`: a live fragment that finds the sidebar's settings
moved since the page was drawn (in the browser, a change that reached the server with the
fragment's own timed run) runs the whole page again, so nothing stays drawn in the old
language; with nothing moved it runs as it is."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.common import DRAWN_SETTINGS


def _page() -> None:
    import streamlit as st

    from ui.classroom import live_view
    from ui.common import DRAWN_SETTINGS, sidebar_settings

    state = st.session_state
    state["whole_runs"] = state.get("whole_runs", 0) + 1
    state[DRAWN_SETTINGS] = sidebar_settings()  # as every whole run of app.py keeps them
    if st.button("switch", key="switch"):  # the language moves after the page was drawn
        state["lang"] = "zh-TW"
    st.button("nothing", key="nothing")

    @live_view(3600)
    def live() -> None:
        state["live_runs"] = state.get("live_runs", 0) + 1

    live()


def test_settings_moved_under_a_live_fragment_run_the_whole_page_again() -> None:
    at = AppTest.from_function(_page).run()
    assert (at.session_state["whole_runs"], at.session_state["live_runs"]) == (1, 1)
    at.button(key="switch").click().run()
    # the click's run, stopped at the fragment (the language moved), then the whole page
    assert at.session_state["whole_runs"] == 3
    assert at.session_state["live_runs"] == 2
    assert at.session_state[DRAWN_SETTINGS].lang == "zh-TW"
    assert not at.exception


def test_a_live_fragment_with_nothing_moved_runs_as_it_is() -> None:
    at = AppTest.from_function(_page).run()
    at.button(key="nothing").click().run()
    assert (at.session_state["whole_runs"], at.session_state["live_runs"]) == (2, 2)
    assert not at.exception
