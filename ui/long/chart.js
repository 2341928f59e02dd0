// The long map (ui/long/chart.py): one Plotly heatmap per head, drawn from pooled tiles.
// The page sends each head's overview tile; a zoom or pan asks ui/long/tiles.py's route for the
// visible rectangle (one head, one fetch) and redraws that head with Plotly.react. Cells are
// bricks between token edges (x, y: one more edge than cells), so a pooled cell covers
// exactly the tokens it pools and an exact cell is one token wide. User text reaches Plotly
// escaped by the server (figures.text.literal: `ticks`) and the token strip as textContent.

// Put before this file by ui/long/chart.py: plotlyLoaded(src) (ui/charts.py's
// PLOTLY_LOADER_JS), the colours (ui/long/chart_colours.js: colourOf, relativeOf, showBar) and
// the axes (ui/long/chart_axes.js: axesOf).

function decode(tile) {
  if (!tile.__z) tile.__z = decodeF32(tile.values); // (R × C)
  return tile.__z;
}

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
}

const JUMP_SPAN = 64; // tokens a side of the exact window a found row is shown in
const MIN_SIDE = 250; // px: a head's square is never narrower (except on a narrower screen)
const GAP = 8;
const FOUND_COLOUR = "#2f9e44"; // green: apart from both the blue and the red scale

// One heatmap trace of a tile: its values between its edges. No hover text per cell (65 536
// strings a head cost ~0.1 s each): Plotly's hover label is off and `hoverText` writes the
// one cell under the pointer into the chart's own tooltip.
function traceOf(tile, d) {
  const { flat, zmin, zmax } = colourOf(tile, d);
  const [R, C] = tile.shape;
  const z = [];
  for (let i = 0; i < R; i++) z.push(flat.subarray(i * C, (i + 1) * C));
  return {
    type: "heatmap",
    z: z,
    x: tile.cols,
    y: tile.rows,
    hoverinfo: "none",
    colorscale: d.scale.colorscale,
    zmin: zmin,
    zmax: zmax,
    showscale: false,
  };
}

// What cell (i, j) of a tile holds, in the catalog's words: the exact weight between two
// tokens, or a pooled cell's rows, columns and value (mean, max or share); under the
// relative scale also what the colour reads. Plain text.
function hoverText(tile, i, j, d) {
  const v = decode(tile)[i * tile.shape[1] + j];
  let relative = "";
  if (d.scale.kind === "relative") {
    const r = relativeOf(tile, d)[i * tile.shape[1] + j];
    relative = "\n" + (isNaN(r) ? d.strings.hover_masked : fill(d.strings.hover_relative, {
      value: r.toPrecision(3),
    }));
  }
  const text = tile.exact
    ? fill(d.strings.hover_exact, {
        row: tile.rows[i] + ":" + d.labels[tile.rows[i]],
        col: tile.cols[j] + ":" + d.labels[tile.cols[j]],
        value: v.toPrecision(6),
      })
    : fill(d.strings.hover_pooled, {
        r0: tile.rows[i],
        r1: tile.rows[i + 1] - 1,
        c0: tile.cols[j],
        c1: tile.cols[j + 1] - 1,
        value: v.toPrecision(4),
      });
  return text.replace(/<br>/g, "\n") + relative;
}

// The chart's listeners (Plotly.newPlot drops them, so `draw` calls this after each).
function listen(plot, root, d, Plotly) {
  plot.on("plotly_relayout", (event) => onZoom(Plotly, root, plot, d, event));
  const tip = root.querySelector(".studio-long-tip");
  plot.on("plotly_hover", (event) => {
    const point = event.points && event.points[0];
    if (!point || !plot.__tile) return;
    const [i, j] = point.pointNumber;
    tip.textContent = hoverText(plot.__tile, i, j, d);
    const at = event.event || {}; // (none when hover comes from Plotly.Fx.hover)
    tip.style.left = (at.clientX || 0) + 14 + "px";
    tip.style.top = (at.clientY || 0) + 14 + "px";
    tip.style.display = "block";
  });
  plot.on("plotly_unhover", () => {
    tip.style.display = "none";
  });
}

