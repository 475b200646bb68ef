"""Mutation operators: one realistic bug injected into a correct Triton kernel, on its syntax tree.

Each operator is a small class with a name, the bug-taxonomy id it produces (`label`) and a
`rewrite` method that, given one node of the concrete syntax tree (libcst) and where it sits, returns
the bugged versions of that node (none when the node is not a site of this bug). Sites are numbered
in the tree's traversal order, so `mutate(source, operator, site)` is deterministic; the corpus
builder picks among them with a seeded random choice.

    for mutant in mutants(source, OPERATORS["drop-mask"]):
        print(mutant.site, mutant.line, mutant.label)

Whether a mutant is a *near miss* (compiles, runs, fails validation) is for evaluation to say
(kope.bench.corpus); an operator only promises a syntactically valid kernel that differs from the
original.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import libcst as cst
import libcst.matchers as m

from kope import syntax
from kope.source import ParsedSource, call_name, dotted

Where = Literal["kernel", "host", "any"]


class MutationError(ValueError):
    """The source does not parse, or a site index is out of range."""


# -- facts about each @triton.jit function --------------------------------------------------


@dataclass
class KernelFacts:
    """What an operator may need to know about the kernel around a node."""

    params: list[str] = field(default_factory=list)
    constexprs: list[str] = field(default_factory=list)
    program_ids: set[str] = field(default_factory=set)
    """Scalars derived from tl.program_id (rows, batches, heads), not from tl.arange."""
    maxima: set[str] = field(default_factory=set)
    """Names assigned from tl.max / tl.maximum, or from a where() over such names."""
    accumulators: dict[str, cst.SimpleStatementLine] = field(default_factory=dict)
    """Names initialised with tl.zeros / tl.full, and their first initialising statement."""

    @property
    def pointers(self) -> set[str]:
        return {p for p in self.params if p.endswith("_ptr")}


def names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name)}


def calls_in(node: cst.CSTNode) -> set[str]:
    return {call_name(c) for c in m.findall(node, m.Call())}


def _single_target(statement: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        if isinstance(target, cst.Name):
            return target.value, statement.value
    return None


def kernel_facts(function: cst.FunctionDef) -> KernelFacts:
    facts = KernelFacts()
    for param in function.params.params:
        facts.params.append(param.name.value)
        if param.annotation is not None and dotted(param.annotation.annotation).endswith("constexpr"):
            facts.constexprs.append(param.name.value)
    for line in m.findall(function.body, m.SimpleStatementLine()):
        assert isinstance(line, cst.SimpleStatementLine)
        for statement in line.body:
            assigned = _single_target(statement)
            if assigned is None:
                continue
            name, value = assigned
            names, calls = names_in(value), calls_in(value)
            if "tl.arange" not in calls and ("tl.program_id" in calls or names & facts.program_ids):
                facts.program_ids.add(name)
            derived = isinstance(value, cst.Name) or call_name(value) == "tl.where"
            if calls & {"tl.max", "tl.maximum"} or (derived and names & facts.maxima):
                facts.maxima.add(name)
            if call_name(value) in ("tl.zeros", "tl.full") and name not in facts.accumulators:
                facts.accumulators[name] = line
    return facts


# -- where a node sits ------------------------------------------------------------------------


@dataclass
class Context:
    module: cst.Module
    kernel: KernelFacts | None = None
    """Facts of the enclosing @triton.jit function; None in host code."""
    loops: int = 0
    masks: int = 0
    """Depth inside a mask expression (a `mask=` argument or an assignment to a *mask* name)."""
    ancestors: list[cst.CSTNode] = field(default_factory=list)
    """The nodes from the module down to the node being rewritten (itself last)."""

    @property
    def parent(self) -> cst.CSTNode | None:
        return self.ancestors[-2] if len(self.ancestors) > 1 else None

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


class Mutation:
    """A named bug; `rewrite` returns the bugged versions of one node (empty when it is not a site)."""

    name: ClassVar[str]
    label: ClassVar[str]
    summary: ClassVar[str]
    where: ClassVar[Where] = "kernel"

    def applies(self, context: Context) -> bool:
        inside = context.kernel is not None
        return self.where == "any" or (self.where == "kernel") == inside

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        raise NotImplementedError


def _opens_mask(node: cst.CSTNode) -> bool:
    """A `mask=` argument, or an assignment to a name with `mask` in it."""
    if isinstance(node, cst.Arg):
        return node.keyword is not None and node.keyword.value == "mask"
    if isinstance(node, cst.Assign):
        return any("mask" in name for target in node.targets for name in names_in(target.target))
    return False


class _Sites(cst.CSTTransformer):
    """Numbers the sites of one operator in traversal order; replaces site `target` (None: count only)."""

    def __init__(self, parsed: ParsedSource, operator: Mutation, target: int | None) -> None:
        super().__init__()
        self.parsed = parsed
        self.operator = operator
        self.target = target
        self.count = 0
        self.context = Context(module=parsed.cst_module)
        self._stack: list[tuple[str, object]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        context = self.context
        context.ancestors.append(node)
        if isinstance(node, cst.FunctionDef):
            self._stack.append(("kernel", context.kernel))
            context.kernel = kernel_facts(node) if self.parsed.is_kernel(node) else None
        elif isinstance(node, cst.For):
            context.loops += 1
            self._stack.append(("loops", None))
        elif _opens_mask(node):
            context.masks += 1
            self._stack.append(("masks", None))
        else:
            self._stack.append(("", None))
        return True

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        result = updated_node
        if self.operator.applies(self.context):
            for replacement in self.operator.rewrite(original_node, self.context):
                if self.count == self.target:
                    result = fit(replacement, self.context.parent)
                self.count += 1
        self.context.ancestors.pop()
        kind, saved = self._stack.pop()
        if kind == "kernel":
            self.context.kernel = saved  # type: ignore[assignment]
        elif kind == "loops":
            self.context.loops -= 1
        elif kind == "masks":
            self.context.masks -= 1
        return result


# -- node helpers -------------------------------------------------------------------------------

_ATOM = 10.0
_UNARY = 6.5
_BINARY = {
    cst.Power: 7.0,
    cst.Multiply: 6.0,
    cst.Divide: 6.0,
    cst.FloorDivide: 6.0,
    cst.Modulo: 6.0,
    cst.MatrixMultiply: 6.0,
    cst.Add: 5.0,
    cst.Subtract: 5.0,
    cst.LeftShift: 4.0,
    cst.RightShift: 4.0,
    cst.BitAnd: 3.0,
    cst.BitXor: 2.0,
    cst.BitOr: 1.0,
}


def precedence(node: cst.CSTNode) -> float:
    """Python's binding strength of an expression (higher binds tighter); parenthesised nodes are atoms."""
    if isinstance(node, cst.BaseExpression) and node.lpar:
        return _ATOM
    if isinstance(node, cst.BinaryOperation):
        return _BINARY.get(type(node.operator), 0.0)
    if isinstance(node, cst.UnaryOperation):
        return _UNARY if not isinstance(node.operator, cst.Not) else -0.5
    if isinstance(node, cst.Comparison):
        return 0.0
    if isinstance(node, cst.BooleanOperation):
        return -1.0
    if isinstance(node, cst.IfExp | cst.Lambda | cst.NamedExpr):
        return -2.0
    return _ATOM


