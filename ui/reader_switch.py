"""The trained reader on the pages: the one-click switch between untrained and trained
weights, what a trained view's rows mean, and what each of its heads learned.

The numbers come from `attention_core.reader` (the card's held-out measurements) and
`ui.cache.sentence_same_word` (this sentence); the words from the catalog.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attention_core.reader.card import head_facts
from attention_core.settings import ModelSettings, Settings
from ui.cache import sentence_same_word
from ui.common import current_settings, md_escape, sidebar_settings
from ui.language import tr

__all__ = [
    "learned_names",
    "learned_section",
    "trained_caption",
    "untrained_lesson",
    "use_weights",
    "weights_switch",
]


def untrained_lesson(why: str) -> Settings:
    """The settings of a lesson that switches what the trained reader has fixed (its mask,
    its positions): with trained weights chosen, the sidebar's untrained module, and a note
    (`why`, a catalog key) saying so."""
    settings = current_settings()
    if not settings.trained:
        return settings
    st.info(tr("lesson_untrained", why=tr(why)))
    return replace(sidebar_settings(), weights="untrained").effective  # type: ignore[return-value]


def use_weights(weights: str) -> None:
    """A button's callback: the sidebar's Weights become `weights` (callbacks run before the
    sidebar is drawn, so its radio may still change)."""
    st.session_state["weights"] = weights
    st.session_state.pop("_choice.weights", None)


def weights_switch(settings: ModelSettings, *, key: str, width: str = "content") -> None:
    """One click to the same sentence with the other weights (untrained ↔ trained)."""
    other = "untrained" if settings.trained else "trained"
    st.button(
        tr(f"switch_to_{other}"),
        key=key,
        icon=":material/swap_horiz:",
        help=tr(f"switch_to_{other}_help"),
        on_click=use_weights,
        args=(other,),
        width=width,
    )


def trained_caption(settings: ModelSettings, pooled: bool) -> None:
    """What the rows of a trained view are: one layer of a causal reader, maybe pooled."""
    st.caption(tr("trained_rows", layer=settings.layer))
    if pooled:
        st.caption(tr("trained_pooled"))


def learned_names(settings: ModelSettings, head_names: list[str]) -> list[str] | None:
    """Each head of the view's layer in plain words, from what the reader learned on
    held-out text: the one naming of its heads on a page (None: no facts for the layer)."""
    facts = head_facts()
    if facts is None or settings.layer is None or settings.layer >= len(facts):
        return None
    return [
        tr(f"learned_{fact.name or 'none'}", head=name, value=fact.value)
        for fact, name in zip(facts[settings.layer], head_names, strict=False)
    ]


def learned_section(settings: ModelSettings, head_names: list[str]) -> None:
    """Each head of the view's layer: its plain name and the held-out numbers behind it,
    then its same-word attention on this sentence against shuffled words."""
    st.subheader(tr("learned_header", layer=settings.layer))
    facts = head_facts()
    if facts is None or settings.layer is None or settings.layer >= len(facts):
        st.info(tr("learned_unavailable"))
        return
    st.caption(tr("learned_intro"))
    here = sentence_same_word(settings.model)
    lines = []
    names = learned_names(settings, head_names) or []
    for fact, plain in zip(facts[settings.layer], names, strict=False):
        numbers = tr(
            "learned_numbers",
            previous=fact.masses["previous"],
            start=fact.masses["start"],
            itself=fact.masses["self"],
            punctuation=fact.masses["punctuation"],
            far=fact.far,
            observed=fact.word_observed,
            shuffled=fact.word_shuffled,
            ratio=fact.word_ratio,
        )
        lines.append("**" + md_escape(plain) + "**  \n" + md_escape(numbers))
        if here is not None:
            s = here[fact.head]
            lines[-1] += "  \n" + md_escape(
                tr(
                    "learned_sentence",
                    observed=s.observed,
                    shuffled=s.shuffled,
                    ratio=s.ratio,
                    rows=s.rows,
                )
            )
    st.markdown("\n\n".join(lines))
    if here is None:
        st.caption(tr("learned_no_words"))