function layoutOf(plot, tile, d) {
  const [r0, r1, c0, c1] = [tile.rows[0], tile.rows.at(-1), tile.cols[0], tile.cols.at(-1)];
  const title = fill(tile.exact ? d.strings.title_exact : d.strings.title_pooled, {
    head: plot.__head,
    block: tile.block,
  });
  const found = plot.__found;
  const axes = axesOf(plot.__side, r0, r1, c0, c1, d, found);
  const shapes = [];
  if (found !== undefined && found >= r0 && found < r1) {
    shapes.push({
      type: "rect",
      x0: c0,
      x1: c1,
      y0: found,
      y1: found + 1,
      line: { color: FOUND_COLOUR, width: 2 },
    });
  }
  return {
    width: plot.__side,
    height: axes.height,
    // margins computed (chart_axes.js): automargin would lay the chart out twice
    // (~0.25 s a zoom, measured)
    margin: axes.margin,
    title: { text: title, font: { size: 12 } },
    xaxis: axes.xaxis,
    yaxis: axes.yaxis,
    // cells with no visible key (relative scale, causal) have no colour: grey, not "even"
    plot_bgcolor: d.scale.kind === "relative" && d.causal ? d.masked : "rgba(0,0,0,0)",
    shapes: shapes,
    dragmode: "zoom",
    uirevision: d.map,
  };
}

function root(plot) {
  return plot.closest(".studio-long");
}

function draw(Plotly, plot, tile, d) {
  plot.__tile = tile;
  plot.__busy = true;
  plot.dataset.rows = tile.rows[0] + "-" + tile.rows.at(-1);
  plot.dataset.cols = tile.cols[0] + "-" + tile.cols.at(-1);
  plot.dataset.exact = tile.exact ? "1" : "0";
  const t0 = performance.now();
  const trace = traceOf(tile, d);
  const t1 = performance.now();
  // newPlot, not react: react diffs the new tile against the old one (65 536 cells) and
  // took ~0.24 s a zoom to 48 × 48; newPlot ~0.05 s (measured). It drops the chart's event
  // handlers, so they are attached again.
  return Plotly.newPlot(plot, [trace], layoutOf(plot, tile, d), d.config).then(() => {
    listen(plot, root(plot), d, Plotly);
    plot.dataset.traceMs = String(Math.round(t1 - t0)); // (bench/section_long.py reads these)
    plot.dataset.drawMs = String(Math.round(performance.now() - t1));
    plot.__busy = false;
    plot.dataset.painted = String((plot.__paints = (plot.__paints || 0) + 1));
  });
}

// The tokens of the visible rows, under the map: the strip moves with every zoom and pan.
function showStrip(root, tile, d) {
  const strip = root.querySelector(".studio-long-strip");
  const [r0, r1] = [tile.rows[0], tile.rows.at(-1)];
  const shown = d.labels.slice(r0, Math.min(r1, r0 + 200));
  strip.textContent =
    fill(d.strings.strip, { r0: r0, r1: r1 - 1 }) +
    " " +
    shown.map((t, i) => r0 + i + ":" + t).join(" ") +
    (r1 - r0 > 200 ? " …" : "");
}

function fetchTile(Plotly, root, plot, d, rows, cols) {
  const clamp = (v) => Math.max(0, Math.min(d.n, v));
  const r0 = clamp(Math.floor(Math.min(...rows)));
  const r1 = Math.max(r0 + 1, clamp(Math.ceil(Math.max(...rows))));
  const c0 = clamp(Math.floor(Math.min(...cols)));
  const c1 = Math.max(c0 + 1, clamp(Math.ceil(Math.max(...cols))));
  if (r0 >= d.n || c0 >= d.n) return Promise.resolve();
  const seq = (plot.__seq = (plot.__seq || 0) + 1);
  const started = performance.now();
  const query = new URLSearchParams({
    map: d.map, layer: d.layer || 0, head: plot.__headIndex, r0, r1, c0, c1, size: d.size,
    reduce: d.reduce, scale: d.scale.kind,
  });
  return fetch(d.url + "?" + query)
    .then((r) => r.json().then((body) => ({ ok: r.ok, body })))
    .then(({ ok, body }) => {
      plot.dataset.fetchMs = String(Math.round(performance.now() - started));
      if (seq !== plot.__seq) return; // a later zoom overtook this one
      const note = root.querySelector(".studio-long-note");
      if (!ok) {
        note.textContent = body.error === "gone" ? d.strings.gone : d.strings.failed;
        // the page publishes the map again on the rerun this trigger asks for
        if (body.error === "gone" && root.__component) {
          root.__component.setTriggerValue("gone", Date.now());
        }
        return;
      }
      note.textContent = "";
      if (hidden(plot)) {
        plot.__want = body; // drawn when its head is picked (a phone shows one at a time)
        return;
      }
      return draw(Plotly, plot, body, d).then(() => {
        plot.dataset.zoomMs = String(Math.round(performance.now() - started));
        showStrip(root, body, d);
      });
    })
    .catch((error) => console.error(error));
}

