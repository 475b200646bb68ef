"""Recipes for masks and bounds: add a missing mask, make an inclusive bound strict, pad with the neutral value."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.knowledge.analysis import (
    Kernel,
    argument,
    calls_in,
    constant_value,
    expand,
    is_uniform,
    names_in,
    padding_leaks,
    statements,
)
from kope.knowledge.cues import detect
from kope.knowledge.recipes._common import (
    NEG_INF,
    _analysed,
    _bounds_for,
    _expr,
    _hit_lines,
    _LineTransformer,
    _names,
    _rewrite,
    _set_kwarg,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name


def _quiet(source: str, *cue_names: str) -> bool:
    return not detect(source, list(cue_names))


def _mask_candidates(kernel: Kernel, pointer: ast.expr) -> list[str]:
    """Masks for a block access: mask names built from the same offsets, then `offs < n` expressions."""
    offsets = names_in(pointer) & kernel.aranges
    for part in expand(pointer, kernel, depth=2):
        offsets |= names_in(part) & kernel.aranges
    direct = names_in(pointer) & kernel.aranges
    candidates: list[str] = []
    for name in sorted(kernel.masks):
        values = kernel.assigns.get(name, [])
        if (
            values
            and all(names_in(v) & kernel.aranges <= offsets for v in values)
            and any(names_in(v) & direct for v in values)
        ):
            candidates.append(name)
    if len(direct) == 1:
        (offset,) = direct
        candidates += [f"{offset} < {bound}" for bound in _bounds_for(kernel, {offset})]
    return list(dict.fromkeys(candidates))[:4]


def _feeds_max(kernel: Kernel, name: str | None) -> bool:
    if name is None:
        return False
    for node in ast.walk(kernel.node):
        if (
            isinstance(node, ast.Call)
            and call_name(node, last=True) in ("max", "argmax", "maximum", "exp", "exp2")
            and (name in names_in(node))
        ):
            return True
    return False


class _MaskAccess(_LineTransformer):
    def __init__(self, edits: dict[int, tuple[str, str | None]]) -> None:
        super().__init__()
        self.edits = edits
        """line -> (mask expression, other expression or None)."""

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        name = call_name(updated_node, last=True)
        edit = self.edits.get(self.line(original_node))
        if edit is None or name not in ("load", "store"):
            return updated_node
        if any(a.keyword is not None and a.keyword.value == "mask" for a in updated_node.args):
            return updated_node
        mask, other = edit
        call = _set_kwarg(updated_node, "mask", _expr(mask))
        if name == "load" and other is not None:
            call = _set_kwarg(call, "other", _expr(other))
        self.changed = True
        return call


@recipe(
    "add-mask",
    "give unmasked block loads and stores the boundary mask (an existing mask or offs < n), with a neutral `other`",
)
def add_mask(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    lines = _hit_lines(source, "load-without-mask", "store-without-mask")
    plans: list[dict[int, tuple[str, str | None]]] = [{}, {}, {}, {}]
    for node in parsed.kernels:
        kernel = parsed.program.kernel_of(node)
        if kernel is None:
            continue
        for call in calls_in(node, "load", "store"):
            if call.lineno not in lines or not call.args:
                continue
            masks = _mask_candidates(kernel, call.args[0])
            target = _assigned_from(kernel, call)
            others = [NEG_INF, "0.0"] if _feeds_max(kernel, target) else ["0.0", NEG_INF]
            options = [
                (mask, other if call_name(call, last=True) == "load" else None)
                for mask in masks[:2]
                for other in others
            ]
            for i, option in enumerate(options[:4]):
                plans[i][call.lineno] = option
    for plan in plans:
        if plan:
            edited = _rewrite(source, _MaskAccess(plan))
            if edited is not None:
                yield edited


def _assigned_from(kernel: Kernel, call: ast.Call) -> str | None:
    """The name a call's result is assigned to (through `.to(...)` and other wrappers)."""
    for name, values in kernel.assigns.items():
        for value in values:
            if any(inner is call for inner in ast.walk(value)):
                return name
    return None


