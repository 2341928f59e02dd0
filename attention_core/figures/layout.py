"""The one rule for how token matrices are laid out and labelled, at every n from 2 to 512.

Every heatmap builder (`figures.heads.plot_heads` for grids of heads, `figures.heads.
matrix_figure` for a single matrix) asks here: how many panels in a row, how large, which
tokens get a tick label, at what font size and angle, and whether the cells are large enough
to hold their numbers. The rule works from the space a label needs, measured in pixels:

- A tick label occupies one line of text across the axis: `LABEL_PITCH` × its font size
  (Noto Sans CJK's line box is ≈ 1.45 em, so 1.6 em leaves a pixel or two between labels,
  rotated or not). An axis of `length` pixels holds `length / pitch` labels; with more
  tokens than that, only every `step`-th token is labelled.
- The font is the largest of `FONT_PX` that reaches the smallest step any of them reaches.
- Column labels lie flat when the widest one fits between two labelled ticks; otherwise
  they stand upright (-90°), where their width along the axis is one line, as for rows.
- Panels: as many in a row (at most `MAX_COLUMNS`) as keep a cell `MIN_CELL_PX` wide (room
  for every label at the smallest font); when not even two do, two in a row (one when
  there is one). So the panels get fewer and larger as n grows. Up to `NAMED_MAX` tokens
  the rows name every token: fewer panels in a row (one, at the least) where that needs it.
- With a step of 2, rows label the even tokens and columns the odd ones, so every token is
  labelled on one axis. With a larger step Plotly chooses the labelled ticks itself
  (`nticks`), so zooming in brings the labels of the zoomed tokens; hover always names them.
- Numbers are written into cells only when a cell is `CELL_NUMBER_PX` wide ("0.00" in
  10 px type); hover keeps them. Their type grows with the cell (a fifth of its side, up
  to `CELL_FONT_MAX_PX`), so a 150 px cell of a projected 4 × 4 matrix reads from the back
  of a room (`cell_number_px`).
- Titles: a panel's title wider than its column breaks into lines (`title_lines`, after
  "：", ": ", " · " or a space where it can, anywhere in CJK text), so the titles of
  neighbouring panels never run into each other; a single matrix's title sits at the top
  of the figure, `MATRIX_TITLE_PX` above the column labels, never on them.

Pure Python: `labels` come raw (as typed); the caller escapes them for Plotly.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from attention_core.figures.text import literal

__all__ = [
    "CELL_FONT_MAX_PX",
    "CELL_NUMBER_PX",
    "FONT_PX",
    "LABEL_CHARS_MAX",
    "LABEL_PITCH",
    "MATRIX_TITLE_PX",
    "MAX_COLUMNS",
    "MIN_CELL_PX",
    "MIN_SIZE_META",
    "MIN_WIDTH_META",
    "NAMED_MAX",
    "NOMINAL_WIDTH_PX",
    "PanelLayout",
    "TickPlan",
    "axis_ticks",
    "cell_number_px",
    "column_px",
    "labelled",
    "matrix_title",
    "min_cell_px",
    "panel_layout",
    "short_label",
    "text_px",
    "tick_plan",
    "title_lines",
]

NOMINAL_WIDTH_PX = 940  # a chart in the main column at a 1400 px window (measured in Chromium)
COLORBAR_PX = 140  # what Plotly keeps right of the panels for the colour bar and its title
MAX_COLUMNS = 4
MIN_CELL_PX = 14.4  # LABEL_PITCH × the smallest font: every token's label fits beside its cell
PANEL_MAX_PX = 600  # one panel alone is not drawn larger than this
PANEL_MIN_PX = 200  # nor a panel of a few tokens smaller than this (when there is room) ...
PANEL_PX_PER_TOKEN = 48  # ... or larger than this per token
FONT_PX = (12, 11, 10, 9)  # tick label sizes, largest first
LABEL_PITCH = 1.6  # one tick label needs this many font sizes along its axis
CELL_NUMBER_PX = 30.0  # a cell this wide holds "0.00" in 10 px type
CELL_NUMBER_MIN_H_PX = 16.0  # nor is a cell less tall than this given numbers
CELL_FONT_MIN_PX = 10  # cell numbers: 10 px type in a 30 px cell ...
CELL_FONT_MAX_PX = 20  # ... growing with the cell up to this
# layout.meta key: the width a figure was laid out for; the app's chart keeps it on a phone
# (the chart scrolls sideways in its own box) rather than squeeze labels and cell numbers
MIN_WIDTH_META = "studio_min_width"
# layout.meta key: [width, height], the least size at which the labels and cell numbers
# laid out still fit; presenter mode never lays the chart out smaller (ui/presenter.py)
MIN_SIZE_META = "studio_min_size"
MATRIX_TITLE_PX = 48  # a single matrix's title: 10 px above it, ~26 px of text, 12 px below
LABEL_CHARS_MAX = 12  # tick labels are cut to this many characters (hover shows them whole)
GAP_FRACTION = 0.02  # between panels of a row, as a fraction of the plot width
NAMED_MAX = 48  # up to this many tokens the rows name every token (where the width allows)


def text_px(text: str, font_px: float) -> float:
    """Rough rendered width of `text`: CJK and other wide characters 1 em, the rest 0.62 em."""
    return sum(font_px if unicodedata.east_asian_width(c) in "WF" else 0.62 * font_px for c in text)


def cell_number_px(cell_w: float, cell_h: float | None = None, *, widest: str = "0.00") -> int:
    """The type size of the text written into cells `cell_w` × `cell_h` pixels (square when
    `cell_h` is None), `widest` being its widest entry ("0.00" for weights, "-1.23", a
    word): 0 when the cells are too narrow for it in CELL_FONT_MIN_PX type (CELL_NUMBER_PX
    for "0.00", in proportion for wider text; no text, hover keeps it), else a fifth of
    the cell, from CELL_FONT_MIN_PX to CELL_FONT_MAX_PX, as wide as that proportion allows."""
    height = cell_w if cell_h is None else cell_h
    needed = CELL_NUMBER_PX * max(text_px(widest, 1.0), 1.0) / text_px("0.00", 1.0)
    if cell_w < needed - 1e-9 or height < CELL_NUMBER_MIN_H_PX:
        return 0
    size = min(cell_w / 5, height / 2, CELL_FONT_MIN_PX * cell_w / needed)
    return int(min(CELL_FONT_MAX_PX, max(CELL_FONT_MIN_PX, size)))


# break opportunities, the strong ones first: after a colon or comma or around " · ",
# then at any space, then (CJK text has no spaces) between any two characters
_BREAKS = (re.compile(r".+?(?:[：:，,;；]\s*|\s+·\s+|$)"), re.compile(r".+?(?:\s+|$)"))


def title_lines(title: str, width_px: float, font_px: float) -> list[str]:
    """`title` (raw text) in lines no wider than `width_px` at `font_px`, each line as
    long as fits: broken after "：", ": ", "，" or around " · " where possible, else at a
    space, else between characters. One line when it fits."""
    lines = [title]
    for breaks in (*_BREAKS, None):
        if all(text_px(line, font_px) <= width_px for line in lines):
            break
        out: list[str] = []
        for line in lines:
            if text_px(line, font_px) <= width_px:
                out.append(line)
            elif breaks is None:
                out += _cut(line, width_px, font_px)
            else:
                out += _fill(breaks.findall(line), width_px, font_px)
        lines = out
    return lines


def _fill(pieces: list[str], width_px: float, font_px: float) -> list[str]:
    """`pieces` joined into lines, each as long as fits (a piece wider stays alone)."""
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if line and text_px((line + piece).rstrip(), font_px) > width_px:
            lines.append(line.rstrip())
            line = ""
        line += piece
    return [*lines, line.rstrip()]


def _cut(line: str, width_px: float, font_px: float) -> list[str]:
    """`line` cut between characters into lines no wider than `width_px`."""
    out: list[str] = []
    while text_px(line, font_px) > width_px and len(line) > 1:
        cut = max(1, _fitting_chars(line, width_px, font_px))
        out.append(line[:cut].rstrip())
        line = line[cut:].lstrip()
    return [*out, line]


def _fitting_chars(text: str, width_px: float, font_px: float) -> int:
    for i in range(1, len(text) + 1):
        if text_px(text[:i], font_px) > width_px:
            return i - 1
    return len(text)


def matrix_title(text: str) -> dict[str, Any]:
    """A single matrix's title (`text` escaped): at the top of the figure, in the
    MATRIX_TITLE_PX band above the column labels, however tall the labels' band is, and
    from the matrix's left edge (a phone scrolling a wide chart sideways sees it whole)."""
    return {
        "text": text,
        "x": 0,
        "xref": "paper",
        "xanchor": "left",
        "y": 1.0,
        "yref": "container",
        "yanchor": "top",
        "pad": {"t": 10},
    }