function onZoom(Plotly, root, plot, d, event) {
  if (plot.__busy) return;
  if (event["xaxis.autorange"] || event["yaxis.autorange"]) {
    plot.__seq = (plot.__seq || 0) + 1;
    draw(Plotly, plot, plot.__overview, d).then(() => showStrip(root, plot.__overview, d));
    return;
  }
  const full = plot._fullLayout;
  const cols = event["xaxis.range[0]"] !== undefined
    ? [event["xaxis.range[0]"], event["xaxis.range[1]"]]
    : full.xaxis.range;
  const rows = event["yaxis.range[0]"] !== undefined
    ? [event["yaxis.range[0]"], event["yaxis.range[1]"]]
    : full.yaxis.range;
  fetchTile(Plotly, root, plot, d, rows, cols);
}

// A found row: every head jumps to the exact window around it (JUMP_SPAN tokens a side).
function jump(Plotly, root, d, row) {
  const lo = Math.max(0, Math.min(d.n - JUMP_SPAN, row - JUMP_SPAN / 2));
  const span = [lo, Math.min(d.n, lo + JUMP_SPAN)];
  return Promise.all(
    Array.from(root.querySelectorAll(".studio-long-head")).map((plot) => {
      plot.__found = row;
      return fetchTile(Plotly, root, plot, d, span, span);
    }),
  );
}

// Every head drawn from its overview, or (narrow) the one shown; the others when picked.
function showAll(Plotly, root, d, plots) {
  if (root.__narrow) return showHead(Plotly, root, d, root.__shown);
  return Promise.all(
    plots.map((plot) => {
      plot.__want = null;
      return draw(Plotly, plot, plot.__overview, d);
    }),
  );
}

function hidden(plot) {
  return plot.style.display === "none";
}

// Narrow screens (one head a row) show one head at a time, large, picked in a list; the
// others keep their zoom or found row (a tile fetched meanwhile waits in __want).
function showHead(Plotly, root, d, h) {
  root.__shown = h;
  const plots = Array.from(root.querySelectorAll(".studio-long-head"));
  plots.forEach((plot, i) => {
    plot.style.display = root.__narrow && i !== h ? "none" : "";
  });
  const plot = plots[h];
  if (!plot || !plot.__want) return Promise.resolve();
  const tile = plot.__want;
  plot.__want = null;
  return draw(Plotly, plot, tile, d).then(() => showStrip(root, tile, d));
}

function pickList(root, d, count) {
  const pick = root.querySelector(".studio-long-pick");
  pick.style.display = root.__narrow ? "flex" : "none";
  pick.querySelector("span").textContent = d.strings.pick;
  const select = pick.querySelector("select");
  select.replaceChildren();
  for (let h = 0; h < count; h++) {
    const option = document.createElement("option");
    option.value = String(h);
    option.textContent = fill(d.strings.head, { i: h });
    select.appendChild(option);
  }
  select.value = String(root.__shown);
}

