"""The head view's renderer: BertViz's picture of one layer, as JavaScript and CSS.

One renderer for the app and the notebook: ui/headview.py mounts it as a Streamlit
components-v2 element, `attention_core.notebook.head_view` inlines it into a notebook
output or a standalone HTML file (no CDN, no module loader). `renderHeadView(component)`
takes `{data: {spec: JSON}, parentElement}`, the shape Streamlit hands a component; the
spec is `figures.lens.head_view_data` plus `filename` and `text: {svg, hint, note,
open_cap}`, and from a notebook widget its state: `on_heads` (the heads on), `pinned`
(the query pinned, or null) and `line_scale` (absolute, relative, contrast), with
`component.on` callbacks back. Weights travel sparse (`sparse_weights`: only those >=
MIN_WEIGHT, as integers), which at 512 tokens × 12 heads is what keeps the view from
sending 3 million numbers; the spec says how many were left out, and `every_weight` sends
them all (dense) up to EVERY_WEIGHT_MAX weights.

Queries on the left, keys on the right (an encoder-decoder's cross-attention: decoder
tokens on the left, encoder tokens on the right, `spec.key_tokens`). At open every line
of every head is drawn, as BertViz does, as opaque as its weight (the OPEN_LINES strongest
when there are more, and the page says so). Hover (or click, to pin) a token on the left
and only its lines remain; a token on the right shows who attends to it. The coloured
squares above switch heads on and off. Tokens are drawn as SVG text nodes
(`textContent`), never parsed as HTML. The SVG button saves what is drawn as a vector file.
`spec.open_lines` (a notebook widget's) draws fewer lines at open, the strongest first, and
the page offers the rest up to OPEN_LINES (`text.more_lines`): SVG lines cost ~20 µs each
to create and lay out, so 20 000 of them are most of a redraw.

Shape legend: H heads, n queries, k keys (k = n but in cross-attention).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "EVERY_WEIGHT_MAX",
    "HEAD_VIEW_CSS",
    "HEAD_VIEW_JS",
    "MIN_WEIGHT",
    "OPEN_LINES",
    "SCALE",
    "left_out_params",
    "sparse_weights",
]

MIN_WEIGHT = 0.005  # lighter weights are left out by default (a line the eye cannot see)
SCALE = 100_000  # weights travel as integers of 1/100 000: within EXACT of the model's own
EVERY_WEIGHT_MAX = 4_000_000  # most weights one page ships when asked for every weight
OPEN_LINES = 20_000  # lines drawn at open at most (the strongest); SVG slows past that


def sparse_weights(weights: np.ndarray, *, every_weight: bool = False) -> dict[str, Any]:
    """One layer (H, n, k) as the weights a line is drawn for, row by row.

    Default: the weights >= MIN_WEIGHT as `counts` (H·n: keys kept per query), `keys` and
    `vals` (weight × SCALE) in order. `every_weight`: all H·n·k weights as `dense`
    (row-major). Either way `total` (H·n·k), `left_out` (non-zero weights not sent) and
    `left_mass` (their share of the attention, the rows' total mass being H·n) say what
    is missing; the renderer's `denseWeights` turns both forms back into H × n × k."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 3:
        raise ValueError(f"weights must have shape (H, n, k), got {w.shape}")
    H, n, _ = w.shape
    if every_weight:
        vals = np.rint(w * SCALE).astype(np.int64)  # (H, n, k)
        return {
            "dense": vals.reshape(-1).tolist(),
            "total": int(w.size),
            "left_out": 0,
            "left_mass": 0.0,
        }
    kept = w >= MIN_WEIGHT  # (H, n, k)
    counts = kept.sum(-1).reshape(-1)  # (H·n,)
    _, _, keys = np.nonzero(kept)  # C order: by head, then query, then key
    vals = np.rint(w[kept] * SCALE).astype(np.int64)
    light = ~kept & (w > 0)  # (H, n, k): lines that are left out
    return {
        "counts": counts.tolist(),
        "keys": keys.tolist(),
        "vals": vals.tolist(),
        "total": int(w.size),
        "left_out": int(light.sum()),
        "left_mass": float(w[light].sum() / max(H * n, 1)),
    }


def left_out_params(sparse: dict[str, Any]) -> dict[str, str] | None:
    """What `sparse_weights` left out, as the catalog's `hv_left_out` takes it (count,
    bound, share of the weights, share of the attention); None when nothing was."""
    if not sparse["left_out"]:
        return None
    return {
        "count": f"{sparse['left_out']:,}",
        "bound": f"{MIN_WEIGHT:g}",
        "share": f"{sparse['left_out'] / sparse['total']:.1%}",
        "mass": f"{sparse['left_mass']:.1%}",
    }


HEAD_VIEW_CSS = """
.studio-headview { font-family: "Noto Sans CJK TC", "Noto Sans", sans-serif; }
.studio-headview .hv-heads { display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px; }
.studio-headview .hv-head { width: 22px; height: 18px; border: 2px solid transparent;
  border-radius: 3px; cursor: pointer; padding: 0; }
.studio-headview .hv-head.off { opacity: 0.15; }
.studio-headview .hv-bar { display: flex; gap: 12px; align-items: center; font-size: 13px; }
.studio-headview .hv-note { font-size: 12px; color: #5f6170; margin-top: 4px; }
.studio-headview .hv-note:empty { display: none; }
.studio-headview svg text { font-size: 13px; cursor: pointer; fill: #31333F; }
.studio-headview svg text.pinned { font-weight: bold; fill: #FF2B2B; }
/* a long text scrolls inside the view (both columns together) instead of making the page
   n × 22 px tall (11 274 px at 512 tokens) */
.studio-headview .hv-scroll { max-height: min(75vh, 900px); overflow-y: auto; }
"""

# Defines `renderHeadView`; a caller adds how it is reached (an export, or a call).
_JS = r"""
const NS = "http://www.w3.org/2000/svg";
const ROW = 22, WIDTH = 520, LEFT_X = 150, RIGHT_X = 370, OPEN_LINES = __OPEN_LINES__;

function svgNode(tag, attrs) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// `sparse_weights` of one layer → H × n × k (n queries, k keys); `keep(i, j)` may leave
// more out (a notebook's sentence A/B filter)
function denseWeights(sparse, n, H, scale, keep, k) {
  k = k || n;
  const weights = [];
  let at = 0;
  for (let h = 0; h < H; h++) {
    const rows = [];
    for (let i = 0; i < n; i++) {
      const row = new Float64Array(k);
      if (sparse.dense) {
        for (let j = 0; j < k; j++, at++) {
          if (!keep || keep(i, j)) row[j] = sparse.dense[at] / scale;
        }
      } else {
        for (let c = sparse.counts[h * n + i]; c > 0; c--, at++) {
          const j = sparse.keys[at];
          if (!keep || keep(i, j)) row[j] = sparse.vals[at] / scale;
        }
      }
      rows.push(row);
    }
    weights.push(rows);
  }
  return weights;
}

// the k-th largest of values[0 … count) (1 ≤ k ≤ count, values ≥ 0), as sorting would
// give it: the values are counted into bins first and only the bin holding it is sorted
function kthLargest(values, count, k) {
  let max = 0;
  for (let i = 0; i < count; i++) if (values[i] > max) max = values[i];
  const BINS = 4096, scale = max > 0 ? BINS / max : 0;
  const bin = (v) => Math.min(BINS - 1, Math.floor(v * scale));
  const counts = new Uint32Array(BINS);
  for (let i = 0; i < count; i++) counts[bin(values[i])]++;
  let above = 0, b = BINS - 1;
  while (above + counts[b] < k) above += counts[b--];
  const inside = new Float32Array(counts[b]);
  let at = 0;
  for (let i = 0; i < count; i++) if (bin(values[i]) === b) inside[at++] = values[i];
  inside.sort();  // ascending: the (k − above)-th largest is counted from the end
  return inside[inside.length - (k - above)];
}

function renderHeadView(component) {
  // `on` (a notebook widget's): select(index | null) when a query is pinned or unpinned,
  // hover(index | null) over a query, heads(active) when a head is switched
  const { data, parentElement } = component;
  const on = component.on || {};
  // a JSON string from Streamlit; an object from a notebook's own controls (no re-parse)
  const spec = typeof data.spec === "string" ? JSON.parse(data.spec) : data.spec;
  let root = parentElement.querySelector(":scope > .studio-headview");
  if (!root) {
    root = document.createElement("div");
    root.className = "studio-headview";
    parentElement.appendChild(root);
  }
  const n = spec.tokens.length;
  const keyTokens = spec.key_tokens || spec.tokens;  // cross-attention: the encoder's
  const k = keyTokens.length;
  const weights = spec.weights ||
    denseWeights(spec.sparse, n, spec.heads.length, spec.scale, null, k);
  const shape = `${n}x${k}x${spec.heads.length}`;
  const sameShape = root.__shape === shape;
  const active = sameShape ? root.__active
                           : spec.heads.map((_, h) => !spec.active || spec.active[h]);
  let pinned = sameShape ? root.__pinned : null;  // {side: "q" | "k", index}
  // the caller's state, where it keeps one (a widget's `heads` and `selected`)
  if (spec.on_heads) active.forEach((_, h) => { active[h] = spec.on_heads.includes(h); });
  if (spec.pinned !== undefined) {
    pinned = spec.pinned === null ? null : { side: "q", index: spec.pinned };
  }
  // line opacity: the weight (absolute), against the row's even share (relative, 1 at
  // twice the share), or against the layer's largest weight (contrast)
  let top = 0;
  if (spec.line_scale === "contrast") {
    for (const head of weights) for (const row of head) for (const w of row) top = Math.max(top, w);
  }
  const opacity = (w) => spec.line_scale === "relative" ? Math.min(1, w * k / 2)
    : spec.line_scale === "contrast" && top > 0 ? w / top : Math.min(1, w);
  root.__shape = shape; root.__active = active; root.__pinned = pinned;
  root.replaceChildren();

  const heads = document.createElement("div");
  heads.className = "hv-heads";
  spec.heads.forEach((head, h) => {
    const b = document.createElement("button");
    b.className = "hv-head" + (active[h] ? "" : " off");
    b.style.background = head.color;
    b.title = head.name;
    b.dataset.head = String(h);
    b.onclick = () => {
      active[h] = !active[h];
      b.classList.toggle("off", !active[h]);
      if (on.heads) on.heads(active.slice());
      draw(pinned);
    };
    heads.appendChild(b);
  });
  root.appendChild(heads);

  const height = Math.max(n, k) * ROW + 10;
  const svg = svgNode("svg", { width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`,
                               xmlns: NS, class: "hv-svg" });
  const lines = svgNode("g", { class: "hv-lines" });
  svg.appendChild(lines);
  const labels = { q: [], k: [] };
  for (const side of ["q", "k"]) {
    (side === "q" ? spec.tokens : keyTokens).forEach((token, i) => {
      const t = svgNode("text", {
        x: side === "q" ? LEFT_X - 8 : RIGHT_X + 8, y: i * ROW + ROW / 2 + 5,
        "text-anchor": side === "q" ? "end" : "start", class: `hv-${side}`, "data-index": i,
      });
      t.textContent = token;
      t.addEventListener("mouseenter", () => {
        draw({ side, index: i });
        if (on.hover && side === "q") on.hover(i);
      });
      t.addEventListener("mouseleave", () => {
        draw(pinned);
        if (on.hover && side === "q") on.hover(null);
      });
      t.addEventListener("click", () => {
        pinned = pinned && pinned.side === side && pinned.index === i ? null : { side, index: i };
        root.__pinned = pinned;
        draw(pinned);
        if (on.select) on.select(pinned && pinned.side === "q" ? pinned.index : null);
      });
      labels[side].push(t);
      svg.appendChild(t);
    });
  }
  const scroll = document.createElement("div");
  scroll.className = "hv-scroll";
  scroll.appendChild(svg);
  root.appendChild(scroll);

  const bar = document.createElement("div");
  bar.className = "hv-bar";
  const save = document.createElement("button");
  save.className = "hv-save";
  save.textContent = spec.text.svg;
  save.onclick = () => {
    const blob = new Blob([new XMLSerializer().serializeToString(svg)], { type: "image/svg+xml" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = spec.filename + ".svg";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };
  const hint = document.createElement("span");
  hint.className = "hv-hint";
  hint.textContent = spec.text.hint;
  bar.append(save, hint);
  root.appendChild(bar);
  // what is not drawn, said on the page: weights left out for size (`sparse_weights`),
  // lines left out at open (more than OPEN_LINES)
  const note = document.createElement("div");
  note.className = "hv-note";
  root.appendChild(note);

  // lines are built off the page and added at once (one layout, not one per line)
  let batch = lines;
  function line(h, i, j, w) {
    batch.appendChild(svgNode("line", {
      x1: LEFT_X, y1: i * ROW + ROW / 2, x2: RIGHT_X, y2: j * ROW + ROW / 2,
      stroke: spec.heads[h].color, "stroke-width": 2.5, "stroke-opacity": opacity(w),
      "data-head": h, "data-query": i, "data-key": j, "data-weight": w,
    }));
  }

  // every line of every head on, the strongest OPEN_LINES when there are more; returns
  // [drawn, all]
  let openLines = Math.min(spec.open_lines || OPEN_LINES, OPEN_LINES);
  function drawAll() {
    const on = spec.heads.map((_, h) => h).filter((h) => active[h]);
    const all = new Float32Array(on.length * n * k);  // the non-zero weights, one pass
    let count = 0;
    for (const h of on) for (let i = 0; i < n; i++) {
      const row = weights[h][i];
      for (let j = 0; j < k; j++) if (row[j] > 0) all[count++] = row[j];
    }
    // the weight of the openLines-th strongest line (0: every line is drawn)
    const floor = count > openLines ? kthLargest(all, count, openLines) : 0;
    let drawn = 0;
    for (const h of on) for (let i = 0; i < n && drawn < openLines; i++) {
      const row = weights[h][i];
      for (let j = 0; j < k; j++) {
        const w = row[j];
        if (w > 0 && w >= floor && drawn < openLines) { line(h, i, j, w); drawn++; }
      }
    }
    return [drawn, count];
  }

  // the rest of the lines at open, on demand (where `spec.open_lines` drew fewer)
  const more = document.createElement("button");
  more.className = "hv-more";
  more.hidden = true;
  more.onclick = () => { openLines = OPEN_LINES; draw(pinned); };
  bar.appendChild(more);

  function draw(focus) {
    lines.replaceChildren();
    batch = document.createDocumentFragment();
    for (const side of ["q", "k"]) labels[side].forEach((t) => t.classList.remove("pinned"));
    let notes = spec.text.note ? [spec.text.note] : [];
    more.hidden = true;
    if (!focus) {
      const [drawn, count] = drawAll();
      lines.appendChild(batch);
      if (drawn < count && spec.text.open_cap) {
        notes.push(spec.text.open_cap.replace("{shown}", drawn.toLocaleString())
                                     .replace("{total}", count.toLocaleString()));
      }
      if (drawn < Math.min(count, OPEN_LINES) && spec.text.more_lines) {
        more.textContent = spec.text.more_lines
          .replace("{count}", Math.min(count, OPEN_LINES).toLocaleString());
        more.hidden = false;
      }
      note.textContent = notes.join(" ");
      return;
    }
    note.textContent = notes.join(" ");
    labels[focus.side][focus.index].classList.add("pinned");
    spec.heads.forEach((head, h) => {
      if (!active[h]) return;
      const others = focus.side === "q" ? k : n;
      for (let other = 0; other < others; other++) {
        const [i, j] = focus.side === "q" ? [focus.index, other] : [other, focus.index];
        const w = weights[h][i][j];
        if (w > 0) line(h, i, j, w);
      }
    });
    lines.appendChild(batch);
  }
  draw(pinned);
}
"""
HEAD_VIEW_JS = _JS.replace("__OPEN_LINES__", str(OPEN_LINES))
