"""Recipes for indexing and strides: the right stride, no stray shift, the right broadcast axis, the batch offset."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from kope.knowledge.analysis import (
    Kernel,
    calls_in,
    constant_value,
    expand,
    gathered_indices,
    names_in,
    pointer_roots,
)
from kope.knowledge.recipes._common import (
    _analysed,
    _cue_nodes,
    _expr,
    _hit_lines,
    _LineTransformer,
    _names,
    _rewrite,
    parse,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name


class _StrideDim(_LineTransformer):
    """`t.stride(k)` starting at (line, column) -> `t.stride(dim)`."""

    def __init__(self, line: int, column: int, dim: int) -> None:
        super().__init__()
        self.target, self.column, self.dim = line, column, dim

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        start = self.get_metadata(PositionProvider, original_node).start
        if (
            call_name(updated_node, last=True) == "stride"
            and (start.line, start.column) == (self.target, self.column)
            and updated_node.args
            and not self.changed
        ):
            self.changed = True
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=cst.Integer(str(self.dim)))])
        return updated_node


class _RenameIn(_LineTransformer):
    """Rename `old` to `new` on the given lines."""

    def __init__(self, lines: set[int], old: str, new: str) -> None:
        super().__init__()
        self.lines, self.old, self.new = lines, old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value == self.old and self.line(original_node) in self.lines:
            self.changed = True
            return updated_node.with_changes(value=self.new)
        return updated_node


@recipe(
    "outer-stride",
    "pass the right stride: an inner or repeated t.stride(k) -> another dimension; stride_y used with x_ptr -> "
    "stride_x",
)
def outer_stride(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    flagged: list[tuple[ast.AST, tuple[int, ...]]] = [(n, (0,)) for n in _cue_nodes(parsed, "single-inner-stride")]
    flagged += [(n, (0, 1, 2)) for n in _cue_nodes(parsed, "duplicate-stride-arg")]
    for node, dims in flagged:
        if not (isinstance(node, ast.Call) and node.args):
            continue
        current = constant_value(node.args[0])
        for dim in dims:
            if current is not None and dim != int(current):
                edited = _rewrite(source, _StrideDim(node.lineno, node.col_offset, dim))
                if edited is not None:
                    yield edited
    for node in parsed.kernels:
        kernel = parsed.program.kernel_of(node)
        if kernel is None:
            continue
        prefixes = {p[:-4] for p in kernel.params if p.endswith("_ptr")}
        strides = [p for p in kernel.params if p.startswith("stride_")]
        for call in calls_in(node, "load", "store", "atomic_add"):
            pointer = call.args[0] if call.args else None
            roots = {r[:-4] for r in pointer_roots(pointer, kernel) if r.endswith("_ptr")}
            if len(roots) != 1:
                continue
            (root,) = roots
            parts = expand(pointer, kernel, depth=4)
            lines = {getattr(p, "lineno", -1) for p in parts} | {call.lineno}
            used = set().union(*(names_in(p) for p in parts))
            for stride in strides:
                rest = stride[len("stride_") :]
                owner = max((p for p in prefixes if rest.startswith(p)), key=len, default=None)
                if stride in used and owner not in (None, root):
                    assert owner is not None
                    replacement = "stride_" + root + rest[len(owner) :]
                    if replacement in kernel.params:
                        edited = _rewrite(source, _RenameIn(lines, stride, replacement))
                        if edited is not None:
                            yield edited


class _DropShift(_LineTransformer):
    """On the given lines, `expr + 1` / `expr - 1` over block offsets -> `expr`."""

    def __init__(self, lines: set[int], offsets: set[str]) -> None:
        super().__init__()
        self.lines, self.offsets = lines, offsets

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if self.line(original_node) not in self.lines or self.changed:
            return updated_node
        if isinstance(updated_node.operator, cst.Add | cst.Subtract) and m.matches(updated_node.right, m.Integer("1")):
            left_names = _names(updated_node.left)
            if left_names & self.offsets:
                self.changed = True
                left = updated_node.left
                atomic = isinstance(left, cst.Name | cst.Subscript | cst.Call | cst.Attribute)
                return (
                    left.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
                    if updated_node.lpar and not atomic
                    else left
                )
        return updated_node


@recipe(
    "remove-index-shift",
    "drop a stray +1/-1 from block-offset addresses; record start + lane instead of the block-relative lane",
)
def remove_index_shift(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in parsed.kernels:
        kernel = parsed.program.kernel_of(node)
        if kernel is None:
            continue
        for call in calls_in(node, "load", "store"):
            if call.lineno not in _hit_lines(source, "offset-literal-shift"):
                continue
            lines = {getattr(p, "lineno", -1) for p in expand(call.args[0] if call.args else None, kernel, depth=2)}
            for line in sorted(lines):
                edited = _rewrite(source, _DropShift({line}, kernel.aranges | gathered_indices(kernel)))
                if edited is not None:
                    yield edited
    for where in _cue_nodes(parsed, "block-relative-index"):
        assert isinstance(where, ast.Call)
        kernel = next((k for k in parsed.program.kernels.values() if any(w is where for w in ast.walk(k.node))), None)
        if kernel is None:
            continue
        for relative in [a.id for a in where.args[1:3] if isinstance(a, ast.Name) and a.id in kernel.aranges]:
            for name, values in kernel.assigns.items():
                if any(
                    isinstance(v, ast.BinOp)
                    and isinstance(v.op, ast.Add)
                    and relative in names_in(v)
                    and len(names_in(v)) == 2
                    for v in values
                ):
                    edited = _rewrite(source, _RenameArgs(where.lineno, relative, name))
                    if edited is not None:
                        yield edited


class _RenameArgs(_LineTransformer):
    """In the tl.where call at a line, the value argument `old` -> `new`."""

    def __init__(self, line: int, old: str, new: str) -> None:
        super().__init__()
        self.target, self.old, self.new = line, old, new

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if call_name(updated_node, last=True) != "where" or self.line(original_node) != self.target:
            return updated_node
        args = list(updated_node.args)
        for i in (1, 2):
            if i < len(args) and m.matches(args[i].value, m.Name(self.old)):
                args[i] = args[i].with_changes(value=cst.Name(self.new))
                self.changed = True
        return updated_node.with_changes(args=args)


class _SwapBroadcast(_LineTransformer):
    def __init__(self, line: int, name: str) -> None:
        super().__init__()
        self.target, self.name = line, name

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        if self.line(original_node) != self.target or not m.matches(updated_node.value, m.Name(self.name)):
            return updated_node
        if len(updated_node.slice) != 2:
            return updated_node
        first, second = updated_node.slice
        self.changed = True
        return updated_node.with_changes(
            slice=[
                first.with_changes(slice=second.slice),
                second.with_changes(slice=first.slice),
            ]
        )


@recipe("swap-broadcast", "expand a 1-D vector along the axis its offsets run along: v[:, None] <-> v[None, :]")
def swap_broadcast(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "broadcast-axis-mismatch"):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            edited = _rewrite(source, _SwapBroadcast(node.lineno, node.value.id))
            if edited is not None:
                yield edited


class _OffsetBase(_LineTransformer):
    """At a line, the pointer parameter `ptr` -> `ptr + index * stride`."""

    def __init__(self, line: int, ptr: str, index: str, stride: str) -> None:
        super().__init__()
        self.target, self.ptr, self.index, self.stride = line, ptr, index, stride

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value == self.ptr and self.line(original_node) == self.target and not self.changed:
            self.changed = True
            return _expr(f"({self.ptr} + {self.index} * {self.stride})")
        return updated_node


class _Unparen(cst.CSTTransformer):
    """`(p + i * s) + rest` -> `p + i * s + rest` (the parentheses the edit added, where redundant)."""

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        left = updated_node.left
        if (
            isinstance(updated_node.operator, cst.Add)
            and isinstance(left, cst.BinaryOperation)
            and isinstance(left.operator, cst.Add)
        ):
            return updated_node.with_changes(left=left.with_changes(lpar=[], rpar=[]))
        return updated_node


class _DropOuterParens(cst.CSTTransformer):
    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        value = updated_node.value
        if isinstance(value, cst.BinaryOperation) and value.lpar:
            return updated_node.with_changes(value=value.with_changes(lpar=[], rpar=[]))
        return updated_node


@recipe(
    "add-batch-offset",
    "offset a base pointer by its batch (or head) index times the stride the kernel receives but never uses",
)
def add_batch_offset(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for arg in _cue_nodes(parsed, "unused-stride-param"):
        assert isinstance(arg, ast.arg)
        kernel = next((k for k in parsed.program.kernels.values() if arg in k.node.args.args), None)
        if kernel is None:
            continue
        prefixes = sorted((p[:-4] for p in kernel.params if p.endswith("_ptr")), key=len, reverse=True)
        rest = arg.arg[len("stride_") :]
        prefix = next((p for p in prefixes if rest.startswith(p)), None)
        if prefix is None:
            continue
        dim = rest[len(prefix) :]
        partners = [f"stride_{p}{dim}" for p in prefixes if p != prefix and f"stride_{p}{dim}" in kernel.params]
        indices = _multipliers(kernel, partners)
        first = _first_use(kernel, f"{prefix}_ptr")
        if first is None:
            continue
        for index in indices[:2]:
            edited = _rewrite(source, _OffsetBase(first, f"{prefix}_ptr", index, arg.arg))
            if edited is not None:
                yield parse(edited).visit(_Unparen()).visit(_DropOuterParens()).code


def _multipliers(kernel: Kernel, strides: list[str]) -> list[str]:
    """What the partner strides are multiplied by (`b` in `b * stride_qb`)."""
    found: list[str] = []
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(side, ast.Name) and side.id in strides:
                    found.append(ast.unparse(other))
    return list(dict.fromkeys(found))


def _first_use(kernel: Kernel, name: str) -> int | None:
    lines = [
        n.lineno
        for n in ast.walk(kernel.node)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    return min(lines) if lines else None
