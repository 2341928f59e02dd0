"""Attention Studio: the entry script. Run with `streamlit run app.py`.

It owns what survives page switches: the interface language, the sentence and the model
settings (sidebar widgets whose keys are also the URL's query parameters), and the
navigation. Torch is not imported here, so the sidebar paints before any model work.

Streamlit runs this file for every session as `__main__` (`main()` below). `streamlit run
app.py` first imports it as a module to find `app`, the server it serves (st.App): the
same script, warmed up as the server starts and with its static files answered from
memory (ui/server.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from attention_core.limits import MAX_EMBED_DIM
from attention_core.reader.card import shipped_shape
from attention_core.resources import DATA_DIR
from attention_core.settings import (
    ATTENTION_KINDS,
    KEYS,
    MAX_SEED,
    MAX_URL_TEXT,
    TOKENIZERS,
    WEIGHTS,
    head_options,
    nearest_heads,
    parse_settings,
)

if __name__ == "__main__":  # a session's run of the script
    from ui.cache import import_ui_stack
    from ui.common import (
        DRAWN_SETTINGS,
        choose,
        entry_guard,
        language_radio,
        md_escape,
        sidebar_settings,
        tr,
    )
    from ui.phone import sidebar_folded, unfold_on_open
    from ui.presenter import presenter_mode
    from ui.slots import script_place
else:  # imported by `streamlit run app.py` to find the server, before Streamlit's runtime
    # exists: only the server's modules here. A module of st.cache_data functions imported
    # now would log "No runtime found" once per function (Streamlit's ASGI guidance).
    from ui.server import MIDDLEWARE, lifespan, no_external_ip_lookup

    no_external_ip_lookup()
    app = st.App("app.py", lifespan=lifespan, middleware=MIDDLEWARE)

ASSETS_DIR = Path(__file__).resolve().parent / "assets"  # the app's own files (its icon)
# the sidebar's widgets of the untrained module, not drawn while the trained reader is shown
UNTRAINED_ONLY = ("attention", "embed_dim", "num_heads", "seed", "causal", "positional")


def _fit_heads() -> None:
    """Keep num_heads a divisor of embed_dim when embed_dim changes; the count the
    user chose comes back as soon as it divides embed_dim again (16 → 17 → 16 keeps
    4 heads, not the 1 head 17 forced)."""
    state = st.session_state
    wanted = state.setdefault("_chosen_heads", state["num_heads"])
    state["num_heads"] = nearest_heads(state["embed_dim"], wanted)
    state["_heads_forced"] = wanted if state["num_heads"] != wanted else None


def _choose_heads() -> None:
    state = st.session_state
    state["_chosen_heads"] = state["num_heads"]
    state["_heads_forced"] = None


def _use_example() -> None:
    state = st.session_state
    if state.get("example"):
        state["text"] = state["example"]
    state["example"] = None


def _examples() -> dict[str, list[str]]:
    return json.loads((DATA_DIR / "examples.json").read_text(encoding="utf-8"))


def _settle() -> None:
    """What the settings' widgets need before they are drawn (and what holds while they
    are not: a phone's folded sidebar): num_heads a divisor of embed_dim, with the trained
    reader a layer it has, and which settings the sidebar hides."""
    state = st.session_state
    shape = shipped_shape() if state["weights"] == "trained" else None
    state["_hidden"] = UNTRAINED_ONLY if shape is not None else ("layer",)
    if shape is not None:
        if state.get("layer") is None or not 0 <= state["layer"] < shape.num_layers:
            state["layer"] = shape.default_layer
    elif state["num_heads"] not in head_options(state["embed_dim"]):
        _fit_heads()


def _sidebar_widgets() -> None:
    """The sidebar's settings: language first, then the sentence, then the model. Each
    widget's key is its setting's (and the URL's) name; `_settle` ran before."""
    state = st.session_state
    # Every setting widget is also given its current value as its default (`value=`/`index=`).
    # The browser normally holds each widget's value, but a tab that is slow to mount its
    # sidebar (a busy machine, a click during the first paint) can send a rerun without some
    # of them; the server then keeps the right value but, without this, would draw the widget
    # at its built-in default, which the next rerun sends back. Measured: 8 students opening
    # together lost embed_dim/num_heads/tokenizer in most tabs (tests/browser/test_load.py).
    # Option widgets go through ui.common.choose, which does this and also keeps the value
    # when the labels change under it (a language switch).
    language_radio("lang")
    st.text_area(tr("text_label"), state["text"], key="text", help=tr("text_help"), height=90)
    examples = _examples()
    choose(
        st.selectbox,
        tr("example_label"),
        [s for group in examples.values() for s in group],
        key="example",
        default=None,
        placeholder=tr("example_none"),
        on_change=_use_example,
    )
    st.subheader(tr("model_header"))
    choose(
        st.selectbox,
        tr("tokenizer_label"),
        TOKENIZERS,
        key="tokenizer",
        format_func=lambda option: tr(f"tokenizer_{option}"),
    )
    choose(
        st.radio,
        tr("weights_label"),
        WEIGHTS,
        key="weights",
        horizontal=True,
        format_func=lambda option: tr(f"weights_{option}"),
        help=tr("weights_help"),
    )
    shape = shipped_shape() if state["weights"] == "trained" else None
    if shape is not None:
        # the checkpoint's sizes were learned together: shown, not offered (the untrained
        # module's own settings wait in the session and the link for its return)
        choose(
            st.selectbox,
            tr("layer_label"),
            range(shape.num_layers),
            key="layer",
            format_func=lambda i: tr(
                "layer_clearest" if i == shape.default_layer else "layer_option", i=i
            ),
            help=tr("layer_help"),
        )
        fixed_dim, fixed_heads = st.columns(2)
        fixed_dim.number_input(
            tr("embed_dim_label"),
            value=shape.embed_dim,
            disabled=True,
            key="fixed_embed_dim",
        )
        fixed_heads.number_input(
            tr("num_heads_label"),
            value=shape.num_heads,
            disabled=True,
            key="fixed_num_heads",
        )
        st.caption(
            tr(
                "trained_fixed",
                embed_dim=shape.embed_dim,
                heads=shape.num_heads,
                head_dim=shape.embed_dim // shape.num_heads,
                layers=shape.num_layers,
                context=shape.context,
            )
        )
    else:
        choose(
            st.radio,
            tr("attention_label"),
            ATTENTION_KINDS,
            key="attention",
            horizontal=True,
            format_func=lambda option: tr(f"attention_{option}"),
        )
        st.number_input(
            tr("embed_dim_label"),
            1,
            MAX_EMBED_DIM,
            state["embed_dim"],
            step=1,
            key="embed_dim",
            on_change=_fit_heads,
        )
        choose(
            st.select_slider,
            tr("num_heads_label"),
            head_options(state["embed_dim"]),
            key="num_heads",
            disabled=state["attention"] == "single",
            help=tr("num_heads_help", head_dim=state["embed_dim"] // state["num_heads"]),
            on_change=_choose_heads,
        )
        if state.get("_heads_forced"):  # said, so a changed head count is no surprise
            st.caption(
                tr(
                    "heads_forced",
                    wanted=state["_heads_forced"],
                    embed_dim=state["embed_dim"],
                    heads=state["num_heads"],
                )
            )
        st.number_input(
            tr("seed_label"),
            0,
            MAX_SEED,
            state["seed"],
            step=1,
            key="seed",
            help=tr("seed_help"),
        )
        st.toggle(tr("causal_label"), state["causal"], key="causal", help=tr("causal_help"))
        st.toggle(
            tr("positional_label"),
            state["positional"],
            key="positional",
            help=tr("positional_help"),
        )
    st.caption(tr("share_hint"))


def main() -> None:
    """One run of the entry script: sidebar, URL, navigation, the chosen page."""
    # ui/slots.py: a few runs compute at once, the others wait off the interpreter lock, so
    # a class arriving together does not starve the server's event loop (its handshakes).
    with script_place():
        st.set_page_config(
            page_title="Attention Studio · 注意力工作室",
            page_icon=str(ASSETS_DIR / "icon.png"),
            layout="wide",
        )
        entry_guard()
        state = st.session_state

        # --- first run of a session: the URL decides the settings --------------------------------
        if "_url_problems" not in state:
            settings, problems = parse_settings(st.query_params.to_dict())
            for key in KEYS:
                state[key] = getattr(settings, key)
            state["_url_problems"] = problems
        elif DRAWN_SETTINGS in state:
            # st.switch_page drops every widget's state (the sidebar's too) and clears the URL;
            # the settings come back from the plain copy kept at the end of the previous run. So
            # do the widgets the sidebar did not draw last run (the untrained sliders while the
            # trained reader is shown, its layer while it is not): Streamlit forgets a widget's
            # value when it is not drawn, and may hand back an older one set before it was.
            hidden = state.get("_hidden", ())
            for key in KEYS:
                if key not in state or key in hidden:
                    state[key] = getattr(state[DRAWN_SETTINGS], key)

        # --- the sidebar's settings (a phone draws them once its sidebar is first opened) ------
        _settle()
        if sidebar_folded():  # ui/phone.py: 0.1-0.15 s of a new phone's first paint saved
            unfold_on_open()
        else:
            with st.sidebar:
                _sidebar_widgets()

        # --- the URL mirrors the settings, so a copied link reproduces this view ------------------
        settings = sidebar_settings()
        state[DRAWN_SETTINGS] = settings
        params = settings.to_query_params()
        for key, value in params.items():
            if st.query_params.get(key) != value:
                st.query_params[key] = value
        for key in ("weights", "layer"):  # back to the untrained module: its links as before
            if key not in params:
                st.query_params.pop(key, None)
        if len(settings.text) > MAX_URL_TEXT:
            st.query_params.pop("text", None)
            st.sidebar.caption(tr("url_text_too_long", limit=MAX_URL_TEXT))

        for problem in state["_url_problems"]:
            reason = tr(problem.reason, **problem.params)
            st.warning(
                md_escape(
                    tr(
                        "url_problem",
                        key=problem.key,
                        value=problem.value,
                        reason=reason,
                        fallback=problem.fallback,
                    )
                )
            )
        state["_url_problems"] = []

        # --- navigation: one page per file in pages/ (shared code lives in ui/) -------------------
        landing = st.Page(
            "pages/heatmaps.py",
            title=tr("page_heatmaps"),
            icon=":material/grid_view:",
            default=True,
        )
        PAGES = {
            tr("nav_explore"): [
                landing,
                st.Page("pages/compare.py", title=tr("page_compare"), icon=":material/compare:"),
            ],
            tr("nav_learn"): [
                st.Page("pages/handmade.py", title=tr("page_handmade"), icon=":material/edit:"),
                st.Page("pages/steps.py", title=tr("page_steps"), icon=":material/stairs:"),
                st.Page("pages/scaling.py", title=tr("page_scaling"), icon=":material/straighten:"),
                st.Page("pages/masks.py", title=tr("page_masks"), icon=":material/visibility_off:"),
                st.Page(
                    "pages/positions.py", title=tr("page_positions"), icon=":material/shuffle:"
                ),
                st.Page("pages/quiz.py", title=tr("page_quiz"), icon=":material/quiz:"),
                st.Page("pages/classroom.py", title=tr("page_classroom"), icon=":material/groups:"),
                st.Page("pages/train.py", title=tr("page_train"), icon=":material/model_training:"),
                st.Page(
                    "pages/glossary.py", title=tr("page_glossary"), icon=":material/translate:"
                ),
            ],
            tr("nav_models"): [
                st.Page(
                    "pages/pretrained.py", title=tr("page_pretrained"), icon=":material/neurology:"
                ),
                st.Page("pages/write.py", title=tr("page_write"), icon=":material/edit_note:"),
                st.Page("pages/lens.py", title=tr("page_lens"), icon=":material/biotech:"),
                st.Page("pages/explain.py", title=tr("page_explain"), icon=":material/balance:"),
                st.Page("pages/atlas.py", title=tr("page_atlas"), icon=":material/travel_explore:"),
                st.Page(
                    "pages/minimal_pairs.py",
                    title=tr("page_minimal_pairs"),
                    icon=":material/difference:",
                ),
                st.Page(
                    "pages/attention_file.py",
                    title=tr("page_attention_file"),
                    icon=":material/upload_file:",
                ),
            ],
        }
        # expanded: every page listed. Collapsed, Streamlit folds the list after 10 entries behind
        # its own "View N more", which it cannot say in Chinese.
        page = st.navigation(
            {section: pages for section, pages in PAGES.items() if pages}, expanded=True
        )
        presenter_mode(page)  # ui/presenter.py: ?present=1 or the sidebar's button, on every page
        if page is not landing:  # it draws no table: a fresh server's first heatmaps do not
            import_ui_stack()  # wait for pandas (ui/server.py imports it after its warm-up)
        page.run()


if __name__ == "__main__":
    main()
