"""The sentences an atlas reads: a text file or a folder of them, a sentence a line.
Default: the held-out split of the project's corpus (`attention_core.train.corpus`,
checked against its manifest by `verify`), or the sample of it the package ships. Any
other file or folder works: a folder's `*.txt` files are read in sorted order
(recursively). What is not text is refused with the file and byte named; empty lines are
skipped; a line longer than `MAX_LINE_CHARS` is skipped and counted (a 1 MB "line" is a
file without line breaks, not a sentence); the same sentence twice is read once. Each
sentence has a stable id (the first 16 hex digits of its SHA-256), which is what makes a
build incremental: a grown corpus adds only the ids the index does not hold yet.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from attention_core.train.corpus import HAN

__all__ = [
    "MAX_LINE_CHARS",
    "AtlasError",
    "Corpus",
    "default_corpus",
    "language",
    "read_corpus",
    "sentence_id",
]

MAX_LINE_CHARS = 2_000  # longer lines are skipped and counted, never tokenized


class AtlasError(RuntimeError):
    """A corpus or an index that cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Corpus:
    """The sentences read (unique, in order) and what was left out, for the user."""

    sentences: list[str]
    files: list[Path]
    empty: int = 0  # blank lines skipped
    too_long: int = 0  # lines over MAX_LINE_CHARS skipped
    repeated: int = 0  # sentences seen before, read once
    notes: list[str] = field(default_factory=list)


def sentence_id(text: str) -> str:
    """A sentence's stable id: 16 hex digits of the SHA-256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def language(text: str) -> str:
    """ "zh" when at least a third of the visible characters are Han, else "en"."""
    visible = len(text) - text.count(" ")
    return "zh" if visible and len(HAN.findall(text)) * 3 >= visible else "en"


def default_corpus() -> Path:
    """The project corpus's held-out split after its hash check; without a built corpus,
    the sample of it the package ships (`atlas.shipped`). AtlasError when neither is whole."""
    from attention_core.atlas.shipped import SAMPLE_DIR
    from attention_core.train.corpus import CorpusError, default_dir, verify

    for folder in (default_dir(), SAMPLE_DIR):
        try:
            verify(folder)
        except CorpusError:
            continue
        return folder / "heldout.txt"
    raise AtlasError(
        f"no corpus in {default_dir()} and the package's sample in {SAMPLE_DIR} is missing or "
        "changed: reinstall the package, or build the corpus with "
        "python -m attention_core.train.corpus build"
    )


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.txt") if p.is_file())
        if not files:
            raise AtlasError(f"{path} holds no *.txt file: give a text file or a folder of them")
        return files
    if not path.is_file():
        raise AtlasError(f"{path} does not exist: give a text file or a folder of *.txt files")
    return [path]


def _text(path: Path) -> str:
    data = path.read_bytes()
    if b"\0" in data[:65536]:
        raise AtlasError(f"{path} is not a text file (it holds NUL bytes): give UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AtlasError(
            f"{path} is not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}): convert it, e.g. iconv -f BIG5 -t UTF-8"
        ) from None


def read_corpus(path: Path | str | None = None, *, limit: int | None = None) -> Corpus:
    """The unique sentences of `path` (default: `default_corpus()`), at most `limit`."""
    files = _files(Path(path) if path is not None else default_corpus())
    seen: set[str] = set()
    sentences: list[str] = []
    empty = too_long = repeated = 0
    for file in files:
        for line in _text(file).splitlines():
            text = " ".join(line.split())
            if not text:
                empty += 1
            elif len(text) > MAX_LINE_CHARS:
                too_long += 1
            elif text in seen:
                repeated += 1
            else:
                seen.add(text)
                sentences.append(text)
            if limit is not None and len(sentences) >= limit:
                break
        if limit is not None and len(sentences) >= limit:
            break
    notes = []
    if too_long:
        notes.append(f"skipped {too_long} line(s) longer than {MAX_LINE_CHARS} characters")
    if not sentences:
        raise AtlasError(f"{', '.join(map(str, files))}: no sentence to index (every line empty)")
    return Corpus(sentences, files, empty, too_long, repeated, notes)
