"""attention_core as a real package: a wheel built from the checkout, installed into an
empty folder, works from another folder with no access to the checkout — the article's
sentence tokenized with the package's jieba dictionary, the catalog read, a notebook view
rendered with the packaged plotly.js, the trained reader loaded (its hash checked) and one
lens function run on it. And a half-copied install names what is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

USE_IT = r"""
import json, sys
import numpy as np
import attention_core
from attention_core import lens, tokenize
from attention_core.i18n import t
from attention_core.notebook import head_view, heads_grid
from attention_core.reader import load_shipped

words = [tok.text for tok in tokenize("中和有一個永和路")]
a = attention_core.analyze("中和有一個永和路", embed_dim=8, num_heads=2)
labels = [tok.text for tok in a.tokens]
view = head_view(a.weights[None], labels)  # (1, H, n, n)
grid = heads_grid(a.weights[None], labels).to_html()  # Plotly heatmaps
reader = load_shipped()  # checks the weights' SHA-256 against the card
read = lens.reader_attention(reader, "中和有一個永和路")
rolled = lens.rollout(read.attentions)  # (L, n, n)
print(json.dumps({
    "file": attention_core.__file__,
    "words": words,
    "shape": list(a.weights.shape),
    "title": t("app_title", "zh-TW"),
    "head_view": "永和路" in view.to_html(),
    "grid": len(grid),
    "plotly_inline": "plotly.js" in grid and "<script src=" not in grid,
    "rollout_rows": np.abs(rolled.sum(-1) - 1).max().item(),
    "layers": int(read.attentions.shape[0]),
}, ensure_ascii=False))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip wheel .` builds from a copy of the checkout (no build isolation: the
    suite runs offline, and setuptools is already installed)."""
    out = tmp_path_factory.mktemp("wheel")
    source = out / "src"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(".git", "tests", "*.egg-info", "build", "__pycache__"),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (found,) = out.glob("attention_studio-*.whl")
    return found


def installed(wheel: Path, target: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return target


def run_elsewhere(target: Path, cwd: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter in `cwd`, importing attention_core from `target` only
    (the checkout is not on its path)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env |= {"PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def test_the_wheel_carries_the_librarys_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in (
        "attention_core/data/i18n/app.toml",
        "attention_core/data/jieba/user_dict.txt",
        "attention_core/data/examples.json",
        "attention_core/data/plotly/plotly-cartesian.min.js",
        "attention_core/data/reader/reader.safetensors",
        "attention_core/data/corpus/heldout.txt",
        "attention_core/data/atlas/hashes.json",
        "attention_core/data/atlas/reader/manifest.json",
    ):
        assert shipped in names, shipped
    assert not any(n.startswith(("tests/", "ui/", "pages/", "assets/")) for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Requires-Dist: torch==2.13.0" in text
    assert "Provides-Extra: notebook" in text and "Provides-Extra: app" in text


def test_an_installed_wheel_works_from_any_folder(wheel: Path, tmp_path: Path) -> None:
    target = installed(wheel, tmp_path / "site")
    elsewhere = tmp_path / "notebooks"
    elsewhere.mkdir()
    result = run_elsewhere(target, elsewhere, USE_IT)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["file"].startswith(str(target))  # the installed copy, not the checkout
    assert out["words"] == ["中和", "有", "一個", "永和路"]  # the package's user dictionary
    assert out["shape"] == [2, 4, 4]
    assert out["title"] == "注意力工作室"
    assert out["head_view"]
    assert out["plotly_inline"] and out["grid"] > 1_000_000  # the packaged plotly.js, inline
    assert out["rollout_rows"] < 1e-5 and out["layers"] == 4


def test_a_half_copied_install_names_what_is_missing(wheel: Path, tmp_path: Path) -> None:
    target = installed(wheel, tmp_path / "site")
    (target / "attention_core" / "data" / "reader" / "reader.safetensors").unlink()
    shutil.rmtree(target / "attention_core" / "data" / "jieba")
    result = run_elsewhere(
        target,
        tmp_path,
        "from attention_core.reader import load_shipped\n"
        "from attention_core import analyze, tokenize\n"
        "print(len(analyze('the cat sat').tokens))\n"  # the untrained module keeps working
        "try:\n    load_shipped()\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
        "try:\n    tokenize('中和有一個永和路', 'jieba')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n",
    )
    assert result.returncode == 0, result.stderr
    first, reader, jieba = result.stdout.strip().splitlines()
    assert first == "3"
    assert "reader.safetensors" in reader and "pip install" in reader, reader
    assert "jieba/user_dict.txt" in jieba and "pip install" in jieba, jieba
