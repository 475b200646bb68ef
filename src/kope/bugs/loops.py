"""Loop bounds: a loop's start and stop.

The bug kind's edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: loop-bound (its cue and recipe sit with the grid's).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from kope.bugs.edit import Edit, Program, edit_at, operator
from kope.bugs.mutation import Context, Mutation, binary, mutation, positional, range_args
from kope.source import call_name

# -- the search's edits (repair operators) -----------------------------------------------------


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


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class LoopStopsEarly(Mutation):
    name = "loop-stops-early"
    label = "loop-bound"
    summary = "a loop over blocks stops one step early: range(a, n - BLOCK, BLOCK)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        args = range_args(node)
        if args is None:
            return []
        assert isinstance(node, cst.Call)
        stop_index = 0 if len(args) == 1 else 1
        step = args[2].value if len(args) == 3 else cst.Integer("1")
        stop = binary(args[stop_index].value, cst.Subtract(), step)
        new = list(node.args)
        new[stop_index] = new[stop_index].with_changes(value=stop)
        return [node.with_changes(args=new)]


@mutation
class LoopFloorDivision(Mutation):
    name = "loop-floor-division"
    label = "loop-bound"
    summary = "a loop's bound rounds down: range(0, n // BLOCK * BLOCK, BLOCK), or n // BLOCK for cdiv"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        args = range_args(node)
        if args is not None and len(args) == 3:
            assert isinstance(node, cst.Call)
            stop, step = args[1].value, args[2].value
            floored = binary(binary(stop, cst.FloorDivide(), step), cst.Multiply(), step)
            new = list(node.args)
            new[1] = new[1].with_changes(value=floored)
            return [node.with_changes(args=new)]
        if args is not None:
            assert isinstance(node, cst.Call)
            found: list[cst.CSTNode] = []
            for index, arg in enumerate(node.args):
                if call_name(arg.value) in ("tl.cdiv", "triton.cdiv"):
                    inner = positional(arg.value)  # type: ignore[arg-type]
                    if len(inner) == 2:
                        new = list(node.args)
                        new[index] = arg.with_changes(value=binary(inner[0].value, cst.FloorDivide(), inner[1].value))
                        found.append(node.with_changes(args=new))
            return found
        return []
