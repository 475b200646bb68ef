"""Loop bounds: a loop's start and stop.

The bug kind's cues, recipes, edits and mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: loop-bound.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from kope.bugs.analysis import constant_value
from kope.bugs.cue import Source, _kernel_loops, _kernels, cue, range_call
from kope.bugs.edit import Edit, Program, edit_at, operator
from kope.bugs.mutation import Context, Mutation, binary, mutation, positional, range_args
from kope.bugs.recipe import _expr, _hit_lines, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue(
    "loop-stops-early",
    "a kernel loop bound that stops short of the size: range(0, n - BLOCK, ...), (n // B) * B, n // B",
)
def loop_stops_early(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = range_call(loop)
            if call is None or not call.args:
                continue
            stop = call.args[1] if len(call.args) >= 2 else call.args[0]
            step = call.args[2] if len(call.args) >= 3 else None
            minus_step = (
                isinstance(stop, ast.BinOp)
                and isinstance(stop.op, ast.Sub)
                and step is not None
                and ast.unparse(stop.right) == ast.unparse(step)
                and constant_value(step) != 1.0
            )
            floored = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) for n in ast.walk(stop))
            if minus_step or floored:
                yield stop


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _FullRange(_LineTransformer):
    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        if self.line(original_node) not in self.lines or not isinstance(updated_node.iter, cst.Call):
            return updated_node
        call = updated_node.iter
        if call_name(call, last=True) not in ("range", "static_range") or not call.args:
            return updated_node
        index = 1 if len(call.args) >= 2 else 0
        stop = call.args[index].value
        fixed = _full_stop(stop)
        if fixed is None:
            return updated_node
        self.changed = True
        args = list(call.args)
        args[index] = args[index].with_changes(value=fixed)
        return updated_node.with_changes(iter=call.with_changes(args=args))


def _full_stop(stop: cst.BaseExpression) -> cst.BaseExpression | None:
    """`n - BLOCK` -> `n`; `(n // B) * B` -> `n`; `n // B` -> `tl.cdiv(n, B)`."""
    if isinstance(stop, cst.BinaryOperation):
        if isinstance(stop.operator, cst.Subtract):
            return stop.left.with_changes(lpar=[], rpar=[])
        if isinstance(stop.operator, cst.Multiply):
            for side in (stop.left, stop.right):
                if isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.FloorDivide):
                    return side.left.with_changes(lpar=[], rpar=[])
        if isinstance(stop.operator, cst.FloorDivide):
            return cst.Call(
                func=_expr("tl.cdiv"), args=[cst.Arg(stop.left.with_changes(lpar=[], rpar=[])), cst.Arg(stop.right)]
            )
    return None


@recipe("full-loop-range", "make loops over blocks reach the end: range(0, n - B, B) / (n // B) * B -> range(0, n, B)")
def full_loop_range(source: str) -> Iterator[str]:
    lines = _hit_lines(source, "loop-stops-early")
    if lines:
        edited = _rewrite(source, _FullRange(lines))
        if edited is not None:
            yield edited


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
