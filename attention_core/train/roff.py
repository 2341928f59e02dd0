"""Man pages as text: roff's escapes and macros (man and mdoc) → plain paragraphs.

Pure functions, testable without any package: `roff_text` (one line's escapes),
`roff_to_text` (a page → its paragraphs), `join_lines` (wrapped lines → one paragraph).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["join_lines", "roff_text", "roff_to_text"]

_WIDE = r"\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003134f"
_JOIN = re.compile(rf"(?<=[{_WIDE}]) (?=[{_WIDE}])")


def join_lines(lines: Iterable[str]) -> str:
    """Wrapped lines as one paragraph: one space between words, none between Chinese
    characters (a line break inside Chinese text is not a space)."""
    return _JOIN.sub("", " ".join(" ".join(lines).split()))


_COMMENT = re.compile(r'\\["#].*|(?<!\\)\\$')  # a comment; a line's continuation
_REQUEST = re.compile(r"^[.']\s*(\S*)\s*(.*)$")
_ARGS = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
_ESCAPE = re.compile(
    r"\\(?:"
    r"(?P<drop>[hvwoXZDlLbxNRSABCY]'[^']*'"  # \w'…' and friends: motions, widths
    r"|[fFmM](?:\[[^\]]*\]|\(..|.)"  # font and colour: \fB \fI \fR \fP \f(CW
    r"|s(?:[+-]?\d|\[[^\]]*\]|\([+-]?\d\d)"  # size: \s-1 \s0
    r"|[ngkV$](?:\[[^\]]*\]|\(..|.))"  # registers, macro arguments
    r"|\*(?:\[(?P<s1>[^\]]*)\]|\((?P<s2>..)|(?P<s3>.))"  # strings: \*(lq \*R
    r"|\[(?P<n1>[^\]]*)\]|\((?P<n2>..)"  # named characters: \(em \[u4E00]
    r"|(?P<c>.)"  # one character: \- \e \& …
    r")",
    re.S,
)
_NAMES = "em en hy mi lq rq oq cq aq dq bu co rg R tm Tm pl mu di <= >= != -> <- de ti ha rs ga sq"
_GLYPHS = "— – - - “ ” ‘ ’ ' \" • © ® ® ™ ™ + × ÷ ≤ ≥ ≠ → ← ° ~ ^ \\ ` '"
_NAMED = dict(zip(_NAMES.split(), _GLYPHS.split(), strict=True))
_SIMPLE = dict(zip("-eE\\'`. ~0t", "-\\\\\\'`.    ", strict=True))  # other escapes vanish
_BLOCKS = "de:. am:. ig:. TS:TE EQ:EN PS:PE EX:EE Vb:Ve CS:CE"  # opener:closer (".." is ".")
_SKIP_UNTIL = dict(pair.split(":") for pair in _BLOCKS.split())
_BREAKS = set("PP P LP HP RS RE br sp Sp TQ bp in ti ne PD Pp Lp Bl El It TP IP nf fi".split())
_HEADINGS = {"SH", "SS", "Sh", "Ss"}
_FONTS = set("B I R SM SB Nd Dq Sq Em Ql Sy Nm Xr".split())  # man and mdoc: text kept
_ALTERNATING = set("BR RB BI IB IR RI UE ME".split())


def _escape(m: re.Match[str]) -> str:
    if m.group("drop") is not None:
        return ""
    name = m.group("s1") or m.group("s2") or m.group("s3") or m.group("n1") or m.group("n2")
    if name is None:
        return _SIMPLE.get(m.group("c"), "")
    if re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
        return chr(int(name[1:], 16))
    return _NAMED.get(name, "")


def roff_text(line: str) -> str:
    """One line of roff with its escapes replaced: `\\fBls\\fR \\- list` → 'ls - list'."""
    return _ESCAPE.sub(_escape, _COMMENT.sub("", line))


def _args(rest: str) -> list[str]:
    return [q.replace('""', '"') if q or not s else s for q, s in _ARGS.findall(rest)]


def roff_to_text(roff: str) -> list[str]:
    """A man page's roff source (man or mdoc macros) → its paragraphs as plain text.

    Headings, .TP tags and each line between .nf and .fi are paragraphs of their own;
    comments, macro definitions, tables, equations and examples (.EX, .Vb, .CS) are dropped;
    .B/.I/.BR … keep their text (alternating fonts joined without a space, as roff prints
    them); other requests (.TH, .so, .if, .ds, …) are dropped whole.
    """
    paragraphs, current = [], []
    skip_until: str | None = None
    tag = nofill = False

    def flush() -> None:
        if text := join_lines(current):
            paragraphs.append(text)
        current.clear()

    for raw in roff.splitlines():
        request = _REQUEST.match(raw)
        name, rest = request.groups() if request else ("", "")
        if skip_until is not None:
            skip_until = None if request and name == skip_until else skip_until
            continue
        if request is None:
            current.append(roff_text(raw))
        elif name in _SKIP_UNTIL:
            flush()
            skip_until = _SKIP_UNTIL[name]
            continue
        elif name in _HEADINGS or name in _BREAKS:
            flush()
            nofill = {"nf": True, "fi": False}.get(name, nofill)
            if name in _HEADINGS or name == "IP":  # .IP's first argument is its tag
                current.append(roff_text(" ".join(_args(rest)[: 1 if name == "IP" else None])))
                flush()
            tag = name == "TP"  # the next line is the tag
            continue
        elif name in _FONTS or name in _ALTERNATING:
            current.append(roff_text(("" if name in _ALTERNATING else " ").join(_args(rest))))
        else:  # .TH .so .if .ds .nr .ft .IX …: nothing a reader sees as text
            continue
        if tag or nofill:  # a .TP tag, or a line in no-fill mode, is a paragraph
            flush()
            tag = False
    flush()
    return paragraphs
