"""`python -m attention_core.atlas ship`: rebuild what the package ships for the atlas (see
`attention_core.atlas.shipped`) from a built corpus: its held-out split as the sample, the
sources' copyright files, and a small index of the sample for each of the app's models.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from attention_core.atlas.build import build
from attention_core.atlas.shipped import (
    HASHES,
    SAMPLE_DIR,
    SHIPPED_INDEX_DIR,
    SHIPPED_SENTENCES,
    index_files,
    sha256,
)
from attention_core.train.corpus import EVERYDAY, default_dir, verify
from attention_core.train.everyday import PACKAGE_SOURCES, licence_note

__all__ = ["COPYRIGHT", "ship"]

COPYRIGHT = Path("/usr/share/doc")  # where Debian keeps each package's copyright file


def ship(
    corpus: Path | None = None,
    models: tuple[str, ...] = ("untrained", "reader", "minilm"),
    *,
    sample: Path = SAMPLE_DIR,
    index: Path = SHIPPED_INDEX_DIR,
    limit: int = SHIPPED_SENTENCES,
) -> list[str]:
    """Copy a built corpus's held-out split into `sample` and index its first `limit`
    sentences for each model into `index`; returns one line per thing written."""
    source = Path(corpus) if corpus is not None else default_dir()
    manifest = verify(source)
    sample.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "heldout.txt", sample / "heldout.txt")
    if manifest.get("everyday"):  # the everyday held-out set: the reader's card reads it
        shutil.copyfile(source / EVERYDAY, sample / EVERYDAY)
    manifest["outputs"] = {"heldout.txt": manifest["outputs"]["heldout.txt"]}
    manifest["sample"] = (
        "the held-out split of the corpus this manifest describes (and its everyday "
        "held-out set), shipped so that the atlas and the reader's card work without the "
        "source packages; each source's licences are listed, their notes are in copyright/"
    )
    (sample / "copyright").mkdir(exist_ok=True)
    for entry in manifest["sources"]:
        shipped = COPYRIGHT / entry["package"] / "copyright"
        if entry["name"] in PACKAGE_SOURCES:  # a Python package: its licence note
            note = licence_note(entry["package"])
            (sample / "copyright" / entry["package"]).write_text(note, "utf-8")
            entry["copyright"] = f"copyright/{entry['package']}"
        elif shipped.is_file():
            shutil.copyfile(shipped, sample / "copyright" / entry["package"])
            entry["copyright"] = f"copyright/{entry['package']}"
    if everyday := manifest.get("everyday"):
        note = licence_note(everyday["package"])
        (sample / "copyright" / everyday["package"]).write_text(note, "utf-8")
        everyday["copyright"] = f"copyright/{everyday['package']}"
    (sample / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n", "utf-8"
    )
    lines = [f"{sample / 'heldout.txt'}: the corpus's held-out split"]
    for model in models:
        shutil.rmtree(index / model, ignore_errors=True)
        report = build(model, sample / "heldout.txt", index, limit=limit)
        lines.append(f"{index / model}: {report.added} sentences, {report.tokens} tokens")
    hashes = {
        p.relative_to(index).as_posix(): sha256(p)
        for model in models
        for p in index_files(index / model)
    }
    (index / HASHES).write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n", "utf-8")
    return lines