def paren(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node`, parenthesised unless it is an atom or already in parentheses."""
    if precedence(node) >= _ATOM:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def binary(left: cst.BaseExpression, op: cst.BaseBinaryOp, right: cst.BaseExpression) -> cst.BinaryOperation:
    """`left op right`, with the parentheses Python needs (and no more) around the operands."""
    strength = _BINARY[type(op)]
    right_assoc = isinstance(op, cst.Power)
    left_needs = precedence(left) < strength or (right_assoc and precedence(left) <= strength)
    right_needs = precedence(right) < strength or (not right_assoc and precedence(right) <= strength)
    return cst.BinaryOperation(
        left=paren(left) if left_needs else left, operator=op, right=paren(right) if right_needs else right
    )


def fit(node: cst.CSTNode, parent: cst.CSTNode | None) -> cst.CSTNode:
    """A replacement expression parenthesised where its new parent would otherwise bind it differently."""
    if not isinstance(node, cst.BaseExpression) or precedence(node) >= _ATOM:
        return node
    if isinstance(parent, cst.BinaryOperation):
        needs = precedence(node) <= _BINARY.get(type(parent.operator), 0.0)
    elif isinstance(parent, cst.UnaryOperation):
        needs = precedence(node) < precedence(parent)
    elif isinstance(parent, cst.Attribute | cst.Subscript | cst.Call):
        needs = True
    elif isinstance(parent, cst.Comparison | cst.ComparisonTarget | cst.BooleanOperation):
        needs = precedence(node) <= 0.0
    else:
        needs = False
    return paren(node) if needs else node


def without_args(call: cst.Call, keywords: Iterable[str]) -> cst.Call:
    drop = set(keywords)
    kept = [a for a in call.args if a.keyword is None or a.keyword.value not in drop]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=kept)


def kwarg(call: cst.Call, keyword: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)


def replace_kwarg(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    args = [
        a.with_changes(value=value) if a.keyword is not None and a.keyword.value == keyword else a for a in call.args
    ]
    return call.with_changes(args=args)


def positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def float_value(node: cst.CSTNode) -> float | None:
    """The value of a float literal, `-literal`, or `float("inf")`-style expression; None otherwise."""
    try:
        value = ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        text = cst.Module([]).code_for_node(node).replace(" ", "")
        table = {
            '-float("inf")': float("-inf"),
            "-float('inf')": float("-inf"),
            'float("inf")': float("inf"),
            "float('inf')": float("inf"),
        }
        return table.get(text)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


# -- the operators ------------------------------------------------------------------------------

OPERATORS: dict[str, Mutation] = {}


def operator(cls: type[Mutation]) -> type[Mutation]:
    OPERATORS[cls.name] = cls()
    return cls


@operator
class DropMask(Mutation):
    name = "drop-mask"
    label = "missing-mask"
    summary = "a tl.load or tl.store loses its mask (and its padding value)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) in ("tl.load", "tl.store") and kwarg(node, "mask") is not None:  # type: ignore[arg-type]
            assert isinstance(node, cst.Call)
            return [without_args(node, ("mask", "other"))]
        return []


@operator
class MaskInclusive(Mutation):
    name = "mask-inclusive"
    label = "mask-off-by-one"
    summary = "a boundary mask `offs < n` becomes `offs <= n`"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if context.masks and isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            if isinstance(target.operator, cst.LessThan):
                return [node.with_changes(comparisons=[target.with_changes(operator=cst.LessThanEqual())])]
        return []


def _range_args(node: cst.CSTNode) -> list[cst.Arg] | None:
    if call_name(node) == "range":
        assert isinstance(node, cst.Call)
        args = positional(node)
        if len(args) == len(node.args) and 1 <= len(args) <= 3:
            return args
    return None


@operator
class LoopStopsEarly(Mutation):
    name = "loop-stops-early"
    label = "loop-bound"
    summary = "a loop over blocks stops one step early: range(a, n - BLOCK, BLOCK)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        args = _range_args(node)
        if args is None:
            return []
        assert isinstance(node, cst.Call)
        stop_index = 0 if len(args) == 1 else 1
        step = args[2].value if len(args) == 3 else cst.Integer("1")
        stop = binary(args[stop_index].value, cst.Subtract(), step)
        new = list(node.args)
        new[stop_index] = new[stop_index].with_changes(value=stop)
        return [node.with_changes(args=new)]


@operator
class LoopFloorDivision(Mutation):
    name = "loop-floor-division"
    label = "loop-bound"
    summary = "a loop's bound rounds down: range(0, n // BLOCK * BLOCK, BLOCK), or n // BLOCK for cdiv"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        args = _range_args(node)
        if args is not None and len(args) == 3:
            assert isinstance(node, cst.Call)
            stop, step = args[1].value, args[2].value
            floored = binary(binary(stop, cst.FloorDivide(), step), cst.Multiply(), step)
            new = list(node.args)
            new[1] = new[1].with_changes(value=floored)
            return [node.with_changes(args=new)]
        if args is not None:
            assert isinstance(node, cst.Call)
            found: list[cst.CSTNode] = []
            for index, arg in enumerate(node.args):
                if call_name(arg.value) in ("tl.cdiv", "triton.cdiv"):
                    inner = positional(arg.value)  # type: ignore[arg-type]
                    if len(inner) == 2:
                        new = list(node.args)
                        new[index] = arg.with_changes(value=binary(inner[0].value, cst.FloorDivide(), inner[1].value))
                        found.append(node.with_changes(args=new))
            return found
        return []


@operator
class GridFloorDivision(Mutation):
    name = "grid-floor-division"
    label = "grid-too-small"
    summary = "the launch grid uses n // BLOCK instead of triton.cdiv(n, BLOCK)"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) in ("triton.cdiv", "cdiv"):
            assert isinstance(node, cst.Call)
            args = positional(node)
            if len(args) == 2:
                return [binary(args[0].value, cst.FloorDivide(), args[1].value)]
        return []


@operator
class GridAxisOne(Mutation):
    name = "grid-axis-one"
    label = "uninitialized-output"
    summary = "one axis of a multi-dimensional launch grid is fixed at 1"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.Tuple) or len(node.elements) < 2:
            return []
        found: list[cst.CSTNode] = []
        for index, element in enumerate(node.elements):
            if "triton.cdiv" in calls_in(element.value) or call_name(element.value) == "triton.cdiv":
                elements = list(node.elements)
                elements[index] = element.with_changes(value=cst.Integer("1"))
                found.append(node.with_changes(elements=elements))
        return found


@operator
class StrideOfOtherDim(Mutation):
    name = "stride-other-dim"
    label = "wrong-stride"
    summary = "a stride argument is taken from another dimension: x.stride(1) for x.stride(0)"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "stride":
            args = positional(node)
            if len(args) == 1 and isinstance(args[0].value, cst.Integer):
                dim = int(args[0].value.value)
                other = 1 if dim == 0 else dim - 1
                return [node.with_changes(args=[args[0].with_changes(value=cst.Integer(str(other)))])]
        return []


def _stride_term(node: cst.BaseExpression) -> tuple[cst.BinaryOperation, cst.Name] | None:
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply)):
        return None
    if isinstance(node.right, cst.Name) and node.right.value.startswith("stride"):
        return node, node.right
    return None


@operator
class SwapStrides(Mutation):
    name = "swap-strides"
    label = "wrong-stride"
    summary = "two dimensions' strides are swapped in a pointer expression"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
            return []
        right = _stride_term(node.right)
        left_term = node.left
        outer: cst.BinaryOperation | None = None
        if isinstance(left_term, cst.BinaryOperation) and isinstance(left_term.operator, cst.Add):
            outer, left_term = left_term, left_term.right
        left = _stride_term(left_term)
        if right is None or left is None or left[1].value == right[1].value:
            return []
        new_left: cst.BaseExpression = left[0].with_changes(right=right[1])
        if outer is not None:
            new_left = outer.with_changes(right=new_left)
        return [node.with_changes(left=new_left, right=right[0].with_changes(right=left[1]))]


@operator
class ShiftIndex(Mutation):
    name = "shift-index"
    label = "index-shift"
    summary = "a load reads one element further: tl.load(p + offs + 1, ...)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) == "tl.load":
            assert isinstance(node, cst.Call)
            args = list(node.args)
            if args and args[0].keyword is None:
                args[0] = args[0].with_changes(value=binary(args[0].value, cst.Add(), cst.Integer("1")))
                return [node.with_changes(args=args)]
        return []


@operator
class WrongDivisor(Mutation):
    name = "wrong-divisor"
    label = "wrong-normalizer"
    summary = "a mean divides by n - 1, or by the block width, instead of the count"
    where = "any"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide)):
            return []
        if not isinstance(node.right, cst.Name):
            return []
        divisor = node.right.value
        found: list[cst.CSTNode] = [
            binary(node.left, cst.Divide(), binary(node.right, cst.Subtract(), cst.Integer("1")))
        ]
        facts = context.kernel
        if facts is not None and divisor not in facts.constexprs:
            blocks = [c for c in facts.constexprs if "BLOCK" in c]
            if blocks:
                found.append(node.with_changes(right=cst.Name(blocks[0])))
        return found


def _interesting_float(value: float) -> bool:
    if value != value or value in (float("inf"), float("-inf")):
        return False
    digits = f"{abs(value):.12g}".replace(".", "").replace("-", "").strip("0")
    return len(digits) >= 3


@operator
class ChangeConstant(Mutation):
    name = "change-constant"
    label = "wrong-constant"
    summary = "a mathematical constant loses a digit or a decimal place (0.044715 -> 0.44715)"
    where = "any"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.Float):
            return []
        value = float(node.value)
        if not _interesting_float(value):
            return []
        shifted = cst.Float(repr(value * 10))
        rounded = float(f"{value:.2g}")
        return [shifted, cst.Float(repr(rounded))] if rounded != value else [shifted]


@operator
class StoreInsteadOfAtomic(Mutation):
    name = "store-not-atomic"
    label = "missing-atomic"
    summary = "tl.atomic_add becomes tl.store: concurrent programs overwrite each other's partials"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) == "tl.atomic_add":
            assert isinstance(node, cst.Call)
            stored = without_args(node, ("sem", "scope"))
            return [stored.with_changes(func=expr("tl.store"))]
        return []


@operator
class HalfPrecision(Mutation):
    name = "half-precision"
    label = "precision-loss"
    summary = "a cast or an accumulator uses float16 instead of float32"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if isinstance(node, cst.Attribute) and dotted(node) == "tl.float32":
            return [node.with_changes(attr=cst.Name("float16"))]
        return []


@operator
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
        subtracted = names_in(argument.right) & facts.maxima or calls_in(argument.right) & {"tl.max"}
        if not subtracted or names_in(argument.left) & facts.maxima:
            return []
        return [node.with_changes(args=[args[0].with_changes(value=argument.left.with_changes(lpar=[], rpar=[]))])]


@operator
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
        if any("eps" in n.lower() for n in names_in(inner.right)):
            return node, inner
    return None


@operator
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


class _AccumulatorRewrite(Mutation):
    def _reset(self, statement: cst.BaseSmallStatement, facts: KernelFacts) -> list[cst.BaseSmallStatement]:
        if isinstance(statement, cst.AugAssign) and isinstance(statement.operator, cst.AddAssign):
            if isinstance(statement.target, cst.Name) and statement.target.value in facts.accumulators:
                return [cst.Assign(targets=[cst.AssignTarget(target=statement.target)], value=statement.value)]
            return []
        assigned = _single_target(statement)
        if assigned is None or assigned[0] not in facts.accumulators:
            return []
        assert isinstance(statement, cst.Assign)
        name, value = assigned
        new_value: cst.BaseExpression | None = None
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            left, right = name in names_in(value.left), name in names_in(value.right)
            if left != right:
                new_value = value.right if left else value.left
        elif call_name(value) == "tl.dot":
            assert isinstance(value, cst.Call)
            args = [
                a
                for a in value.args
                if not (isinstance(a.value, cst.Name) and a.value.value == name)
                and not (a.keyword is not None and a.keyword.value == "acc")
            ]
            if len(args) < len(value.args):
                new_value = without_args(value.with_changes(args=args), ())
        elif call_name(value) in ("tl.maximum", "tl.minimum"):
            assert isinstance(value, cst.Call)
            others = [
                a.value for a in positional(value) if not (isinstance(a.value, cst.Name) and a.value.value == name)
            ]
            if len(others) == 1:
                new_value = others[0]
        return [statement.with_changes(value=new_value)] if new_value is not None else []


@operator
class AccumulatorReset(_AccumulatorRewrite):
    name = "accumulator-reset"
    label = "accumulator-reset"
    summary = "an accumulator is overwritten in its loop (acc = x for acc += x), or re-initialised inside it"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        facts = context.kernel
        if facts is None:
            return []
        if isinstance(node, cst.SimpleStatementLine) and context.loops:
            found: list[cst.CSTNode] = []
            for index, statement in enumerate(node.body):
                for replacement in self._reset(statement, facts):
                    body = list(node.body)
                    body[index] = replacement
                    found.append(node.with_changes(body=body))
            return found
        if isinstance(node, cst.For) and isinstance(node.body, cst.IndentedBlock):
            updated = names_assigned(node.body)
            found = []
            for name, init in facts.accumulators.items():
                if name in updated and not any(s.deep_equals(init) for s in node.body.body):
                    block = node.body.with_changes(body=[init.with_changes(leading_lines=[]), *node.body.body])
                    found.append(node.with_changes(body=block))
            return found
        return []


def names_assigned(block: cst.CSTNode) -> set[str]:
    found: set[str] = set()
    for statement in m.findall(block, m.AugAssign() | m.Assign()):
        targets = [statement.target] if isinstance(statement, cst.AugAssign) else [t.target for t in statement.targets]  # type: ignore[attr-defined]
        found |= {t.value for t in targets if isinstance(t, cst.Name)}
    return found


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


@operator
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


@operator
class WrongReductionInit(Mutation):
    name = "wrong-reduction-init"
    label = "wrong-reduction-init"
    summary = "a running max starts at 0 instead of -inf, or a running sum at 0 instead of 1"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) != "tl.full":
            return []
        assert isinstance(node, cst.Call)
        args = list(node.args)
        if len(args) < 2 or args[1].keyword is not None:
            return []
        value = float_value(args[1].value)
        if value is None or value == 0.0:
            return []
        args[1] = args[1].with_changes(value=cst.Float("0.0"))
        return [node.with_changes(args=args)]


@operator
class WrongPadding(Mutation):
    name = "wrong-padding"
    label = "padding-in-reduction"
    summary = "masked-out lanes get a value the reduction takes in: other=0 before a max, or x - mean unmasked"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) == "tl.load":
            assert isinstance(node, cst.Call)
            other = kwarg(node, "other")
            if other is None:
                return []
            value = float_value(other.value)
            if value is None:
                return []
            return [replace_kwarg(node, "other", cst.Float("1.0" if value == 0.0 else "0.0"))]
        if call_name(node) == "tl.where":
            assert isinstance(node, cst.Call)
            args = positional(node)
            if (
                len(args) == 3
                and any("mask" in n for n in names_in(args[0].value))
                and float_value(args[2].value) == 0.0
            ):
                return [args[1].value.with_changes(lpar=[], rpar=[])]
        return []


@operator
class DropRowOffset(Mutation):
    name = "drop-row-offset"
    label = "missing-batch-offset"
    summary = "a base pointer omits its row (or batch) offset: x_ptr instead of x_ptr + row * stride"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        facts = context.kernel
        if facts is None or not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
            return []
        if not facts.program_ids:
            return []

        def is_offset(term: cst.BaseExpression) -> bool:
            if isinstance(term, cst.Name):
                return term.value in facts.program_ids
            if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply):
                names = names_in(term)
                return bool(names & facts.program_ids) and "tl.arange" not in calls_in(term)
            return False

        pointer_names = facts.pointers | {n for n in facts.params if n.endswith("ptr")}
        if names_in(node.left) & pointer_names and is_offset(node.right):
            return [node.left.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar else node.left]
        return []


@operator
class SkipFirstBlock(Mutation):
    name = "skip-first-block"
    label = "uninitialized-output"
    summary = "a write loop starts at BLOCK instead of 0, so the first block is never written"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.For) or "tl.store" not in calls_in(node.body):
            return []
        args = _range_args(node.iter)
        if args is None or len(args) != 3:
            return []
        if not (isinstance(args[0].value, cst.Integer) and args[0].value.value == "0"):
            return []
        assert isinstance(node.iter, cst.Call)
        new = list(node.iter.args)
        new[0] = new[0].with_changes(value=args[2].value)
        return [node.with_changes(iter=node.iter.with_changes(args=new))]


@operator
class IntegerBuffer(Mutation):
    name = "integer-buffer"
    label = "dtype-mismatch"
    summary = "a float buffer is allocated with an integer dtype, so every store into it truncates"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) not in ("torch.empty", "torch.zeros", "torch.empty_like", "torch.zeros_like"):
            return []
        assert isinstance(node, cst.Call)
        dtype = kwarg(node, "dtype")
        if dtype is None or "int" in context.code(dtype.value):
            return []
        return [replace_kwarg(node, "dtype", expr("torch.int32"))]


# -- applying them ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    operator: str
    label: str
    site: int
    source: str
    line: int
    """1-based line of the first changed line."""


def _parse(source: str) -> ParsedSource:
    parsed = ParsedSource.parse(source)
    if parsed is None:
        raise MutationError("the kernel does not parse")
    try:
        parsed.cst_module  # noqa: B018 - parsed now, so that a failure is a MutationError
    except cst.ParserSyntaxError as exc:
        raise MutationError(f"the kernel does not parse: {exc}") from None
    return parsed


def _apply(parsed: ParsedSource, op: Mutation, target: int | None) -> tuple[cst.Module, int]:
    transformer = _Sites(parsed, op, target)
    result = parsed.cst_module.visit(transformer)
    return result, transformer.count


def count_sites(source: str, operator: Mutation | str) -> int:
    op = OPERATORS[operator] if isinstance(operator, str) else operator
    return _apply(_parse(source), op, None)[1]


def mutate(source: str, operator: Mutation | str, site: int) -> str:
    """`source` with bug `operator` injected at its `site`-th site (0-based, in traversal order)."""
    op = OPERATORS[operator] if isinstance(operator, str) else operator
    result, count = _apply(_parse(source), op, site)
    if site < 0 or site >= count:
        raise MutationError(f"{op.name} has {count} site(s) in this kernel, not {site + 1}")
    return result.code


def first_changed_line(before: str, after: str) -> int:
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, _, _, _ in matcher.get_opcodes():
        if tag != "equal":
            return i1 + 1
    return 0


def mutants(source: str, operator: Mutation | str) -> list[Mutant]:
    """Every mutant of `source` for `operator`, one per site, those identical to the source left out."""
    op = OPERATORS[operator] if isinstance(operator, str) else operator
    parsed = _parse(source)
    found: list[Mutant] = []
    for site in range(_apply(parsed, op, None)[1]):
        mutated = _apply(parsed, op, site)[0].code
        if mutated != source:
            found.append(Mutant(op.name, op.label, site, mutated, first_changed_line(source, mutated)))
    return found


def normalise(source: str) -> str:
    """The code without comments or formatting (an AST round trip): equal for equivalent texts."""
    try:
        return ast.unparse(syntax.parse(source))
    except SyntaxError:
        return source


def operators(names: Sequence[str] | None = None) -> list[Mutation]:
    """The operators named (all when None), in registration order."""
    if not names:
        return list(OPERATORS.values())
    unknown = [n for n in names if n not in OPERATORS]
    if unknown:
        raise MutationError(f"unknown mutation operator(s) {', '.join(unknown)}; known: {', '.join(OPERATORS)}")
    return [OPERATORS[n] for n in names]
