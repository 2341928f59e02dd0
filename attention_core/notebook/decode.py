"""A decoder writing, in a notebook: `decode_view(model, prompt, steps=…)` runs
`attention_core.decode.decode` and draws every step behind a slider, offline.

    from attention_core.notebook import decode_view
    view = decode_view("reader", "今天天氣很", steps=8)       # the shipped reader
    view = decode_view(model, "The cat", steps=8, tokenizer=tokenizer)   # your causal LM
    view.attention[3]   # (L, H, t): the row that chose step 3's token, from the cache

Per step: the prefix as a strip, the row that chose the token in every layer × head (one
line of cells per head over the t positions), the model's top-5 with probabilities, the
logit lens (each layer's likeliest token) and the cache's size. The numbers are on the
view (`result`, `attention`, `top_probs`…), the picture is inline HTML and script (no CDN).
In a live kernel the view is a widget instead (`widget=`; notebook/decode_widget.py).

Shape legend: S steps, L layers, H heads, t positions a step's query met, k alternatives.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np

from attention_core.decode import DecodeResult, decode
from attention_core.i18n import DEFAULT_LANG, t
from attention_core.notebook.decode_widget import decode_widget
from attention_core.notebook.html import View, json_for_script
from attention_core.notebook.widget import use_widget

__all__ = ["DecodeView", "decode_view"]

DIGITS = 4  # weights and probabilities in the page; the arrays on the view keep every digit


class DecodeView(View):
    """The view, with the run behind it as plain arrays."""

    def __init__(self, body: str, *, title: str, result: DecodeResult) -> None:
        super().__init__(body, title=title)
        self.result = result
        self.tokens = result.tokens  # every id's label, the prompt's first
        self.attention = [s.attention for s in result.steps]  # S × (L, H, t)
        self.top_ids = np.array([s.top_ids for s in result.steps], dtype=np.int64)  # (S, k)
        self.top_probs = np.array([s.top_probs for s in result.steps], dtype=np.float32)
        self.lens_ids = np.array([s.lens_ids for s in result.steps], dtype=np.int64)  # (S, L, k)
        self.lens_probs = np.array([s.lens_probs for s in result.steps], dtype=np.float32)


def decode_view(
    model: Any,
    prompt: str,
    steps: int = 16,
    *,
    tokenizer: Any = None,
    force: Mapping[int, int | str] | None = None,
    temperature: float = 0.0,
    top_k: int | None = None,
    seed: int = 0,
    lang: str = DEFAULT_LANG,
    widget: bool | None = None,
) -> Any:
    """`decode(model, prompt, steps, …)` (same arguments, same refusals) drawn as a step
    slider. With no step written the view says so instead of drawing.

    `widget` as the other views take it (attention_core.notebook.widget): in a live kernel
    (None) or with True a widget sharing `step`, `layer`, `heads` and `selected` with
    Python (attention_core.notebook.decode_widget); False, or no step written, the
    static `DecodeView`."""
    result = decode(
        model,
        prompt,
        steps,
        tokenizer=tokenizer,
        force=force,
        temperature=temperature,
        top_k=top_k,
        seed=seed,
    )
    title = f"{t('nb_decode', lang)}: {result.model}"

    def static() -> DecodeView:
        return DecodeView(_body(result, title, lang), title=title, result=result)

    if not use_widget(widget) or not result.steps:
        return static()
    page = _page_data(result, lang)
    return decode_widget(result, page, title=title, lang=lang, static=static)


def _page_data(result: DecodeResult, lang: str) -> dict[str, Any]:
    """What the script draws, as plain JSON: rounded numbers, labels, translated words."""
    steps = []
    for s in result.steps:
        cache = s.cache
        steps.append(
            {
                "token": s.token,
                "forced": s.forced,
                "rows": np.round(s.attention, DIGITS).tolist(),  # (L, H, t)
                "top": [
                    [w, float(round(p, DIGITS))]
                    for w, p in zip(s.top_tokens, s.top_probs, strict=True)
                ],
                "lens": [
                    [row[0], float(round(p[0], DIGITS))]
                    for row, p in zip(s.lens_tokens, s.lens_probs, strict=True)
                ],
                "cache": t(
                    "nb_decode_cache",
                    lang,
                    positions=cache.positions,
                    kv_heads=cache.kv_heads,
                    heads=cache.heads,
                    kib=f"{cache.total_bytes / 1024:.1f}",
                ),
            }
        )
    words = ("nb_decode_step", "nb_decode_forced", "nb_decode_rows", "nb_decode_alternatives")
    return {
        "tokens": result.tokens,
        "prompt": result.prompt_length,
        "steps": steps,
        "words": {key: t(key, lang) for key in (*words, "nb_decode_lens")},
    }


_STYLE = (
    "<style>.studio-dec{font:13px sans-serif}.studio-dec .strip span{display:inline-block;"
    "padding:1px 3px;margin:1px;border:1px solid #ddd}.studio-dec .grid td{width:14px;"
    "height:14px;padding:0;border:1px solid #eee}.studio-dec .grid th{font-weight:normal;"
    "text-align:right;padding-right:4px}.studio-dec .new{outline:2px solid #d62728}</style>"
)

# Cells are the weights in blue (0 white, 1 full); each cell's title says its key and weight.
_SCRIPT = """(function () {
  const box = document.currentScript.parentElement;
  const d = DATA;
  const slider = box.querySelector("input");
  const out = box.querySelector(".studio-dec-out");
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function draw(i) {
    const s = d.steps[i], w = d.words, t = s.rows[0][0].length;
    out.replaceChildren();
    out.append(el("h4", w.nb_decode_step + " " + i + ": " + s.token +
      (s.forced ? " (" + w.nb_decode_forced + ")" : "")));
    const strip = el("div", undefined, "strip");
    d.tokens.slice(0, t).forEach(function (tok, j) {
      strip.append(el("span", tok, j === t - 1 ? "new" : undefined));
    });
    strip.append(el("span", s.token, "new"));
    out.append(strip, el("p", w.nb_decode_rows));
    const grid = el("table", undefined, "grid");
    s.rows.forEach(function (layer, l) {
      layer.forEach(function (row, h) {
        const tr = el("tr");
        tr.append(el("th", "L" + l + " H" + h));
        row.forEach(function (v, j) {
          const td = el("td");
          td.style.background = "rgba(31,119,180," + v + ")";
          td.title = d.tokens[j] + ": " + v;
          tr.append(td);
        });
        grid.append(tr);
      });
    });
    out.append(grid, el("p", w.nb_decode_alternatives));
    const top = el("ol");
    s.top.forEach(function (a) { top.append(el("li", a[0] + "  " + a[1])); });
    out.append(top, el("p", w.nb_decode_lens));
    const lens = el("ul");
    s.lens.forEach(function (a, l) { lens.append(el("li", "L" + l + ": " + a[0] + "  " + a[1])); });
    out.append(lens, el("p", s.cache));
  }
  slider.addEventListener("input", function () { draw(+slider.value); });
  draw(0);
})();"""


def _body(result: DecodeResult, title: str, lang: str) -> str:
    heading = f"<b>{html.escape(title)}</b>"
    if not result.steps:
        none = html.escape(t("nb_decode_none", lang))
        return f'<div class="studio-dec">{heading}<p>{none}</p></div>'
    notes = "".join(
        f"<p>{html.escape(note)}</p>" for note in (result.stopped, result.capped) if note
    )
    last = len(result.steps) - 1
    script = _SCRIPT.replace("DATA", json_for_script(_page_data(result, lang)), 1)
    return (
        f'<div class="studio-dec">{_STYLE}{heading}{notes}'
        f'<div><input type="range" min="0" max="{last}" value="0" step="1"></div>'
        f'<div class="studio-dec-out"></div><script>{script}</script></div>'
    )
