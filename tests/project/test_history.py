"""No development history in the project's prose: comments, docstrings, catalogs, docs and
README name a feature, never the issue, session or stop it came from, nor a commit. That
history is CHANGELOG.md's, the one file not read here.

"issue N", "session N" and "stop N" are looked for in whole files; a commit hash (7–40 hex
digits with a letter and a digit) only in prose (comments, docstrings, Markdown), since code
and test data may hold hex of their own. A quiz's "round 1" is the app's word, not history.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# code, tests, catalogs, bench, deploy, examples, docs, README and ARCHITECTURE.md
SCANNED = (
    "app.py",
    "attention_core",
    "ui",
    "pages",
    "tests",
    "bench",
    "deploy",
    "examples",
    "docs",
    ".ci",
    "README.md",
    "ARCHITECTURE.md",
    "mkdocs.yml",
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
)
SUFFIXES = {".py", ".toml", ".md", ".js", ".ipynb", ".yaml", ".yml", ".txt", ".css", ".html"}
NAMES = {"run", "Dockerfile"}  # files without a suffix: .ci/run, deploy/Dockerfile
NOT_OURS = ("attention_core/data/plotly/", "docs/assets/iframe-worker/")  # vendored, minified
SKIPPED_DIRS = {"__pycache__", "artifacts", "results", "node_modules", ".ipynb_checkpoints"}

HISTORY = re.compile(r"\b(?:issues?|sessions?|stops?)\s+#?\d+", re.I)
COMMIT = re.compile(r"(?<![\w#/.:-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])")


def _files() -> list[Path]:
    found = []
    for name in SCANNED:
        top = ROOT / name
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if (
                path.is_file()
                and (path.suffix in SUFFIXES or path.name in NAMES)
                and not SKIPPED_DIRS.intersection(path.parts)
                and not rel.startswith(NOT_OURS)
                and not path.name.endswith(".min.js")
            ):
                found.append(path)
    return found


def _hash_comments(text: str) -> str:
    """The `#` comments of a TOML, YAML, shell or Dockerfile file."""
    return "\n".join(line.split("#", 1)[1] for line in text.splitlines() if "#" in line)


def _python_prose(text: str) -> str:
    """A Python file's comments and docstrings."""
    parts = [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            parts.append(ast.get_docstring(node, clean=False) or "")
    return "\n".join(parts)


def _notebook_prose(text: str) -> str:
    """A notebook's Markdown cells and its code cells' comments."""
    parts = []
    for cell in json.loads(text)["cells"]:
        source = "".join(cell["source"])
        parts.append(source if cell["cell_type"] == "markdown" else _python_prose(source))
    return "\n".join(parts)


def _prose(path: Path, text: str) -> str:
    if path.suffix == ".py":
        return _python_prose(text)
    if path.suffix == ".ipynb":
        return _notebook_prose(text)
    if path.suffix in {".md", ".txt"}:
        return text
    if path.suffix in {".toml", ".yaml", ".yml"} or path.name in NAMES:
        return _hash_comments(text)
    return ""  # .js, .css, .html: the words are looked for, not hashes


def test_the_walk_reads_every_kind_of_file() -> None:
    seen = {p.relative_to(ROOT).as_posix() for p in _files()}
    for expected in (
        "attention_core/data/i18n/train_watch.toml",
        "bench/section_long.py",
        "bench/README.md",
        "tests/conftest.py",
        "examples/your_own_model.ipynb",
        "docs/testing.md",
        "README.md",
        "ARCHITECTURE.md",
        ".ci/run",
    ):
        assert expected in seen
    assert "CHANGELOG.md" not in seen


def test_the_patterns_find_history_and_leave_the_app_words_alone() -> None:
    # numbers from braces, so that this file does not match itself
    for history in (f"(issue {26})", f"Issue #{11}:", f"CI, session {8}", f"CI stop {30}"):
        assert HISTORY.search(history), history
    for fine in ("starting again at round 1", "session {i}", "an issue number", "stop()"):
        assert not HISTORY.search(fine), fine
    assert COMMIT.findall("the old one is b7c5d55's; see 0fc9dc7") == ["b7c5d55", "0fc9dc7"]
    for fine in ("deadbeef", "1234567", "#1f77b4", "sha256 " + "ab12" * 16, "v1.2.3a4"):
        assert not COMMIT.search(fine), fine


def test_no_issue_session_or_commit_in_code_docs_or_catalogs() -> None:
    found = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(ROOT).as_posix()
        found += [f"{rel}: {m.group()}" for m in HISTORY.finditer(text)]
        found += [f"{rel}: commit {m}" for m in COMMIT.findall(_prose(path, text))]
    assert not found
