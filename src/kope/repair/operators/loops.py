"""Loop repairs: a loop's start and stop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.repair.operators._core import Edit, Program, edit_at, operator
from kope.source import call_name


def _range_calls(program: Program) -> Iterator[ast.Call]:
    for _, node in program.kernel_nodes():
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter, last=True) in ("range", "static_range")
        ):
            yield node.iter


@operator("loop-bound", "loop-bound")
def loop_bound(program: Program) -> Iterator[Edit]:
    """A loop's stop without its trailing `- k` term, or one step further; a start other than 0 back to 0."""
    for call in _range_calls(program):
        args = call.args
        if not args:
            continue
        stop = args[1] if len(args) >= 2 else args[0]
        if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Sub):
            new = ast.unparse(stop.left)
            yield edit_at(program, "loop-bound", stop, new, f"loop stop `{program.code(stop)}` -> `{new}`")
        step = ast.unparse(args[2]) if len(args) >= 3 else "1"
        new = f"{ast.unparse(stop)} + {step}"
        yield edit_at(program, "loop-bound", stop, new, f"loop stop `{program.code(stop)}` -> `{new}`")
        if len(args) >= 2 and not (isinstance(args[0], ast.Constant) and args[0].value == 0):
            yield edit_at(program, "loop-bound", args[0], "0", f"loop start `{program.code(args[0])}` -> `0`")
