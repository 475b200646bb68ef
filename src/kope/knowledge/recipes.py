"""Recipes: mechanical fixes for known bug patterns, as concrete-syntax-tree edits (libcst).

A recipe takes a candidate's source and returns zero or more edited sources, each a plausible fix
(formatting and comments outside the edit are kept). The offline repair model tries the recipes of
the top hypotheses in order and keeps the first edit that passes evaluation. A recipe never
evaluates anything itself.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from kope.knowledge.analysis import (
    HALF_DTYPES,
    Kernel,
    argument,
    calls_in,
    constant_value,
    expand,
    gathered_indices,
    host_assignments,
    is_uniform,
    names_in,
    padding_leaks,
    pointer_roots,
    statements,
)
from kope.knowledge.cues import CUES, KNOWN_CONSTANTS, Source, detect, near_constant
from kope.source import call_name


@dataclass(frozen=True)
class RecipeContext:
    """What a recipe may use beyond the source: the diagnosis features and the pattern's params."""

    features: dict[str, Any]
    params: dict[str, Any]


Recipe = Callable[[str, RecipeContext], Iterator[str]]
RECIPES: dict[str, Recipe] = {}
RECIPE_DESCRIPTIONS: dict[str, str] = {}


def recipe(name: str, description: str) -> Callable[[Recipe], Recipe]:
    def register(fn: Recipe) -> Recipe:
        RECIPES[name] = fn
        RECIPE_DESCRIPTIONS[name] = description
        return fn

    return register


def apply(name: str, source: str, context: RecipeContext) -> list[str]:
    """The distinct edits a recipe proposes (none if it does not apply or the source does not parse)."""
    fn = RECIPES.get(name)
    if fn is None:
        return []
    try:
        edits = list(fn(source, context))
    except (cst.ParserSyntaxError, RecursionError):
        return []
    unique: list[str] = []
    for edit in edits:
        if edit != source and edit not in unique:
            unique.append(edit)
    return unique


def parse(source: str) -> cst.Module:
    return cst.parse_module(source)


def is_launch(node: cst.Call) -> bool:
    """`kernel[grid](...)`."""
    return isinstance(node.func, cst.Subscript)


class _FloorToCdiv(cst.CSTTransformer):
    """Every `a // b` becomes `triton.cdiv(a, b)`."""

    def __init__(self) -> None:
        self.changed = False

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if m.matches(updated_node.operator, m.FloorDivide()):
            self.changed = True
            return cst.Call(
                func=cst.Attribute(value=cst.Name("triton"), attr=cst.Name("cdiv")),
                args=[cst.Arg(updated_node.left), cst.Arg(updated_node.right)],
            )
        return updated_node


def launch_grid_names(module: cst.Module) -> set[str]:
    """Names used as grids in `kernel[grid](...)`."""
    names: set[str] = set()
    for call in m.findall(module, m.Call(func=m.Subscript())):
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Subscript)
        for element in call.func.slice:
            if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name):
                names.add(element.slice.value.value)
    return names


class _GridFloorToCeil(cst.CSTTransformer):
    """In launch grids, and in values assigned to names used as grids, `a // b` -> `triton.cdiv(a, b)`."""

    def __init__(self, grid_names: set[str]) -> None:
        self.grid_names = grid_names
        self.changed = False

    def _rewrite(self, node: cst.CSTNodeT) -> cst.CSTNodeT:
        inner = _FloorToCdiv()
        rewritten = node.visit(inner)
        self.changed |= inner.changed
        return rewritten  # type: ignore[return-value]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if isinstance(updated_node.func, cst.Subscript):
            return updated_node.with_changes(func=self._rewrite(updated_node.func))
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        targets = {t.target.value for t in updated_node.targets if isinstance(t.target, cst.Name)}
        if targets & self.grid_names:
            return updated_node.with_changes(value=self._rewrite(updated_node.value))
        return updated_node


@recipe("grid-ceil-div", "use triton.cdiv instead of floor division in launch grids")
def grid_ceil_div(source: str, context: RecipeContext) -> Iterator[str]:
    module = parse(source)
    transformer = _GridFloorToCeil(launch_grid_names(module))
    edited = module.visit(transformer)
    if transformer.changed:
        yield edited.code