class _StrictMask(_LineTransformer):
    def __init__(self, lines: set[int], offsets: set[str]) -> None:
        super().__init__()
        self.lines = lines
        self.offsets = offsets

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        if self.line(original_node) not in self.lines or len(updated_node.comparisons) != 1:
            return updated_node
        target = updated_node.comparisons[0]
        left_names = _names(updated_node.left)
        right_names = _names(target.comparator)
        if isinstance(target.operator, cst.LessThanEqual) and left_names & self.offsets:
            self.changed = True
            return updated_node.with_changes(
                comparisons=[
                    target.with_changes(
                        operator=cst.LessThan(
                            whitespace_before=target.operator.whitespace_before,
                            whitespace_after=target.operator.whitespace_after,
                        )
                    )
                ]
            )
        if isinstance(target.operator, cst.GreaterThanEqual) and right_names & self.offsets:
            self.changed = True
            return updated_node.with_changes(
                comparisons=[
                    target.with_changes(
                        operator=cst.GreaterThan(
                            whitespace_before=target.operator.whitespace_before,
                            whitespace_after=target.operator.whitespace_after,
                        )
                    )
                ]
            )
        comparator = target.comparator
        if (
            isinstance(target.operator, cst.LessThan)
            and isinstance(comparator, cst.BinaryOperation)
            and isinstance(comparator.operator, cst.Add)
            and m.matches(comparator.right, m.Integer("1"))
            and left_names & self.offsets
        ):
            self.changed = True
            return updated_node.with_changes(comparisons=[target.with_changes(comparator=comparator.left)])
        return updated_node


@recipe("strict-mask", "make inclusive boundary masks strict: offs <= n -> offs < n, offs < n + 1 -> offs < n")
def strict_mask(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    lines = _hit_lines(source, "mask-inclusive-bound")
    if parsed is None or not lines:
        return
    offsets = set().union(*(k.aranges for k in parsed.program.kernels.values()))
    edited = _rewrite(source, _StrictMask(lines, offsets))
    if edited is not None:
        yield edited


class _SetOther(_LineTransformer):
    def __init__(self, line: int, other: str) -> None:
        super().__init__()
        self.target, self.other = line, other

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        masked = (
            any(a.keyword is not None and a.keyword.value == "mask" for a in updated_node.args)
            or len(updated_node.args) >= 2
        )
        if (
            call_name(updated_node, last=True) == "load"
            and self.line(original_node) == self.target
            and not self.changed
            and masked
        ):
            self.changed = True
            return _set_kwarg(updated_node, "other", _expr(self.other), position=2)
        return updated_node


class _WrapWhere(_LineTransformer):
    """`name = value` at a line -> `name = tl.where(mask, value, neutral)`."""

    def __init__(self, line: int, name: str, mask: str, neutral: str) -> None:
        super().__init__()
        self.target, self.name, self.mask, self.neutral = line, name, mask, neutral

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        if self.line(original_node) != self.target or self.changed:
            return updated_node
        if not (len(updated_node.targets) == 1 and m.matches(updated_node.targets[0].target, m.Name(self.name))):
            return updated_node
        self.changed = True
        wrapped = _expr(f"tl.where({self.mask}, __value__, {self.neutral})")
        assert isinstance(wrapped, cst.Call)
        args = list(wrapped.args)
        args[1] = args[1].with_changes(value=updated_node.value)
        return updated_node.with_changes(value=wrapped.with_changes(args=args))


@recipe(
    "neutral-padding",
    "give masked loads the neutral `other` of the reduction they feed, or re-mask values before reducing",
)
def neutral_padding(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None or _quiet(source, "padding-reaches-reduction"):
        return
    candidates: list[str] = []
    for node in parsed.kernels:
        kernel = parsed.program.kernel_of(node)
        if kernel is None or not padding_leaks(kernel):
            continue
        loads = [c for c in calls_in(node, "load") if argument(c, 1, "mask") is not None]
        for call in loads:
            current = constant_value(argument(call, 2, "other"))
            for other in (NEG_INF, "0.0"):
                value = -math.inf if other == NEG_INF else 0.0
                if current != value:
                    edited = _rewrite(source, _SetOther(call.lineno, other))
                    if edited is not None:
                        candidates.append(edited)
        for stmt in statements(node.body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            if not isinstance(stmt.value, ast.BinOp) or is_uniform(stmt.value, kernel):
                continue
            for call in loads:
                source_name = _assigned_from(kernel, call)
                mask = argument(call, 1, "mask")
                if source_name is None or source_name not in names_in(stmt.value) or mask is None:
                    continue
                edited = _rewrite(source, _WrapWhere(stmt.lineno, stmt.targets[0].id, ast.unparse(mask), "0.0"))
                if edited is not None:
                    candidates.append(edited)
    yield from (c for c in dict.fromkeys(candidates) if _quiet(c, "padding-reaches-reduction"))
