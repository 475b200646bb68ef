"""Numerical stability: an unshifted exp, inf - inf, an epsilon outside the square root or missing.

The bug kind's cues, recipes, edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: numerical-instability, wrong-epsilon.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import Kernel, argument, calls_in, constant_value, expand, is_uniform, names_in
from kope.bugs.cue import Source, _derived_from, _kernels, _reduction_result, cue
from kope.bugs.edit import Edit, Program, assignments, edit_at, operator
from kope.bugs.mutation import Context, Mutation, binary, cst_calls_in, cst_names_in, mutation, positional
from kope.bugs.recipe import _analysed, _cue_nodes, _expr, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


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


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


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
        kernel = next((k for k in parsed.dataflow.kernels.values() if any(w is node for w in ast.walk(k.node))), None)
        eps_names = [p for p in kernel.params if "eps" in p.lower()] if kernel is not None else []
        for eps in eps_names or ["1e-5"]:
            edited = _rewrite(source, _EpsInside(getattr(node, "lineno", -1), eps))
            if edited is not None:
                yield edited


# -- the search's edits (repair operators) -----------------------------------------------------


@operator("max-subtraction", "numerical-instability")
def max_subtraction(program: Program) -> Iterator[Edit]:
    """`tl.exp(e)` without a running max subtracted: `tl.exp(e - m)` for the kernel's maxima."""
    for kernel in program.kernels:
        maxima = [
            n for n, a in assignments(kernel).items() if any(call_name(x.value) in ("tl.max", "tl.maximum") for x in a)
        ]
        for node in ast.walk(kernel):
            if isinstance(node, ast.Call) and call_name(node) in ("tl.exp", "tl.exp2") and node.args:
                inner = node.args[0]
                if set(maxima) & names_in(inner):
                    continue
                for m in maxima:
                    new = f"{call_name(node)}({ast.unparse(inner)} - {m})"
                    yield edit_at(program, "max-subtraction", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("upcast", "precision-loss")
def upcast(program: Program) -> Iterator[Edit]:
    """A loaded block computed on in its stored precision (float16, bfloat16) upcast: `tl.load(...).to(tl.float32)`."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) == "tl.load":
            yield edit_at(program, "upcast", node, f"{program.code(node)}.to(tl.float32)", "the load upcast to float32")


_OPPOSITE = {
    "min": "max",
    "max": "min",
    "minimum": "maximum",
    "maximum": "minimum",
    "argmin": "argmax",
    "argmax": "argmin",
}


@operator("reduction-swap", "numerical-instability")
def reduction_swap(program: Program) -> Iterator[Edit]:
    """`tl.min` <-> `tl.max` (and `minimum`/`maximum`, `argmin`/`argmax`): a softmax shifted by the row minimum."""
    for _, node in program.kernel_nodes():
        name = call_name(node)
        if isinstance(node, ast.Call) and name.startswith("tl.") and name[3:] in _OPPOSITE:
            new = f"tl.{_OPPOSITE[name[3:]]}"
            yield edit_at(program, "reduction-swap", node.func, new, f"`{name}` -> `{new}` (line {node.lineno})")


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class DropMaxSubtraction(Mutation):
    name = "drop-max-subtraction"
    label = "numerical-instability"
    summary = "exp(x - max) loses its max subtraction"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        facts = context.kernel
        if facts is None or call_name(node) not in ("tl.exp", "tl.exp2"):
            return []
        assert isinstance(node, cst.Call)
        args = positional(node)
        if len(args) != 1 or len(node.args) != 1:
            return []
        argument = args[0].value
        if not (isinstance(argument, cst.BinaryOperation) and isinstance(argument.operator, cst.Subtract)):
            return []
        subtracted = cst_names_in(argument.right) & facts.maxima or cst_calls_in(argument.right) & {"tl.max"}
        if not subtracted or cst_names_in(argument.left) & facts.maxima:
            return []
        return [node.with_changes(args=[args[0].with_changes(value=argument.left.with_changes(lpar=[], rpar=[]))])]


@mutation
class DropInfGuard(Mutation):
    name = "drop-inf-guard"
    label = "numerical-instability"
    summary = "the guard for a running max still at -inf is removed: exp(-inf - (-inf)) gives NaN"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) != "tl.where":
            return []
        assert isinstance(node, cst.Call)
        args = positional(node)
        if len(args) == 3 and "inf" in context.code(args[0].value) and isinstance(args[0].value, cst.Comparison):
            return [args[2].value]
        return []


def _sqrt_with_eps(node: cst.CSTNode) -> tuple[cst.Call, cst.BinaryOperation] | None:
    if call_name(node) not in ("tl.sqrt", "tl.rsqrt", "tl.math.rsqrt", "libdevice.rsqrt", "tl.sqrt_rn"):
        return None
    assert isinstance(node, cst.Call)
    args = positional(node)
    if (
        len(args) == 1
        and isinstance(args[0].value, cst.BinaryOperation)
        and isinstance(args[0].value.operator, cst.Add)
    ):
        inner = args[0].value
        if any("eps" in n.lower() for n in cst_names_in(inner.right)):
            return node, inner
    return None


@mutation
class MisplacedEpsilon(Mutation):
    name = "misplaced-epsilon"
    label = "wrong-epsilon"
    summary = "eps moves out of the square root (1/sqrt(var) + eps), or is dropped"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            found = _sqrt_with_eps(node.right)
            if found is None:
                return []
            call, inner = found
            without = call.with_changes(args=[call.args[0].with_changes(value=inner.left)])
            divided = node.with_changes(right=without)
            return [binary(divided, cst.Add(), inner.right), divided]
        found = _sqrt_with_eps(node)
        parent = context.parent
        if found is None or (
            isinstance(parent, cst.BinaryOperation) and parent.right is node and isinstance(parent.operator, cst.Divide)
        ):
            return []
        call, inner = found
        without = call.with_changes(args=[call.args[0].with_changes(value=inner.left)])
        return [binary(without, cst.Add(), inner.right), without]
