"""Constant repairs: literals, missing factors and extra operations before a store."""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterator

from kope.repair.operators._core import Edit, Program, assignments, edit_at, operator
from kope.source import call_name


def _typos(text: str) -> list[str]:
    """Nearby decimal typos of a literal: adjacent digits swapped, one digit dropped, times or over ten."""
    mantissa, _, exponent = text.lower().partition("e")
    digits = [i for i, ch in enumerate(mantissa) if ch.isdigit()]
    found: list[str] = []
    for a, b in itertools.pairwise(digits):
        if b == a + 1 and mantissa[a] != mantissa[b]:
            found.append(mantissa[:a] + mantissa[b] + mantissa[a] + mantissa[b + 1 :])
    for i in digits:
        dropped = mantissa[:i] + mantissa[i + 1 :]
        if any(ch.isdigit() for ch in dropped) and not dropped.startswith("."):
            found.append(dropped)
    try:
        value = float(text)
    except ValueError:
        return []
    found += [repr(value * 10), repr(value / 10)]
    out: list[str] = []
    for candidate in found:
        full = candidate + (f"e{exponent}" if exponent and "e" not in candidate else "")
        try:
            if float(full) != value and full not in out:
                out.append(full)
        except ValueError:
            continue
    return out


@operator("constant", "wrong-constant")
def constant(program: Program) -> Iterator[Edit]:
    """A float literal in a kernel replaced by the reference's constants (nearest first) and by nearby typos."""
    for _, node in program.kernel_nodes():
        if not (isinstance(node, ast.Constant) and isinstance(node.value, float)) or node.value in (0.0, 1.0):
            continue
        text = program.code(node)
        value = float(node.value)
        ranked = sorted(program.reference_constants, key=lambda c: abs(math.log(abs(c) / abs(value))) if c else 9e9)
        for replacement in [repr(c) for c in ranked if c != value] + _typos(text):
            yield edit_at(program, "constant", node, replacement, f"constant `{text}` -> `{replacement}`")


@operator("missing-factor", "wrong-constant")
def missing_factor(program: Program) -> Iterator[Edit]:
    """A reference constant the kernel never uses, as a factor of the value a kernel stores."""
    used = {n.value for n in ast.walk(program.tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)}
    missing = [c for c in program.reference_constants if c not in used]
    if not missing:
        return
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) == "tl.store" and len(node.args) >= 2:
            value = node.args[1]
            for c in missing:
                new = f"({program.code(value)}) * {c!r}"
                yield edit_at(program, "missing-factor", value, new, f"stored value times {c!r}")


@operator("drop-operation", "wrong-normalizer")
def drop_operation(program: Program) -> Iterator[Edit]:
    """An extra operation on a result just before its store taken away: the stored value, or the last
    assignment of the stored name, replaced by one of its operands."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.store" and len(node.args) >= 2):
                continue
            value = node.args[1]
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
                value = value.func.value
            targets: list[ast.expr] = [value]
            if isinstance(value, ast.Name):
                earlier = [a for a in assigned.get(value.id, []) if a.lineno < node.lineno]
                if earlier:
                    targets.append(earlier[-1].value)
            for target in targets:
                for operand in _operands(target):
                    new = program.code(operand)
                    yield edit_at(
                        program,
                        "drop-operation",
                        target,
                        f"({new})" if isinstance(operand, ast.BinOp) else new,
                        f"`{program.code(target)}` -> `{new}`",
                    )


def _operands(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp):
        return [expr.left, expr.right]
    if isinstance(expr, ast.UnaryOp):
        return [expr.operand]
    if isinstance(expr, ast.Call) and call_name(expr).startswith("tl.") and len(expr.args) == 1 and not expr.keywords:
        return [expr.args[0]]
    return []
