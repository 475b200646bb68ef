"""Cues of numerical stability: unshifted exp, inf - inf, eps outside the square root or missing."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Kernel,
    argument,
    calls_in,
    constant_value,
    expand,
    is_uniform,
    names_in,
)
from kope.knowledge.cues._common import _derived_from, _kernels, _reduction_result
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


@cue(
    "exp-without-max-shift",
    "tl.exp of loaded data with no max subtracted (and not exp(-|x|)): overflows for large inputs",
)
def exp_without_max_shift(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "exp", "exp2"):
            arg = call.args[0] if call.args else None
            if arg is None or not (names_in(arg) & kernel.loaded or any(True for _ in calls_in(arg, "load"))):
                continue
            if is_uniform(arg, kernel) or not _feeds_sum(kernel, call):
                continue
            negated = any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) for n in ast.walk(arg))
            shifted = any(
                isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
                for node in expand(arg, kernel, depth=2)
                for n in _walk_values(node)
            )
            if not (shifted or negated):
                yield call


def _walk_values(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, without entering tl.load calls (their addresses and `other` are not arithmetic on values)."""
    yield node
    if isinstance(node, ast.Call) and call_name(node, last=True) == "load":
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_values(child)


def _feeds_sum(kernel: Kernel, call: ast.Call) -> bool:
    """Whether a call's value reaches a tl.sum (directly, or through the names it is assigned to)."""
    holders: set[str] = set()
    for name, values in kernel.assigns.items():
        if any(any(inner is call for inner in ast.walk(v)) for v in values):
            holders.add(name)
    holders |= set().union(*(_derived_from(kernel, h) for h in holders)) if holders else set()
    for total in calls_in(kernel.node, "sum"):
        if any(inner is call for inner in ast.walk(total)) or names_in(total) & holders:
            return True
    return False


def _initialised_to(kernel: Kernel, name: str, value: float) -> bool:
    first = kernel.assigns.get(name, [None])[0]
    return (
        isinstance(first, ast.Call)
        and call_name(first, last=True) == "full"
        and len(first.args) > 1
        and constant_value(first.args[1]) == value
    )


@cue(
    "inf-minus-inf",
    "a per-lane running max starts at -inf, padded lanes stay -inf, and exp(m - m_new) is unguarded (NaN)",
)
def inf_minus_inf(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        running = {n for n in kernel.assigns if _initialised_to(kernel, n, -math.inf)}
        lanes_may_stay_inf: set[str] = set()
        for name, values in kernel.assigns.items():
            for value in values:
                if (
                    isinstance(value, ast.Call)
                    and call_name(value, last=True) == "maximum"
                    and names_in(value) & running
                ):
                    others = [a for a in value.args if not (isinstance(a, ast.Name) and a.id in running)]
                    if others and all(_padded_with(o, kernel, -math.inf) for o in others):
                        lanes_may_stay_inf.add(name)
        if not lanes_may_stay_inf:
            continue
        for call in calls_in(kernel.node, "exp", "exp2"):
            arg = call.args[0] if call.args else None
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and names_in(arg.right) & lanes_may_stay_inf:
                yield call


def _padded_with(expr: ast.AST, kernel: Kernel, value: float) -> bool:
    for node in expand(expr, kernel, depth=1):
        for call in calls_in(node, "load"):
            if argument(call, 1, "mask") is not None and constant_value(argument(call, 2, "other")) == value:
                return True
    return False


def _sqrt_calls(node: ast.AST) -> bool:
    return any(
        call_name(c, last=True) in ("sqrt", "rsqrt", "sqrt_rn") for c in calls_in(node, "sqrt", "rsqrt", "sqrt_rn")
    ) or any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and constant_value(n.right) in (0.5, -0.5)
        for n in ast.walk(node)
    )


def _eps_like(node: ast.AST) -> bool:
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return "eps" in name.lower()
    value = constant_value(node)
    return value is not None and 0 < value < 1e-2


@cue("eps-outside-sqrt", "eps is added after the square root (1/sqrt(var) + eps, sqrt(var) + eps), not inside it")
def eps_outside_sqrt(source: Source) -> Iterator[ast.AST]:
    for node in source.kernel_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _eps_like(other) and _sqrt_calls(side):
                    yield node


@cue(
    "rsqrt-without-eps",
    "1/sqrt or rsqrt of a reduction (a variance, a mean square) with no eps inside: zero rows give inf",
)
def rsqrt_without_eps(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.Call) and call_name(node, last=True) == "rsqrt":
                roots = [node.args[0]] if node.args else []
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                roots = [c.args[0] for c in calls_in(node.right, "sqrt", "sqrt_rn") if c.args]
            else:
                continue
            for root in roots:
                parts = expand(root, kernel, depth=2)
                has_eps = any(_eps_like(n) for part in parts for n in ast.walk(part))
                if not has_eps and _reduction_result(root, kernel):
                    yield node


@cue("unused-eps-param", "the kernel takes eps but never uses it")
def unused_eps_param(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        if not any(True for _ in calls_in(kernel.node, "sqrt", "rsqrt", "sqrt_rn")):
            continue
        for arg in kernel.node.args.args:
            if "eps" in arg.arg.lower() and arg.arg not in used:
                yield arg
