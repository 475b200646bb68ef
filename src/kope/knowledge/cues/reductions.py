"""Cues of reductions and accumulators: normalisers, resets inside the loop, wrong initial values."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Kernel,
    assigned_names,
    calls_in,
    constant_value,
    names_in,
    statements,
)
from kope.knowledge.cues._common import _derived_from, _kernel_loops, _kernels, _reduction_result
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


@cue("divide-by-block-size", "a reduction is divided by a block size (a constexpr) instead of the element count")
def divide_by_block_size(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Div)
                and isinstance(node.right, ast.Name)
                and node.right.id in _masked_block_widths(kernel)
                and _reduction_result(node.left, kernel)
            ):
                yield node


def _masked_block_widths(kernel: Kernel) -> set[str]:
    """Constexpr widths of tl.arange blocks whose offsets are masked against a size (so the block
    can be wider than the data it covers)."""
    widths: set[str] = set()
    masked = {n for m in kernel.masks for v in kernel.assigns.get(m, []) for n in names_in(v)}
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Compare) and names_in(node) & kernel.aranges:
            masked |= names_in(node)
    for name, values in kernel.assigns.items():
        for value in values:
            for call in calls_in(value, "arange"):
                width = call.args[1] if len(call.args) == 2 else None
                if (
                    isinstance(width, ast.Name)
                    and width.id in kernel.constexprs
                    and (name in masked or masked & _derived_from(kernel, name))
                ):
                    widths.add(width.id)
    return widths


@cue(
    "divide-by-n-minus-one", "a reduction is divided by (n - 1): the unbiased normaliser, where the biased one is usual"
)
def divide_by_n_minus_one(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.BinOp):
                right = node.right
                if (
                    isinstance(right.op, ast.Sub)
                    and constant_value(right.right) == 1.0
                    and _reduction_result(node.left, kernel)
                ):
                    yield node


def _initialiser(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and call_name(value, last=True) in ("zeros", "full", "zeros_like", "full_like")


def _loop_dependencies(loop: ast.For, name: str, kernel: Kernel) -> dict[str, set[str]]:
    """For each name assigned in the loop, the names its new value reads, transitively within the loop."""
    direct: dict[str, set[str]] = {}
    for stmt in statements(loop.body):
        if isinstance(stmt, ast.Assign):
            for target in assigned_names(stmt):
                direct.setdefault(target, set()).update(names_in(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            for target in assigned_names(stmt):
                direct.setdefault(target, set()).update(names_in(stmt.value) | {target})
    closure = {k: set(v) for k, v in direct.items()}
    changed = True
    while changed:
        changed = False
        for deps in closure.values():
            extra = set().union(*(closure.get(d, set()) for d in deps)) - deps
            if extra:
                deps |= extra
                changed = True
    return closure


@cue(
    "accumulator-overwritten-in-loop",
    "an accumulator is re-initialised or overwritten (= instead of +=) inside the loop that accumulates it",
)
def accumulator_overwritten_in_loop(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            inside = {id(s) for s in statements(loop.body)}
            before: set[str] = set()
            for stmt in statements(kernel.node.body):
                if stmt is loop:
                    break
                if isinstance(stmt, ast.Assign) and _initialiser(stmt.value) and id(stmt) not in inside:
                    before.update(assigned_names(stmt))
            after = _names_read_after(kernel, loop)
            for stmt in loop.body:
                if not isinstance(stmt, ast.Assign):
                    continue
                for name in assigned_names(stmt):
                    if _reads_loop_state(stmt, name, loop, kernel):
                        continue
                    accumulated = _accumulated_in(loop, name, stmt)
                    if (name in before and (name in after or accumulated)) or (
                        name not in before and _initialiser(stmt.value) and accumulated and name in after
                    ):
                        yield stmt


def _accumulated_in(loop: ast.For, name: str, skip: ast.stmt) -> bool:
    """Whether the loop also updates `name` from its own value (`name += ...`, `name = f(name, ...)`)."""
    for stmt in statements(loop.body):
        if stmt is skip:
            continue
        if isinstance(stmt, ast.AugAssign) and name in assigned_names(stmt):
            return True
        if isinstance(stmt, ast.Assign) and name in assigned_names(stmt) and name in names_in(stmt.value):
            return True
    return False


def _reads_loop_state(stmt: ast.Assign, name: str, loop: ast.For, kernel: Kernel) -> bool:
    deps = _loop_dependencies(loop, name, kernel)
    reads = names_in(stmt.value)
    return name in reads or any(name in deps.get(r, set()) for r in reads)


def _names_read_after(kernel: Kernel, loop: ast.For) -> set[str]:
    names: set[str] = set()
    found = False
    for stmt in statements(kernel.node.body):
        if stmt is loop:
            found = True
            continue
        if found and not _within(stmt, loop):
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names


def _within(stmt: ast.AST, loop: ast.For) -> bool:
    return any(stmt is inner for inner in ast.walk(loop))


def _zero_init(kernel: Kernel, name: str) -> bool:
    first = kernel.assigns.get(name, [None])[0]
    if isinstance(first, ast.Call) and call_name(first, last=True) in ("zeros", "zeros_like"):
        return True
    if isinstance(first, ast.Call) and call_name(first, last=True) == "full" and len(first.args) > 1:
        return constant_value(first.args[1]) == 0.0
    return constant_value(first) == 0.0


@cue("max-init-zero", "a running max (or min) starts at 0 instead of -inf (+inf): all-negative data comes out as 0")
def max_init_zero(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            for stmt in statements(loop.body):
                if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
                    continue
                for name in assigned_names(stmt):
                    if _zero_init(kernel, name) and _running_extreme(stmt.value, name, kernel):
                        yield stmt.value


def _running_extreme(value: ast.Call, name: str, kernel: Kernel) -> bool:
    """`m = tl.maximum(m, x)` or `m = tl.where(x > m, x, m)`: a running max or min of `name`."""
    direct = lambda e: isinstance(e, ast.Name) and e.id == name  # noqa: E731
    if call_name(value, last=True) in ("maximum", "minimum"):
        return any(direct(a) for a in value.args)
    if call_name(value, last=True) == "where" and len(value.args) == 3 and direct(value.args[2]):
        cond = value.args[0]
        compares = (
            [cond]
            if isinstance(cond, ast.Compare)
            else [v for v in kernel.assigns.get(cond.id, []) if isinstance(v, ast.Compare)]
            if isinstance(cond, ast.Name)
            else []
        )
        return any(name in names_in(c) and isinstance(c.ops[0], ast.Gt | ast.GtE | ast.Lt | ast.LtE) for c in compares)
    return False


@cue(
    "online-normalizer-init",
    "an online-softmax running sum starts at 0 although the running max already holds the first block",
)
def online_normalizer_init(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for name, values in kernel.assigns.items():
            if not _zero_init(kernel, name):
                continue
            for value in values[1:]:
                if not (isinstance(value, ast.BinOp) and name in names_in(value)):
                    continue
                for call in calls_in(value, "exp", "exp2"):
                    arg = call.args[0] if call.args else None
                    if not (
                        isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and isinstance(arg.left, ast.Name)
                    ):
                        continue
                    running = arg.left.id
                    first = kernel.assigns.get(running, [None])[0]
                    from_data = first is not None and any(True for _ in calls_in(first, "load"))
                    if from_data and _running_max(kernel, running):
                        yield value


def _running_max(kernel: Kernel, name: str) -> bool:
    """`name` is re-assigned `tl.maximum(name, ...)`, directly or through another name."""
    for value in kernel.assigns.get(name, [])[1:]:
        candidates = [value] + (kernel.assigns.get(value.id, []) if isinstance(value, ast.Name) else [])
        for candidate in candidates:
            if (
                isinstance(candidate, ast.Call)
                and call_name(candidate, last=True) == "maximum"
                and any(isinstance(a, ast.Name) and a.id == name for a in candidate.args)
            ):
                return True
    return False
