"""The engineer's lens on the project's own trained reader (attention_core.reader): rollout,
norm-weighted attention, ablation, head view and neuron view, each from the reader's own
forward pass.

The lens reads a model's attention layers through one interface,
`pretrained.parts.attention_layers`, which finds the reader's `MultiHeadAttention`s as it
finds a transformers model's query, key, value and output projections; norms, the neuron
view and ablation then run the same code on both (`head_value_norms`, `rebuild_view`,
`knocked_out`). What differs is only how
a sentence goes in (the reader's units after [BOS], cut at its context, not a tokenizer)
and what comes out (next-unit logits, not hidden states), and that is this module:

    reader_attention(r, text)         the units read and every layer's weights (L, H, n, n)
                                      from ReaderLM.forward itself: what rollout, flow,
                                      sinks and the head view take
    reader_value_norms(r, text)       ‖f_h(x_j)‖ (L, H, n), x what each layer received
    reader_norm_weighted(r, text)     ‖α_ij · f_h(x_j)‖ (L, H, n, n)
    reader_neuron_view(r, text, l, h) q, k, q⊙k, ÷√D, softmax of one head; refused (a
                                      ValueError) unless every rebuilt row is the model's own
    reader_ablate(r, text, heads)     the next-unit predictions with heads knocked out: the
                                      sentence's loss and how far each prediction moves (KL)
    reader_head_effects(r, text)      every head knocked out alone

`r` is an `attention_core.reader.Reader` (`load_shipped()`: the one in data/reader).

Shape legend: L layers, H heads, n units ([BOS] included), D head size, C model width,
V vocabulary, B copies of the sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attention_core.lens.ablation import knocked_out
from attention_core.lens.neuron import NeuronView, rebuild_view
from attention_core.lens.norms import head_value_norms, times_norms
from attention_core.limits import EXACT, MAX_TEXT_CHARS
from attention_core.pretrained.parts import attention_layers, calls_during
from attention_core.tokenize import Token, token_labels

if TYPE_CHECKING:
    import torch

    from attention_core.reader import Reader

# reader_head_effects runs copies of the sentence in batches; each copy's logits are n × V
# floats (64 × 10 786 for the shipped reader), compared in float64: this bounds a batch's
# log-probabilities to ~64 MB (11 copies at 64 units, 23 at 32).
_EFFECT_FLOATS = 8_000_000


@dataclass(frozen=True)
class ReaderAttention:
    """A sentence as the reader read it: [BOS] and its units (cut at the context), and
    `attentions[l, h, i, j]`, the weight of unit j in unit i's row of head h in layer l,
    exactly as ReaderLM.forward returned it (causal: zero above the diagonal)."""

    tokens: list[Token]  # [BOS], then one unit each (a CJK character, an English word, a sign)
    unknown: list[int]  # positions of the units the vocabulary lacks: read as [UNK]
    total: int  # tokens of the whole text ([BOS] included) before the cut at the context
    ids: list[int]  # (n,) what the model read
    attentions: np.ndarray  # (L, H, n, n) float32

    @property
    def labels(self) -> list[str]:
        return token_labels(self.tokens)

    @property
    def special(self) -> list[bool]:
        return [t.special for t in self.tokens]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        return [(t.start, t.end) for t in self.tokens]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.tokens)


@dataclass(frozen=True)
class ReaderAblation:
    """The reader's next-unit predictions with some heads knocked out, beside its own."""

    logits: np.ndarray  # (n, V) with the heads knocked out
    original: np.ndarray  # (n, V) the model's own
    loss: float  # mean cross-entropy (nats) of each unit of the sentence given those before
    original_loss: float
    kl: float  # mean over the n positions of KL(own ‖ knocked out) of the next-unit distribution

    @property
    def loss_change(self) -> float:
        return self.loss - self.original_loss

    @property
    def top_changed(self) -> int:
        """Positions whose most likely next unit is another one with the heads knocked out."""
        return int((self.logits.argmax(-1) != self.original.argmax(-1)).sum())


@dataclass(frozen=True)
class ReaderEffects:
    """Every head of the reader knocked out alone: (L, H) mean KL of the next-unit
    distributions from the model's own, and the sentence's loss (nats) without that head."""

    kl: np.ndarray  # (L, H)
    loss: np.ndarray  # (L, H)
    original_loss: float

    def ranking(self) -> list[tuple[int, int]]:
        """(layer, head) pairs, largest KL first."""
        order = np.argsort(-self.kl, axis=None, kind="stable")
        return [tuple(int(v) for v in np.unravel_index(i, self.kl.shape)) for i in order]


