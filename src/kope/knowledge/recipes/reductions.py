"""Recipes for reductions and accumulators: the element count as normaliser, kept accumulators, identities."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.knowledge.recipes._common import (
    NEG_INF,
    _analysed,
    _bounds_for,
    _cue_nodes,
    _expr,
    _LineTransformer,
    _rewrite,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name

POS_INF = 'float("inf")'


class _Divisor(_LineTransformer):
    def __init__(self, line: int, divisor: str) -> None:
        super().__init__()
        self.target, self.divisor = line, divisor

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if (
            self.line(original_node) == self.target
            and isinstance(updated_node.operator, cst.Divide)
            and not self.changed
        ):
            right = updated_node.right
            blockish = isinstance(right, cst.Name) and right.value != self.divisor
            minus_one = (
                isinstance(right, cst.BinaryOperation)
                and isinstance(right.operator, cst.Subtract)
                and m.matches(right.right, m.Integer("1"))
            )
            if blockish or minus_one:
                self.changed = True
                return updated_node.with_changes(right=_expr(self.divisor))
        return updated_node


@recipe(
    "count-normalizer",
    "divide a reduction by the element count (the size its mask compares with), not by BLOCK or n - 1",
)
def count_normalizer(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for name in ("divide-by-block-size", "divide-by-n-minus-one"):
        for node in _cue_nodes(parsed, name):
            assert isinstance(node, ast.BinOp)
            kernel = next(
                (k for k in parsed.program.kernels.values() if any(w is node for w in ast.walk(k.node))), None
            )
            if kernel is None:
                continue
            divisors: list[str] = []
            if isinstance(node.right, ast.BinOp) and isinstance(node.right.left, ast.Name):
                divisors.append(node.right.left.id)
            divisors += [b for b in _bounds_for(kernel, kernel.aranges) if b.isidentifier()]
            for divisor in list(dict.fromkeys(divisors))[:3]:
                edited = _rewrite(source, _Divisor(node.lineno, divisor))
                if edited is not None:
                    yield edited


class _FixAccumulator(_LineTransformer):
    """At a line inside a loop: drop a re-initialisation (`hoist` moves it before the loop instead)
    or turn `acc = expr` into `acc += expr`."""

    def __init__(self, line: int, mode: str) -> None:
        super().__init__()
        self.target, self.mode = line, mode
        self.hoisted: cst.SimpleStatementLine | None = None

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.RemovalSentinel:
        if self.line(original_node) != self.target or len(updated_node.body) != 1:
            return updated_node
        stmt = updated_node.body[0]
        if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
            return updated_node
        if self.mode in ("drop", "hoist"):
            self.changed = True
            if self.mode == "hoist":
                self.hoisted = updated_node
            return cst.RemovalSentinel.REMOVE
        self.changed = True
        return updated_node.with_changes(
            body=[
                cst.AugAssign(
                    target=stmt.targets[0].target,
                    operator=cst.AddAssign(),
                    value=stmt.value,
                )
            ]
        )

    def leave_For(
        self, original_node: cst.For, updated_node: cst.For
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if self.hoisted is not None:
            hoisted, self.hoisted = self.hoisted, None
            return cst.FlattenSentinel([hoisted, updated_node])
        return updated_node


@recipe(
    "hoist-accumulator",
    "keep an accumulator across loop iterations: drop (or hoist) its re-initialisation, or turn = into +=",
)
def hoist_accumulator(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "accumulator-overwritten-in-loop"):
        if not isinstance(node, ast.Assign):
            continue
        initialiser = isinstance(node.value, ast.Call) and call_name(node.value, last=True) in (
            "zeros",
            "full",
            "zeros_like",
            "full_like",
        )
        modes = ("drop", "hoist") if initialiser else ("accumulate",)
        for mode in modes:
            edited = _rewrite(source, _FixAccumulator(node.lineno, mode))
            if edited is not None:
                yield edited


class _Identity(_LineTransformer):
    """`name = tl.zeros(shape, dtype=...)` at a line -> `name = tl.full(shape, value, dtype=...)`."""

    def __init__(self, line: int, value: str) -> None:
        super().__init__()
        self.target, self.value = line, value

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.line(original_node) != self.target or self.changed:
            return updated_node
        name = call_name(updated_node, last=True)
        if name == "zeros" and updated_node.args:
            func = updated_node.func
            assert isinstance(func, cst.Attribute | cst.Name)
            new_func = func.with_changes(attr=cst.Name("full")) if isinstance(func, cst.Attribute) else cst.Name("full")
            args = list(updated_node.args)
            shape = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            value = cst.Arg(
                _expr(self.value),
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                if len(args) > 1
                else cst.MaybeSentinel.DEFAULT,
            )
            self.changed = True
            return updated_node.with_changes(func=new_func, args=[shape, value, *args[1:]])
        if name == "full" and len(updated_node.args) > 1:
            args = list(updated_node.args)
            args[1] = args[1].with_changes(value=_expr(self.value))
            self.changed = True
            return updated_node.with_changes(args=args)
        return updated_node


@recipe(
    "reduction-identity",
    "start a running max at -inf (min at +inf); start an online-softmax sum at 1 when its max starts from data",
)
def reduction_identity(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    targets: list[tuple[str, str, ast.AST]] = []
    for node in _cue_nodes(parsed, "max-init-zero"):
        assert isinstance(node, ast.Call)
        smaller = call_name(node, last=True) == "minimum" or (
            call_name(node, last=True) == "where"
            and isinstance(node.args[0], ast.Compare)
            and isinstance(node.args[0].ops[0], ast.Lt | ast.LtE)
        )
        targets.append(("", POS_INF if smaller else NEG_INF, node))
    for node in _cue_nodes(parsed, "online-normalizer-init"):
        targets.append(("", "1.0", node))
    for _, value, node in targets:
        kernel = next((k for k in parsed.program.kernels.values() if any(w is node for w in ast.walk(k.node))), None)
        if kernel is None:
            continue
        for values in kernel.assigns.values():
            if any(v is node for v in values) and values:
                first = values[0]
                edited = _rewrite(source, _Identity(getattr(first, "lineno", -1), value))
                if edited is not None:
                    yield edited
