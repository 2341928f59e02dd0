"""Lazy package exports (PEP 562), for the packages whose names must not load torch.

A package whose modules need torch, but which the app's first paint imports a light
module of (`attention_core.settings`, `attention_core.reader.card`, `attention_core.long.text`),
lists its public names in a table, name → module, and hands it to `lazy_exports`:

    __getattr__, __dir__ = lazy_exports(__name__, {"AttentionMap": "map", ...})
    __all__ = [...]  # the same names

Each name is imported from its module on first use; `from package import name` works as
usual, and so do type checkers (the package imports the same names under TYPE_CHECKING).
Every other package imports its names eagerly (ARCHITECTURE.md, "Conventions").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`package`'s module-level `__getattr__` and `__dir__`: `where` maps each exported name
    to the submodule (relative to `package`) that defines it."""
    table = dict(where)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return sorted(set(table) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