def min_cell_px(plan: TickPlan, *, numbers_px: int = 0, number: str = "-0.00") -> float:
    """The narrowest cell along an axis labelled by `plan` whose labels still stand
    apart (a label's line, or a flat label's width, between two labelled ticks) and that
    holds `number` in `numbers_px` type (0: no numbers)."""
    need = 0.0
    if plan.shown:
        label = plan.widest_px + 4 if plan.angle == 0 else LABEL_PITCH * plan.font_px
        need = max(label, LABEL_PITCH * plan.font_px) / plan.step
    if numbers_px:
        need = max(need, text_px(number, numbers_px) + 6)
    return need


def short_label(label: str, limit: int = LABEL_CHARS_MAX) -> str:
    """A tick label cut to `limit` characters (hover still shows the whole `index:token`).

    Takes the raw text: cut before escaping, so an entity such as `&lt;` is never cut in half.
    """
    return label if len(label) <= limit else label[: limit - 1] + "…"


@dataclass(frozen=True)
class TickPlan:
    """Which tokens of an axis of `length_px` pixels carry a label, and how they look."""

    n: int
    font_px: int  # 0: no labels at all (not even one fits)
    step: int  # every step-th token is labelled (1: all)
    angle: int  # column labels: 0 (flat) or -90 (upright)
    texts: list[str]  # every token's label, cut to LABEL_CHARS_MAX (raw text)
    widest_px: float  # the widest cut label at font_px

    @property
    def shown(self) -> bool:
        return self.font_px > 0

    @property
    def band_px(self) -> int:
        """Room the column labels need under the panel."""
        if not self.shown:
            return 8
        if self.angle:
            return math.ceil(self.widest_px) + 10
        return math.ceil(self.font_px * 1.5) + 8

    @property
    def margin_px(self) -> int:
        """Room the row labels need left of the panel."""
        return math.ceil(self.widest_px) + 8 if self.shown else 0


