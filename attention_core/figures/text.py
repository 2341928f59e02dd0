"""Text for Plotly: every string a figure builder draws is shown literally, never as markup.

Plotly reads a pseudo-HTML subset in all the text it draws (tick labels, hover labels,
annotations, titles, legend entries): `<b>`, `<i>`, `<br>`, `<a href>`, `<sup>`, `<sub>`,
`<span style>`, and the entities `&lt;`, `&amp;`, `&#x41;`… Tokens come from what a student
types, so a token "<b>b</b>" would be drawn as a bold "b" and "x<br>y" on two lines.

Each figure builder in this package therefore passes every caller-supplied string through
`literal` once, at its entry, and adds its own markup (if any) around the escaped text.
Plotly decodes `&amp;`, `&lt;` and `&gt;` when it draws, so the student sees the text as typed.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["literal", "literals"]


def literal(text: str) -> str:
    """`text` escaped so Plotly draws it as is: `&` → `&amp;`, `<` → `&lt;`, `>` → `&gt;`.

    `&` goes first, or the `&` of the new `&lt;` would be escaped again. Not idempotent, on
    purpose: "&lt;" typed by a student is drawn as "&lt;" (`literal("&lt;") == "&amp;lt;"`),
    so escape each string exactly once.
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def literals(texts: Iterable[str]) -> list[str]:
    """`literal` of each text, in order: axis categories, tick texts, titles."""
    return [literal(text) for text in texts]
