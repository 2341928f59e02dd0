"""The models an atlas reads, behind one interface: each turns sentences into every layer's
attention, through the path the app itself uses for that model, so the index's numbers are
the app's numbers (tests/core/atlas/test_atlas.py checks them against the on-the-fly path).

    untrained   the landing page's seeded module with the sidebar's defaults
                (`pipeline.analyze`: tokenizer "auto", multi-head, embed_dim 16, 4 heads,
                seed 0); one layer
    reader      the trained reader of Chinese (`attention_core.reader`): [BOS] + its units,
                every layer from one forward pass of `ReaderLM` (causal)
    minilm      the packaged all-MiniLM-L6-v2 (`attention_core.pretrained`): each text
                tokenized as `run_model` tokenizes it, sentences of similar length run as
                one padded batch (`run_ids` drops the padding again)
    a folder    your own model: a local transformers folder (`load_model(folder)`, eager
                attention; a notebook's model after `save_pretrained(folder)`), read as
                MiniLM is; causal when its family is a decoder (Llama, Qwen, Mistral, …).
                Its index lives in `index_name(folder)` (own-<folder's name>-<hash>)

`qk(text, layer, head)` gives one head's queries and keys for the AttentionViz picture.
Shape legend: L layers, H heads, n tokens, D head size.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from attention_core.pooling import ReadablePieces, readable_pieces

__all__ = [
    "MAX_TOKENS",
    "MODELS",
    "AtlasModel",
    "MiniLM",
    "Pretrained",
    "Reading",
    "index_name",
    "open_model",
]

MODELS = ("untrained", "reader", "minilm")
MAX_TOKENS = 64  # tokens read per sentence (a corpus sentence: ~40); the rest is cut
BATCH = 16  # MiniLM sentences per padded batch


@dataclass(frozen=True)
class Reading:
    """One sentence as a model read it."""

    text: str
    tokens: list[str]  # the model's tokens, [CLS]/[BOS] included (byte pieces: see readable)
    special: list[bool]
    ids: list[int]  # equal ids = the same token (the induction statistic compares them)
    attentions: np.ndarray  # (L, H, n, n) float32
    truncated: bool
    offsets: list[tuple[int, int]] = field(default_factory=list)  # text[a:b]; (0, 0): none
    # a byte-level tokenizer's pieces as the characters they make (None: pieces are labels);
    # `tokens` then names each piece by its character, so the index reads and searches as text
    readable: ReadablePieces | None = None
    # (L, H) each head's rank agreement with the attribution of the model's own next token
    # (`attribution.side_by_side.head_agreement`); None where the model predicts no token
    agreement: np.ndarray | None = None

    def head_weights(self, layer: int, head: int) -> tuple[list[str], np.ndarray]:
        """One head's weights as a reader sees them: (labels, (m, m)), a byte-level
        tokenizer's pieces pooled to the characters they make (keys summed, queries averaged:
        `pooling.ReadablePieces.pool`, rows still sum to 1); the tokens and the (n, n)
        weights themselves otherwise."""
        weights = self.attentions[layer, head]  # (n, n)
        if self.readable is None:
            return self.tokens, weights
        return self.readable.labels, self.readable.pool(weights).astype(np.float32)  # (m, m)


class AtlasModel(Protocol):
    name: str
    causal: bool
    layers: int
    heads: int
    fingerprint: str  # what the index was built with; a resume checks it

    def read(self, texts: Sequence[str]) -> list[Reading]: ...

    def qk(self, text: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, Reading]: ...


class Untrained:
    name, causal, layers = "untrained", False, 1

    def __init__(self) -> None:
        from attention_core.settings import ModelSettings

        self.settings = ModelSettings()
        self.heads = self.settings.heads
        s = self.settings
        self.fingerprint = f"untrained {s.attention} d={s.embed_dim} h={s.heads} seed={s.seed}"

    def _analysis(self, text: str, *, with_trace: bool = False) -> Any:
        from dataclasses import replace

        from attention_core.pipeline import analyze

        return analyze(
            replace(self.settings, text=text), with_trace=with_trace, max_tokens=MAX_TOKENS
        )

    def read(self, texts: Sequence[str]) -> list[Reading]:
        out = []
        for text in texts:
            a = self._analysis(text)
            labels = [t.label for t in a.tokens]
            vocab: dict[str, int] = {}
            out.append(
                Reading(
                    text=text,
                    tokens=labels,
                    special=[t.special for t in a.tokens],
                    ids=[vocab.setdefault(label, len(vocab)) for label in labels],
                    attentions=a.weights[None],  # (H, n, n) → (1, H, n, n)
                    truncated=a.truncated,
                    offsets=[(t.start, t.end) for t in a.tokens],
                )
            )
        return out

    def qk(self, text: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, Reading]:
        a = self._analysis(text, with_trace=True)
        (reading,) = self.read([text])
        return a.trace["q"][head], a.trace["k"][head], reading  # (n, D) each


class TrainedReader:
    name, causal = "reader", True

    def __init__(self) -> None:
        from attention_core.reader import load_shipped

        self.reader = load_shipped()
        config = self.reader.config
        self.layers, self.heads = config.num_layers, config.num_heads
        self.fingerprint = f"reader {self.reader.card['sha256']['reader.safetensors'][:16]}"

    def _tokens(self, text: str) -> tuple[list[Any], bool]:
        from attention_core.reader.run import reader_tokens

        tokens = reader_tokens(text, self.reader.vocab).tokens
        limit = self.reader.config.context
        return tokens[:limit], len(tokens) > limit

    def read(self, texts: Sequence[str]) -> list[Reading]:
        import torch

        from attention_core.reader.run import reader_ids

        out = []
        for text in texts:
            tokens, cut = self._tokens(text)
            ids = reader_ids(tokens, self.reader.vocab)
            with torch.inference_mode():
                _, weights = self.reader.model(torch.tensor([ids]))  # L × (1, H, n, n)
            attentions = torch.cat(weights).numpy().astype(np.float32, copy=False)  # (L, H, n, n)
            out.append(
                Reading(
                    text,
                    [t.label for t in tokens],
                    [t.special for t in tokens],
                    ids,
                    attentions,
                    cut,
                    [(t.start, t.end) for t in tokens],
                    agreement=None if cut else self._agreement(text, attentions),
                )
            )
        return out

    def _agreement(self, text: str, attentions: np.ndarray) -> np.ndarray | None:
        """(L, H) rank agreement of each head's last row with integrated gradients of the
        reader's own next token (32 steps); None when the text gives nothing to predict from."""
        from attention_core.attribution import attribute
        from attention_core.attribution.side_by_side import head_agreement

        try:
            found = attribute(self.reader, text)
        except ValueError:  # no unit the reader reads
            return None
        return head_agreement(found, attentions)

    def qk(self, text: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, Reading]:
        from attention_core.reader.run import layer_trace

        tokens, _ = self._tokens(text)
        trace = layer_trace(self.reader, [tokens], layer)
        (reading,) = self.read([text])
        return trace.q[0, head].numpy(), trace.k[0, head].numpy(), reading  # (n, D) each


