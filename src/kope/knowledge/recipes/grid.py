"""Recipes for the launch grid and loop bounds: ceil division, loops that reach the end, every output written."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.knowledge.analysis import (
    Kernel,
    argument,
    calls_in,
    constant_value,
    names_in,
)
from kope.knowledge.recipes._common import (
    _analysed,
    _bounds_for,
    _cue_nodes,
    _EmptyToZeros,
    _expr,
    _hit_lines,
    _LineTransformer,
    _rewrite,
    parse,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name


class _FloorToCdiv(cst.CSTTransformer):
    """Every `a // b` becomes `triton.cdiv(a, b)`."""

    def __init__(self) -> None:
        self.changed = False

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if m.matches(updated_node.operator, m.FloorDivide()):
            self.changed = True
            return cst.Call(
                func=cst.Attribute(value=cst.Name("triton"), attr=cst.Name("cdiv")),
                args=[cst.Arg(updated_node.left), cst.Arg(updated_node.right)],
            )
        return updated_node


def launch_grid_names(module: cst.Module) -> set[str]:
    """Names used as grids in `kernel[grid](...)`."""
    names: set[str] = set()
    for call in m.findall(module, m.Call(func=m.Subscript())):
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Subscript)
        for element in call.func.slice:
            if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name):
                names.add(element.slice.value.value)
    return names


class _GridFloorToCeil(cst.CSTTransformer):
    """In launch grids, and in values assigned to names used as grids, `a // b` -> `triton.cdiv(a, b)`."""

    def __init__(self, grid_names: set[str]) -> None:
        self.grid_names = grid_names
        self.changed = False

    def _rewrite(self, node: cst.CSTNodeT) -> cst.CSTNodeT:
        inner = _FloorToCdiv()
        rewritten = node.visit(inner)
        self.changed |= inner.changed
        return rewritten  # type: ignore[return-value]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if isinstance(updated_node.func, cst.Subscript):
            return updated_node.with_changes(func=self._rewrite(updated_node.func))
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        targets = {t.target.value for t in updated_node.targets if isinstance(t.target, cst.Name)}
        if targets & self.grid_names:
            return updated_node.with_changes(value=self._rewrite(updated_node.value))
        return updated_node


@recipe("grid-ceil-div", "use triton.cdiv instead of floor division in launch grids")
def grid_ceil_div(source: str) -> Iterator[str]:
    module = parse(source)
    transformer = _GridFloorToCeil(launch_grid_names(module))
    edited = module.visit(transformer)
    if transformer.changed:
        yield edited.code


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


class _GridAxis(_LineTransformer):
    def __init__(self, line: int, axis: int, value: str) -> None:
        super().__init__()
        self.target, self.axis, self.value = line, axis, value

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        if self.line(original_node) != self.target or self.changed:
            return updated_node
        elements = list(updated_node.elements)
        if self.axis < len(elements) and m.matches(elements[self.axis].value, m.Integer("1")):
            elements[self.axis] = elements[self.axis].with_changes(value=_expr(self.value))
        elif self.axis == len(elements):
            last = elements[-1]
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            elements.append(cst.Element(_expr(self.value)))
        else:
            return updated_node
        self.changed = True
        return updated_node.with_changes(elements=elements)


class _RangeFromZero(_LineTransformer):
    def __init__(self, line: int) -> None:
        super().__init__()
        self.target = line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            self.line(original_node) == self.target
            and call_name(updated_node, last=True) in ("range", "static_range")
            and len(updated_node.args) >= 2
        ):
            self.changed = True
            args = list(updated_node.args)
            args[0] = args[0].with_changes(value=cst.Integer("0"))
            return updated_node.with_changes(args=args)
        return updated_node


def _axis_extent(kernel: Kernel, launch_args: dict[str, ast.expr], axis: int) -> str | None:
    """`triton.cdiv(size, block)` for a grid axis, from how the kernel tiles program_id(axis)."""
    pid_names = {
        name
        for name, values in kernel.assigns.items()
        if any(constant_value(argument(c, 0, "axis")) == float(axis) for v in values for c in calls_in(v, "program_id"))
    }
    for name, values in kernel.assigns.items():
        for value in values:
            if not (names_in(value) & pid_names and any(True for _ in calls_in(value, "arange"))):
                continue
            blocks = [b for b in names_in(value) if b in kernel.constexprs]
            bounds = [b for b in _bounds_for(kernel, {name}) if b.isidentifier() and b in kernel.params]
            if blocks and bounds and blocks[0] in launch_args and bounds[0] in launch_args:
                return f"triton.cdiv({ast.unparse(launch_args[bounds[0]])}, {ast.unparse(launch_args[blocks[0]])})"
    return None


@recipe(
    "cover-output",
    "make every output element written: add the missing grid axis, start write loops at 0, zero-fill partially "
    "written buffers",
)
def cover_output(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for kernel in parsed.program.kernels.values():
        used = sorted(int(constant_value(argument(c, 0, "axis")) or 0) for c in calls_in(kernel.node, "program_id"))
        for launch in parsed.program.launches_of(kernel):
            if launch.grid is None:
                continue
            for axis in dict.fromkeys(used):
                missing = axis >= len(launch.grid) or (axis > 0 and constant_value(launch.grid[axis]) == 1.0)
                extent = _axis_extent(kernel, launch.args, axis) if missing else None
                if extent is None:
                    continue
                tuple_line = launch.grid[0].lineno if launch.grid else -1
                edited = _rewrite(source, _GridAxis(tuple_line, axis, extent))
                if edited is not None:
                    yield edited
    for node in _cue_nodes(parsed, "store-loop-skips-start"):
        edited = _rewrite(source, _RangeFromZero(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited
    lines = {getattr(n, "lineno", -1) for n in _cue_nodes(parsed, "partial-store-into-empty")}
    if lines:
        edited = _rewrite(source, _EmptyToZeros(lines))
        if edited is not None:
            yield edited
