"""The recipe role: the `recipe` decorator, `apply`, and the concrete-syntax-tree helpers recipes of several kinds
share.

A recipe is a mechanical fix for a known bug pattern: it takes a candidate's source and returns zero or more edited
sources, each a plausible fix. A recipe finds what to change with the static analysis the cues use
(kope.bugs.analysis, over Python's ast), then makes the change on the concrete syntax tree (libcst) at the lines the
analysis points to, so formatting and comments elsewhere survive. The offline repair model tries the recipes of the
top hypotheses in order and keeps the first edit that passes evaluation; a recipe never evaluates anything itself.
The recipes live in the kinds' modules (kope.bugs.masks, ...); `ORDER` is the registry's order.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from kope.bugs.analysis import Kernel, names_in
from kope.bugs.cue import CUES, Source, detect

Recipe = Callable[[str], Iterator[str]]


RECIPES: dict[str, Recipe] = {}


RECIPE_DESCRIPTIONS: dict[str, str] = {}


def recipe(name: str, description: str) -> Callable[[Recipe], Recipe]:
    def register(fn: Recipe) -> Recipe:
        RECIPES[name] = fn
        RECIPE_DESCRIPTIONS[name] = description
        return fn

    return register


def apply(name: str, source: str) -> list[str]:
    """The distinct edits a recipe proposes (none if it does not apply or the source does not parse)."""
    fn = RECIPES.get(name)
    if fn is None:
        return []
    try:
        edits = list(fn(source))
    except (cst.ParserSyntaxError, RecursionError):
        return []
    unique: list[str] = []
    for edit in edits:
        if edit != source and edit not in unique:
            unique.append(edit)
    return unique


def parse(source: str) -> cst.Module:
    return cst.parse_module(source)


class _LineTransformer(cst.CSTTransformer):
    """A transformer that knows each node's first line (PositionProvider)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.changed = False

    def line(self, node: cst.CSTNode) -> int:
        try:
            return int(self.get_metadata(PositionProvider, node).start.line)
        except KeyError:
            return -1


def _rewrite(source: str, transformer: _LineTransformer) -> str | None:
    """The source after `transformer`, or None when it changed nothing."""
    edited = MetadataWrapper(parse(source)).visit(transformer)
    return edited.code if transformer.changed else None


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def _kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def _set_kwarg(call: cst.Call, name: str, value: cst.BaseExpression, position: int | None = None) -> cst.Call:
    """`call` with keyword `name` set to `value` (replacing a keyword or positional argument)."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            args[i] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    positional = [i for i, a in enumerate(args) if a.keyword is None and not a.star]
    if position is not None and position < len(positional):
        i = positional[position]
        args[i] = args[i].with_changes(value=value)
        return call.with_changes(args=args)
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
        last = args[-1]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return call.with_changes(args=[*args, _kwarg(name, value).with_changes(comma=last.comma)])
    return call.with_changes(args=[*args, _kwarg(name, value)])


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name)}


def _hit_lines(source: str, *cue_names: str) -> set[int]:
    return {hit.line for hit in detect(source, list(cue_names))}


def _analysed(source: str) -> Source | None:
    return Source.parse(source)


def _cue_nodes(parsed: Source, name: str) -> list[ast.AST]:
    """The nodes a code cue flags (not just their lines)."""
    return list(CUES[name](parsed))


NEG_INF = '-float("inf")'


def _size_params(kernel: Kernel) -> list[str]:
    """Scalar parameters that look like sizes: not pointers, strides, constexprs or eps."""
    return [
        p
        for p in kernel.params
        if not p.endswith("ptr")
        and not p.startswith("stride")
        and p not in kernel.constexprs
        and "eps" not in p.lower()
        and "scale" not in p.lower()
        and "slope" not in p.lower()
    ]


def _bounds_for(kernel: Kernel, offsets: set[str]) -> list[str]:
    """Sizes the kernel already compares these offsets (or any block offsets) with, then size parameters."""
    own: list[str] = []
    other: list[str] = []
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt):
            left, right = node.left, node.comparators[0]
            if names_in(left) & kernel.aranges and not names_in(right) & kernel.aranges:
                text = ast.unparse(right)
                (own if names_in(left) & offsets else other).append(text)
    found = list(dict.fromkeys(own + other + _size_params(kernel)))
    return found


class _EmptyToZeros(_LineTransformer):
    """`torch.empty(...)` / `torch.empty_like(...)` at the given lines -> zeros."""

    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("empty", "empty_like")
            and self.line(original_node) in self.lines
        ):
            self.changed = True
            return updated_node.with_changes(
                func=func.with_changes(attr=cst.Name(func.attr.value.replace("empty", "zeros")))
            )
        return updated_node


ORDER = (
    "grid-ceil-div",
    "add-mask",
    "strict-mask",
    "neutral-padding",
    "full-loop-range",
    "outer-stride",
    "remove-index-shift",
    "count-normalizer",
    "known-constant",
    "atomic-accumulate",
    "upcast-fp32",
    "guard-exp",
    "eps-inside-sqrt",
    "hoist-accumulator",
    "swap-broadcast",
    "reduction-identity",
    "float-buffer",
    "add-batch-offset",
    "cover-output",
    "mend-api",
)
"""The order of the registry (listings, `kope kb validate`): that of the single module the recipes came from.
A recipe missing here comes after these."""


def in_order(registry: dict[str, Any]) -> None:
    """Put `registry` in `ORDER` (kinds register in import order); names missing there come after, in theirs."""
    ordered = {**{name: registry[name] for name in ORDER if name in registry}, **registry}
    registry.clear()
    registry.update(ordered)