class Pretrained:
    """A transformers model (`attention_core.pretrained.LoadedModel`) as an atlas model."""

    def __init__(self, loaded: Any, name: str, fingerprint: str) -> None:
        self.loaded, self.name, self.fingerprint = loaded, name, fingerprint
        self.layers, self.heads = loaded.num_layers, loaded.num_heads
        self.causal = loaded.family == "decoder"  # its weights hide later tokens

    def _ids(self, text: str) -> tuple[list[int], bool, list[tuple[int, int]]]:
        from attention_core.pretrained.forward import encode

        enc, cut = encode(self.loaded.tokenizer, text, limit=MAX_TOKENS)
        ids = list(enc["input_ids"])
        offsets = [(int(a), int(b)) for a, b in enc.get("offset_mapping", [(0, 0)] * len(ids))]
        return ids, cut, offsets

    def read(self, texts: Sequence[str]) -> list[Reading]:
        from attention_core.pretrained.ids import run_ids

        encoded = [self._ids(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i][0]))  # little padding
        out: list[Reading | None] = [None] * len(texts)
        pad = self.loaded.tokenizer.pad_token_id or 0
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            n = max(len(encoded[i][0]) for i in batch)
            ids = np.full((len(batch), n), pad, dtype=np.int64)  # (B, n)
            mask = np.zeros((len(batch), n), dtype=np.int64)  # (B, n): 1 = a token
            for row, i in enumerate(batch):
                ids[row, : len(encoded[i][0])] = encoded[i][0]
                mask[row, : len(encoded[i][0])] = 1
            runs = run_ids(self.loaded, ids, mask, max_tokens=MAX_TOKENS)
            for i, run in zip(batch, runs, strict=True):
                ids_i, cut, offsets = encoded[i]
                pieces = readable_pieces(self.loaded.tokenizer, ids_i)
                tokens = pieces.piece_labels if pieces.merged else run.tokens
                out[i] = Reading(
                    texts[i],
                    tokens,
                    run.special,
                    ids_i,
                    run.attentions,
                    cut,
                    offsets,
                    readable=pieces if pieces.merged else None,
                )
        return [r for r in out if r is not None]

    def qk(self, text: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray, Reading]:
        from attention_core.lens.neuron import neuron_view

        view = neuron_view(self.loaded, text, layer, head, max_tokens=MAX_TOKENS)
        (reading,) = self.read([text])
        return view.q, view.k, reading  # (n, D) each


class MiniLM(Pretrained):
    def __init__(self, loaded: Any = None) -> None:
        """`loaded`: the packaged model when the caller has it loaded already (the app)."""
        from attention_core.pretrained import DEFAULT_MODEL, load_model

        super().__init__(loaded if loaded is not None else load_model(), "minilm", DEFAULT_MODEL)


def index_name(name: str) -> str:
    """The folder an index of model `name` lives in under the atlas folder: the name itself
    for MODELS, own-<folder's name>-<8 hex of its resolved path> for your own model."""
    if name in MODELS:
        return name
    path = str(Path(name).expanduser().resolve())
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(path).name).strip("-.")[:40] or "model"
    return f"own-{slug}-{hashlib.sha1(path.encode()).hexdigest()[:8]}"


@cache
def open_model(name: str) -> AtlasModel:
    """The model `name` (one of MODELS, or a local transformers folder), loaded once per
    process. A folder that is not a model raises the loader's own message."""
    kinds = {"untrained": Untrained, "reader": TrainedReader, "minilm": MiniLM}
    if name in kinds:
        return kinds[name]()  # type: ignore[return-value]
    folder = Path(name).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"unknown model {name!r}: choose one of {', '.join(MODELS)}, or a local "
            "transformers folder (a notebook's model after model.save_pretrained(folder))"
        )
    from attention_core.pretrained import load_model

    loaded = load_model(str(folder))
    return Pretrained(loaded, str(folder.resolve()), f"folder:{folder.resolve()}")
