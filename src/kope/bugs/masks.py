"""Masks and bounds: a load or store without a mask, an inclusive bound, padding that reaches a reduction.

The bug kind's cues, recipes, edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: missing-mask, mask-off-by-one, padding-in-reduction.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import (
    Kernel,
    Launch,
    argument,
    calls_in,
    constant_value,
    constexprs_of,
    expand,
    host_assignments,
    is_uniform,
    keyword_of,
    names_in,
    padding_leaks,
    statements,
)
from kope.bugs.cue import Source, _kernels, cue, detect
from kope.bugs.edit import Edit, Program, arange_names, assignments, boolean, edit_at, operator
from kope.bugs.mutation import (
    Context,
    Mutation,
    cst_names_in,
    float_value,
    kwarg,
    mutation,
    positional,
    replace_kwarg,
    without_args,
)
from kope.bugs.recipe import (
    NEG_INF,
    _analysed,
    _bounds_for,
    _expr,
    _hit_lines,
    _LineTransformer,
    _names,
    _rewrite,
    _set_kwarg,
    recipe,
)
from kope.bugs.reference import triangular
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue("load-without-mask", "a tl.load of a block of pointers without a mask, where the block can overrun the data")
def load_without_mask(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "load"):
            if argument(call, 1, "mask") is None and _overrunning_block(
                source, kernel, call.args[0] if call.args else None
            ):
                yield call


@cue("store-without-mask", "a tl.store of a block of pointers without a mask, where the block can overrun the data")
def store_without_mask(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "store"):
            if argument(call, 2, "mask") is None and _overrunning_block(
                source, kernel, call.args[0] if call.args else None
            ):
                yield call


def _overrunning_block(source: Source, kernel: Kernel, pointer: ast.expr | None) -> bool:
    """Whether an address is built from block offsets (tl.arange) whose width is a padded block
    size (a power of two, a fixed tile), not an exact extent of the data."""
    if pointer is None:
        return False
    offsets = set().union(*(names_in(part) & kernel.aranges for part in expand(pointer, kernel, depth=3)))
    direct = any(True for _ in calls_in(pointer, "arange"))
    if not offsets and not direct:
        return False
    widths: set[str] = set()
    literal = False
    for part in [pointer, *expand(pointer, kernel, depth=4)]:
        for call in calls_in(part, "arange"):
            width = call.args[1] if len(call.args) == 2 else None
            if isinstance(width, ast.Name):
                widths.add(width.id)
            elif width is not None:
                literal = True
    if literal or not widths:
        return True
    launches = source.dataflow.launches_of(kernel)
    if not launches:
        return True
    return any(_padded(launch, width) for launch in launches for width in widths)


def _padded(launch: Launch, param: str, depth: int = 3) -> bool:
    value = launch.args.get(param)
    if value is None:
        return True  # a default or an autotuned block size
    return _padded_value(launch.host, value, depth)


def _padded_value(host: ast.FunctionDef | None, value: ast.AST, depth: int) -> bool:
    if depth < 0:
        return True
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        assigned = host_assignments(host, value.id)
        if not assigned:
            return value.id.isupper()  # a module-level tile size, not a size argument
        return _padded_value(host, assigned[-1], depth - 1)
    return any(True for _ in calls_in(value, "next_power_of_2", "min", "max"))


def _mask_argument(call: ast.Call) -> ast.expr | None:
    position = 1 if call_name(call, last=True) == "load" else 2
    return argument(call, position, "mask")


def _inclusive_bound(compare: ast.Compare, kernel: Kernel) -> bool:
    """`offs <= n`, `n >= offs`, `offs < n + 1`: a block-offset comparison that admits the bound itself."""
    if len(compare.ops) != 1:
        return False
    left, op, right = compare.left, compare.ops[0], compare.comparators[0]
    if isinstance(op, ast.LtE) and names_in(left) & kernel.aranges and not names_in(right) & kernel.aranges:
        return True
    if isinstance(op, ast.GtE) and names_in(right) & kernel.aranges and not names_in(left) & kernel.aranges:
        return True
    if isinstance(op, ast.Lt) and names_in(left) & kernel.aranges and isinstance(right, ast.BinOp):
        return isinstance(right.op, ast.Add) and constant_value(right.right) == 1.0
    return False


@cue("mask-inclusive-bound", "a load or store mask compares block offsets with <= (or < n + 1): one element too many")
def mask_inclusive_bound(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "load", "store"):
            for node in expand(_mask_argument(call), kernel):
                for compare in ast.walk(node):
                    if isinstance(compare, ast.Compare) and _inclusive_bound(compare, kernel):
                        yield compare


@cue(
    "padding-reaches-reduction",
    "masked-out lanes hold a value (other=0 before a max, x - mean...) that a reduction takes in",
)
def padding_reaches_reduction(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for leak in padding_leaks(kernel):
            yield leak.call


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


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
        kernel = parsed.dataflow.kernel_of(node)
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
    offsets = set().union(*(k.aranges for k in parsed.dataflow.kernels.values()))
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
        kernel = parsed.dataflow.kernel_of(node)
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


# -- the search's edits (repair operators) -----------------------------------------------------


_FLIP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}


@operator("compare-flip", "mask-off-by-one")
def compare_flip(program: Program) -> Iterator[Edit]:
    """`<` to `<=` and back (and `>`/`>=`) in a kernel's comparisons: masks and bounds."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            new = f"{ast.unparse(node.left)} {_FLIP[type(node.ops[0])]} {ast.unparse(node.comparators[0])}"
            yield edit_at(program, "compare-flip", node, new, f"`{program.code(node)}` -> `{new}`")


