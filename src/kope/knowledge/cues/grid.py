"""Cues of the launch grid and loop bounds: programs or blocks that never run."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Kernel,
    argument,
    calls_in,
    constant_value,
    expand,
    names_in,
)
from kope.knowledge.cues._common import _kernel_loops, _kernels
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


@cue("grid-floor-div", "a launch grid computed with floor division: the last partial block gets no program")
def grid_floor_div(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        for axis in launch.grid or []:
            for node in ast.walk(axis):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
                    yield node


def _axes_used(kernel: Kernel) -> set[int]:
    axes: set[int] = set()
    for call in calls_in(kernel.node, "program_id"):
        axis = constant_value(argument(call, 0, "axis"))
        if axis is not None:
            axes.add(int(axis))
    return axes


@cue("grid-axis-missing", "the kernel reads tl.program_id(k) but the launch grid has no axis k, or a literal 1 there")
def grid_axis_missing(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = _axes_used(kernel)
        for launch in source.program.launches_of(kernel):
            if launch.grid is None:
                continue
            for axis in sorted(used):
                if axis >= len(launch.grid):
                    yield launch.call
                elif axis > 0 and constant_value(launch.grid[axis]) == 1.0 and _axis_tiles(kernel, axis):
                    yield launch.grid[axis]


def _axis_tiles(kernel: Kernel, axis: int) -> bool:
    """Whether program_id(axis) selects a tile of block offsets (so one program cannot cover the axis)."""
    names = {
        name
        for name, values in kernel.assigns.items()
        if any(constant_value(argument(c, 0, "axis")) == float(axis) for v in values for c in calls_in(v, "program_id"))
    }
    for values in kernel.assigns.values():
        for value in values:
            if any(True for _ in calls_in(value, "arange")) and (
                names_in(value) & names
                or any(constant_value(argument(c, 0, "axis")) == float(axis) for c in calls_in(value, "program_id"))
            ):
                return True
    return False


def _per_program(expr: ast.AST, kernel: Kernel) -> bool:
    """Whether an expression depends on the program id (a persistent or strided loop start)."""
    return bool(names_in(expr) & kernel.pids) or any(True for _ in calls_in(expr, "program_id", "num_programs"))


def _range_call(loop: ast.For) -> ast.Call | None:
    it = loop.iter
    if isinstance(it, ast.Call) and call_name(it, last=True) in ("range", "static_range"):
        return it
    return None


@cue(
    "loop-stops-early",
    "a kernel loop bound that stops short of the size: range(0, n - BLOCK, ...), (n // B) * B, n // B",
)
def loop_stops_early(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = _range_call(loop)
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


@cue("store-loop-skips-start", "a loop that writes the output starts past 0: the first block is never written")
def store_loop_skips_start(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = _range_call(loop)
            if call is None or len(call.args) < 2 or constant_value(call.args[0]) == 0.0:
                continue
            if not isinstance(loop.target, ast.Name) or _per_program(call.args[0], kernel):
                continue
            variable = loop.target.id
            for store in calls_in(loop, "store"):
                pointer = store.args[0] if store.args else None
                if any(variable in names_in(node) for node in expand(pointer, kernel)):
                    yield call
                    break
