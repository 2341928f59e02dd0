"""The notebook widget's ES module and style: what anywidget hands the frontend, inline.

One module for every view. `kind` "head" draws with the head view's own renderer
(`figures.headview.HEAD_VIEW_JS`, the one the static view and the app use), its weights
a layer at a time from the `weights` buffer (float32, H × n × k); `kind` "figure" draws
the Plotly figure in `figure` (the view's own figure builder's, rebuilt in Python for
another layer or scale) with the plotly.js the `plotly_js` trait carries, evaluated once a
page. Nothing is fetched: no CDN, no import from the network.

State goes both ways through the model (anywidget's): a click on a query token (or a
heatmap row) sets `selected`, hovering sets `hovered`, the head squares set `heads`, the
menus set `layer` and `scale`; a change from Python redraws. Token text only ever enters
the page as `textContent` (menus) or SVG text nodes (the renderer).
"""

from __future__ import annotations

from attention_core.figures.headview import HEAD_VIEW_CSS, HEAD_VIEW_JS

__all__ = ["WIDGET_CSS", "WIDGET_ESM"]

WIDGET_CSS = (
    HEAD_VIEW_CSS
    + """
/* a redraw lays out and paints inside the view only, not JupyterLab's whole notebook */
.studio-widget .hv-mount { contain: layout paint style; }
.studio-widget .hv-controls { font: 13px sans-serif; margin-bottom: 6px; display: flex;
  gap: 10px; align-items: center; }
"""
)

