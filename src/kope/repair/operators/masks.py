"""Mask repairs: comparison bounds and missing masks."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import replace

from kope.repair.operators._core import Edit, Program, assignments, edit_at, keyword_of, operator
from kope.source import call_name

_FLIP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}


@operator("compare-flip", "mask-off-by-one")
def compare_flip(program: Program) -> Iterator[Edit]:
    """`<` to `<=` and back (and `>`/`>=`) in a kernel's comparisons: masks and bounds."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            new = f"{ast.unparse(node.left)} {_FLIP[type(node.ops[0])]} {ast.unparse(node.comparators[0])}"
            yield edit_at(program, "compare-flip", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("add-mask", "missing-mask")
def add_mask(program: Program) -> Iterator[Edit]:
    """A load or store without a mask given one of the kernel's masks (names bound to comparisons)."""
    for kernel in program.kernels:
        masks = [
            n
            for n, a in assignments(kernel).items()
            if any(
                isinstance(x.value, ast.Compare)
                or (isinstance(x.value, ast.BinOp) and isinstance(x.value.op, ast.BitAnd))
                for x in a
            )
        ]
        for node in ast.walk(kernel):
            fn = call_name(node)
            if isinstance(node, ast.Call) and fn in ("tl.load", "tl.store") and not keyword_of(node, "mask"):
                limit = 2 if fn == "tl.store" else 1
                if len(node.args) > limit:
                    continue
                _, end = program.span(node)
                for mask in masks:
                    extra = f", mask={mask}" + (", other=0.0" if fn == "tl.load" else "")
                    new = program.text[: end - 1].rstrip() + extra + ")" + program.text[end:]
                    yield Edit(
                        "add-mask", "missing-mask", node.lineno, f"`mask={mask}` on the {fn.split('.')[-1]}", new
                    )


def _bound_names(node: ast.AST) -> list[tuple[ast.Compare, str, str]]:
    """Comparisons `index < bound` with a name on each side: (node, index's root name, bound)."""
    found = []
    for compare in ast.walk(node):
        if isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.comparators[0], ast.Name):
            left = compare.left
            root = left.value if isinstance(left, ast.Subscript) else left
            if isinstance(root, ast.Name):
                found.append((compare, root.id, compare.comparators[0].id))
    return found


@operator("compare-operand", "missing-mask")
def compare_operand(program: Program) -> Iterator[Edit]:
    """A comparison's bound replaced by another scalar parameter of the kernel (a mask on the wrong dimension:
    the columns compared with `n_rows`)."""
    for kernel in program.kernels:
        scalars = program.scalars(kernel)
        suspicious: set[int] = set()
        for statement in ast.walk(kernel):
            if isinstance(statement, ast.BinOp) and isinstance(statement.op, ast.BitAnd):
                bounds = _bound_names(statement)
                for (a, ia, ba), (b, ib, bb) in itertools.combinations(bounds, 2):
                    if ba == bb and ia != ib:
                        suspicious |= {id(a), id(b)}
        for compare, index, bound in _bound_names(kernel):
            if bound not in scalars:
                continue
            cue = f"`{index}` and another index are both compared with `{bound}`" if id(compare) in suspicious else ""
            for other in scalars:
                if other != bound:
                    target = compare.comparators[0]
                    edit = edit_at(
                        program,
                        "compare-operand",
                        target,
                        other,
                        f"bound `{bound}` -> `{other}` in `{program.code(compare)}`",
                    )
                    yield replace(edit, cue=cue)


def _clauses(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd):
        return _clauses(expr.left) + _clauses(expr.right)
    return [expr]


@operator("mask-clause", "uninitialized-output")
def mask_clause(program: Program) -> Iterator[Edit]:
    """A clause dropped from a store's mask `a & b` (written inline or bound to a name): an extra condition that
    keeps part of the output unwritten."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.store"):
                continue
            mask = keyword_of(node, "mask")
            expr = mask.value if mask is not None else (node.args[2] if len(node.args) > 2 else None)
            if isinstance(expr, ast.Name) and assigned.get(expr.id):
                expr = assigned[expr.id][-1].value
            if expr is None:
                continue
            clauses = _clauses(expr)
            if len(clauses) < 2:
                continue
            for dropped in clauses:
                kept = " & ".join(f"({program.code(c)})" for c in clauses if c is not dropped)
                description = f"mask `{program.code(expr)}` without `{program.code(dropped)}`"
                yield edit_at(program, "mask-clause", expr, kept, description)