# -- shared machinery for the recipes below --------------------------------------------------------
#
# Recipes find what to change with the static analysis the code cues use (kope.knowledge.cues and
# kope.knowledge.analysis, over Python's ast), then make the change on the concrete syntax tree
# (libcst) at the lines the analysis points to, so formatting and comments elsewhere survive.


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


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


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


def _quiet(source: str, *cue_names: str) -> bool:
    return not detect(source, list(cue_names))


def _analysed(source: str) -> Source | None:
    return Source.parse(source)


def _cue_nodes(parsed: Source, name: str) -> list[ast.AST]:
    """The nodes a code cue flags (not just their lines)."""
    return list(CUES[name](parsed))


NEG_INF = '-float("inf")'
POS_INF = 'float("inf")'


# -- missing-mask -----------------------------------------------------------------------------------


def _size_params(kernel: Kernel) -> list[str]:
    """Scalar parameters that look like sizes: not pointers, strides, constexprs or eps."""
    return [
        p for p in kernel.params
        if not p.endswith("ptr") and not p.startswith("stride") and p not in kernel.constexprs
        and "eps" not in p.lower() and "scale" not in p.lower() and "slope" not in p.lower()
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


def _mask_candidates(kernel: Kernel, pointer: ast.expr) -> list[str]:
    """Masks for a block access: mask names built from the same offsets, then `offs < n` expressions."""
    offsets = names_in(pointer) & kernel.aranges
    for part in expand(pointer, kernel, depth=2):
        offsets |= names_in(part) & kernel.aranges
    direct = names_in(pointer) & kernel.aranges
    candidates: list[str] = []
    for name in sorted(kernel.masks):
        values = kernel.assigns.get(name, [])
        if values and all(names_in(v) & kernel.aranges <= offsets for v in values) and any(
            names_in(v) & direct for v in values
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
        if isinstance(node, ast.Call) and call_name(node, last=True) in ("max", "argmax", "maximum", "exp", "exp2") and (
            name in names_in(node)
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


@recipe("add-mask", "give unmasked block loads and stores the boundary mask (an existing mask or offs < n), with a neutral `other`")
def add_mask(source: str, context: RecipeContext) -> Iterator[str]:
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
            options = [(mask, other if call_name(call, last=True) == "load" else None) for mask in masks[:2] for other in others]
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


# -- mask-off-by-one --------------------------------------------------------------------------------


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
            return updated_node.with_changes(comparisons=[target.with_changes(operator=cst.LessThan(
                whitespace_before=target.operator.whitespace_before, whitespace_after=target.operator.whitespace_after))])
        if isinstance(target.operator, cst.GreaterThanEqual) and right_names & self.offsets:
            self.changed = True
            return updated_node.with_changes(comparisons=[target.with_changes(operator=cst.GreaterThan(
                whitespace_before=target.operator.whitespace_before, whitespace_after=target.operator.whitespace_after))])
        comparator = target.comparator
        if (
            isinstance(target.operator, cst.LessThan) and isinstance(comparator, cst.BinaryOperation)
            and isinstance(comparator.operator, cst.Add) and m.matches(comparator.right, m.Integer("1"))
            and left_names & self.offsets
        ):
            self.changed = True
            return updated_node.with_changes(comparisons=[target.with_changes(comparator=comparator.left)])
        return updated_node


@recipe("strict-mask", "make inclusive boundary masks strict: offs <= n -> offs < n, offs < n + 1 -> offs < n")
def strict_mask(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    lines = _hit_lines(source, "mask-inclusive-bound")
    if parsed is None or not lines:
        return
    offsets = set().union(*(k.aranges for k in parsed.program.kernels.values()))
    edited = _rewrite(source, _StrictMask(lines, offsets))
    if edited is not None:
        yield edited


# -- padding-in-reduction ---------------------------------------------------------------------------


class _SetOther(_LineTransformer):
    def __init__(self, line: int, other: str) -> None:
        super().__init__()
        self.target, self.other = line, other

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        masked = any(a.keyword is not None and a.keyword.value == "mask" for a in updated_node.args) or len(updated_node.args) >= 2
        if call_name(updated_node, last=True) == "load" and self.line(original_node) == self.target and not self.changed and masked:
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


@recipe("neutral-padding", "give masked loads the neutral `other` of the reduction they feed, or re-mask values before reducing")
def neutral_padding(source: str, context: RecipeContext) -> Iterator[str]:
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


# -- loop-bound -------------------------------------------------------------------------------------


class _FullRange(_LineTransformer):
    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        if self.line(original_node) not in self.lines or not isinstance(updated_node.iter, cst.Call):
            return updated_node
        call = updated_node.iter
        if call_name(call, last=True) not in ("range", "static_range") or not call.args:
            return updated_node
        index = 1 if len(call.args) >= 2 else 0
        stop = call.args[index].value
        fixed = _full_stop(stop)
        if fixed is None:
            return updated_node
        self.changed = True
        args = list(call.args)
        args[index] = args[index].with_changes(value=fixed)
        return updated_node.with_changes(iter=call.with_changes(args=args))


def _full_stop(stop: cst.BaseExpression) -> cst.BaseExpression | None:
    """`n - BLOCK` -> `n`; `(n // B) * B` -> `n`; `n // B` -> `tl.cdiv(n, B)`."""
    if isinstance(stop, cst.BinaryOperation):
        if isinstance(stop.operator, cst.Subtract):
            return stop.left.with_changes(lpar=[], rpar=[])
        if isinstance(stop.operator, cst.Multiply):
            for side in (stop.left, stop.right):
                if isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.FloorDivide):
                    return side.left.with_changes(lpar=[], rpar=[])
        if isinstance(stop.operator, cst.FloorDivide):
            return cst.Call(func=_expr("tl.cdiv"), args=[cst.Arg(stop.left.with_changes(lpar=[], rpar=[])), cst.Arg(stop.right)])
    return None


@recipe("full-loop-range", "make loops over blocks reach the end: range(0, n - B, B) / (n // B) * B -> range(0, n, B)")
def full_loop_range(source: str, context: RecipeContext) -> Iterator[str]:
    lines = _hit_lines(source, "loop-stops-early")
    if lines:
        edited = _rewrite(source, _FullRange(lines))
        if edited is not None:
            yield edited


# -- wrong-stride -----------------------------------------------------------------------------------


class _StrideDim(_LineTransformer):
    """`t.stride(k)` starting at (line, column) -> `t.stride(dim)`."""

    def __init__(self, line: int, column: int, dim: int) -> None:
        super().__init__()
        self.target, self.column, self.dim = line, column, dim

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        start = self.get_metadata(PositionProvider, original_node).start
        if (
            call_name(updated_node, last=True) == "stride" and (start.line, start.column) == (self.target, self.column)
            and updated_node.args and not self.changed
        ):
            self.changed = True
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=cst.Integer(str(self.dim)))])
        return updated_node


