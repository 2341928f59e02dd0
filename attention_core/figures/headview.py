"""The head view's renderer: BertViz's picture of one layer, as JavaScript and CSS.

One renderer for the app and the notebook: ui/headview.py mounts it as a Streamlit
components-v2 element, `attention_core.notebook.head_view` inlines it into a notebook
output or a standalone HTML file (no CDN, no module loader). `renderHeadView(component)`
takes `{data: {spec: JSON}, parentElement}`, the shape Streamlit hands a component; the
spec is `figures.lens.head_view_data` plus `filename` and `text: {svg, hint}`. Weights
travel sparse (`sparse_weights`: only those a line is drawn for, as integers), which at
512 tokens × 12 heads is what keeps the view from sending 3 million numbers.

Queries on the left, keys on the right. Hover (or click, to pin) a token on the left and
lines run to the keys it attends to, one colour per head, as opaque as the weight; a token
on the right shows who attends to it. The coloured squares above switch heads on and off.
Tokens are drawn as SVG text nodes (`textContent`), never parsed as HTML. The SVG button
saves what is drawn as a vector file.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HEAD_VIEW_CSS", "HEAD_VIEW_JS", "MIN_WEIGHT", "SCALE", "sparse_weights"]

MIN_WEIGHT = 0.005  # lighter weights draw no line, so they are not sent
SCALE = 10_000  # weights travel as integers of 1/10 000 (4 decimals)


def sparse_weights(weights: np.ndarray) -> dict[str, list[int]]:
    """One layer (H, n, n) as the weights a line is drawn for (>= MIN_WEIGHT), row by row:
    `counts` (H·n: keys kept per query), `keys` and `vals` (weight × SCALE) in order; the
    renderer's `denseWeights` turns them back into H × n × n."""
    kept = weights >= MIN_WEIGHT  # (H, n, n)
    counts = kept.sum(-1).reshape(-1)  # (H·n,)
    _, _, keys = np.nonzero(kept)  # C order: by head, then query, then key
    vals = np.rint(weights[kept] * SCALE).astype(np.int64)
    return {"counts": counts.tolist(), "keys": keys.tolist(), "vals": vals.tolist()}


HEAD_VIEW_CSS = """
.studio-headview { font-family: "Noto Sans CJK TC", "Noto Sans", sans-serif; }
.studio-headview .hv-heads { display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px; }
.studio-headview .hv-head { width: 22px; height: 18px; border: 2px solid transparent;
  border-radius: 3px; cursor: pointer; padding: 0; }
.studio-headview .hv-head.off { opacity: 0.15; }
.studio-headview .hv-bar { display: flex; gap: 12px; align-items: center; font-size: 13px; }
.studio-headview svg text { font-size: 13px; cursor: pointer; fill: #31333F; }
.studio-headview svg text.pinned { font-weight: bold; fill: #FF2B2B; }
/* a long text scrolls inside the view (both columns together) instead of making the page
   n × 22 px tall (11 274 px at 512 tokens) */
.studio-headview .hv-scroll { max-height: min(75vh, 900px); overflow-y: auto; }
"""

# Defines `renderHeadView`; a caller adds how it is reached (an export, or a call).
_JS = r"""
const NS = "http://www.w3.org/2000/svg";
const ROW = 22, WIDTH = 520, LEFT_X = 150, RIGHT_X = 370, MIN_WEIGHT = __MIN_WEIGHT__;

function svgNode(tag, attrs) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// `sparse_weights` of one layer → H × n × n; `keep(i, j)` may leave more out (a notebook's
// sentence A/B filter)
function denseWeights(sparse, n, H, scale, keep) {
  const weights = [];
  let at = 0;
  for (let h = 0; h < H; h++) {
    const rows = [];
    for (let i = 0; i < n; i++) {
      const row = new Float64Array(n);
      for (let c = sparse.counts[h * n + i]; c > 0; c--, at++) {
        const j = sparse.keys[at];
        if (!keep || keep(i, j)) row[j] = sparse.vals[at] / scale;
      }
      rows.push(row);
    }
    weights.push(rows);
  }
  return weights;
}

function renderHeadView(component) {
  const { data, parentElement } = component;
  // a JSON string from Streamlit; an object from a notebook's own controls (no re-parse)
  const spec = typeof data.spec === "string" ? JSON.parse(data.spec) : data.spec;
  let root = parentElement.querySelector(":scope > .studio-headview");
  if (!root) {
    root = document.createElement("div");
    root.className = "studio-headview";
    parentElement.appendChild(root);
  }
  const n = spec.tokens.length;
  const weights = spec.weights || denseWeights(spec.sparse, n, spec.heads.length, spec.scale);
  const sameShape = root.__n === n && root.__h === spec.heads.length;
  const active = sameShape ? root.__active
                           : spec.heads.map((_, h) => !spec.active || spec.active[h]);
  let pinned = sameShape ? root.__pinned : null;  // {side: "q" | "k", index}
  root.__n = n; root.__h = spec.heads.length; root.__active = active;
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
      draw(pinned);
    };
    heads.appendChild(b);
  });
  root.appendChild(heads);

  const height = n * ROW + 10;
  const svg = svgNode("svg", { width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`,
                               xmlns: NS, class: "hv-svg" });
  const lines = svgNode("g", { class: "hv-lines" });
  svg.appendChild(lines);
  const labels = { q: [], k: [] };
  for (const side of ["q", "k"]) {
    spec.tokens.forEach((token, i) => {
      const t = svgNode("text", {
        x: side === "q" ? LEFT_X - 8 : RIGHT_X + 8, y: i * ROW + ROW / 2 + 5,
        "text-anchor": side === "q" ? "end" : "start", class: `hv-${side}`, "data-index": i,
      });
      t.textContent = token;
      t.addEventListener("mouseenter", () => draw({ side, index: i }));
      t.addEventListener("mouseleave", () => draw(pinned));
      t.addEventListener("click", () => {
        pinned = pinned && pinned.side === side && pinned.index === i ? null : { side, index: i };
        root.__pinned = pinned;
        draw(pinned);
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

  function draw(focus) {
    lines.replaceChildren();
    for (const side of ["q", "k"]) labels[side].forEach((t) => t.classList.remove("pinned"));
    if (!focus) return;
    labels[focus.side][focus.index].classList.add("pinned");
    spec.heads.forEach((head, h) => {
      if (!active[h]) return;
      for (let other = 0; other < n; other++) {
        const [i, j] = focus.side === "q" ? [focus.index, other] : [other, focus.index];
        const w = weights[h][i][j];
        if (!(w >= MIN_WEIGHT)) continue;
        lines.appendChild(svgNode("line", {
          x1: LEFT_X, y1: i * ROW + ROW / 2, x2: RIGHT_X, y2: j * ROW + ROW / 2,
          stroke: head.color, "stroke-width": 2.5, "stroke-opacity": Math.min(1, w),
          "data-head": h, "data-query": i, "data-key": j, "data-weight": w,
        }));
      }
    });
  }
  draw(pinned);
}
"""
HEAD_VIEW_JS = _JS.replace("__MIN_WEIGHT__", repr(MIN_WEIGHT))
