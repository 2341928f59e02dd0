"""The project's own reader of Chinese and English: `MultiHeadAttention` in a small causal
transformer, trained on the corpus of `attention_core.train.corpus`, shipped in data/reader.

    vocab.py    units (a CJK character, an English word, a sign) and the vocabulary
    model.py    ReaderLM: embeddings, pre-LN blocks around MultiHeadAttention, tied read-out
    card.py     what the shipped checkpoint is, from its card alone (no torch)
    weights.py  the shipped files and their hash check (`load_shipped`)
    run.py      a sentence as the reader reads it, and one layer's attention (the app's view)
    words.py    jieba's words over the reader's units
    fit.py      `python -m attention_core.reader.fit`: train, measure, write the files

Names are imported on first use (`attention_core.lazy`), so `attention_core.reader.card`
(which the URL validator and the sidebar read) does not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

__all__ = [
    "BOS",
    "UNK",
    "Reader",
    "ReaderConfig",
    "ReaderError",
    "ReaderLM",
    "ReaderShape",
    "Vocab",
    "load",
    "load_shipped",
    "shipped_shape",
    "units",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BOS": "vocab",
        "UNK": "vocab",
        "Vocab": "vocab",
        "units": "vocab",
        "ReaderConfig": "model",
        "ReaderLM": "model",
        "ReaderError": "card",
        "ReaderShape": "card",
        "shipped_shape": "card",
        "Reader": "weights",
        "load": "weights",
        "load_shipped": "weights",
    },
)

if TYPE_CHECKING:
    from attention_core.reader.card import ReaderError, ReaderShape, shipped_shape
    from attention_core.reader.model import ReaderConfig, ReaderLM
    from attention_core.reader.vocab import BOS, UNK, Vocab, units
    from attention_core.reader.weights import Reader, load, load_shipped