class _RenameIn(_LineTransformer):
    """Rename `old` to `new` on the given lines."""

    def __init__(self, lines: set[int], old: str, new: str) -> None:
        super().__init__()
        self.lines, self.old, self.new = lines, old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value == self.old and self.line(original_node) in self.lines:
            self.changed = True
            return updated_node.with_changes(value=self.new)
        return updated_node


@recipe("outer-stride", "pass the right stride: an inner or repeated t.stride(k) -> another dimension; stride_y used with x_ptr -> stride_x")
def outer_stride(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    flagged: list[tuple[ast.AST, tuple[int, ...]]] = [(n, (0,)) for n in _cue_nodes(parsed, "single-inner-stride")]
    flagged += [(n, (0, 1, 2)) for n in _cue_nodes(parsed, "duplicate-stride-arg")]
    for node, dims in flagged:
        if not (isinstance(node, ast.Call) and node.args):
            continue
        current = constant_value(node.args[0])
        for dim in dims:
            if current is not None and dim != int(current):
                edited = _rewrite(source, _StrideDim(node.lineno, node.col_offset, dim))
                if edited is not None:
                    yield edited
    for node in parsed.kernels:
        kernel = parsed.program.kernel_of(node)
        if kernel is None:
            continue
        prefixes = {p[:-4] for p in kernel.params if p.endswith("_ptr")}
        strides = [p for p in kernel.params if p.startswith("stride_")]
        for call in calls_in(node, "load", "store", "atomic_add"):
            pointer = call.args[0] if call.args else None
            roots = {r[:-4] for r in pointer_roots(pointer, kernel) if r.endswith("_ptr")}
            if len(roots) != 1:
                continue
            (root,) = roots
            parts = expand(pointer, kernel, depth=4)
            lines = {getattr(p, "lineno", -1) for p in parts} | {call.lineno}
            used = set().union(*(names_in(p) for p in parts))
            for stride in strides:
                rest = stride[len("stride_"):]
                owner = max((p for p in prefixes if rest.startswith(p)), key=len, default=None)
                if stride in used and owner not in (None, root):
                    assert owner is not None
                    replacement = "stride_" + root + rest[len(owner):]
                    if replacement in kernel.params:
                        edited = _rewrite(source, _RenameIn(lines, stride, replacement))
                        if edited is not None:
                            yield edited


# -- index-shift ------------------------------------------------------------------------------------


class _DropShift(_LineTransformer):
    """On the given lines, `expr + 1` / `expr - 1` over block offsets -> `expr`."""

    def __init__(self, lines: set[int], offsets: set[str]) -> None:
        super().__init__()
        self.lines, self.offsets = lines, offsets

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if self.line(original_node) not in self.lines or self.changed:
            return updated_node
        if isinstance(updated_node.operator, cst.Add | cst.Subtract) and m.matches(updated_node.right, m.Integer("1")):
            left_names = _names(updated_node.left)
            if left_names & self.offsets:
                self.changed = True
                left = updated_node.left
                atomic = isinstance(left, cst.Name | cst.Subscript | cst.Call | cst.Attribute)
                return left.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar) if updated_node.lpar and not atomic else left
        return updated_node


