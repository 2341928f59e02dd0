"""The reader's shipped files: safetensors weights, its vocabulary, and a card that pins both.

    data/reader/reader.safetensors   the trained ReaderLM (float32 tensors, no pickle)
    data/reader/vocab.json           the units, in id order
    data/reader/card.json            config, training run, held-out figures, SHA-256s

`load` refuses (ReaderError, with the command that rebuilds the files) when a file is
missing, its hash is not the card's, or the tensors do not fit the card's config: a
corrupted download never turns into attention numbers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from attention_core.reader.card import CARD, RETRAIN, SHIPPED_DIR, ReaderError, read_card
from attention_core.reader.model import ReaderConfig, ReaderLM
from attention_core.reader.vocab import Vocab
from attention_core.resources import REINSTALL

__all__ = ["SHIPPED_DIR", "Reader", "ReaderError", "load", "load_shipped", "save"]

WEIGHTS, VOCAB = "reader.safetensors", "vocab.json"


@dataclass(frozen=True)
class Reader:
    """The trained model, its vocabulary and its card (what it is, how well it reads)."""

    model: ReaderLM
    vocab: Vocab
    card: dict[str, Any]

    @property
    def config(self) -> ReaderConfig:
        return self.model.config


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save(model: ReaderLM, vocab: Vocab, card: dict[str, Any], folder: Path) -> None:
    """Write the three files; the card gets both files' SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {name: t.detach().contiguous() for name, t in model.state_dict().items()}
    save_file(tensors, str(folder / WEIGHTS), metadata={"format": "attention-studio reader"})
    (folder / WEIGHTS).chmod(0o644)  # safetensors writes 0600; the file ships in the repo
    vocab.save(folder / VOCAB)
    card = {**card, "sha256": {WEIGHTS: _sha256(folder / WEIGHTS), VOCAB: _sha256(folder / VOCAB)}}
    (folder / CARD).write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", "utf-8")


def _restore(folder: Path) -> str:
    """How to get a reader's files back: the package's own are reinstalled."""
    if Path(folder).resolve() == SHIPPED_DIR.resolve():
        return f"the package is incompletely installed; restore it with {REINSTALL}"
    return f"rebuild it with `{RETRAIN} --out {folder}`"


def load(folder: Path) -> Reader:
    """The reader in `folder`, after checking every file against the card."""
    folder = Path(folder)
    card = read_card(folder)
    try:
        hashes = card["sha256"]
        config = ReaderConfig.from_dict(card["config"])
    except (ValueError, KeyError, TypeError) as error:
        raise ReaderError(f"{folder / CARD} is not a reader card: {error}") from None
    for name in (WEIGHTS, VOCAB):
        path = folder / name
        if not path.is_file():
            raise ReaderError(f"{path} is missing: {_restore(folder)}")
        if _sha256(path) != hashes.get(name):
            raise ReaderError(
                f"{path} does not match its SHA-256 in {CARD}: corrupted or replaced; "
                f"{_restore(folder)}"
            )
    try:
        vocab = Vocab.load(folder / VOCAB)
        if len(vocab) != config.vocab_size:
            raise ValueError(f"{len(vocab)} units, the card says {config.vocab_size}")
        model = ReaderLM(config)
        model.load_state_dict(load_file(str(folder / WEIGHTS)), strict=True)
    except (ValueError, RuntimeError) as error:
        raise ReaderError(f"the reader in {folder} does not load: {error}") from None
    return Reader(model.eval(), vocab, card)


@lru_cache(maxsize=1)
def load_shipped() -> Reader:
    """The reader that ships in data/reader (loaded once per process)."""
    with torch.random.fork_rng(devices=[]):  # ReaderLM's init draws from the global RNG
        return load(SHIPPED_DIR)
