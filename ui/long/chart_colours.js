// The long map's colours (ui/long/chart.js): the app's three colour scales, as
// attention_core.long.scale defines them for exact and pooled cells. `d.scale` is
// long.scale.colour_key(kind): colour stops, the top of the colour limits (null: per head,
// the largest value in view), the colour bar's ticks (fractions) and their texts.

// harm[x] = 1 + 1/2 + … + 1/x, once per map
function harmonic(d) {
  if (!d.__harm) {
    const harm = new Float64Array(d.n + 1);
    for (let i = 1; i <= d.n; i++) harm[i] = harm[i - 1] + 1 / i;
    d.__harm = harm;
  }
  return d.__harm;
}

// Σ of the even attention (row i: 1/k_i on each key it may see) over rows [a, b) × keys
// [c, e): long.scale.even_mass's closed form, the same arithmetic in float64.
function evenMass(d, a, b, c, e) {
  if (!d.causal) return ((b - a) * (e - c)) / d.n;
  const harm = harmonic(d);
  let lo = Math.max(a, c);
  const hi = Math.max(lo, Math.min(b, e - 1));
  const part = hi - lo - c * (harm[hi] - harm[lo]); // rows that see part of the keys
  lo = Math.min(Math.max(a, e - 1), b);
  return part + (e - c) * (harm[b] - harm[lo]); // rows that see all of them
}

function decodeF32(text) {
  const bytes = Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  return new Float32Array(bytes.buffer); // (R × C) row-major, little-endian
}

// (R × C) the tile's cells relative to an even share (long.scale.relative_cells): sent by
// the server for a causal map's pooled "max" cells, computed here for the others; NaN: no
// visible key.
function relativeOf(tile, d) {
  if (tile.__rel) return tile.__rel;
  if (tile.relative) return (tile.__rel = decodeF32(tile.relative));
  const v = decode(tile);
  const [R, C] = tile.shape;
  const out = new Float32Array(R * C);
  if (tile.reduce === "max" && !tile.exact) {
    // no mask: every row's even share is 1/n (a causal map's come from the server)
    for (let i = 0; i < R * C; i++) out[i] = v[i] * d.n;
    return (tile.__rel = out);
  }
  const perCell = tile.reduce === "mean" && !tile.exact; // a mean divides by the columns too
  for (let i = 0; i < R; i++) {
    const [a, b] = [tile.rows[i], tile.rows[i + 1]];
    for (let j = 0; j < C; j++) {
      const [c, e] = [tile.cols[j], tile.cols[j + 1]];
      const even = evenMass(d, a, b, c, e);
      const total = v[i * C + j] * (b - a) * (perCell ? e - c : 1);
      out[i * C + j] = even > 0 ? total / even : NaN;
    }
  }
  return (tile.__rel = out);
}

// What the colours of a tile read (R × C) and their limits [zmin, zmax]: the values on the
// absolute and contrast scales, the relative values on the relative scale.
function colourOf(tile, d) {
  const relative = d.scale.kind === "relative";
  const flat = relative ? relativeOf(tile, d) : decode(tile);
  let top = d.scale.top;
  if (top === null) {
    top = 0;
    for (let i = 0; i < flat.length; i++) if (flat[i] > top) top = flat[i];
    top = top > 0 ? top : 1;
  }
  return { flat: flat, zmin: 0, zmax: top };
}

// The one colour bar above the heads: the scale's name and unit, its colours, its ticks.
// Catalog text only, set as textContent.
function showBar(root, d) {
  const bar = root.querySelector(".studio-long-bar");
  bar.replaceChildren();
  const title = document.createElement("div");
  title.className = "studio-long-bar-title";
  title.textContent = d.strings.bar;
  const ramp = document.createElement("div");
  ramp.className = "studio-long-bar-ramp";
  const stops = d.scale.colorscale.map(([at, colour]) => colour + " " + at * 100 + "%");
  ramp.style.cssText =
    "height:12px;border:1px solid #bbb;background:linear-gradient(to right," + stops + ")";
  const ticks = document.createElement("div");
  ticks.style.cssText = "position:relative;height:1.2em;font-size:0.75rem";
  d.scale.ticks.forEach((at, i) => {
    const tick = document.createElement("span");
    tick.textContent = d.scale.texts[i];
    const shift = at <= 0 ? "0" : at >= 1 ? "-100%" : "-50%";
    tick.style.cssText =
      `position:absolute;white-space:nowrap;left:${at * 100}%;transform:translateX(${shift})`;
    ticks.appendChild(tick);
  });
  bar.append(title, ramp, ticks);
}
