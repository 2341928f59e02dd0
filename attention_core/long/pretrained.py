"""A real model on a long text (up to its own context, at most MAX_LONG_TOKENS): every layer's
attention as an `AttentionMap` (attention_core.long.map), never as (L, H, n, n) weights.

`run_model` returns every weight: at 4 096 tokens a 6-layer × 12-head model's are 4.8 GB.
`run_model_long` runs the model once (its base model: no language-model head, whose logits
alone would be n × vocabulary floats) and, as each self-attention layer is called, rebuilds
that layer's queries and keys from its input the way its scores are made
(`pretrained.rebuild.queries_keys`: projections, norms, rotary positions; the shared key
head of each query head under grouped-query attention), and keeps them as a map. Any
rectangle of weights is then exact on demand.

A map is only shown when it is the model's own numbers:
- the layer's mask must be full (an encoder) or causal (a decoder): a sliding window
  narrower than the text (Mistral past its window, Gemma's local layers, GPT-Neo's local
  layers, whose window is the layer's own) or any additive bias is refused with the layer
  named;
- soft-capped scores (Gemma 2's cap·tanh(q·kᵀ·scale / cap)) are capped block by block
  (`attention_core.long.scores`), never folded into one matmul;
- every run first rebuilds the text's first `CHECK_TOKENS` tokens and compares them with
  the model's own `output_attentions` within EXACT (ROW_SUM_TOLERANCE for a float16/bfloat16
  model): an architecture whose scores are not softmax(q·kᵀ·scale) (capped, for Gemma 2)
  is refused, not drawn.
Refusals are `LongRefused` (a ValueError) with the reason in words.

Memory, for a model of L layers × H heads of size D: the maps keep 8·H·n·(D + 1) bytes a
layer (17 MB at 4 096 tokens × 8 heads × D = 64). The forward pass runs a twin of the model
(`_twin`: the same weights, shared, with torch's fused SDPA attention), so no layer's H·n²
scores are ever held: an eager pass held them up to three times over (1.6 GB at 4 096 tokens
× 8 heads) and took twice as long. Only the check of the first CHECK_TOKENS tokens runs the
eager model itself. Nothing holds n² floats of a head, except the pass of a family with no
SDPA path (Gemma 2, whose soft cap SDPA cannot apply; BLOOM; GPT-Neo): it runs eagerly, and
each layer's scores live for the length of that layer's call.

Which bound cut a text is named (`cut_by`): "characters" (MAX_TEXT_CHARS), "model" (its
own context, `LoadedModel.max_length`) or "max_tokens" (the caller's bound, MAX_LONG_TOKENS
by default).

Shape legend: L layers, H heads, KV key/value heads, n tokens, D head size, C model width.
"""

from __future__ import annotations

import copy
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.limits import EXACT, HALF_TOLERANCE, MAX_LONG_TOKENS, MAX_TEXT_CHARS
from attention_core.long.map import AttentionMap
from attention_core.long.run import check_length
from attention_core.long.text import MapsOfTokens
from attention_core.pretrained.forward import encode_counted, stack_layers
from attention_core.pretrained.load import LoadedModel
from attention_core.pretrained.parts import attention_layers, temporary_hooks, this_thread_only
from attention_core.pretrained.rebuild import queries_keys, score_bias
from attention_core.pretrained.run import cut_reason
from attention_core.tokenize import Token

if TYPE_CHECKING:
    import torch

__all__ = ["CHECK_TOKENS", "LongRefused", "PretrainedLong", "run_model_long"]

CHECK_TOKENS = 48  # tokens of the text rebuilt and compared with the model's own weights


class LongRefused(ValueError):
    """The model's attention cannot be rebuilt from its queries and keys (the reason)."""


@dataclass(frozen=True, eq=False)
class PretrainedLong(MapsOfTokens):
    """A long text through a pretrained model: its tokens and one map per layer."""

    model: str  # the LoadedModel's name
    text: str  # the text read (cut at MAX_TEXT_CHARS): offsets index it
    tokens: list[str]
    offsets: list[tuple[int, int]]  # character span of each token; (0, 0) if none
    special: list[bool]
    unknown: list[bool]
    maps: tuple[AttentionMap, ...]  # L maps, each (H, n, n) on demand
    total_tokens: int  # the tokens of the whole (character-cut) text, special ones included
    cut_by: str | None  # None, "characters", "model" or "max_tokens" (the tokens' bound first)
    limit: int  # the token bound that applied: min(max_tokens, the model's context)
    causal: bool
    text_cut: bool = False  # the text was longer than MAX_TEXT_CHARS (whatever cut_by says)

    @property
    def spans(self) -> list[Token]:
        """The tokens as `tokenize.Token`s over `text` (what long.run's find_rows and
        block_starts read): the model's token as the piece; a special token (or one without an
        offset) an empty span where the previous token ended, so spans never go backwards."""
        out: list[Token] = []
        end = 0
        for piece, (a, b), special in zip(self.tokens, self.offsets, self.special, strict=True):
            if special or b <= a or a < end:
                out.append(Token("", end, end, piece=piece, special=special))
                continue
            out.append(Token(self.text[a:b], a, b, piece=piece))
            end = b
        return out


