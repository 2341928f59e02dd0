"""`attribution_view` as a live widget: `method`, `layer`, `head`, `selected` shared with
Python.

    view = attribution_view("reader", "中和有一個永和路")   # in a live kernel: a widget
    view.method = "occlusion"     # the attribution row shows that method's scores
    view.layer, view.head = 2, 1  # the attention row: that head's raw row (head None: the
                                  # layer's rollout, as the static page shows the last one)
    view.selected                 # the key position clicked, or None

Every method and head was computed by `agreement` in the kernel, and all of it is small
(A × m scores, L × H × m raw rows, L × m rollout rows, L·H table rows): it travels once,
as the numbers themselves; a change sends only the state. Clicking a table row sets
`layer` and `head`, clicking a token sets `selected`; the page marks both. The static
view (`widget.StaticFallback`) is the one `attribution_view(..., widget=False)` returns.

Shape legend: n tokens, m keys compared, A methods, L layers, H heads.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from attention_core.attribution import Agreement
from attention_core.i18n import t
from attention_core.notebook.html import View
from attention_core.notebook.widget import StaticFallback, anywidget_module

__all__ = ["ATTRIBUTION_ESM", "attribution_widget", "attribution_widget_class"]

ATTRIBUTION_CSS = """
.studio-attr-w { font: 13px sans-serif; }
.studio-attr-w .tok { padding: 2px 4px; margin: 1px; display: inline-block;
  border: 1px solid #ddd; cursor: pointer; }
.studio-attr-w .tok.sel { outline: 2px solid #FF2B2B; }
.studio-attr-w table { border-collapse: collapse; }
.studio-attr-w tr.row { cursor: pointer; }
.studio-attr-w tr.row.on { background: #fde2e2; }
.studio-attr-w .controls { display: flex; gap: 10px; align-items: center; margin: 4px 0; }
"""

# Tokens and labels enter the page as textContent only.
ATTRIBUTION_ESM = r"""
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function commit(model, names) {
  for (const [name, value] of Object.entries(names)) model.set(name, value);
  model.save_changes();
}

function render({ model, el: host }) {
  const spec = model.get("spec");
  const w = spec.words;
  const box = el("div", undefined, "studio-widget studio-attr-w");
  box.append(el("b", spec.title));
  const controls = el("div", undefined, "controls");
  const pick = el("select", undefined, "attr-method");
  spec.methods.forEach((m) => { const o = el("option", m); o.value = m; pick.append(o); });
  pick.addEventListener("change", () => commit(model, { method: pick.value }));
  controls.append(pick);
  const out = el("div");
  box.append(controls, out);
  host.appendChild(box);

  function tokens(values, colour, kind) {
    const row = el("div", undefined, "tokens " + kind);
    const top = Math.max(...values.map(Math.abs), 1e-12);
    const selected = model.get("selected");
    spec.keys.forEach((position, i) => {
      const v = values[i];
      const cell = el("span", spec.labels[i] || "\u00a0",
                      "tok" + (position === selected ? " sel" : ""));
      cell.style.background = "rgba(" + colour + "," + (Math.abs(v) / top).toFixed(3) + ")";
      cell.title = String(v);
      cell.dataset.position = String(position);
      cell.dataset.value = String(v);
      cell.addEventListener("click", () =>
        commit(model, { selected: position === model.get("selected") ? null : position }));
      row.append(cell);
    });
    return row;
  }

  function draw() {
    const method = model.get("method"), layer = model.get("layer"), head = model.get("head");
    pick.value = method;
    const m = spec.by_method[method];
    out.replaceChildren();
    out.append(el("p", m.what));
    if (m.gap) out.append(el("p", m.gap));
    const attention = head === null ? spec.rollout[layer] : spec.raw[layer][head];
    const which = head === null ? w.rollout.replace("{layer}", layer)
      : w.head.replace("{layer}", layer).replace("{head}", head);
    out.append(el("p", w.attention + " (" + which + ")"), tokens(attention, "31,119,180", "attn"));
    out.append(el("p", w.scores), tokens(m.scores, "214,39,40", "scores"));
    const table = el("table");
    const headerRow = el("tr");
    spec.columns.forEach((c) => headerRow.append(el("th", c)));
    table.append(headerRow);
    m.table.forEach((cells) => {
      const [l, h] = [Number(cells[0]), Number(cells[1])];
      const on = l === layer && h === head;
      const tr = el("tr", undefined, "row" + (on ? " on" : ""));
      tr.dataset.layer = String(l); tr.dataset.head = String(h);
      cells.forEach((c) => tr.append(el("td", c)));
      const pickRow = on ? { head: null } : { layer: l, head: h };
      tr.addEventListener("click", () => commit(model, pickRow));
      table.append(tr);
    });
    out.append(table);
    box.dataset.method = method;
    box.dataset.layer = String(layer);
    box.dataset.head = head === null ? "" : String(head);
  }
  const events = ["change:method", "change:layer", "change:head", "change:selected"];
  events.forEach((name) => model.on(name, draw));
  draw();
  return () => events.forEach((name) => model.off(name, draw));
}

export default { render };
"""


@cache
def attribution_widget_class() -> type:
    """The attribution view's AnyWidget subclass (built on first use: anywidget is optional)."""
    anywidget = anywidget_module()
    import traitlets

    class AttributionWidget(StaticFallback, anywidget.AnyWidget):
        """Attention beside attribution, as a widget: `method`, `layer`, `head`, `selected`."""

        _esm = ATTRIBUTION_ESM
        _css = ATTRIBUTION_CSS
        spec = traitlets.Dict().tag(sync=True)
        method = traitlets.Unicode("").tag(sync=True)
        layer = traitlets.Int(0).tag(sync=True)
        head = traitlets.Int(None, allow_none=True).tag(sync=True)  # None: the rollout
        selected = traitlets.Int(None, allow_none=True).tag(sync=True)  # a key position

        def __init__(self, result: Agreement, spec: dict[str, Any], static: Any) -> None:
            self.result = result
            self._shape = result.views.raw.shape[:2]  # (L, H)
            self.keep_static(static, weights=0, note="")
            super().__init__(spec=spec, method=spec["methods"][0], layer=self._shape[0] - 1)

        @property
        def scores(self) -> np.ndarray:
            """(n,) the attribution shown (`method`'s)."""
            return self.result.attributions[self.method].scores

        @property
        def attention(self) -> np.ndarray:
            """(m,) the attention row shown: the head's raw row, or the layer's rollout."""
            views = self.result.views
            return (
                views.rollout[self.layer] if self.head is None else views.raw[self.layer, self.head]
            )

        @traitlets.validate("method")
        def _check_method(self, proposal: Any) -> str:
            methods = list(self.result.attributions)
            if proposal.value not in methods:
                raise traitlets.TraitError(
                    f"method must be one of {methods}, got {proposal.value!r}"
                )
            return proposal.value

        @traitlets.validate("layer")
        def _check_layer(self, proposal: Any) -> int:
            L = self._shape[0]
            if not 0 <= proposal.value < L:
                raise traitlets.TraitError(f"layer must be in 0..{L - 1}, got {proposal.value}")
            return proposal.value

        @traitlets.validate("head")
        def _check_head(self, proposal: Any) -> int | None:
            H = self._shape[1]
            if proposal.value is not None and not 0 <= proposal.value < H:
                raise traitlets.TraitError(
                    f"head must be in 0..{H - 1} or None (the rollout), got {proposal.value}"
                )
            return proposal.value

        @traitlets.validate("selected")
        def _check_selected(self, proposal: Any) -> int | None:
            keys = [int(k) for k in self.result.views.keys]
            if proposal.value is not None and proposal.value not in keys:
                raise traitlets.TraitError(
                    f"selected must be a compared position {keys} or None, got {proposal.value}"
                )
            return proposal.value

    return AttributionWidget


def attribution_widget(
    result: Agreement,
    *,
    title: str,
    what: Callable[[Any], str],
    gap: Callable[[Any], str],
    table: Callable[[str], list[list[str]]],
    columns: list[str],
    lang: str,
    static: Callable[[], View],
) -> Any:
    """`result` as a live widget. `what(attribution)` and `gap(attribution)` are the static
    page's lines above the rows, `table(method)` its table's cells for one method."""
    views = result.views
    keys = [int(k) for k in views.keys]
    first = next(iter(result.attributions.values()))
    by_method = {
        name: {
            "scores": np.abs(a.scores[keys]).tolist(),  # (m,) the magnitude, as drawn
            "what": what(a),
            "gap": gap(a),
            "table": table(name),
        }
        for name, a in result.attributions.items()
    }
    spec = {
        "title": title,
        "methods": list(result.attributions),
        "keys": keys,
        "labels": [first.tokens[k] for k in keys],
        "raw": views.raw.tolist(),  # (L, H, m)
        "rollout": views.rollout.tolist(),  # (L, m)
        "by_method": by_method,
        "columns": columns,
        "words": {
            "attention": t("nb_attribution_attention", lang),
            "scores": t("nb_attribution_scores", lang),
            "rollout": t("nb_attribution_rollout_of", lang, layer="{layer}"),
            "head": t("nb_attribution_head_of", lang, layer="{layer}", head="{head}"),
        },
    }
    return attribution_widget_class()(result, spec, static)