_REVERSE = {ast.Lt: ">", ast.LtE: ">=", ast.Gt: "<", ast.GtE: "<="}


def _broadcast_index(node: ast.expr) -> bool:
    """An index vector set along one axis of a tile: `offs_m[:, None]`, `k[None, :]`."""
    return isinstance(node, ast.Subscript) and any(
        isinstance(e, ast.Constant) and e.value is None for e in ast.walk(node.slice)
    )


@operator("compare-reverse", "mask-off-by-one")
def compare_reverse(program: Program) -> Iterator[Edit]:
    """A comparison of a tile's row and column indices turned the other way (`offs_m[:, None] >= k[None, :]` ->
    `<=`): the lower triangle kept where the upper belongs, a causal mask facing the future. Grounded where the
    reference makes a triangle (`torch.triu`, `torch.tril`, `.tril()`): the comparison is its orientation."""
    grounded = triangular(program.reference)
    compares = [n for _, n in program.kernel_nodes() if isinstance(n, ast.Compare) and len(n.ops) == 1]
    for node in sorted(compares, key=lambda n: (n.lineno, n.col_offset)):
        if type(node.ops[0]) not in _REVERSE:
            continue
        left, right = node.left, node.comparators[0]
        if not (_broadcast_index(left) and _broadcast_index(right)):
            continue
        new = f"{program.code(left)} {_REVERSE[type(node.ops[0])]} {program.code(right)}"
        cue = "the reference makes a triangle: a comparison of row and column indices is its orientation"
        yield replace(
            edit_at(program, "compare-reverse", node, new, f"`{program.code(node)}` -> `{new}`"),
            cue=cue if grounded else "",
            grounded=grounded,
        )


