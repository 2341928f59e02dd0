"""A walk through the app in Chromium as one numbered step after another, each followed by
the walk's invariants (`check_page`): the lecturer's walk (test_lecturer_walk.py) is made
of these steps.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from playwright.sync_api import Locator, Page

from attention_core.i18n import t
from attention_core.settings import DEFAULT_TEXT
from attention_core.tokenize import token_labels, tokenize

from .checks import check_page, expected_errors, screenshot
from .server import ServerLog
from .waits import expect_rerun, maybe_rerun
from .widgets import LANG_LABELS, main_area, sidebar

DEFAULTS = {
    "lang": "en",
    "text": DEFAULT_TEXT,
    "tokenizer": "auto",
    "attention": "multi",
    "embed_dim": "16",
    "num_heads": "4",
    "seed": "0",
    "causal": "false",
    "positional": "false",
}


class Walk:
    """One numbered step after another, each followed by the walk's invariants."""

    def __init__(self, page: Page, log: ServerLog) -> None:
        self.page = page
        self.log = log
        self.expected = dict(DEFAULTS)
        self.number = 0
        self.visited: set[str] = set()

    @property
    def lang(self) -> str:
        return self.expected["lang"]

    def tr(self, key: str, **params: object) -> str:
        return t(key, self.lang, **params)

    @property
    def main(self) -> Locator:
        return main_area(self.page)

    @property
    def side(self) -> Locator:
        return sidebar(self.page)

    def step(
        self,
        what: str,
        action: Callable[[], None] | None = None,
        *,
        rerun: bool = True,
        shot: str | None = None,
        **changes: str,
    ) -> None:
        """Do `action` (which must rerun the app if `rerun`), note the settings it changes,
        then check every invariant; a failure names the step."""
        self.number += 1
        label = f"walk step {self.number} ({self.lang}): {what}"
        print(label)
        since = self.log.size()
        if action is not None:
            if rerun:
                with expect_rerun(self.page):
                    action()
            else:
                with maybe_rerun(self.page):
                    action()
        self.expected.update(changes)
        check_page(
            self.page,
            self.log,
            since,
            what=label,
            expected=self.expected,
            allow_errors=expected_errors("quiz_wrong"),
        )
        if shot:
            screenshot(self.page, f"walk-{self.number:02d}-{shot}")

    # --- the sidebar ----------------------------------------------------------------------
    def language(self, lang: str) -> None:
        option = self.side.locator('[data-testid="stRadioOption"]', has_text=LANG_LABELS[lang])
        self.step(f"switch to {LANG_LABELS[lang]}", option.click, lang=lang, shot=f"lang-{lang}")

    def type_sentence(self, text: str) -> None:
        box = self.side.get_by_role("textbox", name=self.tr("text_label"))

        def action() -> None:
            box.fill(text)
            box.press("Control+Enter")

        self.step(f"type {text!r}", action, text=text)

    def number_input(self, key: str, value: int) -> None:
        box = self.side.get_by_role("spinbutton", name=self.tr(f"{key}_label"))

        def action() -> None:
            box.fill(str(value))
            box.press("Enter")

        self.step(f"{key} = {value}", action, **{key: str(value)})

    def toggle(self, key: str) -> None:
        value = "false" if self.expected[key] == "true" else "true"
        switch = self.side.get_by_text(self.tr(f"{key}_label"), exact=True)
        self.step(f"{key} → {value}", switch.click, **{key: value})

    def nav(self, path: str) -> None:
        """Open a page from the sidebar's navigation (its link, in the current language)."""
        link = self.side.locator(f'[data-testid="stSidebarNavLink"][href$="/{path}"]')
        if path == "":
            link = self.side.locator('[data-testid="stSidebarNavLink"]').first
        name = link.inner_text().strip().splitlines()[-1]  # the title, not the icon's name
        self.step(f"open page {name!r}", link.click, shot=f"page-{path or 'heatmaps'}-{self.lang}")
        assert urlsplit(self.page.url).path.rstrip("/").endswith(path)
        self.visited.add(path)

    def labels(self) -> list[str]:
        """The `index:token` labels of the sidebar's sentence, as the pages show them."""
        return token_labels(tokenize(self.expected["text"], self.expected["tokenizer"]))

    def heads(self) -> int:
        """Heads the sidebar's settings compute."""
        return 1 if self.expected["attention"] == "single" else int(self.expected["num_heads"])

    def segment(self, label_key: str, option: str) -> Locator:
        group = self.main.get_by_role("radiogroup", name=self.tr(label_key))
        return group.get_by_role("radio", name=option, exact=True)

    def combobox(self, label_key: str, *, area: Locator | None = None) -> Locator:
        return (area or self.main).get_by_role("combobox", name=self.tr(label_key))
