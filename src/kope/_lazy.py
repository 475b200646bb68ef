"""Lazy package faces: a package lists its public names and where they live, and loads them on first use.

A package `__init__` that imported its modules eagerly would make `import kope.diagnose.report` pull in
the evaluator, torch and triton, and would tie the package to every module's imports at once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that resolves each public name from its home module, once asked for."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return __getattr__
