"""Helpers that cues of several bug families share."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Kernel,
    calls_in,
    expand,
    names_in,
)
from kope.knowledge.cues._registry import Source


def _kernels(source: Source) -> Iterator[Kernel]:
    for node in source.kernels:
        kernel = source.program.kernel_of(node)
        if kernel is not None:
            yield kernel


def _kernel_loops(kernel: Kernel) -> Iterator[ast.For]:
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.For):
            yield node


def _reduction_result(expr: ast.AST, kernel: Kernel) -> bool:
    return any(True for node in expand(expr, kernel, depth=2) for _ in calls_in(node, "sum", "max", "min", "cumsum"))


def _derived_from(kernel: Kernel, name: str) -> set[str]:
    """Names whose values use `name` (directly or transitively)."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for other, values in kernel.assigns.items():
            if other not in found and any(current in names_in(v) for v in values):
                found.add(other)
                frontier.append(other)
    return found