@recipe("remove-index-shift", "drop a stray +1/-1 from block-offset addresses; record start + lane instead of the block-relative lane")
def remove_index_shift(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in parsed.kernels:
        kernel = parsed.program.kernel_of(node)
        if kernel is None:
            continue
        for call in calls_in(node, "load", "store"):
            if call.lineno not in _hit_lines(source, "offset-literal-shift"):
                continue
            lines = {getattr(p, "lineno", -1) for p in expand(call.args[0] if call.args else None, kernel, depth=2)}
            for line in sorted(lines):
                edited = _rewrite(source, _DropShift({line}, kernel.aranges | gathered_indices(kernel)))
                if edited is not None:
                    yield edited
    for where in _cue_nodes(parsed, "block-relative-index"):
        assert isinstance(where, ast.Call)
        kernel = next((k for k in parsed.program.kernels.values() if any(w is where for w in ast.walk(k.node))), None)
        if kernel is None:
            continue
        for relative in [a.id for a in where.args[1:3] if isinstance(a, ast.Name) and a.id in kernel.aranges]:
            for name, values in kernel.assigns.items():
                if any(isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add) and relative in names_in(v) and len(names_in(v)) == 2 for v in values):
                    edited = _rewrite(source, _RenameArgs(where.lineno, relative, name))
                    if edited is not None:
                        yield edited


class _RenameArgs(_LineTransformer):
    """In the tl.where call at a line, the value argument `old` -> `new`."""

    def __init__(self, line: int, old: str, new: str) -> None:
        super().__init__()
        self.target, self.old, self.new = line, old, new

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if call_name(updated_node, last=True) != "where" or self.line(original_node) != self.target:
            return updated_node
        args = list(updated_node.args)
        for i in (1, 2):
            if i < len(args) and m.matches(args[i].value, m.Name(self.old)):
                args[i] = args[i].with_changes(value=cst.Name(self.new))
                self.changed = True
        return updated_node.with_changes(args=args)


# -- wrong-normalizer -------------------------------------------------------------------------------


class _Divisor(_LineTransformer):
    def __init__(self, line: int, divisor: str) -> None:
        super().__init__()
        self.target, self.divisor = line, divisor

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if self.line(original_node) == self.target and isinstance(updated_node.operator, cst.Divide) and not self.changed:
            right = updated_node.right
            blockish = isinstance(right, cst.Name) and right.value != self.divisor
            minus_one = isinstance(right, cst.BinaryOperation) and isinstance(right.operator, cst.Subtract) and m.matches(
                right.right, m.Integer("1")
            )
            if blockish or minus_one:
                self.changed = True
                return updated_node.with_changes(right=_expr(self.divisor))
        return updated_node


