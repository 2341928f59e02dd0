"""The head view's page, for one attention or an encoder-decoder's three, as BertViz draws them.

BertViz's views take either `attention` (self-attention, one token list) or an
encoder-decoder's `encoder_attention`, `decoder_attention` and `cross_attention` with
`encoder_tokens` and `decoder_tokens`; its menu "Attention:" then switches between Encoder,
Decoder and Cross. `sections` checks either call into named `Attention`s (cross-attention:
the decoder's tokens are the queries, the encoder's the keys); `head_view_body` writes the
head view's HTML for them: one payload, the app's renderer inline, menus for the section,
the layer and (with `sentence_b_start`) BertViz's sentence A / B filter.

Shape legend: L layers, H heads, n queries, k keys.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from attention_core.figures.headview import (
    EVERY_WEIGHT_MAX,
    HEAD_VIEW_CSS,
    HEAD_VIEW_JS,
    SCALE,
    left_out_params,
    sparse_weights,
)
from attention_core.figures.lens import HEAD_COLORS
from attention_core.i18n import t
from attention_core.notebook.html import json_for_script
from attention_core.notebook.inputs import Attention, NotebookInputError, as_attention

__all__ = ["EVERY_WEIGHT_AUTO", "FILTERS", "KINDS", "head_view_body", "sections"]

FILTERS = ("all", "aa", "bb", "ab", "ba")  # BertViz's sentence A / B choices
KINDS = ("encoder", "decoder", "cross")  # BertViz's encoder-decoder menu, in its order
EVERY_WEIGHT_AUTO = 500_000  # a page up to this many weights ships every one by default

_CONTROLS_JS = r"""
(function () {
  const box = document.currentScript.parentElement;
  const payload = JSON.parse(box.querySelector("script.hv-payload").textContent);
  const mount = box.querySelector(".hv-mount");
  const layerPick = box.querySelector("select.hv-layer");
  const filterPick = box.querySelector("select.hv-filter");
  const kindPick = box.querySelector("select.hv-kind");
  const s = payload.b_start;
  const keep = {
    all: () => true,
    aa: (i, j) => i < s && j < s, bb: (i, j) => i >= s && j >= s,
    ab: (i, j) => i < s && j >= s, ba: (i, j) => i >= s && j < s,
  };
  const parts = payload.sections || [payload];  // an encoder-decoder's three, or one
  const section = () => parts[kindPick ? Number(kindPick.value) : 0];
  function show() {
    const part = section();
    const index = Number(layerPick.value);
    const n = part.tokens.length, k = (part.key_tokens || part.tokens).length;
    const filter = keep[filterPick ? filterPick.value : "all"];
    const weights = denseWeights(part.layers[index], n, part.heads.length, payload.scale,
                                 filter, k);  // H × n × k
    const spec = { tokens: part.tokens, key_tokens: part.key_tokens, heads: part.heads,
                   active: part.active, weights, filename: payload.filename,
                   text: { ...payload.text, note: part.notes[index] } };
    renderHeadView({ data: { spec }, parentElement: mount });
  }
  function switchSection() {  // its own layers in the layer menu, the same index if it has it
    const part = section();
    const at = Math.min(Number(layerPick.value), part.layer_names.length - 1);
    layerPick.replaceChildren(...part.layer_names.map((name, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = name;
      option.selected = i === at;
      return option;
    }));
    show();
  }
  layerPick.addEventListener("change", show);
  if (filterPick) filterPick.addEventListener("change", show);
  if (kindPick) kindPick.addEventListener("change", switchSection);
  show();
})();
"""


def sections(
    attention: Any,
    tokens: Sequence[str] | None,
    *,
    encoder_attention: Any = None,
    decoder_attention: Any = None,
    cross_attention: Any = None,
    encoder_tokens: Sequence[str] | None = None,
    decoder_tokens: Sequence[str] | None = None,
    include_layers: Sequence[int] | None = None,
    batch: int = 0,
    prettify_tokens: bool = True,
) -> dict[str, Attention]:
    """BertViz's arguments as checked attention: {"all": …} for `attention` over `tokens`,
    or {"encoder", "decoder", "cross"} (those given, in that order) for an encoder-decoder.
    Cross-attention (L tensors (B, H, n_dec, n_enc)) has the decoder's tokens as queries and
    the encoder's as keys; each part is checked as `as_attention` checks one."""
    given = {"encoder": encoder_attention, "decoder": decoder_attention, "cross": cross_attention}
    given = {kind: value for kind, value in given.items() if value is not None}
    options = {"include_layers": include_layers, "batch": batch, "prettify_tokens": prettify_tokens}
    if not given:
        if encoder_tokens is not None or decoder_tokens is not None:
            raise NotebookInputError(
                "encoder_tokens and decoder_tokens go with encoder_attention=, "
                "decoder_attention= or cross_attention="
            )
        return {"all": as_attention(attention, _given(tokens, "tokens"), **options)}
    if attention is not None or tokens is not None:
        raise NotebookInputError(
            "pass either attention= and tokens= (self-attention) or encoder_attention=, "
            "decoder_attention=, cross_attention= with encoder_tokens= and decoder_tokens=, "
            "not both"
        )
    out = {}
    if "encoder" in given:
        out["encoder"] = as_attention(
            given["encoder"], _given(encoder_tokens, "encoder_tokens"), **options
        )
    if "decoder" in given:
        out["decoder"] = as_attention(
            given["decoder"], _given(decoder_tokens, "decoder_tokens"), **options
        )
    if "cross" in given:
        out["cross"] = as_attention(
            given["cross"],
            _given(decoder_tokens, "decoder_tokens"),
            key_tokens=_given(encoder_tokens, "encoder_tokens"),
            **options,
        )
    return out


