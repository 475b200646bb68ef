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
from typing import Any, ClassVar, Literal

import libcst as cst
import libcst.matchers as m

from kope import syntax
from kope.bugs.ids import BugId
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
    aranged: set[str] = field(default_factory=set)
    """Names a `tl.arange` takes as a bound."""

    @property
    def pointers(self) -> set[str]:
        return {p for p in self.params if p.endswith("_ptr")}


def cst_names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name)}


def cst_calls_in(node: cst.CSTNode) -> set[str]:
    return {call_name(c) for c in m.findall(node, m.Call())}


def single_target(statement: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
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
    for call in m.findall(function.body, m.Call()):
        if call_name(call) == "tl.arange":
            assert isinstance(call, cst.Call)
            facts.aranged |= {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
    for line in m.findall(function.body, m.SimpleStatementLine()):
        assert isinstance(line, cst.SimpleStatementLine)
        for statement in line.body:
            assigned = single_target(statement)
            if assigned is None:
                continue
            name, value = assigned
            names, calls = cst_names_in(value), cst_calls_in(value)
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
    label: ClassVar[BugId]
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
        return any("mask" in name for target in node.targets for name in cst_names_in(target.target))
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


def mutation(cls: type[Mutation]) -> type[Mutation]:
    OPERATORS[cls.name] = cls()
    return cls


def range_args(node: cst.CSTNode) -> list[cst.Arg] | None:
    if call_name(node) == "range":
        assert isinstance(node, cst.Call)
        args = positional(node)
        if len(args) == len(node.args) and 1 <= len(args) <= 3:
            return args
    return None


# -- applying them ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    operator: str
    label: BugId
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


ORDER = (
    "drop-mask",
    "mask-inclusive",
    "loop-stops-early",
    "loop-floor-division",
    "grid-floor-division",
    "grid-axis-one",
    "group-uncapped",
    "stride-other-dim",
    "swap-strides",
    "shift-index",
    "wrong-divisor",
    "change-constant",
    "store-not-atomic",
    "half-precision",
    "drop-max-subtraction",
    "drop-inf-guard",
    "misplaced-epsilon",
    "accumulator-reset",
    "swap-broadcast",
    "wrong-reduction-init",
    "wrong-padding",
    "drop-row-offset",
    "skip-first-block",
    "integer-buffer",
    "operands-untransposed",
    "constexpr-dropped",
)
"""The registry's order (of `operators()` and so of the corpus builder's seeded choices); a mutation missing here comes
after these."""


def in_order(registry: dict[str, Any]) -> None:
    """Put `registry` in `ORDER` (kinds register in import order); names missing there come after, in theirs."""
    ordered = {**{name: registry[name] for name in ORDER if name in registry}, **registry}
    registry.clear()
    registry.update(ordered)
