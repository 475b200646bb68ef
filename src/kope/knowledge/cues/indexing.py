"""Cues of indexing and strides: wrong or missing strides, shifted indices, broadcasts along the wrong axis."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Kernel,
    assigned_names,
    calls_in,
    constant_value,
    expand,
    gathered_indices,
    host_assignments,
    names_in,
    pointer_roots,
    statements,
)
from kope.knowledge.cues._common import _kernel_loops, _kernels
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


def _stride_call(node: ast.AST) -> tuple[str, int] | None:
    """`t.stride(k)` -> ("t", k)."""
    if (
        isinstance(node, ast.Call)
        and call_name(node, last=True) == "stride"
        and isinstance(node.func, ast.Attribute)
        and node.args
    ):
        dim = constant_value(node.args[0])
        owner = ast.unparse(node.func.value)
        if dim is not None:
            return owner, int(dim)
    return None


@cue("single-inner-stride", "a launch passes one stride of a tensor, and it is an inner one (stride(1), stride(-1))")
def single_inner_stride(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        by_tensor: dict[str, list[tuple[int, ast.AST]]] = {}
        for value in launch.args.values():
            found = _stride_call(value)
            if found is not None:
                by_tensor.setdefault(found[0], []).append((found[1], value))
        for tensor, strides in by_tensor.items():
            if len(strides) == 1 and strides[0][0] in (1, -1) and _known_2d(launch.host, tensor):
                yield strides[0][1]


_SAME_SHAPE = {"contiguous", "float", "half", "to", "clone", "detach", "cuda", "cpu"}


def _known_2d(host: ast.FunctionDef | None, name: str, depth: int = 3) -> bool:
    """Whether the host code makes `name` a 2-D tensor (`x.view(-1, n)`, `m, n = x.shape`...)."""
    if host is None or depth < 0:
        return False
    for stmt in ast.walk(host):
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.targets[0], ast.Tuple)
            and len(stmt.targets[0].elts) == 2
            and isinstance(stmt.value, ast.Attribute)
            and stmt.value.attr == "shape"
            and ast.unparse(stmt.value.value) == name
        ):
            return True
    for value in host_assignments(host, name):
        while (
            isinstance(value, ast.Call)
            and call_name(value, last=True) in _SAME_SHAPE
            and isinstance(value.func, ast.Attribute)
        ):
            value = value.func.value
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("view", "reshape") and len(value.args) == 2:
            return True
        if (
            isinstance(value, ast.Call)
            and call_name(value, last=True) in ("empty", "zeros", "ones", "randn")
            and (
                len(value.args) == 2
                or (len(value.args) == 1 and isinstance(value.args[0], ast.Tuple) and len(value.args[0].elts) == 2)
            )
        ):
            return True
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty_like", "zeros_like") and value.args:
            return _known_2d(host, ast.unparse(value.args[0]), depth - 1)
        if isinstance(value, ast.Name):
            return _known_2d(host, value.id, depth - 1)
    return False


@cue("duplicate-stride-arg", "a launch passes the same stride of a tensor for two different parameters")
def duplicate_stride_arg(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        seen: set[str] = set()
        for value in launch.args.values():
            if _stride_call(value) is not None:
                text = ast.unparse(value)
                if text in seen:
                    yield value
                seen.add(text)


def _pointer_prefixes(kernel: Kernel) -> dict[str, str]:
    prefixes: dict[str, str] = {}
    for param in kernel.params:
        if param.endswith("_ptr") and len(param) > 4:
            prefixes[param] = param[:-4]
    return prefixes


@cue("foreign-stride", "a pointer is advanced with another tensor's stride (x_ptr + i * stride_y...)")
def foreign_stride(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        prefixes = _pointer_prefixes(kernel)
        if len(prefixes) < 2:
            continue
        strides = [p for p in kernel.params if p.startswith("stride_")]

        def owner(stride: str, prefixes: dict[str, str] = prefixes) -> str | None:
            rest = stride[len("stride_") :]
            matches = [p for p in prefixes.values() if rest.startswith(p)]
            return max(matches, key=len) if matches else None

        for call in calls_in(kernel.node, "load", "store", "atomic_add"):
            pointer = call.args[0] if call.args else None
            roots = {prefixes[r] for r in pointer_roots(pointer, kernel) if r in prefixes}
            if len(roots) != 1:
                continue
            (root,) = roots
            used = set().union(*(names_in(n) for n in expand(pointer, kernel, depth=4)))
            for stride in strides:
                if stride in used and owner(stride) not in (None, root):
                    yield call
                    break


@cue("unused-stride-param", "a kernel takes a stride it never uses (often a batch or head offset left out)")
def unused_stride_param(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        for arg in kernel.node.args.args:
            if arg.arg.startswith("stride") and arg.arg not in used:
                yield arg


@cue("unused-program-id", "a program id is read but never used: that grid axis selects nothing")
def unused_program_id(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        for stmt in statements(kernel.node.body):
            if isinstance(stmt, ast.Assign) and any(True for _ in calls_in(stmt.value, "program_id")):
                for name in assigned_names(stmt):
                    if name not in used:
                        yield stmt


@cue(
    "offset-literal-shift",
    "a literal +1 or -1 added to an index (block offsets, gathered indices) in a load or store address",
)
def offset_literal_shift(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        indices = kernel.aranges | gathered_indices(kernel)
        addresses = {ast.unparse(c.args[0]) for c in calls_in(kernel.node, "load", "store") if c.args}
        for call in calls_in(kernel.node, "load", "store"):
            pointer = call.args[0] if call.args else None
            for root in expand(pointer, kernel, depth=2):
                for node in ast.walk(root):
                    if (
                        isinstance(node, ast.BinOp)
                        and isinstance(node.op, ast.Add | ast.Sub)
                        and constant_value(node.right) in (1.0, -1.0)
                        and names_in(node.left) & indices
                        and not _interleaved(node.left)
                        and not (root is pointer and _without(pointer, node) in addresses)
                    ):
                        yield call
                        break


def _interleaved(node: ast.AST) -> bool:
    """`i * 2 + 1`: an odd element of interleaved pairs, not a shift."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (constant_value(node.right) or 0) >= 2