@recipe("count-normalizer", "divide a reduction by the element count (the size its mask compares with), not by BLOCK or n - 1")
def count_normalizer(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for name in ("divide-by-block-size", "divide-by-n-minus-one"):
        for node in _cue_nodes(parsed, name):
            assert isinstance(node, ast.BinOp)
            kernel = next((k for k in parsed.program.kernels.values() if any(w is node for w in ast.walk(k.node))), None)
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


# -- wrong-constant ---------------------------------------------------------------------------------


class _Literal(_LineTransformer):
    def __init__(self, line: int, text: str, value: str) -> None:
        super().__init__()
        self.target, self.text, self.value = line, text, value

    def leave_Float(self, original_node: cst.Float, updated_node: cst.Float) -> cst.BaseExpression:
        if self.line(original_node) == self.target and updated_node.value == self.text:
            self.changed = True
            return updated_node.with_changes(value=self.value)
        return updated_node


class _Exp2ToExp(_LineTransformer):
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "exp2":
            self.changed = True
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("exp")))
        return updated_node


@recipe("known-constant", "restore a mistyped well-known constant; use exp instead of an exp2 that lacks log2(e)")
def known_constant(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "suspicious-constant"):
        assert isinstance(node, ast.Constant)
        text = ast.get_source_segment(source, node) or repr(node.value)
        name = near_constant(float(node.value), text) if isinstance(node.value, float) else None
        if name is not None:
            edited = _rewrite(source, _Literal(node.lineno, text, repr(KNOWN_CONSTANTS[name])))
            if edited is not None:
                yield edited
    if _cue_nodes(parsed, "exp2-without-log2e"):
        edited = _rewrite(source, _Exp2ToExp())
        if edited is not None:
            yield edited


# -- missing-atomic ---------------------------------------------------------------------------------


class _StoreToAtomic(_LineTransformer):
    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "store" and self.line(original_node) in self.lines:
            self.changed = True
            args = [a for a in updated_node.args if a.keyword is None or a.keyword.value in ("mask",)]
            if len(args) > 2 and args[2].keyword is None:
                args[2] = _kwarg("mask", args[2].value).with_changes(comma=args[2].comma)
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("atomic_add")), args=args)
        return updated_node


class _EmptyToZeros(_LineTransformer):
    """`torch.empty(...)` / `torch.empty_like(...)` at the given lines -> zeros."""

    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("empty", "empty_like") and self.line(original_node) in self.lines:
            self.changed = True
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name(func.attr.value.replace("empty", "zeros"))))
        return updated_node


def _buffers_of(parsed: Source, kernel: Kernel, params: set[str]) -> set[int]:
    """Lines of the host allocations (torch.empty...) passed for these kernel parameters."""
    lines: set[int] = set()
    for launch in parsed.program.launches_of(kernel):
        for param in params:
            arg = launch.args.get(param)
            if isinstance(arg, ast.Name):
                for value in host_assignments(launch.host, arg.id):
                    if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty", "empty_like"):
                        lines.add(value.lineno)
    return lines


@recipe("atomic-accumulate", "replace stores that every program makes to one address with tl.atomic_add (into a zeroed buffer)")
def atomic_accumulate(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    stores = [n for n in _cue_nodes(parsed, "store-shared-address") if isinstance(n, ast.Call)]
    if not stores:
        return
    lines = {s.lineno for s in stores}
    edited = _rewrite(source, _StoreToAtomic(lines))
    if edited is None:
        return
    buffers: set[int] = set()
    for kernel in parsed.program.kernels.values():
        mine = [s for s in stores if any(s is w for w in ast.walk(kernel.node))]
        params = set().union(*(pointer_roots(s.args[0] if s.args else None, kernel) for s in mine)) if mine else set()
        buffers |= _buffers_of(parsed, kernel, params)
    if buffers:
        zeroed = _rewrite(edited, _EmptyToZeros(buffers))
        if zeroed is not None:
            yield zeroed
    yield edited


# -- precision-loss ---------------------------------------------------------------------------------


class _Upcast(_LineTransformer):
    def __init__(self, lines: set[int], ieee_dots: bool) -> None:
        super().__init__()
        self.lines, self.ieee_dots = lines, ieee_dots

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if updated_node.attr.value in HALF_DTYPES and self.line(original_node) in self.lines and m.matches(
            updated_node.value, m.Name("tl") | m.Name("torch")
        ):
            self.changed = True
            return updated_node.with_changes(attr=cst.Name("float32"))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            self.ieee_dots and call_name(updated_node, last=True) == "dot" and self.line(original_node) in self.lines
            and not any(a.keyword is not None and a.keyword.value == "input_precision" for a in updated_node.args)
        ):
            self.changed = True
            return _set_kwarg(updated_node, "input_precision", _expr('"ieee"'))
        return updated_node


