"""A seeded monkey in real Chromium: random actions over whatever widgets the app shows.

From a fixed seed (`random.Random(seed)`), each action picks one visible thing a student
could operate and operates it: buttons, radio options, segmented controls, toggles, an
option from an opened selectbox / multiselect, a slider notch, a number input's +/-,
text typed into a text area or input, a data editor's cell, a language switch, a page from
the navigation, the browser's back and forward buttons. After every action the app must
become idle again (a run, or none if the action changed nothing) and show no exception
box, no error box (except the quiz's wrong-guess box and a model name the monkey typed
that does not load), print no traceback, paint every chart, raise no JavaScript error,
and keep the address bar and the sidebar in agreement, in the language last chosen.

On failure the seed and the numbered action log are printed; rerun the same walk with
`MONKEY_SEED=<seed> MONKEY_ACTIONS=<n> pytest tests/browser/test_monkey.py -k default`.
By default one seed and 30 actions run (about half a minute); `pytest -m monkey` runs the
long walk (3 seeds × 400 actions). Costly actions are capped: number inputs are only
stepped (never typed), a +/- step above CAP_VALUE steps down instead (training steps stay
in the hundreds), typed text is at most 300 characters.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .checks import check_page, collect_dialogs, collect_page_errors, expected_errors, screenshot
from .chromium import APP_TIMEOUT_MS
from .server import ServerLog
from .waits import maybe_rerun, open_page
from .widgets import LANG_LABELS, edit_cell, url_params

DEFAULT_SEED = 20261201
DEFAULT_ACTIONS = 30
LONG_SEEDS = (1, 2, 3)
LONG_ACTIONS = 400
CAP_VALUE = 400  # a number input at or above this is stepped down, not up
OPEN_MS = 3_000  # a selectbox's list or a cell's editor that has not opened by now never will

TEXTS = (
    "中和有一個永和路",
    "我愛自然語言處理，也愛注意力。",
    "The cat sat on the mat because it was tired.",
    "BERT 是 encoder，GPT 是 decoder。",
    "a | b | c",
    "|",
    "",
    "   ",
    "🙂👍🏽 emoji 😀",
    "שלום עולם مرحبا",
    "<script>alert(1)</script> **bold** $x^2$ :red[red]",
    "123 456 7.5e3",
    "zero\u200bwidth\u202eflip",
    "line one\nline two",
    "字" * 300,
)
GRID_VALUES = ("0", "1", "0.5", "0.25", "2", "-1", "", "abc", "1e9")
SLIDER_KEYS = ("ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown")
# kind → weight of choosing that kind (among the kinds shown now)
WEIGHTS = {
    "button": 3.0,
    "radio": 2.0,
    "segment": 2.0,
    "toggle": 2.0,
    "select": 3.0,
    "slider": 2.0,
    "step": 3.0,
    "textarea": 1.0,
    "textinput": 1.0,
    "grid": 1.0,
    "nav": 3.0,
    "language": 1.5,
    "back": 0.7,
    "forward": 0.4,
}

# Tags what can be operated now with data-monkey="<n>" and returns [{kind, area, text}],
# in document order (the same page state gives the same list, so a seed reproduces).
_CANDIDATES = """
() => {
  for (const el of document.querySelectorAll('[data-monkey]')) el.removeAttribute('data-monkey');
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return [];
  const out = [];
  const shown = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none';
  };
  const add = (el, kind, box = el, extra = {}) => {
    if (!el || !shown(box)) return;
    el.setAttribute('data-monkey', String(out.length));
    const area = el.closest('[data-testid="stSidebar"]') ? 'sidebar' : 'main';
    // the widget's key, from its container's st-key-<key> class
    const holder = el.closest('[class*="st-key-"]');
    const key = holder ? [...holder.classList].find((c) => c.startsWith('st-key-')).slice(7) : '';
    const text = (el.innerText || el.getAttribute('aria-label') || '');
    out.push({kind, area, key, text: text.trim().replace(/\\s+/g, ' ').slice(0, 50), ...extra});
  };
  const q = (selector) => app.querySelectorAll(selector);
  q('[data-testid="stButton"] button, [data-testid="stDownloadButton"] button')
    .forEach((b) => { if (!b.disabled) add(b, 'button'); });
  q('[data-testid="stRadio"] label[data-testid="stRadioOption"]').forEach((l) => {
    const input = l.querySelector('input');
    if (input && !input.disabled) add(l, 'radio');
  });
  q('[data-testid="stButtonGroup"] button[data-variant]')  // not the label's help button
    .forEach((b) => { if (!b.disabled) add(b, 'segment'); });
  q('[data-testid="stCheckbox"]').forEach((w) => {
    const input = w.querySelector('input');
    if (input && !input.disabled) add(w.querySelector('label'), 'toggle', w);
  });
  q('[data-testid="stSelectbox"] input[role="combobox"], '
    + '[data-testid="stMultiSelect"] input[role="combobox"]').forEach((i) => {
    const box = i.closest('[data-testid="stSelectbox"], [data-testid="stMultiSelect"]');
    if (!i.disabled) add(i, 'select', box);
  });
  q('[data-testid="stSlider"] input[type="range"]').forEach((i) => {
    if (!i.disabled) add(i, 'slider', i.closest('[data-testid="stSlider"]'));
  });
  q('[data-testid="stNumberInputStepUp"], [data-testid="stNumberInputStepDown"]').forEach((b) => {
    const input = b.closest('[data-testid="stNumberInput"]').querySelector('input');
    const up = b.getAttribute('data-testid') === 'stNumberInputStepUp';
    if (!b.disabled) add(b, 'step', b, {up, value: Number(input.value)});
  });
  q('[data-testid="stTextArea"] textarea')
    .forEach((t) => { if (!t.disabled) add(t, 'textarea'); });
  q('[data-testid="stTextInput"] input')
    .forEach((t) => { if (!t.disabled) add(t, 'textinput'); });
  q('[data-testid="stDataFrame"]').forEach((g) => {
    const table = g.querySelector('table[role="grid"]');
    const rows = Number(table?.getAttribute('aria-rowcount') || 1) - 1;
    const cols = Number(table?.getAttribute('aria-colcount') || 1) - 1;
    if (rows > 0 && cols > 0) add(g, 'grid', g, {rows, cols});
  });
  q('[data-testid="stSidebarNavLink"]').forEach((a) => {
    add(a, 'nav', a, {text: a.querySelector('span[label]')?.getAttribute('label') || a.href});
  });
  return out;
}
"""


@dataclass
class Monkey:
    """One seeded walk: its random source, the page, and what it has done so far."""

    page: Page
    log: ServerLog
    base_url: str
    seed: int
    rng: random.Random = field(init=False)
    lang: str = "en"
    actions: list[str] = field(default_factory=list)
    js_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # --- the walk ---------------------------------------------------------------------------
    def run(self, count: int) -> None:
        self.js_errors = collect_page_errors(self.page)
        self.dialogs = collect_dialogs(self.page)
        since = self.log.size()
        open_page(self.page, self.base_url)
        self.check("open the app", since)
        for number in range(1, count + 1):
            candidates = self.page.evaluate(_CANDIDATES)
            kind, target = self.choose(candidates)
            where = f"{self.lang} /{urlsplit(self.page.url).path.strip('/')}"
            entry = f"{number:03d} [{where}] {kind}"
            self.actions.append(entry)
            since = self.log.size()
            with maybe_rerun(self.page, start_ms=600, quiet_ms=150) as settled:
                detail = self.act(kind, target)
            self.actions[-1] = f"{entry}: {detail}" + ("" if settled.reran else " (no rerun)")
            self.check(self.actions[-1], since)

    def choose(self, candidates: list[dict[str, Any]]) -> tuple[str, dict[str, Any] | None]:
        """A kind of action (weighted, among those possible now), then one of its targets."""
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for index, c in enumerate(candidates):
            c["index"] = index
            kind = c["kind"]
            if kind == "radio" and c["text"] in LANG_LABELS.values():
                kind = "language"
            by_kind.setdefault(kind, []).append(c)
        kinds = [k for k in WEIGHTS if k in by_kind or k in ("back", "forward")]
        kind = self.rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        if kind in ("back", "forward"):
            return kind, None
        targets = by_kind[kind]
        weights = [2 if t["area"] == "main" else 1 for t in targets]  # the page's own first
        return kind, self.rng.choices(targets, weights)[0]

    def check(self, what: str, since: int) -> None:
        """The invariants after an action (`since`: the server log's size before it)."""
        check_page(
            self.page,
            self.log,
            since,
            what=what,
            expected={"lang": self.lang},
            allow_errors=expected_errors("quiz_wrong", "pretrained_load_error"),
            quiet_ms=150,
        )
        assert not self.js_errors, f"JavaScript errors after {what}: {self.js_errors}"
        assert not self.dialogs, f"dialogs after {what}: {self.dialogs}"

    # --- the actions ------------------------------------------------------------------------
    def act(self, kind: str, target: dict[str, Any] | None) -> str:
        page = self.page
        if target is None:
            return self.history(kind)
        element = page.locator(f'[data-monkey="{target["index"]}"]')
        name = f"{target['area']} {target['key'] or '-'} {target['text']!r}"
        if kind in ("button", "radio", "segment", "toggle", "nav"):
            element.click()
            return f"click {name}"
        if kind == "language":  # always the other one: the current one is a plain no-op
            self.lang = next(code for code in LANG_LABELS if code != self.lang)
            option = f'[data-testid="stRadioOption"]:has-text("{LANG_LABELS[self.lang]}")'
            page.locator('[data-testid="stSidebar"]').locator(option).click()
            return f"language → {LANG_LABELS[self.lang]}"
        if kind == "step":
            up = target["up"] and target["value"] < CAP_VALUE
            if not up and target["up"]:  # too big to grow: the - button beside it instead
                element = element.locator("xpath=..").get_by_test_id("stNumberInputStepDown")
            element.click()
            return f"{'+' if up else '-'} on {name} (was {target['value']:g})"
        if kind == "slider":
            key = self.rng.choice(SLIDER_KEYS)
            element.press(key)
            return f"{key} on slider {name}"
        if kind == "select":
            return self.select(element, name)
        if kind in ("textarea", "textinput"):
            text = self.rng.choice(TEXTS)
            element.fill(text)
            element.press("Control+Enter" if kind == "textarea" else "Enter")
            return f"type {text[:40]!r}{'…' if len(text) > 40 else ''} into {name}"
        if kind == "grid":
            row = self.rng.randrange(min(target["rows"], 6))
            column = self.rng.randrange(min(target["cols"], 6))
            value = self.rng.choice(GRID_VALUES)
            try:
                edit_cell(page, element, row, column, value, open_timeout_ms=OPEN_MS)
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
                return f"cell ({row}, {column}) of {name}: not editable"
            return f"cell ({row}, {column}) of {name} = {value!r}"
        raise AssertionError(f"unknown action kind {kind}")

    def select(self, element: Any, name: str) -> str:
        page = self.page
        listbox = page.get_by_role("listbox").first
        element.scroll_into_view_if_needed()
        element.click()
        try:
            listbox.wait_for(state="visible", timeout=OPEN_MS)
        except PlaywrightTimeout:
            element.press("ArrowDown")
            try:
                listbox.wait_for(state="visible", timeout=OPEN_MS)
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
                return f"open {name}: no list"
        options = listbox.get_by_role("option")
        texts = options.all_inner_texts()
        if not texts:
            page.keyboard.press("Escape")
            return f"open {name}: empty list"
        choice = self.rng.randrange(len(texts))
        options.nth(choice).click()
        if listbox.is_visible():  # a multiselect stays open
            page.keyboard.press("Escape")
        return f"pick {texts[choice]!r} in {name}"

    def history(self, kind: str) -> str:
        page = self.page
        app = urlsplit(self.base_url).netloc
        before = page.url
        try:
            (page.go_back if kind == "back" else page.go_forward)(timeout=10_000)
        except PlaywrightTimeout:
            pass  # a history entry of the same document: no navigation to wait for
        if urlsplit(page.url).netloc != app:  # before the app's first page: come back
            page.go_forward(timeout=APP_TIMEOUT_MS)
            return f"{kind}: left the app ({page.url}), forward again"
        return f"{kind}: {urlsplit(before).path or '/'} → {urlsplit(page.url).path or '/'}"


def _walk(page: Page, base_url: str, log: ServerLog, seed: int, count: int) -> None:
    monkey = Monkey(page, log, base_url, seed)
    try:
        monkey.run(count)
    except BaseException as error:
        shot = screenshot(page, f"monkey-{seed}-FAILED") if not page.is_closed() else None
        steps = "\n".join(monkey.actions)
        raise AssertionError(
            f"monkey walk failed at action {len(monkey.actions)} (seed {seed}).\n"
            f"Reproduce: MONKEY_SEED={seed} MONKEY_ACTIONS={len(monkey.actions)} "
            f"python -m pytest tests/browser/test_monkey.py -k default\n"
            f"Screenshot: {shot}\nURL: {page.url}\nSettings: {url_params(page)}\n"
            f"Actions:\n{steps}\n\n{type(error).__name__}: {error}"
        ) from error
    print(f"\nmonkey seed {seed}: {count} actions\n" + "\n".join(monkey.actions))
    screenshot(page, f"monkey-{seed}-end")


SEED = int(os.environ.get("MONKEY_SEED", DEFAULT_SEED))
ACTIONS = int(os.environ.get("MONKEY_ACTIONS", DEFAULT_ACTIONS))
SECONDS_PER_ACTION = 5  # for pytest-timeout only: about 1-2 s each on the 2-core machine


@pytest.mark.timeout(max(600, ACTIONS * SECONDS_PER_ACTION))
def test_monkey_default(page: Page, app_server: str, server_log: ServerLog) -> None:
    _walk(page, app_server, server_log, SEED, ACTIONS)


@pytest.mark.monkey
@pytest.mark.timeout(LONG_ACTIONS * SECONDS_PER_ACTION)
@pytest.mark.parametrize("seed", LONG_SEEDS)
def test_monkey_long(page: Page, app_server: str, server_log: ServerLog, seed: int) -> None:
    _walk(page, app_server, server_log, seed, LONG_ACTIONS)