def _without(pointer: ast.expr, shift: ast.BinOp) -> str:
    """The address text with `e + 1` replaced by `e`: when the kernel also accesses that address,
    the +1 reads a deliberate neighbour (start/end pairs, stencils)."""
    return ast.unparse(_drop_node(pointer, shift))


def _drop_node(pointer: ast.expr, shift: ast.BinOp) -> ast.expr:
    if pointer is shift:
        return shift.left
    if isinstance(pointer, ast.BinOp):
        return ast.BinOp(left=_drop_node(pointer.left, shift), op=pointer.op, right=_drop_node(pointer.right, shift))
    if isinstance(pointer, ast.Subscript):
        return ast.Subscript(value=_drop_node(pointer.value, shift), slice=pointer.slice, ctx=pointer.ctx)
    return pointer


@cue(
    "block-relative-index",
    "inside a loop over blocks, a position is recorded from tl.arange alone, without the block start",
)
def block_relative_index(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            if not isinstance(loop.target, ast.Name):
                continue
            start = loop.target.id
            relative = {n for n in kernel.aranges if start not in _depends(kernel, n)}
            absolute = {
                name
                for stmt in statements(loop.body)
                for name in assigned_names(stmt)
                if isinstance(stmt, ast.Assign) and start in names_in(stmt.value) and names_in(stmt.value) & relative
            }
            if not absolute:
                continue
            for call in calls_in(loop, "where"):
                for value in call.args[1:3]:
                    if isinstance(value, ast.Name) and value.id in relative:
                        yield call


def _depends(kernel: Kernel, name: str) -> set[str]:
    """Every name the values of `name` are computed from, transitively."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for value in kernel.assigns.get(current, []):
            for used in names_in(value) - found:
                found.add(used)
                frontier.append(used)
    return found


def _expand_axis(node: ast.Subscript) -> int | None:
    """`v[:, None]` -> 0 (v runs along axis 0), `v[None, :]` -> 1."""
    index = node.slice
    if not isinstance(index, ast.Tuple) or len(index.elts) != 2:
        return None
    first, second = index.elts
    is_none = lambda e: isinstance(e, ast.Constant) and e.value is None  # noqa: E731
    is_all = lambda e: isinstance(e, ast.Slice) and e.lower is None and e.upper is None  # noqa: E731
    if is_all(first) and is_none(second):
        return 0
    if is_none(first) and is_all(second):
        return 1
    return None


def _store_axes(kernel: Kernel) -> dict[str, int]:
    """The axis each block-offset name runs along in the output addresses (tl.store)."""
    axes: dict[str, set[int]] = {}
    for call in calls_in(kernel.node, "store"):
        pointer = call.args[0] if call.args else None
        for root in expand(pointer, kernel, depth=2):
            for node in ast.walk(root):
                if (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in kernel.aranges
                ):
                    axis = _expand_axis(node)
                    if axis is not None:
                        axes.setdefault(node.value.id, set()).add(axis)
    return {name: next(iter(found)) for name, found in axes.items() if len(found) == 1}


@cue(
    "broadcast-axis-mismatch",
    "a 1-D vector loaded along one output axis is broadcast along the other (bias[:, None] for a per-column bias)",
)
def broadcast_axis_mismatch(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        axes = _store_axes(kernel)
        if not axes:
            continue
        vectors: dict[str, int] = {}
        for name, values in kernel.assigns.items():
            for value in values:
                loads = list(calls_in(value, "load"))
                if len(loads) != 1 or not loads[0].args:
                    continue
                pointer = loads[0].args[0]
                if any(isinstance(n, ast.Subscript) for n in ast.walk(pointer)):
                    continue
                found = {axes[n] for n in names_in(pointer) if n in axes}
                if len(found) == 1:
                    vectors[name] = found.pop()
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in vectors:
                axis = _expand_axis(node)
                if axis is not None and axis != vectors[node.value.id]:
                    yield node
