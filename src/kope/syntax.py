"""Parsing Python source into an `ast` tree, safely from several threads.

CPython 3.11 keeps the recursion counter it uses while building `ast` objects per interpreter,
not per thread, so two threads parsing at once can fail with `SystemError: AST constructor
recursion depth mismatch` (python/cpython#106905, fixed in 3.12). The evaluator is used from
threads (`Evaluator(max_parallel=...)`, the suite builder), so every parse in kope goes through
one lock. A parse takes milliseconds; the lock costs nothing measurable.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)
