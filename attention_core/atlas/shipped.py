"""What the package ships for the atlas, so it works on a machine that never built anything.

    attention_core/data/corpus/heldout.txt     the project corpus's held-out split (a sentence
                                               a line, ~4 000 lines, ~35 000 Han characters)
    attention_core/data/corpus/manifest.json   its sources, versions and licences, its SHA-256
    attention_core/data/corpus/copyright/      the Debian packages' copyright files
    attention_core/data/atlas/<model>/         a small index of that sample for each of MODELS
    attention_core/data/atlas/hashes.json      every shipped index file's SHA-256

The full corpus is built from Debian packages (`python -m attention_core.train.corpus
build`), which a pip user on macOS or Windows cannot install; its held-out split is what
the atlas reads when it is there. Without it, the sample above is the default corpus, and
the shipped indexes open at once, read-only, until the user builds an index of their own.

    python -m attention_core.atlas ship        # rebuilds all of the above from a built corpus
                                               # (attention_core.atlas.ship)

An index is shipped only while it matches the model it claims (its fingerprint) and its
files match their hashes; a damaged or stale one is passed over, never opened.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from attention_core.resources import DATA_DIR

__all__ = [
    "HASHES",
    "SAMPLE_DIR",
    "SHIPPED_INDEX_DIR",
    "SHIPPED_SENTENCES",
    "fingerprint",
    "index_files",
    "is_shipped",
    "sha256",
    "shipped_index",
]

SAMPLE_DIR = DATA_DIR / "corpus"
SHIPPED_INDEX_DIR = DATA_DIR / "atlas"
SHIPPED_SENTENCES = 300  # per model: a first map in the wheel, ~0.2-1.7 MB each
HASHES = "hashes.json"  # every shipped index file's SHA-256, relative to SHIPPED_INDEX_DIR


def sha256(path: Path) -> str:
    """A file's SHA-256, as hashes.json holds it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprint(model: str) -> str:
    """What an index of `model` (one of MODELS) was built with, computed without loading
    the model: the same string `atlas.models` gives its models."""
    if model == "reader":
        from attention_core.reader.card import SHIPPED_DIR, read_card

        return f"reader {read_card(SHIPPED_DIR)['sha256']['reader.safetensors'][:16]}"
    if model == "untrained":
        from attention_core.settings import ModelSettings

        s = ModelSettings()
        return f"untrained {s.attention} d={s.embed_dim} h={s.heads} seed={s.seed}"
    if model == "minilm":
        from attention_core.pretrained.load import DEFAULT_MODEL

        return DEFAULT_MODEL  # the MiniLM atlas model's fingerprint
    raise ValueError(f"no index of {model!r} ships with the package")


def index_files(folder: Path) -> list[Path]:
    """Every file of an index folder, in order."""
    return sorted(p for p in folder.rglob("*") if p.is_file())


def shipped_index(model: str, base: Path | None = None) -> Path | None:
    """The shipped index folder of `model` (under `base`, default SHIPPED_INDEX_DIR) when it
    is whole and of the model as it is now; None otherwise (not shipped, a file missing or
    changed, a retrained model)."""
    base = SHIPPED_INDEX_DIR if base is None else base
    folder = base / model
    try:
        hashes = json.loads((base / HASHES).read_text("utf-8"))
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
        if manifest.get("fingerprint") != fingerprint(model):
            return None
        wanted = {k: v for k, v in hashes.items() if k.startswith(f"{model}/")}
        found = {p.relative_to(base).as_posix(): sha256(p) for p in index_files(folder)}
    except (OSError, ValueError, KeyError):
        return None
    return folder if wanted and found == wanted else None


def is_shipped(folder: Path) -> bool:
    """Whether the index in `folder` is one the package ships (opened read-only)."""
    return Path(folder).parent == SHIPPED_INDEX_DIR