@operator("add-mask", "missing-mask")
def add_mask_edit(program: Program) -> Iterator[Edit]:
    """A load or store without a mask given one of the kernel's masks (names bound to comparisons), or, after them,
    its block index compared with a size parameter (`cols < n_cols`); a load's masked lanes read 0, then 1, then -inf
    (a sum's, a product's, a maximum's identity)."""
    for kernel in program.kernels:
        masks = [
            n
            for n, a in assignments(kernel).items()
            if any(
                isinstance(x.value, ast.Compare)
                or (isinstance(x.value, ast.BinOp) and isinstance(x.value.op, ast.BitAnd))
                for x in a
            )
        ]
        for node in ast.walk(kernel):
            fn = call_name(node)
            if isinstance(node, ast.Call) and fn in ("tl.load", "tl.store") and not keyword_of(node, "mask"):
                limit = 2 if fn == "tl.store" else 1
                if len(node.args) > limit:
                    continue
                _, end = program.span(node)
                pads = ("0.0", "1.0", "float('-inf')") if fn == "tl.load" else ("",)
                ranges = _block_indices(kernel)
                indices = [n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and n.id in ranges]
                sizes = [s for s in program.scalars(kernel) if s not in program.value_scalars(kernel)]
                made = [f"{i} < {b}" for i in dict.fromkeys(indices) for b in sizes]  # none named: `cols < n_cols`
                for pad in pads:  # the padding the reduction it feeds needs: a sum's 0, a product's 1, a max's -inf
                    for mask in [*masks, *made]:
                        extra = f", mask={mask}" + (f", other={pad}" if pad else "")
                        new = program.text[: end - 1].rstrip() + extra + ")" + program.text[end:]
                        description = f"`mask={mask}{', other=' + pad if pad else ''}` on the {fn.split('.')[-1]}"
                        yield Edit("add-mask", "missing-mask", node.lineno, description, new)


def _block_indices(kernel: ast.FunctionDef) -> set[str]:
    """Names holding a block of indices: made by `tl.arange`, or from such a name (`cols = r * B + offs`)."""
    found: set[str] = set()
    for _ in range(3):
        for name, assigns in assignments(kernel).items():
            if any("tl.arange" in ast.unparse(a.value) or names_in(a.value) & found for a in assigns):
                found.add(name)
    return {
        n for n in found if not any(boolean(a.value) or "load(" in ast.unparse(a.value) for a in assignments(kernel)[n])
    }


def _bound_names(node: ast.AST) -> list[tuple[ast.Compare, str, str]]:
    """Comparisons `index < bound` with a name on each side: (node, index's root name, bound)."""
    found = []
    for compare in ast.walk(node):
        if isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.comparators[0], ast.Name):
            left = compare.left
            root = left.value if isinstance(left, ast.Subscript) else left
            if isinstance(root, ast.Name):
                found.append((compare, root.id, compare.comparators[0].id))
    return found


@operator("compare-operand", "missing-mask")
def compare_operand(program: Program) -> Iterator[Edit]:
    """A comparison's bound replaced by another scalar parameter of the kernel (a mask on the wrong dimension:
    the columns compared with `n_rows`)."""
    for kernel in program.kernels:
        scalars = program.scalars(kernel)
        suspicious: set[int] = set()
        for statement in ast.walk(kernel):
            if isinstance(statement, ast.BinOp) and isinstance(statement.op, ast.BitAnd):
                bounds = _bound_names(statement)
                for (a, ia, ba), (b, ib, bb) in itertools.combinations(bounds, 2):
                    if ba == bb and ia != ib:
                        suspicious |= {id(a), id(b)}
        for compare, index, bound in _bound_names(kernel):
            if bound not in scalars:
                continue
            cue = f"`{index}` and another index are both compared with `{bound}`" if id(compare) in suspicious else ""
            for other in scalars:
                if other != bound:
                    target = compare.comparators[0]
                    edit = edit_at(
                        program,
                        "compare-operand",
                        target,
                        other,
                        f"bound `{bound}` -> `{other}` in `{program.code(compare)}`",
                    )
                    yield replace(edit, cue=cue)


def _clauses(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd):
        return _clauses(expr.left) + _clauses(expr.right)
    return [expr]