def run_model_long(
    loaded: LoadedModel, text: str, *, max_tokens: int = MAX_LONG_TOKENS
) -> PretrainedLong:
    """`text`'s first min(max_tokens, the model's context) tokens through `loaded`, each layer
    kept as an AttentionMap equal to `run_model(...).attentions[l]` within EXACT (see the
    module docstring for what is refused and why). Raises TextTooLong above MAX_INPUT_CHARS
    characters, LongRefused when the maps cannot be the model's own, ValueError otherwise."""
    import torch

    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    check_length(text)
    if loaded.family == "encoder-decoder":
        raise LongRefused("long maps read an encoder's or a decoder's self-attention")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise ValueError(f"max_tokens must be an integer, got {max_tokens!r}")
    if not 2 <= max_tokens <= MAX_LONG_TOKENS:
        raise ValueError(f"max_tokens must be in 2..{MAX_LONG_TOKENS}, got {max_tokens}")
    limit = min(max_tokens, loaded.max_length)
    cut, chars_cut = text[:MAX_TEXT_CHARS], len(text) > MAX_TEXT_CHARS
    enc, total = encode_counted(loaded.tokenizer, cut, limit=limit)
    ids: list[int] = list(enc["input_ids"])
    if not ids or all(enc.get("special_tokens_mask", [0] * len(ids))):
        raise ValueError("the text gives no tokens for this model")
    names = getattr(loaded.tokenizer, "model_input_names", ["input_ids", "attention_mask"])
    inputs = {k: torch.tensor([enc[k]]) for k in names if k in enc}  # each (1, n)
    for index, part in enumerate(attention_layers(loaded.model)):  # before any pass
        if part.window is not None and part.window < len(ids):  # the layer's own window
            raise _window_refused(index, part.window, len(ids))
    _check_rebuilds(loaded, {k: v[:, :CHECK_TOKENS] for k, v in inputs.items()})
    maps, causal = _maps(loaded, inputs)
    unk = loaded.tokenizer.unk_token_id
    n = len(ids)
    return PretrainedLong(
        model=loaded.name,
        text=cut,
        tokens=list(loaded.tokenizer.convert_ids_to_tokens(ids)),
        offsets=[(int(a), int(b)) for a, b in enc.get("offset_mapping", [(0, 0)] * n)],
        special=[bool(s) for s in enc.get("special_tokens_mask", [0] * n)],
        unknown=[unk is not None and i == unk for i in ids],
        maps=maps,
        total_tokens=total,
        cut_by=cut_reason(
            chars_cut=chars_cut,
            tokens_cut=total > n,
            max_tokens=max_tokens,
            model_max=loaded.max_length,
            tokenizer=loaded.cut_by_tokenizer,
        ),
        limit=limit,
        causal=causal,
        text_cut=chars_cut,
    )


def _maps(
    loaded: LoadedModel, inputs: dict[str, torch.Tensor]
) -> tuple[tuple[AttentionMap, ...], bool]:
    """One forward pass; each layer's map is built as the layer is called (its input is not
    kept). Returns the maps and whether they are causal."""
    import torch

    model = _twin(loaded)
    layers = attention_layers(model)
    built: dict[int, tuple[AttentionMap, bool]] = {}

    def build(index: int) -> Any:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            x = (args[0] if args else kwargs["hidden_states"])[0]  # (n, C)
            built[index] = _layer_map(layers[index], index, x, kwargs)

        return hook

    handles = [
        layer.module.register_forward_pre_hook(this_thread_only(build(i)), with_kwargs=True)
        for i, layer in enumerate(layers)
    ]
    base = getattr(model, "base_model", model)  # no LM head: n × vocab logits
    options = {"use_cache": False} if loaded.family == "decoder" else {}
    with temporary_hooks(handles), torch.no_grad():
        base(**inputs, **options)
    if len(built) != len(layers):
        raise LongRefused("not every self-attention layer was called on the text")
    maps = tuple(built[i][0] for i in range(len(layers)))
    return maps, built[0][1]


_TWINS: weakref.WeakKeyDictionary[LoadedModel, Any] = weakref.WeakKeyDictionary()
_TWINS_LOCK = threading.Lock()