def _read(reader: Reader, text: str) -> tuple[list[Token], list[int], int, torch.Tensor]:
    """The text as attention_core.pipeline reads it for ?weights=trained: [BOS] and its
    units, cut at the reader's context; the ids as a (1, n) tensor."""
    import torch

    from attention_core.reader.run import reader_ids, reader_tokens

    read = reader_tokens(text[:MAX_TEXT_CHARS], reader.vocab)
    if len(read.tokens) < 2:
        raise ValueError(
            "the text has no unit the reader reads (a character, a word or a sign): type a sentence"
        )
    n = min(len(read.tokens), reader.config.context)
    tokens = read.tokens[:n]
    ids = torch.tensor([reader_ids(tokens, reader.vocab)])  # (1, n)
    return tokens, [i for i in read.unknown if i < n], len(read.tokens), ids


def _forward(reader: Reader, ids: torch.Tensor) -> tuple[Any, list[Any], list[tuple]]:
    """One forward pass of ReaderLM: logits (B, n, V), each layer's weights (B, H, n, n),
    and each layer's call (its input ln1(x) (B, n, C) and its mask, as the block passed them)."""
    import torch

    out: list[Any] = []
    with torch.no_grad():
        calls = calls_during(attention_layers(reader.model), lambda: out.extend(reader.model(ids)))
    logits, weights = out
    return logits, weights, calls


def _check_layer_head(layer: int, head: int, num_layers: int, num_heads: int) -> None:
    if not (0 <= layer < num_layers and 0 <= head < num_heads):
        raise ValueError(
            f"head ({layer}, {head}) does not exist: the reader has layers 0..{num_layers - 1} "
            f"× heads 0..{num_heads - 1}"
        )


def reader_attention(reader: Reader, text: str) -> ReaderAttention:
    """`text` through the reader: its units and every layer's weights (see ReaderAttention)."""
    tokens, unknown, total, ids = _read(reader, text)
    _, weights, _ = _forward(reader, ids)
    attentions = np.stack([w[0].numpy() for w in weights]).astype(np.float32)  # (L, H, n, n)
    return ReaderAttention(tokens, unknown, total, ids[0].tolist(), attentions)


def reader_value_norms(reader: Reader, text: str) -> np.ndarray:
    """‖f_h(x_j)‖ → (L, H, n): unit j's value vector in head h through that head's columns
    of the output projection (no bias), x_j the input the layer received in the model's own
    forward pass (Kobayashi et al. 2020, eq. 5; `attention_core.lens.value_norms`)."""
    _, _, _, ids = _read(reader, text)
    _, _, calls = _forward(reader, ids)
    return _norms(reader, calls)


def _norms(reader: Reader, calls: list[tuple]) -> np.ndarray:
    """‖f_h(x_j)‖ (L, H, n) from each layer's call in one forward pass (x: its args[0])."""
    layers = attention_layers(reader.model)
    return np.stack(
        [head_value_norms(a, args[0][0]) for a, (args, _) in zip(layers, calls, strict=True)]
    )  # (L, H, n)


def reader_norm_weighted(reader: Reader, text: str) -> np.ndarray:
    """‖α_ij · f_h(x_j)‖ → (L, H, n, n): each weight times the size of what it moves, from
    one forward pass (Kobayashi et al. 2020, "Attention is Not Only a Weight")."""
    _, _, _, ids = _read(reader, text)
    _, weights, calls = _forward(reader, ids)
    attentions = np.stack([w[0].numpy() for w in weights])  # (L, H, n, n)
    return times_norms(attentions, _norms(reader, calls))


def reader_neuron_view(reader: Reader, text: str, layer: int, head: int) -> NeuronView:
    """q and k of head `head` in layer `layer`, rebuilt from the layer's own input and
    projections under its causal mask (see NeuronView: pass `causal=True` or rely on its
    mask). Every rebuilt row is checked against the weights of the same forward pass: above
    EXACT the view is refused (ValueError), never drawn with another number."""
    layers = attention_layers(reader.model)
    _check_layer_head(layer, head, len(layers), layers[0].num_heads)
    _, _, _, ids = _read(reader, text)
    _, weights, calls = _forward(reader, ids)
    args, kwargs = calls[layer]
    mask = args[1] if len(args) > 1 else kwargs.get("mask")  # (n, n) bool, True = may attend
    view = rebuild_view(layers[layer], args[0][0], {"attention_mask": mask}, head)  # x: (n, C)
    own = weights[layer][0, head].double().numpy()  # (n, n)
    gap = max(view.gap(i, own[i]) for i in range(own.shape[0]))
    if not gap <= EXACT:
        raise ValueError(
            f"the neuron view cannot rebuild layer {layer}, head {head} of this reader: its "
            f"rows differ from the model's own weights by up to {gap:.3g} (more than {EXACT}). "
            "Read the model's own weights (reader_attention) instead"
        )
    return view


