"""The docs site and README keep their promises: the site builds with `--strict` (no
warnings), offline, into static files that work opened from disk, with no script or
stylesheet from a CDN; README stays a user's page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.availability import unavailable

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250

# A script or stylesheet fetched from another host: <script src="http…"> or
# <link … href="http…"> (an ordinary link <a href="https://…"> is fine).
REMOTE_ASSET = re.compile(
    r"<script\b[^>]*\bsrc=[\"']?(?:https?:)?//|<link\b[^>]*\bhref=[\"']?(?:https?:)?//", re.I
)


def _mkdocs() -> list[str]:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings_handlers.python  # noqa: F401
    except ImportError as missing:
        unavailable(f"no {missing.name} for the docs: pip install -r requirements-dev.txt")
    return [sys.executable, "-m", "mkdocs"]


def test_docs_build_strict_offline_and_open_from_disk(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*_mkdocs(), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]

    index = site / "index.html"
    assert index.is_file()
    home = index.read_text(encoding="utf-8")
    assert "Attention Studio" in home
    # opened from disk: links name their .html files, and search has its index inlined
    assert 'href="guide/index.html"' in home
    assert (site / "search" / "search_index.js").is_file()
    # pictures are part of the site
    assert (site / "images" / "heads.png").is_file()

    remote = {
        str(page.relative_to(site)): REMOTE_ASSET.findall(page.read_text(encoding="utf-8"))
        for page in site.rglob("*.html")
    }
    assert not {page: found for page, found in remote.items() if found}
    # the API reference was generated from the docstrings
    attention = (site / "reference" / "attention.html").read_text(encoding="utf-8")
    assert "MultiHeadAttention" in attention
    shutil.rmtree(site)


def test_readme_is_a_short_page_for_users() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    for pattern in (
        r"\bissues?\s+#?\d+",  # an issue number
        r"\bsessions?\s+\d+",  # a session number
        r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",  # a commit hash
    ):
        found = re.findall(pattern, readme, re.I)
        assert not found, (pattern, found)


def test_readme_pictures_and_docs_links_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)\)", readme) + re.findall(r'src="([^"]+)"', readme)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert any(t.startswith("docs/images/") for t in local)
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing


def test_readmes_library_examples_run_and_say_what_they_print() -> None:
    """README's script examples that need no downloaded model run as written, and the
    values their comments promise are what they give."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)
    runnable = [b for b in blocks if "from_pretrained" not in b]
    scopes: list[dict] = []
    for block in runnable:
        scopes.append({})
        exec(compile(block, "README.md", "exec"), scopes[-1])
    by_call = {
        name: scope
        for scope, block in zip(scopes, runnable, strict=True)
        for name in ("analyze", "build_attention", "decode(")
        if name in block
    }
    first, steps, decoded = by_call["analyze"], by_call["build_attention"], by_call["decode("]
    assert [t.label for t in first["result"].tokens] == ["中和", "有", "一個", "永和路"]
    assert first["result"].weights.shape == (2, 4, 4)
    assert tuple(steps["x"].shape) == (1, 4, 8)
    assert tuple(steps["weights"].shape) == (1, 2, 4, 4)
    assert len(decoded["r"].steps) == 4
    assert decoded["r"].steps[0].attention.shape == (4, 4, 6)
