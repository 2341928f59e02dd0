// The long map's axes (ui/long/chart.js): which tokens of the view carry a label, by the rule
// of attention_core/figures/layout.py (tick_plan) for the short heatmaps. A label needs
// d.axes.pitch × its font size along its axis (one line of text, upright or flat), so an
// axis of L px holds L / (pitch × font) labels; with more tokens in view only every step-th
// token (a multiple of step, so labels stay put while panning; a found row is always one of
// them) is named, in the largest font
// of d.axes.fonts reaching the smallest step. Labels are cut to a few characters by the
// server (`ticks`, `tickw`: each one's width at 1 px); hover names every token in full.

// What the view of tokens [lo, hi) shows on an axis of `length` px: null (numbers, pooled),
// or {font, step, vals, names, widest}. `anchor`: a token that must be named (or 0).
function tickPlan(lo, hi, length, d, anchor) {
  const first = Math.max(0, Math.floor(lo));
  const end = Math.min(d.n, Math.ceil(hi));
  const count = end - first;
  if (count <= 0 || count > d.size) return null; // pooled: Plotly's own numbers
  let best = null;
  for (const font of [...d.axes.fonts].sort((a, b) => a - b)) {
    const capacity = Math.floor(length / (d.axes.pitch * font));
    if (capacity < 1) continue;
    const step = Math.max(1, Math.ceil(count / capacity));
    if (best === null || step <= best.step) best = { font: font, step: step };
  }
  if (best === null) return null;
  const vals = [];
  const names = [];
  let widest = 0;
  const phase = (((anchor - first) % best.step) + best.step) % best.step;
  for (let i = first + phase; i < end; i += best.step) {
    vals.push(i + 0.5);
    names.push(d.ticks[i]);
    widest = Math.max(widest, d.tickw[i] * best.font);
  }
  const spacing = (best.step * length) / count; // px between two labelled tokens
  return { ...best, vals: vals, names: names, widest: widest, flat: widest + 4 <= spacing };
}

// The widest label of tokens [lo, hi) in the largest font: the margin that surely holds the
// labels, so the plot's length (hence the plan) is known before the plan is made.
function widestLabel(lo, hi, d) {
  let widest = 0;
  const end = Math.min(d.n, Math.ceil(hi));
  for (let i = Math.max(0, Math.floor(lo)); i < end; i++) widest = Math.max(widest, d.tickw[i]);
  return widest * Math.max(...d.axes.fonts);
}

function axisOf(lo, hi, plan, reversed) {
  const out = { range: reversed ? [hi, lo] : [lo, hi], showgrid: false, zeroline: false };
  if (plan) {
    out.tickmode = "array";
    out.tickvals = plan.vals;
    out.ticktext = plan.names;
    out.tickfont = { size: plan.font };
  } else {
    out.tickmode = "auto";
  }
  return out;
}

// Margins, axes and height of a plot `side` px wide showing rows [r0, r1) × columns
// [c0, c1), whose plot area is square (so are the cells); `found`: a row to name whatever
// the step (undefined: none).
function axesOf(side, r0, r1, c0, c1, d, found) {
  const top = 28;
  const right = 8;
  const named = r1 - r0 <= d.size && c1 - c0 <= d.size;
  if (!named) {
    const margin = { l: 40, r: right, t: top, b: 30 };
    return {
      margin: margin,
      height: side - margin.l - right + top + margin.b,
      xaxis: axisOf(c0, c1, null, false),
      yaxis: axisOf(r0, r1, null, true),
    };
  }
  // room for the widest label at the largest font, then the plan on the square left
  const length = side - Math.ceil(widestLabel(r0, r1, d)) - 8 - right;
  const rows = tickPlan(r0, r1, length, d, found === undefined ? 0 : found);
  const cols = tickPlan(c0, c1, length, d, 0);
  const x = axisOf(c0, c1, cols, false);
  if (cols) x.tickangle = cols.flat ? 0 : -90;
  const margin = {
    l: rows ? Math.ceil(rows.widest) + 8 : 40,
    r: right,
    t: top,
    b: !cols ? 30 : cols.flat ? Math.ceil(cols.font * 1.5) + 8 : Math.ceil(cols.widest) + 10,
  };
  const height = side - margin.l - right + top + margin.b; // the plot area: a square
  return { margin: margin, height: height, xaxis: x, yaxis: axisOf(r0, r1, rows, true) };
}