def tick_plan(
    labels: Sequence[str], length_px: float, *, fonts: Sequence[int] = FONT_PX
) -> TickPlan:
    """The labelling of `labels` along an axis `length_px` long (see the module's rule),
    in one of the type sizes `fonts` (presenter mode allows only its own)."""
    n = len(labels)
    texts = [short_label(label) for label in labels]
    best: tuple[int, int] | None = None  # (step, font)
    for font in sorted(fonts):  # smallest font first: it reaches the smallest step
        capacity = math.floor(length_px / (LABEL_PITCH * font))
        if capacity < 1 or n == 0:
            continue
        step = max(1, math.ceil(n / capacity))
        if best is None or step <= best[0]:
            best = (step, font)
    if best is None:
        return TickPlan(n, 0, n or 1, 0, texts, 0.0)
    step, font = best
    widest = max((text_px(t, font) for t in texts), default=0.0)
    spacing = step * length_px / max(n, 1)  # pixels between two labelled ticks
    angle = 0 if widest + 4 <= spacing else -90
    return TickPlan(n, font, step, angle, texts, widest)


def labelled(plan: TickPlan, axis: str) -> list[int]:
    """The token indices that carry a label on `axis` ("x" columns, "y" rows).

    Step 2: rows the even tokens, columns the odd ones (every token named once). A larger
    step: every step-th from 0 on both axes (Plotly's own choice at this zoom, see
    `axis_ticks`).
    """
    if not plan.shown:
        return []
    start = 1 if plan.step == 2 and axis == "x" and plan.n > 1 else 0
    return list(range(start, plan.n, plan.step))


def axis_ticks(plan: TickPlan, categories: Sequence[str], axis: str) -> dict[str, Any]:
    """Plotly axis properties for `plan`; `categories` are the axis' escaped categories.

    Up to step 2 the ticks are listed (`tickvals`/`ticktext`, cut labels escaped by the
    caller's `escape`); beyond, Plotly picks `nticks` of them, so zooming in labels more
    tokens, and labels that had to be cut are renamed with `labelalias`.
    """
    if not plan.shown:
        return {"showticklabels": False, "ticks": ""}
    props: dict[str, Any] = {"showticklabels": True, "tickfont": {"size": plan.font_px}}
    if axis == "x":
        props["tickangle"] = plan.angle
    if plan.step <= 2:
        picked = labelled(plan, axis)
        props.update(
            tickmode="array",
            tickvals=[categories[i] for i in picked],
            ticktext=[_escape(plan.texts[i]) for i in picked],
        )
    else:
        props.update(tickmode="auto", nticks=math.ceil(plan.n / plan.step))
        alias = {
            categories[i]: _escape(plan.texts[i])
            for i in range(plan.n)
            if plan.texts[i] != unescape(categories[i])
        }
        if alias:
            props["labelalias"] = alias
    return props


