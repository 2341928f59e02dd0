"""Attention beside attribution, in a notebook: `attribution_view(model, text, target=…)`
runs `attention_core.attribution.agreement` and draws two rows of coloured tokens (the
target's attention rollout, the attribution's magnitude) and the agreement table, offline.

    from attention_core.notebook import attribution_view
    view = attribution_view("reader", "中和有一個永和路")           # the shipped reader
    view = attribution_view(model, "The cat sat", tokenizer=tokenizer)   # your causal LM
    view.scores, view.attention, view.rho   # the arrays behind the picture

The page is plain HTML: every token and label escaped, colours as inline styles, no
script and nothing from a CDN. In a live kernel the view is a widget instead (`widget=`;
notebook/attribution_widget.py).

Shape legend: n tokens, m keys compared, A methods, V views, L layers, H heads.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from attention_core.attribution import Agreement, agreement, head_table
from attention_core.i18n import DEFAULT_LANG, t
from attention_core.notebook.attribution_widget import attribution_widget
from attention_core.notebook.html import View
from attention_core.notebook.widget import use_widget

__all__ = ["AttributionView", "attribution_view"]

DIGITS = 3  # numbers in the page; the arrays on the view keep every digit


class AttributionView(View):
    """The view, with the agreement behind it as plain arrays."""

    def __init__(self, body: str, *, title: str, result: Agreement) -> None:
        super().__init__(body, title=title)
        first = next(iter(result.attributions.values()))
        self.result = result
        self.tokens = first.tokens  # (n,)
        self.keys = result.views.keys  # (m,) the positions compared
        self.scores = first.scores  # (n,) the first method's
        self.attention = result.views.rollout[-1]  # (m,) the last layer's rollout row
        self.rho, self.tau, self.p = result.rho, result.tau, result.p  # (A, V, L, H) each


def attribution_view(
    model: Any,
    text: str,
    *,
    target: int | str | None = None,
    tokenizer: Any = None,
    position: int = -1,
    method: str = "integrated_gradients",
    steps: int = 32,
    lang: str = DEFAULT_LANG,
    widget: bool | None = None,
) -> Any:
    """`agreement(model, text, …)` (same arguments, same refusals) with `method` first,
    drawn as two rows of tokens and the table of every head.

    `widget` as the other views take it (attention_core.notebook.widget): in a live kernel
    (None) or with True a widget sharing `method`, `layer`, `head` and `selected` with
    Python (attention_core.notebook.attribution_widget); False the static
    `AttributionView`."""
    others = [m for m in ("integrated_gradients", "input_x_gradient", "occlusion") if m != method]
    result = agreement(
        model,
        text,
        tokenizer=tokenizer,
        target=target,
        position=position,
        methods=[method, *others],
        steps=steps,
    )
    title = f"{t('nb_attribution', lang)}: {next(iter(result.attributions.values())).model}"

    def static() -> AttributionView:
        return AttributionView(_body(result, title, lang), title=title, result=result)

    if not use_widget(widget):
        return static()
    return attribution_widget(
        result,
        title=title,
        what=lambda a: _what(a, lang),
        gap=lambda a: _gap(a, lang),
        table=lambda name: [_row_cells(row, lang) for row in head_table(result, name)],
        columns=[t(f"nb_attribution_{c}", lang) for c in COLUMNS],
        lang=lang,
        static=static,
    )


def _cells(labels: list[str], values: np.ndarray, colour: str) -> str:
    """One row of tokens, each on a background as strong as its share of the row's max."""
    top = max(float(np.max(values)), 1e-12)
    cells = []
    for label, value in zip(labels, values, strict=True):
        alpha = round(float(value) / top, 3)
        cells.append(
            f'<span style="background:rgba({colour},{alpha});padding:2px 4px;margin:1px;'
            f'display:inline-block;border:1px solid #ddd" title="{value:.{DIGITS}g}">'
            f"{html.escape(label) or '&nbsp;'}</span>"
        )
    return "".join(cells)


def _verdict(row: Any, lang: str) -> str:
    if row.verdict == "sink":
        return t("nb_attribution_sink", lang, token=row.sink)
    return t(f"nb_attribution_{row.verdict}", lang)


COLUMNS = ("layer", "head", "rho", "tau", "p", "norm", "ablation", "verdict")


def _what(first: Any, lang: str) -> str:
    """The line that says what is explained (the target, the method)."""
    if first.kind == "encoder":
        return t("nb_attribution_similarity", lang, target=first.target_token, method=first.method)
    return t(
        "nb_attribution_target",
        lang,
        target=first.target_token,
        position=first.position,
        method=first.method,
    )


def _gap(first: Any, lang: str) -> str:
    """Integrated gradients' completeness gap as a line, or "" for the other methods."""
    if first.completeness_gap is None:
        return ""
    return t("nb_attribution_gap", lang, gap=f"{first.completeness_gap:.2%}")


def _row_cells(row: Any, lang: str) -> list[str]:
    """One head's row of the table, as the page writes it."""
    numbers = (row.rho, row.tau, row.p, row.norm_rho, row.ablation)
    cells = [str(row.layer), str(row.head), *(f"{x:.{DIGITS}g}" for x in numbers)]
    return [*cells, _verdict(row, lang)]


def _body(result: Agreement, title: str, lang: str) -> str:
    first = next(iter(result.attributions.values()))
    keys = result.views.keys
    labels = [first.tokens[int(k)] for k in keys]
    lines = [f"<b>{html.escape(title)}</b>", f"<p>{html.escape(_what(first, lang))}</p>"]
    if first.completeness_gap is not None:
        lines.append(f"<p>{html.escape(_gap(first, lang))}</p>")
    for key, values, colour in (
        ("nb_attribution_attention", result.views.rollout[-1], "31,119,180"),
        ("nb_attribution_scores", np.abs(first.scores[keys]), "214,39,40"),
    ):
        lines.append(
            f"<p>{html.escape(t(key, lang))}</p><div>{_cells(labels, values, colour)}</div>"
        )
    head = "".join(f"<th>{html.escape(t(f'nb_attribution_{c}', lang))}</th>" for c in COLUMNS)
    rows = []
    for row in result.table:
        cells = _row_cells(row, lang)
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    lines.append(f'<table style="border-collapse:collapse"><tr>{head}</tr>{"".join(rows)}</table>')
    return '<div class="studio-attr" style="font:13px sans-serif">' + "".join(lines) + "</div>"