@recipe("upcast-fp32", "compute in float32: casts and accumulators in float16/bfloat16 become float32 (and tl.dot uses ieee precision)")
def upcast_fp32(source: str, context: RecipeContext) -> Iterator[str]:
    lines = _hit_lines(source, "half-precision-cast", "half-precision-buffer")
    if not lines:
        return
    for ieee in (False, True):
        edited = _rewrite(source, _Upcast(lines, ieee))
        if edited is not None:
            yield edited


# -- numerical-instability --------------------------------------------------------------------------


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
        if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Subtract) and m.matches(
            arg.right, m.Name(self.running)
        ):
            self.changed = True
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=arg.with_changes(right=cst.Name(self.safe)))])
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
        if call_name(updated_node, last=True) in ("exp", "exp2") and self.line(original_node) == self.target and updated_node.args and not self.changed:
            value = updated_node.args[0].value
            text = _code(value)
            self.changed = True
            shifted = _expr(f"({text}) - tl.max({text}, axis=0)" if not isinstance(value, cst.Name) else f"{text} - tl.max({text}, axis=0)")
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=shifted)])
        return updated_node


@recipe("guard-exp", "guard exp(m - m_new) against all-padding lanes (m_new = -inf), or subtract the max before exp")
def guard_exp(source: str, context: RecipeContext) -> Iterator[str]:
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


# -- wrong-epsilon ----------------------------------------------------------------------------------


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
                return moved.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar) if updated_node.lpar else moved
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.eps is None or self.line(original_node) != self.target or self.changed or not _is_sqrt_call(updated_node):
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
        return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=_expr(f"{_code(inner)} + {self.eps}"))])


@recipe("eps-inside-sqrt", "move eps inside the square root: 1/sqrt(var) + eps -> 1/sqrt(var + eps); add a missing eps")
def eps_inside_sqrt(source: str, context: RecipeContext) -> Iterator[str]:
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


# -- accumulator-reset ------------------------------------------------------------------------------


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
        return updated_node.with_changes(body=[cst.AugAssign(
            target=stmt.targets[0].target, operator=cst.AddAssign(), value=stmt.value,
        )])

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if self.hoisted is not None:
            hoisted, self.hoisted = self.hoisted, None
            return cst.FlattenSentinel([hoisted, updated_node])
        return updated_node


@recipe("hoist-accumulator", "keep an accumulator across loop iterations: drop (or hoist) its re-initialisation, or turn = into +=")
def hoist_accumulator(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "accumulator-overwritten-in-loop"):
        if not isinstance(node, ast.Assign):
            continue
        initialiser = isinstance(node.value, ast.Call) and call_name(node.value, last=True) in ("zeros", "full", "zeros_like", "full_like")
        modes = ("drop", "hoist") if initialiser else ("accumulate",)
        for mode in modes:
            edited = _rewrite(source, _FixAccumulator(node.lineno, mode))
            if edited is not None:
                yield edited


# -- broadcast-error --------------------------------------------------------------------------------


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
        return updated_node.with_changes(slice=[
            first.with_changes(slice=second.slice), second.with_changes(slice=first.slice),
        ])


@recipe("swap-broadcast", "expand a 1-D vector along the axis its offsets run along: v[:, None] <-> v[None, :]")
def swap_broadcast(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "broadcast-axis-mismatch"):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            edited = _rewrite(source, _SwapBroadcast(node.lineno, node.value.id))
            if edited is not None:
                yield edited


# -- wrong-reduction-init ---------------------------------------------------------------------------


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
            value = cst.Arg(_expr(self.value), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if len(args) > 1 else cst.MaybeSentinel.DEFAULT)
            self.changed = True
            return updated_node.with_changes(func=new_func, args=[shape, value, *args[1:]])
        if name == "full" and len(updated_node.args) > 1:
            args = list(updated_node.args)
            args[1] = args[1].with_changes(value=_expr(self.value))
            self.changed = True
            return updated_node.with_changes(args=args)
        return updated_node


