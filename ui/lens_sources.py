"""What the Lens page reads, behind one interface (`Subject`): the sidebar's sentence through
the model loaded on the Pretrained page (the packaged all-MiniLM-L6-v2 by default), or
through the project's own trained reader (attention_core.reader).

Each source says here how its numbers are got (the pretrained model's through the caches
of `ui.cache`; the reader's from `attention_core.lens.reader_lens`, a few milliseconds each, its
attention flow through the cache of weights keyed by an id) and how its ablation is
measured; the page draws every view the same way for both. A source that cannot be read
ends the page with its message (`st.stop()`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attention_core.limits import EXACT
from attention_core.pooling import ReadablePieces, pool_to_words, readable_pieces
from attention_core.reader.card import ReaderError
from attention_core.settings import Settings
from attention_core.tokenize import token_labels
from ui.cache import (
    attention_flow,
    lens_ablation,
    lens_flow,
    lens_head_effects,
    lens_neuron,
    lens_value_norms,
)
from ui.cancellable import run_or_cancelled
from ui.common import md_escape, reader_unknown_warning
from ui.language import tr
from ui.models import MODEL_STATE, model_label, model_or_stop, result_or_stop, unknown_warning

if TYPE_CHECKING:
    from attention_core.lens import NeuronView

__all__ = ["SOURCES", "Metric", "Subject", "subject"]

SOURCES = ("pretrained", "reader")
Pairs = tuple[tuple[int, int], ...]
Progress = Callable[[int, int], None]  # (heads done, heads in all)


@dataclass(frozen=True)
class Metric:
    """One number of the ablation view: its label, its value and, maybe, its change."""

    label: str
    value: str
    delta: str | None = None
    delta_color: str = "normal"  # "inverse": a rise is bad (a loss)


@dataclass(frozen=True)
class Subject:
    """One sentence through one model, and the lens computations on it (each run when the
    view needs it, inside the page's guard: a ValueError there is the lens's message).
    Shapes: L layers, H heads, n tokens."""

    name: str  # the model, as the page names it
    tokens: list[str]  # what each token shows
    offsets: list[tuple[int, int]]  # its characters in the text; (0, 0) for a special token
    special: list[bool]
    attentions: np.ndarray  # (L, H, n, n), the model's own weights
    own: str  # where those weights come from (named in the neuron view's check)
    tolerance: float  # how far a rebuilt weight may be from the model's own (its precision)
    value_norms: Callable[[], np.ndarray]  # (L, H, n)
    flow: Callable[[], np.ndarray]  # (n, n)
    neuron: Callable[[int, int], NeuronView]  # (layer, head)
    # (L, H) effects and the heads largest first; progress(done, total) after each batch
    effects: Callable[[Progress], tuple[np.ndarray, list[tuple[int, int]]]]
    knock_out: Callable[[Pairs], list[Metric]]  # the heads knocked out together
    ablation_caption: str  # the catalog key saying what the effect measures
    kv_groups: Callable[[], list[list[int]]]  # query heads per key/value head (1 without GQA)
    # a byte-level tokenizer's pieces joined into the characters they make (None: the pieces
    # are the labels already)
    readable: ReadablePieces | None = None

    @property
    def shown_tokens(self) -> list[str]:
        """What the text's tokens read as: one label per character a byte-level tokenizer cut
        into pieces, "Ġ"/"▁" as spaces; the tokens themselves otherwise."""
        return self.tokens if self.readable is None else self.readable.labels

    @property
    def piece_text(self) -> list[str]:
        """(n,) each piece as the text of the character it helps make (the tokens themselves
        when the pieces are the labels): what tells punctuation from words."""
        return self.tokens if self.readable is None else self.readable.piece_labels

    @property
    def piece_names(self) -> list[str]:
        """(n,) each piece by the character it helps make, with its place when the character
        took several pieces ("中 (1/3)"): views that keep the model's own rows per piece."""
        if self.readable is None:
            return self.tokens
        return [
            label if parts == 1 else tr("lens_piece_part", label=label, part=part, parts=parts)
            for label, (part, parts) in zip(
                self.readable.piece_labels, self.readable.parts, strict=True
            )
        ]

    @property
    def labels(self) -> list[str]:
        return token_labels(self.piece_names)

    def pool(self, weights: np.ndarray) -> np.ndarray:
        """The pieces' (…, n, n) → (…, m, m) over `shown_tokens`: keys summed, queries
        averaged (`pooling.ReadablePieces.pool`: rows still sum to 1); as they are when the
        pieces are the labels."""
        if self.readable is None:
            return weights
        return self.readable.pool(weights).astype(np.float32)

    def pooled(
        self, weights: np.ndarray, text: str, *, words: bool
    ) -> tuple[list[str], np.ndarray]:
        """(…, n, n) → (axis labels, (…, m, m)): pooled to `shown_tokens`, then to jieba
        words of `text` when asked (`pooling.pool_to_words`)."""
        shown = self.pool(weights)
        if not words:
            return token_labels(self.shown_tokens), shown
        offsets, special = self.offsets, self.special
        if self.readable is not None:
            offsets, special = self.readable.spans(self.offsets), self.readable.special
        names, out = pool_to_words(shown, self.shown_tokens, offsets, special, text)
        return token_labels(names), out.astype(np.float32)


