"""Mask repairs: comparison bounds and missing masks."""

from __future__ import annotations

import ast
from collections.abc import Iterator

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