@recipe("reduction-identity", "start a running max at -inf (min at +inf); start an online-softmax sum at 1 when its max starts from data")
def reduction_identity(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    targets: list[tuple[str, str, ast.AST]] = []
    for node in _cue_nodes(parsed, "max-init-zero"):
        assert isinstance(node, ast.Call)
        smaller = call_name(node, last=True) == "minimum" or (
            call_name(node, last=True) == "where" and isinstance(node.args[0], ast.Compare) and isinstance(node.args[0].ops[0], ast.Lt | ast.LtE)
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


# -- dtype-mismatch ---------------------------------------------------------------------------------


class _FloatDtype(_LineTransformer):
    def __init__(self, line: int, dtype: str) -> None:
        super().__init__()
        self.target, self.dtype = line, dtype

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.line(original_node) == self.target and not self.changed and any(
            a.keyword is not None and a.keyword.value == "dtype" for a in updated_node.args
        ) and call_name(updated_node, last=True) in ("empty", "zeros", "full", "ones", "empty_like", "zeros_like"):
            self.changed = True
            return _set_kwarg(updated_node, "dtype", _expr(self.dtype))
        return updated_node


class _DropIntCast(_LineTransformer):
    """`value.to(tl.int32)` at a line -> `value.to(tl.float32)`."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.target = line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.line(original_node) == self.target and call_name(updated_node, last=True) == "to" and updated_node.args:
            value = updated_node.args[0].value
            if isinstance(value, cst.Attribute) and value.attr.value.startswith(("int", "uint")):
                self.changed = True
                return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=_expr("tl.float32"))])
        return updated_node


@recipe("float-buffer", "allocate buffers that receive float results as float32; do not cast float values to integers")
def float_buffer(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "integer-buffer-for-float"):
        edited = _rewrite(source, _FloatDtype(getattr(node, "lineno", -1), "torch.float32"))
        if edited is not None:
            yield edited
    for node in _cue_nodes(parsed, "float-cast-to-int"):
        edited = _rewrite(source, _DropIntCast(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited


# -- missing-batch-offset ---------------------------------------------------------------------------


class _OffsetBase(_LineTransformer):
    """At a line, the pointer parameter `ptr` -> `ptr + index * stride`."""

    def __init__(self, line: int, ptr: str, index: str, stride: str) -> None:
        super().__init__()
        self.target, self.ptr, self.index, self.stride = line, ptr, index, stride

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value == self.ptr and self.line(original_node) == self.target and not self.changed:
            self.changed = True
            return _expr(f"({self.ptr} + {self.index} * {self.stride})")
        return updated_node


class _Unparen(cst.CSTTransformer):
    """`(p + i * s) + rest` -> `p + i * s + rest` (the parentheses the edit added, where redundant)."""

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        left = updated_node.left
        if isinstance(updated_node.operator, cst.Add) and isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Add):
            return updated_node.with_changes(left=left.with_changes(lpar=[], rpar=[]))
        return updated_node


class _DropOuterParens(cst.CSTTransformer):
    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        value = updated_node.value
        if isinstance(value, cst.BinaryOperation) and value.lpar:
            return updated_node.with_changes(value=value.with_changes(lpar=[], rpar=[]))
        return updated_node


@recipe("add-batch-offset", "offset a base pointer by its batch (or head) index times the stride the kernel receives but never uses")
def add_batch_offset(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for arg in _cue_nodes(parsed, "unused-stride-param"):
        assert isinstance(arg, ast.arg)
        kernel = next((k for k in parsed.program.kernels.values() if arg in k.node.args.args), None)
        if kernel is None:
            continue
        prefixes = sorted((p[:-4] for p in kernel.params if p.endswith("_ptr")), key=len, reverse=True)
        rest = arg.arg[len("stride_"):]
        prefix = next((p for p in prefixes if rest.startswith(p)), None)
        if prefix is None:
            continue
        dim = rest[len(prefix):]
        partners = [f"stride_{p}{dim}" for p in prefixes if p != prefix and f"stride_{p}{dim}" in kernel.params]
        indices = _multipliers(kernel, partners)
        first = _first_use(kernel, f"{prefix}_ptr")
        if first is None:
            continue
        for index in indices[:2]:
            edited = _rewrite(source, _OffsetBase(first, f"{prefix}_ptr", index, arg.arg))
            if edited is not None:
                yield parse(edited).visit(_Unparen()).visit(_DropOuterParens()).code


def _multipliers(kernel: Kernel, strides: list[str]) -> list[str]:
    """What the partner strides are multiplied by (`b` in `b * stride_qb`)."""
    found: list[str] = []
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(side, ast.Name) and side.id in strides:
                    found.append(ast.unparse(other))
    return list(dict.fromkeys(found))


def _first_use(kernel: Kernel, name: str) -> int | None:
    lines = [n.lineno for n in ast.walk(kernel.node) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return min(lines) if lines else None


# -- uninitialized-output ---------------------------------------------------------------------------


class _GridAxis(_LineTransformer):
    def __init__(self, line: int, axis: int, value: str) -> None:
        super().__init__()
        self.target, self.axis, self.value = line, axis, value

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        if self.line(original_node) != self.target or self.changed:
            return updated_node
        elements = list(updated_node.elements)
        if self.axis < len(elements) and m.matches(elements[self.axis].value, m.Integer("1")):
            elements[self.axis] = elements[self.axis].with_changes(value=_expr(self.value))
        elif self.axis == len(elements):
            last = elements[-1]
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            elements.append(cst.Element(_expr(self.value)))
        else:
            return updated_node
        self.changed = True
        return updated_node.with_changes(elements=elements)


class _RangeFromZero(_LineTransformer):
    def __init__(self, line: int) -> None:
        super().__init__()
        self.target = line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.line(original_node) == self.target and call_name(updated_node, last=True) in ("range", "static_range") and len(updated_node.args) >= 2:
            self.changed = True
            args = list(updated_node.args)
            args[0] = args[0].with_changes(value=cst.Integer("0"))
            return updated_node.with_changes(args=args)
        return updated_node


def _axis_extent(kernel: Kernel, launch_args: dict[str, ast.expr], axis: int) -> str | None:
    """`triton.cdiv(size, block)` for a grid axis, from how the kernel tiles program_id(axis)."""
    pid_names = {
        name for name, values in kernel.assigns.items()
        if any(constant_value(argument(c, 0, "axis")) == float(axis) for v in values for c in calls_in(v, "program_id"))
    }
    for name, values in kernel.assigns.items():
        for value in values:
            if not (names_in(value) & pid_names and any(True for _ in calls_in(value, "arange"))):
                continue
            blocks = [b for b in names_in(value) if b in kernel.constexprs]
            bounds = [b for b in _bounds_for(kernel, {name}) if b.isidentifier() and b in kernel.params]
            if blocks and bounds and blocks[0] in launch_args and bounds[0] in launch_args:
                return f"triton.cdiv({ast.unparse(launch_args[bounds[0]])}, {ast.unparse(launch_args[blocks[0]])})"
    return None


@recipe("cover-output", "make every output element written: add the missing grid axis, start write loops at 0, zero-fill partially written buffers")
def cover_output(source: str, context: RecipeContext) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for kernel in parsed.program.kernels.values():
        used = sorted(
            int(constant_value(argument(c, 0, "axis")) or 0) for c in calls_in(kernel.node, "program_id")
        )
        for launch in parsed.program.launches_of(kernel):
            if launch.grid is None:
                continue
            for axis in dict.fromkeys(used):
                missing = axis >= len(launch.grid) or (axis > 0 and constant_value(launch.grid[axis]) == 1.0)
                extent = _axis_extent(kernel, launch.args, axis) if missing else None
                if extent is None:
                    continue
                tuple_line = launch.grid[0].lineno if launch.grid else -1
                edited = _rewrite(source, _GridAxis(tuple_line, axis, extent))
                if edited is not None:
                    yield edited
    for node in _cue_nodes(parsed, "store-loop-skips-start"):
        edited = _rewrite(source, _RangeFromZero(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited
    lines = {getattr(n, "lineno", -1) for n in _cue_nodes(parsed, "partial-store-into-empty")}
    if lines:
        edited = _rewrite(source, _EmptyToZeros(lines))
        if edited is not None:
            yield edited