def _escape(text: str) -> str:
    return literal(text)


def unescape(text: str) -> str:
    """The text behind a label that went through `literal` (its three HTML entities undone)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@dataclass(frozen=True)
class PanelLayout:
    """A grid of `panels` square n × n panels: `cols` in a row, `panel_px` a side."""

    cols: int
    rows: int
    panel_px: int
    ticks: TickPlan  # the same for rows and columns: all panels show the same tokens
    cell_numbers: bool  # write each weight into its cell
    min_font_px: int = 0  # cell numbers smaller than this are not written (hover keeps them)

    @property
    def cell_px(self) -> float:
        return self.panel_px / max(self.ticks.n, 1)

    @property
    def cell_font_px(self) -> int:
        """The cell numbers' type size (`cell_number_px`; 0 without numbers)."""
        size = cell_number_px(self.cell_px) if self.cell_numbers else 0
        if 0 < size < self.min_font_px:  # the least size allowed, where "0.00" fits in it
            wide = self.cell_px >= CELL_NUMBER_PX * self.min_font_px / CELL_FONT_MIN_PX
            return self.min_font_px if wide else 0
        return size


def column_px(cols: int, *, width_px: float, margin_px: float) -> float:
    """The width of one of `cols` columns of panels in a chart `width_px` wide whose row
    labels take `margin_px`: what a panel, and its title, may fill."""
    return (width_px - margin_px - COLORBAR_PX - 20) * (1 - GAP_FRACTION * (cols - 1)) / cols


def _panel_px(cols: int, n: int, width_px: float, margin_px: float) -> int:
    """A panel's side: its share of the width, but no larger than a few tokens need."""
    room = column_px(cols, width_px=width_px, margin_px=margin_px)
    return int(min(PANEL_MAX_PX, max(PANEL_MIN_PX, n * PANEL_PX_PER_TOKEN), room))


def _named_px(n: int, fonts: Sequence[int]) -> float:
    """The side of a panel whose rows name all n tokens in the smallest of `fonts`."""
    return math.ceil(n * LABEL_PITCH * min(fonts)) + 1


def panel_layout(
    labels: Sequence[str],
    panels: int,
    *,
    width_px: float = NOMINAL_WIDTH_PX,
    cols: int | None = None,
    panel_px: int | None = None,
    fonts: Sequence[int] = FONT_PX,
) -> PanelLayout:
    """How `panels` panels of len(labels) tokens are laid out in `width_px` pixels.

    `cols` and `panel_px` override the rule (a page that wants two panels side by side);
    `fonts`: the type sizes allowed (labels, and cell numbers no smaller than the least).
    """
    n = len(labels)
    panels = max(panels, 1)
    # the row labels' margin, at the largest font: an upper bound of what they will need
    margin = math.ceil(max((text_px(short_label(x), FONT_PX[0]) for x in labels), default=0)) + 8
    if cols is None:
        cols = min(panels, 2)
        for c in range(min(panels, MAX_COLUMNS), 0, -1):
            if _panel_px(c, n, width_px, margin) / max(n, 1) >= MIN_CELL_PX:
                cols = max(c, min(panels, 2))
                break
        if n <= NAMED_MAX:  # the rows name every token: fewer, larger panels where needed
            for c in range(min(cols, panels), 0, -1):
                room = column_px(c, width_px=width_px, margin_px=margin)
                side = max(_panel_px(c, n, width_px, margin), min(room, _named_px(n, fonts)))
                if tick_plan(labels, side, fonts=fonts).step == 1:
                    cols, panel_px = c, int(side)
                    break
    cols = max(1, min(cols, panels))
    size = panel_px or _panel_px(cols, n, width_px, margin)
    ticks = tick_plan(labels, size, fonts=fonts)
    return PanelLayout(
        cols=cols,
        rows=math.ceil(panels / cols),
        panel_px=size,
        ticks=ticks,
        cell_numbers=n > 0 and cell_number_px(size / n) > 0,
        min_font_px=min(fonts),
    )