_WIDGET_JS = r"""
const SCALES = ["absolute", "relative", "contrast"];

function floats(value) {  // a bytes trait (DataView, ArrayBuffer) as its float32s
  if (!value) return new Float32Array(0);
  const buffer = value.buffer || value;
  const start = value.byteOffset || 0;
  return new Float32Array(buffer.slice(start, start + value.byteLength));
}

function nested(flat, H, n, k) {  // (H·n·k,) → H × n rows of k (views, no copy)
  const out = [];
  for (let h = 0; h < H; h++) {
    const rows = [];
    for (let i = 0; i < n; i++) rows.push(flat.subarray((h * n + i) * k, (h * n + i + 1) * k));
    out.push(rows);
  }
  return out;
}

function menu(cls, label, values, names) {
  const wrap = document.createElement("label");
  wrap.textContent = label + " ";
  const pick = document.createElement("select");
  pick.className = cls;
  values.forEach((value, i) => {
    const option = document.createElement("option");
    option.value = String(value);
    option.textContent = names[i];
    pick.appendChild(option);
  });
  wrap.appendChild(pick);
  return [wrap, pick];
}

function commit(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

function render({ model, el }) {
  const spec = model.get("spec");
  const box = document.createElement("div");
  box.className = "studio-widget studio-headview";
  const controls = document.createElement("div");
  controls.className = "hv-controls";
  const mount = document.createElement("div");
  mount.className = "hv-mount";
  box.append(controls, mount);
  el.appendChild(box);
  const words = spec.words || {};
  let layerPick = null;
  if (spec.layers.length > 1) {
    const [wrap, pick] = menu("hv-layer", words.layer || "Layer", spec.layers, spec.layer_names);
    pick.addEventListener("change", () => commit(model, "layer", Number(pick.value)));
    controls.appendChild(wrap);
    layerPick = pick;
  }
  const [scaleWrap, scalePick] = menu("hv-scale", words.scale || "Scale", SCALES,
                                      SCALES.map((s) => (words.scales || {})[s] || s));
  scalePick.addEventListener("change", () => commit(model, "scale", scalePick.value));
  controls.appendChild(scaleWrap);
  let draws = 0;

  function showHead() {
    const H = spec.heads.length, n = spec.tokens.length;
    const k = (spec.key_tokens || spec.tokens).length;
    const at = spec.layers.indexOf(model.get("layer"));
    const weights = nested(floats(model.get("weights")), H, n, k);
    const note = spec.notes ? spec.notes[at] || "" : "";
    renderHeadView({
      data: { spec: { ...spec, weights, on_heads: model.get("heads"),
                      pinned: model.get("selected"), line_scale: model.get("scale"),
                      text: { ...spec.text, note } } },
      parentElement: mount,
      on: {
        select: (i) => commit(model, "selected", i),
        hover: (i) => commit(model, "hovered", i),
        heads: (active) => commit(model, "heads",
                                  active.map((on, h) => (on ? h : -1)).filter((h) => h >= 0)),
      },
    });
  }

  // the query `selected` (from a click or from Python) outlined in every heatmap: rows
  // are labelled "i:token" (a grid) or "layer l · i:token" (the model view's tiles)
  function selectedShapes(figure, i) {
    if (i === null || i === undefined || spec.rows_are_tokens === false) return [];
    const label = new RegExp("(^|· )" + i + ":");
    const shapes = [];
    figure.data.forEach((trace) => {
      if (trace.type !== "heatmap" || !Array.isArray(trace.y)) return;
      const x = (trace.xaxis || "x") + " domain", y = trace.yaxis || "y";
      trace.y.forEach((name, p) => {
        if (!label.test(String(name))) return;
        shapes.push({ type: "rect", name: "selected", xref: x, yref: y, x0: 0, x1: 1,
                      y0: p - 0.5, y1: p + 0.5, line: { color: "#FF2B2B", width: 2 } });
      });
    });
    return shapes;
  }

  let plot = null;
  function showFigure() {
    if (!window.Plotly) {  // once a page; the UMD header sees no module loader
      (new Function("var define, module, exports;\n" + model.get("plotly_js")))();
    }
    const figure = model.get("figure");
    if (!plot) {
      plot = document.createElement("div");
      mount.appendChild(plot);
    }
    const marks = selectedShapes(figure, model.get("selected"));
    const layout = { ...figure.layout, shapes: [...(figure.layout.shapes || []), ...marks] };
    box.dataset.selected = String(model.get("selected"));
    window.Plotly.react(plot, figure.data, layout,
                        { displaylogo: false, responsive: true }).then(() => {
      if (plot.__studioEvents) return;
      plot.__studioEvents = true;
      const row = (event) => {
        const point = event.points && event.points[0];
        if (!point || !Array.isArray(point.pointIndex)) return null;
        return point.pointIndex[0];
      };
      if (spec.rows_are_tokens === false) return;
      plot.on("plotly_click", (event) => {
        const i = row(event);
        if (i !== null) commit(model, "selected", i === model.get("selected") ? null : i);
      });
      plot.on("plotly_hover", (event) => commit(model, "hovered", row(event)));
      plot.on("plotly_unhover", () => commit(model, "hovered", null));
    });
  }

  function menus() {
    if (layerPick) layerPick.value = String(model.get("layer"));
    scalePick.value = model.get("scale");
  }
  // a layer's data arrives after its number (Python sends it on the change): draw then
  function show() {
    const start = performance.now();
    menus();
    if (spec.kind === "figure") showFigure(); else showHead();
    draws += 1;
    box.dataset.layer = String(model.get("layer"));
    box.dataset.draws = String(draws);
    box.dataset.drawMs = (performance.now() - start).toFixed(1);  // the bench reads it
    box.dataset.drawnAt = (performance.timeOrigin + start).toFixed(1);
  }

  const events = spec.kind === "figure" ? ["change:figure", "change:selected"]
    : ["change:weights", "change:heads", "change:selected", "change:scale"];
  events.forEach((name) => model.on(name, show));
  model.on("change:layer", menus);
  model.on("change:scale", menus);
  show();
  return () => {
    events.forEach((name) => model.off(name, show));
    model.off("change:layer", menus);
    model.off("change:scale", menus);
  };
}

export default { render };
"""

WIDGET_ESM = HEAD_VIEW_JS + _WIDGET_JS