def _twin(loaded: LoadedModel) -> Any:
    """The model again, sharing every weight and buffer (no copy of them), running torch's
    fused SDPA attention: its forward pass never holds a layer's H·n² scores (eager holds them
    two or three times over: scores, masked, softmax). The LoadedModel's own model stays
    eager for everything else (its weights for run_model, the check of `_check_rebuilds`).
    One twin per model, made on first use; the model itself where SDPA is not offered."""
    with _TWINS_LOCK:
        twin = _TWINS.get(loaded)
        if twin is None:
            model = loaded.model
            shared = {id(t): t for t in (*model.parameters(), *model.buffers())}
            try:
                twin = copy.deepcopy(model, shared)  # the modules again; tensors shared
                twin.set_attn_implementation("sdpa")
            except Exception:  # an architecture without an SDPA path: the eager model
                twin = model
            _TWINS[loaded] = twin
    return twin


def _layer_map(part: Any, index: int, x: torch.Tensor, call: dict[str, Any]) -> tuple[Any, bool]:
    """One layer's map from its input x (n, C) and the model's keyword arguments: its
    scores soft-capped where the layer caps them (Gemma 2's attn_logit_softcapping)."""
    import torch

    n = x.shape[0]
    causal = _mask_kind(call.get("attention_mask"), n, index, part.module)
    if part.window is not None and part.window < n:  # the layer's own window (GPT-Neo)
        raise _window_refused(index, part.window, n)
    q, k = queries_keys(part, x, call)  # (H, n, D), (KV, n, D) in float32
    k = k.repeat_interleave(part.num_heads // part.num_kv_heads, dim=0)  # (H, n, D): repeat_kv
    bias = score_bias(part, call, n)  # (H, n) or None: ALiBi, one number per key
    if bias is not None:  # folded into one more dimension: scale·(q·k + 1·b/scale) = scale·q·k + b
        q = torch.cat((q, torch.ones_like(q[..., :1])), dim=-1)  # (H, n, D + 1)
        k = torch.cat((k, (bias / part.scaling)[..., None]), dim=-1)  # (H, n, D + 1)
    softcap = getattr(part.module, "attn_logit_softcapping", None) or None
    if softcap is not None and bias is not None:  # the cap would apply to the bias too
        raise LongRefused(f"layer {index} soft-caps scores that carry a bias: not rebuilt")
    amap = AttentionMap.from_qk(
        q, k, causal=causal, scale=part.scaling, softcap=softcap, max_tokens=n
    )
    return amap, causal


def _mask_kind(mask: object, n: int, index: int, module: Any) -> bool:
    """Whether a layer's mask is causal (True) or full (False); LongRefused otherwise."""
    import torch

    if not isinstance(mask, torch.Tensor):  # no mask: SDPA's own causal flag, or all keys
        return bool(getattr(module, "is_causal", False))
    m = mask.detach().reshape(-1, *mask.shape[-2:])[0][-n:, -n:]  # (n | 1, n)
    if m.dtype == torch.bool:  # True = may attend
        allowed, bias = m, None
    else:
        allowed = m > torch.finfo(m.dtype).min / 2  # masked: the mask's dtype's lowest number
        bias = m.masked_fill(~allowed, 0)
    if bias is not None and bool(bias.any()):
        raise LongRefused(f"layer {index} adds a bias to its scores: not softmax(q·kᵀ·scale)")
    allowed = allowed.expand(n, n)
    if bool(allowed.all()):
        return False
    if torch.equal(allowed, torch.ones(n, n, dtype=torch.bool).tril()):
        return True
    raise _window_refused(index, int(allowed[-1].sum()), n)


def _window_refused(index: int, width: int, n: int) -> LongRefused:
    return LongRefused(
        f"layer {index} lets a token see only the last {width} tokens (a sliding window), "
        f"not all {n}: this text is longer than the model's window"
    )


def _check_rebuilds(loaded: LoadedModel, inputs: dict[str, torch.Tensor]) -> None:
    """The first tokens' maps against the model's own output_attentions (eager)."""
    import torch

    with torch.no_grad():
        outputs = loaded.model(**inputs, output_attentions=True)
        own = stack_layers(outputs.attentions)  # (L, H, m, m)
    maps, _ = _maps(loaded, inputs)
    dtype = next(loaded.model.parameters()).dtype
    tolerance = EXACT if dtype == torch.float32 else HALF_TOLERANCE
    for layer, amap in enumerate(maps):
        m = amap.n
        for head in range(amap.num_heads):
            gap = float(np.abs(amap.exact(head, slice(0, m), slice(0, m)) - own[layer, head]).max())
            if not gap <= tolerance:
                raise LongRefused(
                    f"layer {layer} head {head}: rebuilt from its queries and keys, its weights "
                    f"differ from the model's own by {gap:.2g}: its scores are not "
                    "softmax(q·kᵀ·scale) with a full or causal mask"
                )
