"""Offset repairs: terms of address expressions, index shifts and broadcast axes."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.repair.operators._core import (
    Edit,
    Program,
    address_exprs,
    assignments,
    edit_at,
    names_in,
    operator,
    program_id_names,
    strides_of,
    terms_of,
)


@operator("offset-term", "missing-batch-offset")
def offset_term(program: Program) -> Iterator[Edit]:
    """Add or remove an offset term `pid * stride` in an address expression: a term another address
    expression of the kernel has, with this pointer's stride; or every program-id term dropped."""
    for kernel in program.kernels:
        pids = program_id_names(kernel)
        direct = [n for n, a in assignments(kernel).items() if any("program_id" in ast.unparse(x.value) for x in a)]
        strides = strides_of(kernel)
        exprs = list(address_exprs(kernel))
        offsets: list[ast.expr] = []
        for expr in exprs:
            for term in terms_of(expr):
                if names_in(term) & pids and isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                    offsets.append(term)
        for expr in exprs:
            terms = terms_of(expr)
            has_pid = any(names_in(t) & pids for t in terms)
            base = terms[0]
            if not has_pid:
                texts: list[str] = []
                for offset in offsets:
                    pid_side = offset.left if names_in(offset.left) & pids else offset.right  # type: ignore[attr-defined]
                    texts += [ast.unparse(offset)] + [f"{ast.unparse(pid_side)} * {s}" for s in strides]
                texts += [f"{pid} * {s}" for pid in direct for s in strides]
                for text in dict.fromkeys(texts):
                    new = f"{ast.unparse(base)} + {text}"
                    yield edit_at(program, "offset-term", base, new, f"add `+ {text}` to `{program.code(expr)}`")
            for term in terms[1:]:
                if names_in(term) & pids:
                    kept = " + ".join(ast.unparse(t) for t in terms if t is not term)
                    yield edit_at(
                        program,
                        "offset-term",
                        expr,
                        f"({kept})",
                        f"drop `{ast.unparse(term)}` from `{program.code(expr)}`",
                    )


@operator("index-shift", "index-shift")
def index_shift(program: Program) -> Iterator[Edit]:
    """An address or offset `e + k` / `e - k` (small integer k) back to `e`."""
    for kernel in program.kernels:
        for expr in address_exprs(kernel):
            for node in ast.walk(expr):
                if (
                    isinstance(node, ast.BinOp)
                    and isinstance(node.op, ast.Add | ast.Sub)
                    and isinstance(node.right, ast.Constant)
                    and isinstance(node.right.value, int)
                    and 0 < node.right.value <= 2
                ):
                    new = ast.unparse(node.left)
                    yield edit_at(program, "index-shift", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("broadcast-swap", "broadcast-error")
def broadcast_swap(program: Program) -> Iterator[Edit]:
    """`x[:, None]` <-> `x[None, :]`: broadcasting along the other axis."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
            kinds = [
                "none"
                if isinstance(e, ast.Constant) and e.value is None
                else "slice"
                if isinstance(e, ast.Slice)
                else "?"
                for e in node.slice.elts
            ]
            if sorted(kinds) == ["none", "slice"]:
                swapped = "[None, :]" if kinds[0] == "slice" else "[:, None]"
                new = f"{ast.unparse(node.value)}{swapped}"
                yield edit_at(program, "broadcast-swap", node, new, f"`{program.code(node)}` -> `{new}`")
