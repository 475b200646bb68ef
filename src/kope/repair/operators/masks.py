"""Mask repairs: comparison bounds and missing masks."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import replace

from kope.repair.operators._core import Edit, Program, assignments, boolean, edit_at, keyword_of, names_in, operator
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
    """A load or store without a mask given one of the kernel's masks (names bound to comparisons), or, after them,
    its block index compared with a size parameter (`cols < n_cols`); a load's masked lanes read 0, then 1, then -inf
    (a sum's, a product's, a maximum's identity)."""
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
                pads = ("0.0", "1.0", "float('-inf')") if fn == "tl.load" else ("",)
                ranges = _block_indices(kernel)
                indices = [n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and n.id in ranges]
                sizes = [s for s in program.scalars(kernel) if s not in program.value_scalars(kernel)]
                made = [f"{i} < {b}" for i in dict.fromkeys(indices) for b in sizes]  # none named: `cols < n_cols`
                for pad in pads:  # the padding the reduction it feeds needs: a sum's 0, a product's 1, a max's -inf
                    for mask in [*masks, *made]:
                        extra = f", mask={mask}" + (f", other={pad}" if pad else "")
                        new = program.text[: end - 1].rstrip() + extra + ")" + program.text[end:]
                        description = f"`mask={mask}{', other=' + pad if pad else ''}` on the {fn.split('.')[-1]}"
                        yield Edit("add-mask", "missing-mask", node.lineno, description, new)


def _block_indices(kernel: ast.FunctionDef) -> set[str]:
    """Names holding a block of indices: made by `tl.arange`, or from such a name (`cols = r * B + offs`)."""
    found: set[str] = set()
    for _ in range(3):
        for name, assigns in assignments(kernel).items():
            if any("tl.arange" in ast.unparse(a.value) or names_in(a.value) & found for a in assigns):
                found.add(name)
    return {
        n for n in found if not any(boolean(a.value) or "load(" in ast.unparse(a.value) for a in assignments(kernel)[n])
    }


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
