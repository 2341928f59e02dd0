"""The project's own reader of Chinese and English: `MultiHeadAttention` in a small causal
transformer, trained on the corpus of `attention_core.train.corpus`, shipped in assets/reader.

    vocab.py    units (a CJK character, an English word, a sign) and the vocabulary
    model.py    ReaderLM: embeddings, pre-LN blocks around MultiHeadAttention, tied read-out
    weights.py  the shipped files and their hash check (`load_shipped`)
    fit.py      `python -m attention_core.reader.fit`: train, measure, write the files
"""

from attention_core.reader.model import ReaderConfig, ReaderLM
from attention_core.reader.vocab import BOS, UNK, Vocab, units
from attention_core.reader.weights import Reader, ReaderError, load, load_shipped

__all__ = [
    "BOS",
    "UNK",
    "Reader",
    "ReaderConfig",
    "ReaderError",
    "ReaderLM",
    "Vocab",
    "load",
    "load_shipped",
    "units",
]
