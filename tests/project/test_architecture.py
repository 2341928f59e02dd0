"""The import rules of ARCHITECTURE.md ("Conventions"), checked on the code itself.

`lint-imports` checks the contracts in pyproject.toml ([tool.importlinter]: the layers,
the library without Streamlit, no cycles between sibling packages). Beside it: no two
modules import each other, even through imports inside functions (grimp's graph, which
import-linter uses, counts those); no module imports another module's private (`_name`)
names; app.py sits on top of everything (it is not a package, so the contracts cannot
name it).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("attention_core", "ui", "pages")
FIRST_PARTY = (*PACKAGES, "app")


def _sources() -> list[Path]:
    return [ROOT / "app.py", *(p for name in PACKAGES for p in sorted((ROOT / name).rglob("*.py")))]


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(edges):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def private_imports(paths: list[Path], root: Path = ROOT) -> list[str]:
    """`from first_party import _name` and `first_party_module._name`, as path:line text."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: set[str] = set()  # local names bound to first-party modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] not in FIRST_PARTY:
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(root)}:{node.lineno} {alias.name}")
                    else:
                        modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in FIRST_PARTY:
                        modules.add(alias.asname or alias.name.split(".")[0])
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            if not node.attr.startswith("_") or node.attr.startswith("__"):
                continue
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
    return found


def test_the_import_contracts_are_kept() -> None:
    """pyproject.toml's [tool.importlinter] contracts, as CI's `lint-imports` runs them."""
    here = Path(sys.executable).parent / "lint-imports"
    command = str(here) if here.exists() else shutil.which("lint-imports")
    assert command, "lint-imports is missing: pip install -r requirements-dev.txt"
    done = subprocess.run(
        [command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_two_modules_import_each_other_even_inside_functions() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert _cycles(graph) == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(_sources()) == []


def test_the_private_import_check_sees_both_forms(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from ui.cache import _hidden, visible\n"
        "from os import _exit\n"  # not first-party: not this check's business
        "import attention_core.pipeline as pipeline\n"
        "pipeline._step(1)\n"
        "visible.__class__\n",
        encoding="utf-8",
    )
    found = [entry.split(" ", 1)[1] for entry in private_imports([sample], root=tmp_path)]
    assert found == ["_hidden", "pipeline._step"]


def _imported_roots(path: Path) -> set[str]:
    """The top-level names of every absolute import in `path`, inside functions too."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_app_py_is_the_top_floor() -> None:
    """app.py imports the floors below it (ui, attention_core), never a page module, and
    nothing imports app."""
    imported = _imported_roots(ROOT / "app.py")
    assert "pages" not in imported
    assert {"ui", "attention_core"} <= imported
    importers = [p for p in _sources()[1:] if "app" in _imported_roots(p)]
    assert importers == []
