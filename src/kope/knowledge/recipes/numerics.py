"""Recipes for numerical stability: guarded or shifted exp, eps inside the square root."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.knowledge.recipes._common import (
    _analysed,
    _cue_nodes,
    _expr,
    _LineTransformer,
    _rewrite,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


class _GuardMax(_LineTransformer):
    """Before the statement at `line`, add `safe = tl.where(m == -inf, 0.0, m)`; use `safe` in its exps."""

    def __init__(self, line: int, running: str) -> None:
        super().__init__()
        self.target, self.running, self.safe = line, running, f"{running}_safe"
        self._inside = False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self._inside = self.line(node) == self.target
        return True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self._inside or call_name(updated_node, last=True) not in ("exp", "exp2") or not updated_node.args:
            return updated_node
        arg = updated_node.args[0].value
        if (
            isinstance(arg, cst.BinaryOperation)
            and isinstance(arg.operator, cst.Subtract)
            and m.matches(arg.right, m.Name(self.running))
        ):
            self.changed = True
            return updated_node.with_changes(
                args=[updated_node.args[0].with_changes(value=arg.with_changes(right=cst.Name(self.safe)))]
            )
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if self.line(original_node) != self.target or not self.changed:
            return updated_node
        self._inside = False
        guard = cst.parse_statement(f'{self.safe} = tl.where({self.running} == -float("inf"), 0.0, {self.running})\n')
        return cst.FlattenSentinel([guard, updated_node])


class _ShiftExp(_LineTransformer):
    """`tl.exp(x)` at a line -> `tl.exp(x - tl.max(x, axis=0))`."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.target = line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            call_name(updated_node, last=True) in ("exp", "exp2")
            and self.line(original_node) == self.target
            and updated_node.args
            and not self.changed
        ):
            value = updated_node.args[0].value
            text = _code(value)
            self.changed = True
            shifted = _expr(
                f"({text}) - tl.max({text}, axis=0)"
                if not isinstance(value, cst.Name)
                else f"{text} - tl.max({text}, axis=0)"
            )
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=shifted)])
        return updated_node


@recipe("guard-exp", "guard exp(m - m_new) against all-padding lanes (m_new = -inf), or subtract the max before exp")
def guard_exp(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "inf-minus-inf"):
        assert isinstance(node, ast.Call)
        arg = node.args[0]
        if isinstance(arg, ast.BinOp) and isinstance(arg.right, ast.Name):
            edited = _rewrite(source, _GuardMax(node.lineno, arg.right.id))
            if edited is not None:
                yield edited
    for node in _cue_nodes(parsed, "exp-without-max-shift"):
        edited = _rewrite(source, _ShiftExp(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited


def _is_sqrt_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and call_name(node, last=True) in ("sqrt", "rsqrt", "sqrt_rn")


class _EpsInside(_LineTransformer):
    """`A + eps` where A holds sqrt(v) -> A with sqrt(v + eps); or sqrt(v) -> sqrt(v + eps) (`add`)."""

    def __init__(self, line: int, eps: str | None = None) -> None:
        super().__init__()
        self.target, self.eps = line, eps

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if self.eps is not None or self.line(original_node) != self.target or self.changed:
            return updated_node
        if not isinstance(updated_node.operator, cst.Add):
            return updated_node
        for side, other in ((updated_node.left, updated_node.right), (updated_node.right, updated_node.left)):
            if m.findall(side, m.Call(func=m.Attribute(attr=m.Name("sqrt") | m.Name("rsqrt")))) and _eps_text(other):
                moved = side.visit(_AddInsideSqrt(_code(other)))
                assert isinstance(moved, cst.BaseExpression)
                self.changed = True
                return (
                    moved.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar) if updated_node.lpar else moved
                )
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            self.eps is None
            or self.line(original_node) != self.target
            or self.changed
            or not _is_sqrt_call(updated_node)
        ):
            return updated_node
        self.changed = True
        return updated_node.visit(_AddInsideSqrt(self.eps))  # type: ignore[return-value]


def _eps_text(node: cst.BaseExpression) -> bool:
    text = _code(node).strip()
    if "eps" in text.lower():
        return True
    try:
        return 0 < float(text) < 1e-2
    except ValueError:
        return False


class _AddInsideSqrt(cst.CSTTransformer):
    def __init__(self, eps: str) -> None:
        super().__init__()
        self.eps = eps
        self.done = False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.done or not _is_sqrt_call(updated_node) or not updated_node.args:
            return updated_node
        self.done = True
        inner = updated_node.args[0].value
        return updated_node.with_changes(
            args=[updated_node.args[0].with_changes(value=_expr(f"{_code(inner)} + {self.eps}"))]
        )


@recipe("eps-inside-sqrt", "move eps inside the square root: 1/sqrt(var) + eps -> 1/sqrt(var + eps); add a missing eps")
def eps_inside_sqrt(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "eps-outside-sqrt"):
        edited = _rewrite(source, _EpsInside(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited
    outside = {getattr(n, "lineno", -1) for n in _cue_nodes(parsed, "eps-outside-sqrt")}
    for node in _cue_nodes(parsed, "rsqrt-without-eps"):
        if getattr(node, "lineno", -1) in outside:
            continue
        kernel = next((k for k in parsed.program.kernels.values() if any(w is node for w in ast.walk(k.node))), None)
        eps_names = [p for p in kernel.params if "eps" in p.lower()] if kernel is not None else []
        for eps in eps_names or ["1e-5"]:
            edited = _rewrite(source, _EpsInside(getattr(node, "lineno", -1), eps))
            if edited is not None:
                yield edited
