"""Numerical repairs: stability (a running max subtracted) and precision (an upcast)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.repair.operators._core import Edit, Program, assignments, edit_at, names_in, operator
from kope.source import call_name


@operator("max-subtraction", "numerical-instability")
def max_subtraction(program: Program) -> Iterator[Edit]:
    """`tl.exp(e)` without a running max subtracted: `tl.exp(e - m)` for the kernel's maxima."""
    for kernel in program.kernels:
        maxima = [
            n for n, a in assignments(kernel).items() if any(call_name(x.value) in ("tl.max", "tl.maximum") for x in a)
        ]
        for node in ast.walk(kernel):
            if isinstance(node, ast.Call) and call_name(node) in ("tl.exp", "tl.exp2") and node.args:
                inner = node.args[0]
                if set(maxima) & names_in(inner):
                    continue
                for m in maxima:
                    new = f"{call_name(node)}({ast.unparse(inner)} - {m})"
                    yield edit_at(program, "max-subtraction", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("upcast", "precision-loss")
def upcast(program: Program) -> Iterator[Edit]:
    """A loaded block computed on in its stored precision (float16, bfloat16) upcast: `tl.load(...).to(tl.float32)`."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) == "tl.load":
            yield edit_at(program, "upcast", node, f"{program.code(node)}.to(tl.float32)", "the load upcast to float32")


_OPPOSITE = {
    "min": "max",
    "max": "min",
    "minimum": "maximum",
    "maximum": "minimum",
    "argmin": "argmax",
    "argmax": "argmin",
}


@operator("reduction-swap", "numerical-instability")
def reduction_swap(program: Program) -> Iterator[Edit]:
    """`tl.min` <-> `tl.max` (and `minimum`/`maximum`, `argmin`/`argmax`): a softmax shifted by the row minimum."""
    for _, node in program.kernel_nodes():
        name = call_name(node)
        if isinstance(node, ast.Call) and name.startswith("tl.") and name[3:] in _OPPOSITE:
            new = f"tl.{_OPPOSITE[name[3:]]}"
            yield edit_at(program, "reduction-swap", node.func, new, f"`{name}` -> `{new}` (line {node.lineno})")
