"""`decode_view` as a live widget: `step`, `layer`, `heads`, `selected` shared with Python.

    view = decode_view("reader", "今天天氣很", steps=8)   # in a live kernel: a widget
    view.step = 3            # the view shows step 3 (its slider moves)
    view.layer = 1           # only layer 1's heads (None: every layer, as the static page)
    view.heads = [0, 2]      # only those heads' rows
    view.selected            # the key position clicked in the grid, or None

The run happens once, in the kernel; the page gets the steps' small parts once (the
token written, the top-5, the logit lens, the cache line) and one step's attention at a
time: a `step` change sends that step's rows, L × H × t float32 (`rows`), nothing else;
`layer`, `heads` and `selected` are filtered and marked in the page. The static view
(`widget.StaticFallback`) is the one `decode_view(..., widget=False)` returns.

Shape legend: S steps, L layers, H heads, t positions step's query met.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from attention_core.decode import DecodeResult
from attention_core.i18n import t
from attention_core.notebook.html import View
from attention_core.notebook.widget import StaticFallback, anywidget_module, layer_bytes

__all__ = ["DECODE_ESM", "decode_widget", "decode_widget_class"]

DECODE_CSS = """
.studio-dec-w { font: 13px sans-serif; }
.studio-dec-w .strip span { display: inline-block; padding: 1px 3px; margin: 1px;
  border: 1px solid #ddd; }
.studio-dec-w .grid td { width: 14px; height: 14px; padding: 0; border: 1px solid #eee;
  cursor: pointer; }
.studio-dec-w .grid th { font-weight: normal; text-align: right; padding-right: 4px; }
.studio-dec-w .new { outline: 2px solid #d62728; }
.studio-dec-w .grid td.sel, .studio-dec-w .strip span.sel { outline: 2px solid #FF2B2B; }
.studio-dec-w .controls { display: flex; gap: 10px; align-items: center; margin: 4px 0; }
"""

# Tokens and labels enter the page as textContent only; cells are the weights in blue.
DECODE_ESM = r"""
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function floats(value) {  // a bytes trait (DataView, ArrayBuffer) as its float32s
  if (!value) return new Float32Array(0);
  const buffer = value.buffer || value;
  const start = value.byteOffset || 0;
  return new Float32Array(buffer.slice(start, start + value.byteLength));
}

function commit(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

function render({ model, el: host }) {
  const spec = model.get("spec");
  const w = spec.words;
  const box = el("div", undefined, "studio-widget studio-dec-w");
  box.append(el("b", spec.title));
  spec.notes.forEach((note) => box.append(el("p", note)));
  const controls = el("div", undefined, "controls");
  const slider = el("input");
  slider.type = "range"; slider.min = "0"; slider.max = String(spec.steps.length - 1);
  slider.step = "1"; slider.className = "dec-step";
  slider.addEventListener("input", () => commit(model, "step", Number(slider.value)));
  const pick = el("select", undefined, "dec-layer");
  const every = el("option", w.all_layers); every.value = "";
  pick.append(every);
  for (let l = 0; l < spec.layers; l++) {
    const o = el("option", "L" + l); o.value = String(l); pick.append(o);
  }
  pick.addEventListener("change", () =>
    commit(model, "layer", pick.value === "" ? null : Number(pick.value)));
  controls.append(slider, pick);
  const out = el("div", undefined, "studio-dec-out");
  box.append(controls, out);
  host.appendChild(box);

  function draw() {
    const i = model.get("step"), s = spec.steps[i];
    const L = spec.layers, H = spec.heads, t = spec.prompt + i;
    const rows = floats(model.get("rows"));  // (L, H, t)
    const layer = model.get("layer"), heads = model.get("heads");
    const selected = model.get("selected");
    slider.value = String(i);
    pick.value = layer === null ? "" : String(layer);
    out.replaceChildren();
    out.append(el("h4", w.nb_decode_step + " " + i + ": " + s.token +
      (s.forced ? " (" + w.nb_decode_forced + ")" : "")));
    const strip = el("div", undefined, "strip");
    spec.tokens.slice(0, t).forEach((tok, j) => {
      strip.append(el("span", tok, (j === t - 1 ? "new" : "") + (j === selected ? " sel" : "")));
    });
    strip.append(el("span", s.token, "new"));
    out.append(strip, el("p", w.nb_decode_rows));
    const grid = el("table", undefined, "grid");
    for (let l = 0; l < L; l++) {
      if (layer !== null && l !== layer) continue;
      for (let h = 0; h < H; h++) {
        if (!heads.includes(h)) continue;
        const tr = el("tr");
        tr.dataset.layer = String(l); tr.dataset.head = String(h);
        tr.append(el("th", "L" + l + " H" + h));
        for (let j = 0; j < t; j++) {
          const v = rows[(l * H + h) * t + j];
          const td = el("td", undefined, j === selected ? "sel" : undefined);
          td.style.background = "rgba(31,119,180," + v + ")";
          td.title = spec.tokens[j] + ": " + v.toFixed(4);
          td.dataset.weight = String(v);
          td.addEventListener("click", () => commit(model, "selected", j === selected ? null : j));
          tr.append(td);
        }
        grid.append(tr);
      }
    }
    out.append(grid, el("p", w.nb_decode_alternatives));
    const top = el("ol");
    s.top.forEach((a) => top.append(el("li", a[0] + "  " + a[1])));
    out.append(top, el("p", w.nb_decode_lens));
    const lens = el("ul");
    s.lens.forEach((a, l) => lens.append(el("li", "L" + l + ": " + a[0] + "  " + a[1])));
    out.append(lens, el("p", s.cache));
    box.dataset.step = String(i);
    box.dataset.rows = String(grid.rows.length);
  }
  // a step's rows arrive after its number (Python sends them on the change): draw then
  const events = ["change:rows", "change:layer", "change:heads", "change:selected"];
  events.forEach((name) => model.on(name, draw));
  draw();
  return () => events.forEach((name) => model.off(name, draw));
}

export default { render };
"""


@cache
def decode_widget_class() -> type:
    """The decode view's AnyWidget subclass (built on first use: anywidget is optional)."""
    anywidget = anywidget_module()
    import traitlets

    class DecodeWidget(StaticFallback, anywidget.AnyWidget):
        """A decoder writing, as a widget: `step`, `layer`, `heads`, `selected` synced."""

        _esm = DECODE_ESM
        _css = DECODE_CSS
        spec = traitlets.Dict().tag(sync=True)
        rows = traitlets.Bytes(b"").tag(sync=True)  # the step's (L, H, t) float32
        step = traitlets.Int(0).tag(sync=True)
        layer = traitlets.Int(None, allow_none=True).tag(sync=True)  # None: every layer
        heads = traitlets.List(traitlets.Int()).tag(sync=True)
        selected = traitlets.Int(None, allow_none=True).tag(sync=True)  # a key position

        def __init__(self, result: DecodeResult, spec: dict[str, Any], static: Any) -> None:
            self.result = result
            first = result.steps[0].attention  # (L, H, t)
            self._shape = first.shape[:2]
            size = sum(s.attention.size for s in result.steps)
            self.keep_static(static, weights=size, note=spec["note"])
            super().__init__(spec=spec, rows=layer_bytes(first), heads=list(range(self._shape[1])))

        @property
        def attention(self) -> list[Any]:
            """S × (L, H, t): the row that chose each step's token (the run's own)."""
            return [s.attention for s in self.result.steps]

        @traitlets.validate("step")
        def _check_step(self, proposal: Any) -> int:
            last = len(self.result.steps) - 1
            if not 0 <= proposal.value <= last:
                raise traitlets.TraitError(f"step must be in 0..{last}, got {proposal.value}")
            return proposal.value

        @traitlets.validate("layer")
        def _check_layer(self, proposal: Any) -> int | None:
            L = self._shape[0]
            if proposal.value is not None and not 0 <= proposal.value < L:
                raise traitlets.TraitError(
                    f"layer must be in 0..{L - 1} or None (every layer), got {proposal.value}"
                )
            return proposal.value

        @traitlets.validate("heads")
        def _check_heads(self, proposal: Any) -> list[int]:
            H = self._shape[1]
            if any(not 0 <= h < H for h in proposal.value):
                raise traitlets.TraitError(f"heads must be in 0..{H - 1}, got {proposal.value}")
            return sorted(set(proposal.value))

        @traitlets.validate("selected")
        def _check_selected(self, proposal: Any) -> int | None:
            n = len(self.result.tokens)
            if proposal.value is not None and not 0 <= proposal.value < n:
                raise traitlets.TraitError(
                    f"selected must be a position in 0..{n - 1} or None, got {proposal.value}"
                )
            return proposal.value

        @traitlets.observe("step")
        def _send_step(self, change: Any) -> None:
            # one step's rows, sent after the number (the script draws when they arrive)
            self.rows = layer_bytes(self.result.steps[change.new].attention)  # (L, H, t)

    return DecodeWidget


def decode_widget(
    result: DecodeResult,
    page: dict[str, Any],
    *,
    title: str,
    lang: str,
    static: Callable[[], View],
) -> Any:
    """`result` as a live widget; `page` is the static page's data (`decode._page_data`'s
    shape), whose steps travel without their rows."""
    L, H = result.steps[0].attention.shape[:2]  # (L, H, t)
    notes = [n for n in (result.stopped, result.capped) if n]
    spec = {
        "title": title,
        "notes": notes,
        "tokens": page["tokens"],
        "prompt": page["prompt"],
        "layers": L,
        "heads": H,
        "steps": [{k: v for k, v in step.items() if k != "rows"} for step in page["steps"]],
        "words": {**page["words"], "all_layers": t("nb_decode_all_layers", lang)},
        "note": t("nb_widget_steps_fallback", lang, title=title, steps=len(result.steps)),
    }
    return decode_widget_class()(result, spec, static)