const SKELETON =
  '<div class="studio-long-bar" style="max-width:20rem;margin-bottom:6px"></div>' +
  '<label class="studio-long-pick" style="display:none;align-items:center;gap:8px;' +
  'margin-bottom:6px"><span></span><select style="min-height:44px;font-size:1rem;' +
  'flex:1"></select></label>' +
  '<div class="studio-long-grid" style="display:flex;flex-wrap:wrap;gap:8px"></div>' +
  '<div class="studio-long-note" style="color:#c92a2a"></div>' +
  '<div class="studio-long-tip" style="display:none;position:fixed;z-index:1000;' +
  "white-space:pre-line;pointer-events:none;background:#fff;border:1px solid #999;" +
  'padding:4px 6px;font-size:0.8rem;max-width:20rem;overflow-wrap:anywhere"></div>' +
  '<div class="studio-long-strip" style="font-size:0.8rem;max-height:6em;' +
  'overflow-y:auto;overflow-wrap:anywhere;border-top:1px solid #ddd;padding-top:4px"></div>';

// As many heads a row as fit at MIN_SIDE px or more, up to d.side px each; where only one
// fits (a phone), one head at a time as wide as the screen.
function layoutFor(width, count, d) {
  const cols = Math.max(1, Math.min(count, Math.floor((width + GAP) / (MIN_SIDE + GAP))));
  const narrow = cols === 1 && count > 1;
  const side = narrow ? width : Math.min(d.side, Math.floor((width - GAP * (cols - 1)) / cols));
  return { cols: cols, narrow: narrow, side: side };
}

// A window resized (a phone turned) to another number of heads a row: drawn afresh. Not
// for smaller changes (a scroll bar coming and going), which would lose every zoom.
function watchWidth(root, parentElement) {
  let timer = null;
  new ResizeObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const d = root.__d;
      const width = (parentElement.clientWidth || 320) - 4;
      if (d && layoutFor(width, d.overview.length, d).cols !== root.__cols) {
        root.__key = null;
        render(root.__component);
      }
    }, 250);
  }).observe(parentElement);
}

export default function render(component) {
  const { parentElement } = component;
  const d = component.data[0];
  // parsed once: the same data may come again with a rerun that changed nothing here
  if (typeof d.overview === "string") d.overview = JSON.parse(d.overview);
  let root = parentElement.querySelector(":scope > .studio-long");
  if (!root) {
    root = document.createElement("div");
    root.className = "studio-long";
    root.innerHTML = SKELETON; // fixed markup: every text is set as textContent
    root.__shown = 0;
    const select = root.querySelector(".studio-long-pick select");
    select.addEventListener("change", () => {
      const h = Number(select.value);
      plotlyLoaded(root.__d.plotly).then((Plotly) => showHead(Plotly, root, root.__d, h));
    });
    parentElement.appendChild(root);
    watchWidth(root, parentElement);
  }
  root.__component = component;
  root.__d = d;
  const grid = root.querySelector(".studio-long-grid");
  const fresh = root.__key !== d.key;
  root.__key = d.key;
  const width = (parentElement.clientWidth || 320) - 4;
  const count = d.overview.length;
  const { cols, narrow, side } = layoutFor(width, count, d);
  if (fresh) root.__cols = cols;
  root.__queue = (root.__queue || Promise.resolve())
    .then(() => plotlyLoaded(d.plotly))
    .then((Plotly) => {
      if (fresh) {
        root.__narrow = narrow;
        root.dataset.narrow = narrow ? "1" : "0";
        root.__shown = Math.min(root.__shown, count - 1);
        showBar(root, d);
        pickList(root, d, count);
        grid.replaceChildren();
        d.overview.forEach((tile, h) => {
          const plot = document.createElement("div");
          plot.className = "studio-long-head";
          plot.__head = fill(d.strings.head, { i: h });
          plot.__headIndex = h;
          plot.__layer = d.layer || 0;
          plot.__side = side;
          plot.__overview = tile;
          grid.appendChild(plot);
        });
      }
      const plots = Array.from(grid.querySelectorAll(".studio-long-head"));
      plots.forEach((plot, h) => {
        plot.__overview = d.overview[h];
        if (fresh) plot.__want = plot.__overview;
      });
      const drawn = fresh ? showAll(Plotly, root, d, plots) : Promise.resolve();
      return drawn.then(() => {
        if (fresh) {
          showStrip(root, d.overview[0], d);
        }
        root.dataset.painted = "1";
        if (d.focus && d.focus.nonce !== root.__focus) {
          root.__focus = d.focus.nonce;
          return jump(Plotly, root, d, d.focus.row);
        }
      });
    })
    .catch((error) => console.error(error));
}
