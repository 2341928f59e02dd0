"""The project's own reader of Chinese and English: `MultiHeadAttention` in a small causal
transformer, trained on the corpus of `attention_core.train.corpus`, shipped in data/reader.

    vocab.py    units (a CJK character, an English word, a sign) and the vocabulary
    model.py    ReaderLM: embeddings, pre-LN blocks around MultiHeadAttention, tied read-out
    card.py     what the shipped checkpoint is, from its card alone (no torch)
    weights.py  the shipped files and their hash check (`load_shipped`)
    run.py      a sentence as the reader reads it, and one layer's attention (the app's view)
    words.py    jieba's words over the reader's units
    fit.py      `python -m attention_core.reader.fit`: train, measure, write the files

Names are imported on first use, so `attention_core.reader.card` (which the URL validator
and the sidebar read) does not import torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
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
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
