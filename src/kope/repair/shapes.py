"""Shape edits: a kernel whose values are right up to the shape of what `ModelNew.forward` returns.

The comparison names the fix when it finds one (`CaseResult.shape_fix`: `.reshape(())` for a scalar
returned as `(1,)`, `.squeeze()`, `.squeeze(-1)`, `.unsqueeze(0)`, `.transpose(-2, -1)`); this source
of edits applies it to the value each `return` of `forward` gives back. Only the forms that hold at
every size are applied (a literal `.reshape(4, 8)` would bake one case's shape in); the search's
acceptance check (full coverage, then the gates) decides as for every edit.
"""

from __future__ import annotations

import ast
import re

from kope.diagnose.report import Diagnosis
from kope.evaluate.compare import unit_shape_fix
from kope.source import ParsedSource

_GENERIC = re.compile(r"^\.(reshape\(\(\)\)|squeeze\(\)|squeeze\(-?\d+\)|unsqueeze\(-?\d+\)|transpose\(-2, -1\))$")
"""The fixes that hold at every size."""

SHAPE_PRIORITY = 100.0
"""Measured, not guessed: the comparison found the fix, so it is tried before every other edit."""


def shape_fix(diagnosis: Diagnosis | None) -> str | None:
    """The one size-independent shape fix the evaluation named for every failing case, if there is one: measured
    (values right up to it), or, where every failing case is a shape error of unit dimensions (`(19, 1)` for
    `(19,)`), the change that makes the values comparable at all, so that edits of the values can follow."""
    if diagnosis is None or diagnosis.evaluation is None:
        return None
    failing = [c for c in diagnosis.evaluation.cases if not c.passed]
    fixes = {
        c.shape_fix or (unit_shape_fix(c.error.message) if c.error is not None and c.error.kind == "shape" else None)
        for c in failing
    }
    if not failing or len(fixes) != 1:
        return None
    fix = fixes.pop()
    return fix if fix is not None and _GENERIC.match(fix) else None


def reshaped(source: str, fix: str) -> tuple[str, int] | None:
    """`source` with `fix` applied to the value every `return` of `ModelNew.forward` gives back, and the line of
    the first; None when there is no such return (or it returns nothing, or a tuple of outputs), or when a return
    ends with the fix already."""
    parsed = ParsedSource.parse(source)
    if parsed is None:
        return None
    returns = _forward_returns(parsed.tree)
    if not returns:
        return None
    edited = source
    for node in sorted(returns, key=lambda r: (r.lineno, r.col_offset), reverse=True):
        assert node.value is not None
        parsed = ParsedSource.parse(edited)
        if parsed is None:
            return None
        target = _node_at(parsed.tree, node)
        if target is None:
            return None
        text = parsed.code(target)
        if text.endswith(fix):  # applied already (a second edit on top of the first): nothing new to try
            return None
        atomic = isinstance(target, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
        edited = parsed.replace(target, f"{text}{fix}" if atomic else f"({text}){fix}")
    return edited, min(r.lineno for r in returns)


def _forward_returns(tree: ast.Module) -> list[ast.Return]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    found = list(_own_returns(item))
                    if found and all(r.value is not None and not isinstance(r.value, ast.Tuple) for r in found):
                        return found
    return []


def _own_returns(function: ast.FunctionDef) -> list[ast.Return]:
    """The function's own returns, not those of functions or classes defined in it."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _node_at(tree: ast.Module, like: ast.Return) -> ast.expr | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.lineno == like.lineno and node.col_offset == like.col_offset:
            return node.value
    return None