def _masks(layers: int, heads: int, knocked: Sequence[Sequence[tuple[int, int]]]) -> Any:
    """(B, L, H) of ones, with copy b's heads `knocked[b]` set to 0."""
    import torch

    masks = torch.ones(len(knocked), layers, heads)  # (B, L, H)
    for row, pairs in enumerate(knocked):
        for layer, head in pairs:
            _check_layer_head(layer, head, layers, heads)
            masks[row, layer, head] = 0.0
    return masks


def _knocked_logits(reader: Reader, ids: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits (B, n, V) of B copies of `ids` (1, n), heads knocked out as `masks` says."""
    import torch

    with knocked_out(attention_layers(reader.model), masks), torch.no_grad():
        logits, _ = reader.model(ids.expand(masks.shape[0], -1))  # (B, n, V)
    return logits


def _log_probs(logits: torch.Tensor) -> torch.Tensor:
    """Next-unit log-probabilities (B, n, V), in float64: a KL of nearly equal rows is a
    small difference of large sums."""
    return logits.double().log_softmax(-1)


def _losses(logp: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats) of each copy: unit t+1 under the log-probabilities at t,
    as ReaderLM.loss counts it → (B,)."""
    targets = ids[0, 1:].expand(logp.shape[0], -1)  # (B, n-1)
    return -logp[:, :-1].gather(-1, targets[..., None])[..., 0].mean(dim=-1)  # (B,)


def _kl(own: torch.Tensor, knocked: torch.Tensor) -> torch.Tensor:
    """Mean over positions of KL(own ‖ knocked) of the next-unit distributions → (B,), from
    log-probabilities own (1 or B, n, V) and knocked (B, n, V)."""
    kl = (own.exp() * (own - knocked)).sum(-1)  # (B, n)
    return kl.clamp_min(0.0).mean(-1)  # rounding can put a KL of equal rows a hair below 0


def reader_ablate(reader: Reader, text: str, heads: Sequence[tuple[int, int]]) -> ReaderAblation:
    """The reader on `text` with the (layer, head) pairs in `heads` knocked out together
    (each one's output zeroed before the output projection), beside its own output. No
    heads: the logits are the model's own, to the bit."""
    import torch

    layers = attention_layers(reader.model)
    masks = _masks(len(layers), layers[0].num_heads, [heads])  # (1, L, H)
    _, _, _, ids = _read(reader, text)
    with torch.no_grad():
        original, _ = reader.model(ids)  # (1, n, V)
    logits = _knocked_logits(reader, ids, masks)  # (1, n, V)
    own, knocked = _log_probs(original), _log_probs(logits)
    return ReaderAblation(
        logits=logits[0].numpy(),
        original=original[0].numpy(),
        loss=float(_losses(knocked, ids)[0]),
        original_loss=float(_losses(own, ids)[0]),
        kl=float(_kl(own, knocked)[0]),
    )


def reader_head_effects(
    reader: Reader, text: str, *, batch_size: int | None = None
) -> ReaderEffects:
    """Knock out every head alone, in batches of copies of the sentence (row 0 of each
    batch untouched: the reference it is compared with), and measure the KL of the
    next-unit distributions and the sentence's loss (see ReaderEffects)."""
    layers = attention_layers(reader.model)
    L, H = len(layers), layers[0].num_heads
    _, _, _, ids = _read(reader, text)
    if batch_size is None:
        batch_size = max(2, _EFFECT_FLOATS // (ids.shape[1] * reader.config.vocab_size))
    pairs = [(layer, head) for layer in range(L) for head in range(H)]
    kl, loss = np.zeros((L, H)), np.zeros((L, H))
    original_loss = 0.0
    step = max(1, batch_size - 1)
    for start in range(0, len(pairs), step):
        chunk = pairs[start : start + step]
        masks = _masks(L, H, [[], *([pair] for pair in chunk)])  # (B, L, H), row 0 untouched
        logp = _log_probs(_knocked_logits(reader, ids, masks))  # (B, n, V)
        kls = _kl(logp[:1], logp[1:])  # (B-1,)
        losses = _losses(logp, ids)  # (B,)
        original_loss = float(losses[0])
        for row, (layer, head) in enumerate(chunk):
            kl[layer, head] = float(kls[row])
            loss[layer, head] = float(losses[row + 1])
    return ReaderEffects(kl=kl, loss=loss, original_loss=original_loss)
