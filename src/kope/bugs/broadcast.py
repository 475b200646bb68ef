"""Broadcasts: a vector expanded along the wrong axis, an index divided or wrapped along the wrong one.

The bug kind's cues, recipes, edits and mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: broadcast-error.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import Kernel, calls_in, constexprs_of, expand, names_in
from kope.bugs.cue import Source, _kernels, cue
from kope.bugs.edit import REDUCTIONS, Edit, Program, assignments, edit_at, operator, reached
from kope.bugs.mutation import Context, Mutation, mutation
from kope.bugs.recipe import _analysed, _cue_nodes, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


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


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


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


# -- the search's edits (repair operators) -----------------------------------------------------


def _group(program: Program, node: ast.expr) -> str:
    text = program.code(node)
    return f"({text})" if isinstance(node, ast.BinOp) else text


def _broadcast_axis(node: ast.AST) -> int | None:
    """0 for `v[:, None]`, 1 for `v[None, :]`, None for anything else."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2):
        return None
    kinds = [
        "none" if isinstance(e, ast.Constant) and e.value is None else "slice" if isinstance(e, ast.Slice) else "?"
        for e in node.slice.elts
    ]
    return {("slice", "none"): 0, ("none", "slice"): 1}.get((kinds[0], kinds[1]))


def _reduced_axes(kernel: ast.FunctionDef) -> dict[str, set[int]]:
    """Names assigned a reduction of a 2-D block along one axis: they run along the other (`m = tl.max(s, axis=1)`
    has one value per row, so it broadcasts as `m[:, None]`). Wins over how the name is broadcast, which may be the
    bug."""
    found: dict[str, set[int]] = {}
    for name, assigns in assignments(kernel).items():
        for a in assigns:
            for call in ast.walk(a.value):
                if isinstance(call, ast.Call) and call_name(call) in REDUCTIONS:
                    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
                    if isinstance(axis, ast.Constant) and axis.value in (0, 1) and isinstance(axis.value, int):
                        found.setdefault(name, set()).add(1 - axis.value)
    return found


@operator("broadcast-swap", "broadcast-error")
def broadcast_swap(program: Program) -> Iterator[Edit]:
    """`x[:, None]` <-> `x[None, :]`: broadcasting along the other axis. Cued where a vector is broadcast along
    another axis than it runs along: a reduction's result along the axis it kept (`m[None, :]` for
    `m = tl.max(s, axis=1)`), a vector computed from an index along the axis the index runs along everywhere else
    (`shift[None, :]` for a `shift` loaded at `ch`, which the kernel's addresses use as `ch[:, None]`)."""
    for kernel in program.kernels:
        reduced = _reduced_axes(kernel)
        axes: dict[str, set[int]] = {}
        for node in ast.walk(kernel):
            axis = _broadcast_axis(node)
            if axis is not None and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                axes.setdefault(node.value.id, set()).add(axis)
        axes.update(reduced)
        for node in ast.walk(kernel):
            axis = _broadcast_axis(node)
            if axis is None or not isinstance(node, ast.Subscript):
                continue
            swapped = "[None, :]" if axis == 0 else "[:, None]"
            new = f"{ast.unparse(node.value)}{swapped}"
            edit = edit_at(program, "broadcast-swap", node, new, f"`{program.code(node)}` -> `{new}`")
            yield replace(edit, cue=_axis_cue(kernel, node.value, axis, axes, reduced))


def _axis_cue(
    kernel: ast.FunctionDef, vector: ast.expr, axis: int, axes: dict[str, set[int]], reduced: dict[str, set[int]]
) -> str:
    if not isinstance(vector, ast.Name):
        return ""
    name = vector.id
    if name in reduced:
        along, why = set(reduced[name]), f"`{name}` is a reduction that keeps axis"
    else:
        roots = reached(kernel, vector, set(axes) - {name}, through_loads=True)
        along = {a for root in roots for a in axes[root]}
        why = f"`{name}` comes from `{sorted(roots)[0]}`, which runs along axis" if roots else ""
    if len(along) == 1 and axis not in along:
        return f"{why} {along.pop()}, not {axis}"
    return ""


@operator("floor-mod", "broadcast-error")
def floor_mod(program: Program) -> Iterator[Edit]:
    """`i // n` and `i % n` exchanged in a kernel (the row index taken for the column, or back)."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod):
            op = "%" if isinstance(node.op, ast.FloorDiv) else "//"
            new = f"{ast.unparse(node.left)} {op} {ast.unparse(node.right)}"
            yield edit_at(program, "floor-mod", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("index-divide", "broadcast-error")
def index_divide(program: Program) -> Iterator[Edit]:
    """A flat index reduced modulo a size without dividing out the dimensions inside it: `i % C` -> `(i // L) % C`
    (the channel of element i of a (B, C, L) tensor), for the kernel's other scalar and block-size parameters."""
    for kernel in program.kernels:
        counts = [*program.scalars(kernel), *constexprs_of(kernel)]
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
                continue
            if isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.FloorDiv):
                continue
            modulus = program.code(node.right)
            for inner in counts:
                if inner == modulus:
                    continue
                new = f"({_group(program, node.left)} // {inner}) % {_group(program, node.right)}"
                yield edit_at(program, "index-divide", node, new, f"`{program.code(node)}` -> `{new}`")


# -- how the bench injects it (mutations) ------------------------------------------------------


def _broadcast_axes(node: cst.CSTNode) -> tuple[int, int] | None:
    """(index of the full slice, index of None) for `v[:, None]` / `v[None, :]`."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 2:
        return None
    kinds = []
    for element in node.slice:
        item = element.slice
        if isinstance(item, cst.Slice) and item.lower is None and item.upper is None and item.step is None:
            kinds.append("slice")
        elif isinstance(item, cst.Index) and isinstance(item.value, cst.Name) and item.value.value == "None":
            kinds.append("none")
        else:
            return None
    if sorted(kinds) != ["none", "slice"]:
        return None
    return kinds.index("slice"), kinds.index("none")


@mutation
class SwapBroadcast(Mutation):
    name = "swap-broadcast"
    label = "broadcast-error"
    summary = "a vector is broadcast along the other axis: v[None, :] for v[:, None]"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if _broadcast_axes(node) is None:
            return []
        assert isinstance(node, cst.Subscript)
        first, second = node.slice
        swapped = [first.with_changes(slice=second.slice), second.with_changes(slice=first.slice)]
        return [node.with_changes(slice=swapped)]