@operator("mask-clause", "uninitialized-output")
def mask_clause(program: Program) -> Iterator[Edit]:
    """A clause dropped from a store's mask `a & b` (written inline or bound to a name): an extra condition that
    keeps part of the output unwritten."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.store"):
                continue
            mask = keyword_of(node, "mask")
            expr = mask.value if mask is not None else (node.args[2] if len(node.args) > 2 else None)
            if isinstance(expr, ast.Name) and assigned.get(expr.id):
                expr = assigned[expr.id][-1].value
            if expr is None:
                continue
            clauses = _clauses(expr)
            if len(clauses) < 2:
                continue
            for dropped in clauses:
                kept = " & ".join(f"({program.code(c)})" for c in clauses if c is not dropped)
                description = f"mask `{program.code(expr)}` without `{program.code(dropped)}`"
                yield edit_at(program, "mask-clause", expr, kept, description)


@operator("loop-tail", "missing-mask")
def loop_tail(program: Program) -> Iterator[Edit]:
    """A loop over blocks, `for k in range(0, stop, BLOCK)`, whose masks bound its block's index by another size only:
    where `stop` is not a multiple of BLOCK, the last block runs past the loop's own range (a split-K partition
    reaching into the next one, counted twice). The mask gets `(k + lanes) < stop`; cued."""
    cue = "a loop over blocks whose masks never compare with the loop's own stop"
    for kernel in program.kernels:
        lanes = arange_names(kernel)
        for loop in ast.walk(kernel):
            if not (
                isinstance(loop, ast.For)
                and isinstance(loop.target, ast.Name)
                and isinstance(loop.iter, ast.Call)
                and call_name(loop.iter) == "range"
                and len(loop.iter.args) == 3
                and isinstance(loop.iter.args[1], ast.Name | ast.Attribute)
            ):
                continue
            var, stop = loop.target.id, program.code(loop.iter.args[1])
            body = [n for statement in loop.body for n in ast.walk(statement)]
            # the block's index: a name the loop computes from its variable and the block's lanes
            indices = {
                target.id: sorted(used & lanes)[0]
                for node in body
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name) and var in (used := names_in(node.value)) and used & lanes
            }
            stops = names_in(loop.iter.args[1])
            for node in body:
                if not (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Compare | ast.BinOp)
                ):
                    continue
                read = names_in(node.value)
                bounds = any(
                    isinstance(c, ast.Compare) and any(isinstance(op, ast.Lt | ast.LtE) for op in c.ops)
                    for c in ast.walk(node.value)
                )
                index = next((name for name in indices if name in read), None)
                if index is None or not bounds or stops <= read:
                    continue
                text, lane = program.code(node.value), indices[index]
                clause = f"(({var} + {lane}) < {stop})"
                yield Edit(
                    "loop-tail",
                    "missing-mask",
                    node.lineno,
                    f"mask `{text}` & `{clause}`: the last block of the loop stops at `{stop}`",
                    program.replace(node.value, f"({text}) & {clause}"),
                    cue,
                )


def _block_loop(loop: ast.For, lanes: dict[str, str]) -> tuple[str, str, str] | None:
    """A loop over the blocks of a size: `for k in range(0, tl.cdiv(K, B))` (counted: what is left of K at block
    `k` is `K - k * B`) or `for k in range(0, K, B)` (stepped: `K - k`), with B the width of some lanes. Returns
    (block width, the size, what is left of it), else None."""
    if not (isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)):
        return None
    if call_name(loop.iter, last=True) not in ("range", "static_range") or loop.iter.keywords:
        return None
    args, var, widths = loop.iter.args, loop.target.id, set(lanes.values())
    if len(args) == 3 and ast.unparse(args[2]) in widths and var not in names_in(args[1]):
        return ast.unparse(args[2]), ast.unparse(args[1]), f"{ast.unparse(args[1])} - {var}"
    if len(args) == 2 and not (isinstance(args[0], ast.Constant) and args[0].value == 0):
        return None
    count = args[-1] if len(args) in (1, 2) else None
    if isinstance(count, ast.Call) and call_name(count, last=True) == "cdiv" and len(count.args) == 2:
        width, size = ast.unparse(count.args[1]), count.args[0]
        if width in widths and var not in names_in(size):
            return width, ast.unparse(size), f"{ast.unparse(size)} - {var} * {width}"
    return None


def _fold(expr: ast.AST, env: dict[str, int], assigned: dict[str, list[ast.Assign]], depth: int = 0) -> int:
    """An integer expression of names, literals, + - * // %, min and max, folded with `env` and the kernel's single
    bindings (`k_end = min(k_start + BLOCK, K)`); KeyError or ValueError where it does not fold."""
    if depth > 8:
        raise ValueError("too deep")
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Name):
        if expr.id in env:
            return env[expr.id]
        bindings = assigned.get(expr.id, [])
        if len(bindings) != 1:
            raise KeyError(expr.id)
        return _fold(bindings[0].value, env, assigned, depth + 1)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return -_fold(expr.operand, env, assigned, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv | ast.Mod):
        a, b = _fold(expr.left, env, assigned, depth + 1), _fold(expr.right, env, assigned, depth + 1)
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
        return ops[type(expr.op)] if type(expr.op) in ops else (a // b if isinstance(expr.op, ast.FloorDiv) else a % b)
    if isinstance(expr, ast.Call) and call_name(expr, last=True) in ("min", "max", "minimum", "maximum") and expr.args:
        values = [_fold(arg, env, assigned, depth + 1) for arg in expr.args]
        return min(values) if call_name(expr, last=True) in ("min", "minimum") else max(values)
    raise ValueError(ast.unparse(expr))


@dataclass(frozen=True)
class _Tail:
    """A loop over the blocks of a size, as `block-tail` reads it."""

    program: Program
    loop: ast.For
    lanes: frozenset[str]
    """The lanes of the loop's block (`tl.arange(0, BLOCK_K)`) that the loop does not move."""
    size: frozenset[str]
    width: str
    left: str
    """What is left of the size at this block: `K - k * BLOCK_K` (counted), `K - k` (stepped)."""
    stepped: bool
    assigned: dict[str, list[ast.Assign]]

    def bounds(self, holder: ast.AST) -> list[tuple[ast.Compare, bool]]:
        """The comparisons in `holder` that bound the lanes (`lanes < bound`), each with whether it is right."""
        found: list[tuple[ast.Compare, bool]] = []
        for compare in ast.walk(holder):
            if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1):
                continue
            lane = compare.left
            while isinstance(lane, ast.Subscript):
                lane = lane.value
            inclusive = isinstance(compare.ops[0], ast.LtE)
            if isinstance(compare.ops[0], ast.Lt | ast.LtE) and isinstance(lane, ast.Name) and lane.id in self.lanes:
                found.append((compare, self.right(compare.comparators[0], inclusive)))
        return found

    def right(self, bound: ast.expr, inclusive: bool) -> bool:
        """Whether `lanes < bound` keeps exactly the lanes left of the size on every block: checked on numbers
        (a size of 100 and of 37; the kernel's bindings read through) where the bound folds to integers, else read:
        a bound that reads both the loop and the size is taken as right."""
        var, whole = ast.unparse(self.loop.target), ast.parse(self.left, mode="eval").body
        width = int(self.width) if self.width.isdigit() else 16
        others = {n.id for n in ast.walk(whole) if isinstance(n, ast.Name)} - self.size - {var}
        if len(self.size) == 1 and others <= {self.width} and width > 0:
            for size in (100, 37):
                env = {next(iter(self.size)): size, self.width: width}
                steps = range(0, size, width) if self.stepped else range(-(-size // width))
                try:
                    for step in steps:
                        env[var] = step
                        want = _fold(whole, env, self.assigned)
                        got = _fold(bound, env, self.assigned) + (1 if inclusive else 0)
                        if max(0, min(width, want)) != max(0, min(width, got)):
                            return False
                except (KeyError, ValueError, ZeroDivisionError, RecursionError):
                    break
            else:
                return True
        read = _names_behind(bound, self.assigned)
        return var in read and bool(read & self.size)

    def changes(self) -> list[tuple[ast.AST, str]]:
        """Every wrong bound of the loop's loads and stores fixed: in the mask, in a mask bound in the loop, or, for a
        mask bound before the loop, written into the access. A mask that holds a right bound of the lanes (`a_mask
        & (offs_k < K - k * BLOCK_K)`, with `offs_k < K` in `a_mask`) is left as it is."""
        changes: dict[int, tuple[ast.AST, str]] = {}
        inside = {id(n) for n in ast.walk(self.loop)}
        for call in ast.walk(self.loop):
            kind = call_name(call, last=True) if isinstance(call, ast.Call) else None
            mask = argument(call, 2 if kind == "store" else 1, "mask") if isinstance(call, ast.Call) else None
            if kind not in ("load", "store") or mask is None:
                continue
            bound: dict[ast.expr, ast.expr] = {
                name: self.assigned[name.id][0].value
                for name in ast.walk(mask)
                if isinstance(name, ast.Name) and len(self.assigned.get(name.id, [])) == 1
            }
            found: list[tuple[ast.expr, list[tuple[ast.Compare, bool]]]] = [(mask, self.bounds(mask))]
            found += [(name, self.bounds(value)) for name, value in bound.items()]
            if any(ok for _, held in found for _, ok in held):
                continue
            for holder, held in found:
                wrong = [(c, f"{self.program.code(c.left)} < {self.left}") for c, _ in held]
                if holder is mask or id(bound[holder]) in inside:
                    changes.update((id(c), (c, text)) for c, text in wrong)
                elif wrong:  # a mask bound before the loop: the access gets this block's own
                    text = self.program.code(bound[holder])
                    for compare, new in wrong:
                        text = text.replace(self.program.code(compare), new, 1)
                    changes[id(holder)] = (holder, f"({text})")
        return sorted(changes.values(), key=lambda change: self.program.span(change[0]))


@operator("block-tail", "missing-mask")
def block_tail(program: Program) -> Iterator[Edit]:
    """A loop over the blocks of a size (`for k in range(0, tl.cdiv(K, BLOCK_K))`) whose masks bound the block's
    own lanes (`offs_k = tl.arange(0, BLOCK_K)`, not moved by the loop) by the whole size (`offs_k < K`) or by
    the loop alone (`offs_k < (k + 1) * BLOCK_K`): at the last block, where K is not a multiple of the block, they
    read past the size. Every such bound in the loop becomes what is left of the size at this block (`K - k *
    BLOCK_K`), in one edit; a mask bound outside the loop is written into the access. Grounded: lanes that start
    at 0 on every block cannot be bounded by a size that ignores the block."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        lanes = {
            name: ast.unparse(call.args[1])
            for name, values in assigned.items()
            if len(values) == 1
            for call in [values[0].value]
            if isinstance(call, ast.Call) and call_name(call, last=True) == "arange" and len(call.args) == 2
        }
        for loop in ast.walk(kernel):
            if not isinstance(loop, ast.For) or (found := _block_loop(loop, lanes)) is None:
                continue
            width, whole, left = found
            moved = {
                target.id
                for node in ast.walk(loop)
                if isinstance(node, ast.AugAssign | ast.Assign)
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(target, ast.Name)
            }
            own = frozenset(name for name, w in lanes.items() if w == width and name not in moved)
            size = frozenset(names_in(ast.parse(whole, mode="eval")))
            tail = _Tail(program, loop, own, size, width, left, len(loop.iter.args) == 3, assigned)  # type: ignore[attr-defined]
            made = tail.changes()
            if made:
                shown = ", ".join(f"`{program.code(n)}` -> `{t}`" for n, t in made[:2])
                yield Edit(
                    "block-tail",
                    "missing-mask",
                    getattr(made[0][0], "lineno", loop.lineno),
                    f"mask {shown}{' and more' if len(made) > 2 else ''}: at block `{ast.unparse(loop.target)}` only "
                    f"`{left}` is left",
                    program.replace_all(made),
                    "a loop over blocks whose masks bound the block's lanes by a size that ignores the block",
                    grounded=True,
                )


def _broadcast_indices(expr: ast.AST) -> dict[str, str]:
    """The index vectors an address broadcasts over a tile: `offs_m[:, None]` -> {"offs_m": "[:, None]"}."""
    found: dict[str, str] = {}
    for node in ast.walk(expr):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Tuple)
            and any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts)
        ):
            found.setdefault(node.value.id, "[" + ast.unparse(node.slice).strip("()") + "]")
    return found


def _tile_bound(kernel: ast.FunctionDef, index: str) -> str | None:
    """The size an index vector is bounded by, read from the kernel: a comparison of it with a name anywhere
    (`offs_m[:, None] < M`), else the size the kernel counts its blocks in (`offs_n = bn * BLOCK_N + ...` with
    `tl.cdiv(N, BLOCK_N)`)."""
    for _, root, bound in _bound_names(kernel):
        if root == index:
            return bound
    assigned = assignments(kernel)
    blocks = {b for a in assigned.get(index, []) for b in names_in(a.value)} & set(constexprs_of(kernel))
    for call in calls_in(kernel, "cdiv"):
        if len(call.args) == 2 and isinstance(call.args[0], ast.Name) and ast.unparse(call.args[1]) in blocks:
            return call.args[0].id
    return None


def _names_behind(expr: ast.expr, assigned: dict[str, list[ast.Assign]]) -> set[str]:
    """The names an expression reads, and those its names are computed from (a few steps): a mask `m` of
    `m = row_ok[:, None] & col_ok` with `row_ok = rows < M` bounds `rows`."""
    found = set(names_in(expr))
    for _ in range(4):
        more = {x for n in found for a in assigned.get(n, []) for x in names_in(a.value)}
        if more <= found:
            break
        found |= more
    return found


@operator("tile-mask", "missing-mask")
def tile_mask(program: Program) -> Iterator[Edit]:
    """A masked load or store of a 2-D tile whose mask bounds some of the index vectors its address broadcasts but
    not the others (`mask=offs_k[None, :] < K - k0` on `a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak`: the
    last row tile reads past M): each missing `index[...] < bound` is added, the bound read from the kernel (the
    index compared with a size elsewhere, or the size its blocks are counted in). One edit per access, and one that
    completes every access of the kernel at once (a K loop's two loads and the store often lack the same clauses).
    Grounded: the mask already bounds one of the tile's indices, so the access is meant to be masked."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        ranges = _block_indices(kernel)
        fixes: list[tuple[ast.expr, str, str]] = []
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) in ("tl.load", "tl.store") and node.args):
                continue
            position = 2 if call_name(node) == "tl.store" else 1
            mask_kw = keyword_of(node, "mask")
            mask = (
                mask_kw.value if mask_kw is not None else (node.args[position] if len(node.args) > position else None)
            )
            if mask is None:
                continue
            address = node.args[0]
            if isinstance(address, ast.Name) and assigned.get(address.id):
                address = assigned[address.id][0].value
            indices = {i: s for i, s in _broadcast_indices(address).items() if i in ranges}
            bounded = _names_behind(mask, assigned)
            if len(indices) < 2 or not bounded & set(indices):
                continue
            added = []
            for index, subscript in indices.items():
                bound = _tile_bound(kernel, index) if index not in bounded else None
                if bound is not None:
                    added.append(f"({index}{subscript} < {bound})")
            if added:
                fixes.append((mask, program.code(mask), " & ".join([f"({program.code(mask)})", *added])))
        if not fixes:
            continue
        fixes.sort(key=lambda fix: (fix[0].lineno, fix[0].col_offset))
        cue = "a tile's mask bounds some of the index vectors its address broadcasts, not all"
        if len(fixes) > 1:  # grounded once: all of them together
            text = program.replace_all([(mask, new) for mask, _, new in fixes])
            lines = ", ".join(str(mask.lineno) for mask, _, _ in fixes)
            description = f"every tile mask completed (lines {lines})"
            yield Edit("tile-mask", "missing-mask", fixes[0][0].lineno, description, text, cue, grounded=True)
        for mask, old, new in fixes:
            text = program.replace(mask, new)
            description = f"mask `{old}` -> `{new}`"
            yield Edit("tile-mask", "missing-mask", mask.lineno, description, text, cue, grounded=len(fixes) == 1)


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class DropMask(Mutation):
    name = "drop-mask"
    label = "missing-mask"
    summary = "a tl.load or tl.store loses its mask (and its padding value)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) in ("tl.load", "tl.store") and kwarg(node, "mask") is not None:  # type: ignore[arg-type]
            assert isinstance(node, cst.Call)
            return [without_args(node, ("mask", "other"))]
        return []


@mutation
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


@mutation
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
                and any("mask" in n for n in cst_names_in(args[0].value))
                and float_value(args[2].value) == 0.0
            ):
                return [args[1].value.with_changes(lpar=[], rpar=[])]
        return []