def _given(tokens: Sequence[str] | None, name: str) -> Sequence[str]:
    if tokens is None:
        raise NotebookInputError(f"{name}= is missing: the tokens of that attention's input")
    return tokens


def _every(parts: dict[str, Attention], every_weight: bool | None) -> bool:
    """Whether the page ships every weight: asked for (up to EVERY_WEIGHT_MAX), or by
    default when the page is small (up to EVERY_WEIGHT_AUTO)."""
    size = sum(part.weights.size for part in parts.values())
    if every_weight and size > EVERY_WEIGHT_MAX:
        raise NotebookInputError(
            f"every_weight=True would send {size:,} weights, more than {EVERY_WEIGHT_MAX:,} a "
            "page: keep fewer layers (include_layers=[…]) or a shorter text"
        )
    return size <= EVERY_WEIGHT_AUTO if every_weight is None else bool(every_weight)


def _label_index(part: Attention, piece: int | None) -> int | None:
    """BertViz's `sentence_b_start` (a piece index) as the index of the label holding that
    piece, where byte pieces were joined; checked to leave both sentences a token."""
    if piece is None:
        return None
    count = len(part.tokens) if part.pieces is None else sum(map(len, part.pieces))
    if not 0 < int(piece) < count:
        raise NotebookInputError(f"sentence_b_start must be in 1..{count - 1}, got {piece}")
    if part.pieces is None:
        return int(piece)
    return next(i for i, run in enumerate(part.pieces) if int(piece) in run)


def _options(names: Sequence[str], texts: Sequence[str], selected: int, css: str) -> str:
    """A <select> of escaped option texts with the given values."""
    options = "".join(
        f'<option value="{name}"{" selected" if i == selected else ""}>{html.escape(text)}</option>'
        for i, (name, text) in enumerate(zip(names, texts, strict=True))
    )
    return f'<select class="{css}">{options}</select>'


def head_view_body(
    parts: dict[str, Attention],
    *,
    layer: int | None,
    heads: Sequence[int] | None,
    sentence_b_start: int | None,
    every_weight: bool | None,
    lang: str,
) -> str:
    """The head view's HTML for `sections(...)`: `layer` (the model's index) shown first,
    `heads` switched on at the start, BertViz's sentence menu with `sentence_b_start`."""
    first_part = next(iter(parts.values()))
    first = first_part.layers[0] if layer is None else int(layer)
    if first not in first_part.layers:
        raise NotebookInputError(f"layer {first} is not among the layers shown {first_part.layers}")
    every = _every(parts, every_weight)
    hint = t("nb_every_weight_hint", lang, limit=f"{EVERY_WEIGHT_MAX:,}")
    payload_parts = []
    for part in parts.values():
        L, H = part.weights.shape[:2]
        on = list(range(H)) if heads is None else [int(h) for h in heads]
        if any(not 0 <= h < H for h in on):
            raise NotebookInputError(f"heads must be in 0..{H - 1}, got {list(heads or [])}")
        b_start = _label_index(part, sentence_b_start)
        layers = [sparse_weights(part.weights[i], every_weight=every) for i in range(L)]
        notes = []
        for sparse in layers:
            params = left_out_params(sparse)
            notes.append("" if params is None else f"{t('hv_left_out', lang, **params)} {hint}")
        payload_parts.append(
            {
                "tokens": part.tokens,
                "key_tokens": part.key_tokens,
                "heads": [
                    {"name": t("head_title", lang, i=h), "color": HEAD_COLORS[h % len(HEAD_COLORS)]}
                    for h in range(H)
                ],
                "active": [h in on for h in range(H)],
                "layers": layers,  # (H, n, k) each, `sparse_weights`
                "layer_names": [t("compare_layer_name", lang, l=i) for i in part.layers],
                "notes": notes,
            }
        )
    # one attention: its part is the payload itself (as BertViz's single view)
    payload = {
        **(payload_parts[0] if list(parts) == ["all"] else {"sections": payload_parts}),
        "scale": SCALE,
        "b_start": b_start,
        "filename": "head-view",
        "text": {
            "svg": t("lens_head_view_svg", lang),
            "hint": t("lens_head_view_hint", lang),
            "open_cap": t("hv_open_cap", lang, shown="{shown}", total="{total}"),
        },
    }
    controls = ""
    if list(parts) != ["all"]:
        kinds = [t(f"nb_kind_{kind}", lang) for kind in parts]
        controls += f"{t('nb_attention_label', lang)} "
        controls += _options([str(i) for i in range(len(parts))], kinds, 0, "hv-kind") + " "
    names = payload_parts[0]["layer_names"]
    controls += f"{t('lens_layer_label', lang)} " + _options(
        [str(i) for i in range(len(names))], names, first_part.layers.index(first), "hv-layer"
    )
    if sentence_b_start is not None:
        filters = [t(f"nb_filter_{name}", lang) for name in FILTERS]
        controls += " " + _options(FILTERS, filters, 0, "hv-filter")
    return (
        '<div class="studio-headview-box">'
        f"<style>{HEAD_VIEW_CSS}</style>"
        f'<div class="hv-controls studio-headview">{controls}</div>'
        '<div class="hv-mount"></div>'
        f'<script type="application/json" class="hv-payload">{json_for_script(payload)}</script>'
        # one function scope: a notebook shows many views in one document, and the
        # renderer's top-level constants would clash as globals
        f"<script>(function () {{\n{HEAD_VIEW_JS}\n{_CONTROLS_JS}\n}})();</script>"
        "</div>"
    )