def subject(source: str, settings: Settings) -> Subject:
    """The sidebar's sentence through `source` ("pretrained" or "reader")."""
    return _reader(settings) if source == "reader" else _pretrained(settings)


def _pretrained(settings: Settings) -> Subject:
    from attention_core.lens import kv_groups, rebuild_tolerance

    name = st.session_state.get(MODEL_STATE, "")  # the model last loaded on the Pretrained page
    model = model_or_stop(name)
    result = result_or_stop(name, settings.text)
    unknown_warning(model, result, settings.text, key="lens_to_reader")
    key, text = name.strip(), settings.text

    def effects(progress: Progress) -> tuple[np.ndarray, list[tuple[int, int]]]:
        found = lens_head_effects(key, text, progress)
        return found.pooled_distance, found.ranking()

    def knock_out(pairs: Pairs) -> list[Metric]:
        outcome = lens_ablation(key, text, pairs)
        return [
            Metric(tr("lens_ablation_pooled"), f"{outcome.pooled_distance:.4f}"),
            Metric(tr("lens_ablation_tokens"), f"{outcome.token_distance:.4f}"),
        ]

    pieces = readable_pieces(model.tokenizer, model.tokenizer.convert_tokens_to_ids(result.tokens))
    return Subject(
        name=model_label(name),
        tokens=result.tokens,
        offsets=result.offsets,
        special=result.special,
        attentions=result.attentions,
        own="output_attentions",
        tolerance=rebuild_tolerance(model.model),
        value_norms=lambda: lens_value_norms(key, text),
        flow=lambda: lens_flow(key, text),
        neuron=lambda layer, head: lens_neuron(key, text, layer, head),
        effects=effects,
        knock_out=knock_out,
        ablation_caption="lens_ablation_caption",
        kv_groups=lambda: kv_groups(model),  # a model the lens cannot read raises in a view
        readable=pieces if pieces.merged else None,
    )


def _reader(settings: Settings) -> Subject:
    from attention_core import lens
    from attention_core.reader import load_shipped

    text = settings.text
    if not text.strip():
        st.info(tr("empty_text"))
        st.stop()
    try:
        with st.spinner(tr("computing")):
            reader = load_shipped()
            read = lens.reader_attention(reader, text)
    except ReaderError as error:  # missing or corrupted weights: say which file, and the fix
        st.error(tr("reader_unavailable", error=md_escape(str(error))))
        st.stop()
    if read.truncated:
        st.warning(tr("reader_context_cut", total=read.total, limit=len(read.tokens)))
    reader_unknown_warning(read.tokens, read.unknown)
    st.caption(tr("lens_reader_caption"))
    # the flow cache keys weights by an id: these weights are a function of the checkpoint
    # (its SHA-256) and the ids it read
    weights_id = reader.card.get("sha256", {}).get("reader.safetensors", "reader")
    flow_id = f"reader:{weights_id}:{','.join(map(str, read.ids))}"

    def effects(_: Progress) -> tuple[np.ndarray, list[tuple[int, int]]]:
        # 16 heads of 64 units at most: ≤ 0.3 s on 2 cores, no bar needed
        found = lens.reader_head_effects(reader, text)
        return found.kl, found.ranking()

    def knock_out(pairs: Pairs) -> list[Metric]:
        outcome = lens.reader_ablate(reader, text, list(pairs))
        n = len(read.tokens)
        return [
            Metric(
                tr("lens_reader_loss"),
                f"{outcome.loss:.3f}",
                f"{outcome.loss_change:+.3f}" if pairs else None,
                delta_color="inverse",  # a higher loss: the reader predicts worse
            ),
            Metric(tr("lens_reader_kl"), f"{outcome.kl:.4f}"),
            Metric(tr("lens_reader_top"), tr("lens_reader_top_value", k=outcome.top_changed, n=n)),
        ]

    return Subject(
        name=tr("lens_source_reader"),
        tokens=[t.label for t in read.tokens],
        offsets=read.offsets,
        special=read.special,
        attentions=read.attentions,
        own="ReaderLM.forward",
        tolerance=EXACT,
        value_norms=lambda: lens.reader_value_norms(reader, text),
        flow=lambda: attention_flow(flow_id, read.attentions),
        neuron=lambda layer, head: lens.reader_neuron_view(reader, text, layer, head),
        effects=effects,
        knock_out=knock_out,
        ablation_caption="lens_reader_ablation_caption",
        kv_groups=lambda: [[h] for h in range(read.attentions.shape[1])],
    )


# --- every head knocked out: a bar and Cancel while it runs ---------------------------------
def subject_key(lensed: Subject) -> str:
    """What a Cancel applies to: this model on these tokens (another sentence runs again)."""
    return hashlib.sha1("\x00".join([lensed.name, *lensed.tokens]).encode()).hexdigest()


def effects_or_cancelled(lensed: Subject) -> tuple[np.ndarray, list[tuple[int, int]]] | None:
    """Every head knocked out alone (`lensed.effects`): (L, H) effects and the heads largest
    first. A run expected to take over a second (MiniLM at 512 tokens: ~12 s) shows a bar
    and Cancel (`ui.cancellable`); None once cancelled, for this sentence only."""
    return run_or_cancelled(lensed.effects, key=subject_key(lensed), prefix="lens_ablation")
