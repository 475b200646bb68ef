"""Strides: a stride argument at a launch, a stride parameter in a kernel's addresses.

The bug kind's edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: wrong-stride (its cues and recipe sit with indexing's).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from kope.bugs.analysis import names_in
from kope.bugs.edit import Edit, Program, address_exprs, edit_at, launches_of, operator, params_of, swapped, terms_of
from kope.bugs.mutation import Context, Mutation, mutation, positional

# -- the search's edits (repair operators) -----------------------------------------------------


def _stride_call(node: ast.AST) -> tuple[str, int] | None:
    """`x.stride(1)` -> ("x", 1)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "stride"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
    ):
        return ast.unparse(node.func.value), node.args[0].value
    return None


def _odd_ones(strides: list[tuple[int, ast.expr, tuple[str, int]]]) -> dict[int, str]:
    """Stride arguments of one tensor in the middle of a run of another's (`x.stride(1), out.stride(2),
    x.stride(3)`): the argument's node id -> the run's tensor."""
    found: dict[int, str] = {}
    for (i0, _, (t0, d0)), (i1, arg, (t1, d1)), (i2, _, (t2, d2)) in zip(
        strides, strides[1:], strides[2:], strict=False
    ):
        if i1 == i0 + 1 and i2 == i1 + 1 and t0 == t2 != t1 and d0 + 1 == d1 == d2 - 1:
            found[id(arg)] = t0
    return found


@operator("stride-argument", "wrong-stride")
def stride_argument(program: Program) -> Iterator[Edit]:
    """At a launch: a `t.stride(i)` argument replaced by the tensor's other strides or another tensor's
    stride of the same dimension; two stride arguments swapped."""
    for call in launches_of(program):
        strides = [(i, arg, s) for i, arg in enumerate(call.args) if (s := _stride_call(arg)) is not None]
        if not strides:
            continue
        tensors = list(dict.fromkeys(s[0] for _, _, s in strides))
        dims = max(2, max(s[1] for _, _, s in strides) + 1)
        odd = _odd_ones(strides)
        for _, arg, (tensor, dim) in strides:
            if id(arg) in odd:  # first: the run's own tensor in place of the odd one
                new = f"{odd[id(arg)]}.stride({dim})"
                cue = f"`{program.code(arg)}` sits among `{odd[id(arg)]}`'s strides"
                edit = edit_at(
                    program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                )
                yield replace(edit, cue=cue)
            for other in range(dims):
                if other != dim:
                    new = f"{tensor}.stride({other})"
                    yield edit_at(
                        program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                    )
            for other_tensor in tensors:
                if other_tensor != tensor:
                    new = f"{other_tensor}.stride({dim})"
                    yield edit_at(
                        program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                    )
        for (i, a, sa), (j, b, sb) in itertools.combinations(strides, 2):
            if sa[0] == sb[0] and sa != sb:
                first, new, one, two = swapped(program, a, b)
                # a tensor's strides passed in falling order (`A.stride(1), A.stride(0)`): a transposed operand
                # passed as stored, or the order mixed up; cued, it is tried early
                falling = j == i + 1 and sb[1] < sa[1]
                cue = f"`{one}` and `{two}` are passed in falling dimension order" if falling else ""
                yield Edit(
                    "stride-argument",
                    "wrong-stride",
                    getattr(first, "lineno", 0),
                    f"swap launch arguments `{one}` and `{two}`",
                    new,
                    cue,
                )


@operator("stride-name", "wrong-stride")
def stride_name(program: Program) -> Iterator[Edit]:
    """In a kernel's address arithmetic: one stride parameter replaced by another of the same kernel."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        if len(strides) < 2:
            continue
        for node in ast.walk(kernel):
            if isinstance(node, ast.Name) and node.id in strides and isinstance(node.ctx, ast.Load):
                for other in strides:
                    if other != node.id:
                        yield edit_at(
                            program, "stride-name", node, other, f"`{node.id}` -> `{other}` (line {node.lineno})"
                        )


@operator("stride-swap", "wrong-stride")
def stride_swap(program: Program) -> Iterator[Edit]:
    """Two stride parameters swapped within one address expression (dimensions exchanged)."""
    for kernel in program.kernels:
        strides = set(program.strides(kernel))
        for expr in address_exprs(kernel):
            used = [n for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in strides]
            for a, b in itertools.combinations(used, 2):
                if a.id == b.id:
                    continue
                first, new, _, _ = swapped(program, a, b)
                yield Edit(
                    "stride-swap",
                    "wrong-stride",
                    getattr(first, "lineno", 0),
                    f"swap `{a.id}` and `{b.id}` in `{ast.unparse(expr)}`",
                    new,
                )


@operator("stride-factor", "wrong-stride")
def stride_factor(program: Program) -> Iterator[Edit]:
    """An address term not scaled by any stride, multiplied by a stride parameter the kernel never uses
    (a stride dropped for a transposed or non-contiguous operand)."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        body_names: set[str] = set()
        for statement in kernel.body:
            body_names |= names_in(statement)
        unused = [s for s in strides if s not in body_names]
        if not unused:
            continue
        for expr in address_exprs(kernel):
            for term in terms_of(expr):
                if names_in(term) & set(strides) or isinstance(term, ast.Constant):
                    continue
                if isinstance(term, ast.Name) and term.id in params_of(kernel):
                    continue
                for stride in unused:
                    new = f"({ast.unparse(term)}) * {stride}"
                    yield edit_at(program, "stride-factor", term, new, f"`{program.code(term)}` -> `{new}`")


@operator("advance-stride", "wrong-stride")
def advance_stride(program: Program) -> Iterator[Edit]:
    """A pointer advanced by a count of elements (`b_ptrs += BLOCK_K`) scaled by a stride of the kernel: the
    count of rows it means. Cued when another pointer of the same loop advances by a stride."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            addressing = {n for e in address_exprs(kernel) for n in names_in(e)}
            advances = [
                n
                for s in loop.body
                for n in ast.walk(s)
                if isinstance(n, ast.AugAssign)
                and isinstance(n.op, ast.Add)
                and isinstance(n.target, ast.Name)
                and n.target.id in addressing  # a pointer, not an accumulator (`acc += tl.dot(a, b)`)
            ]
            strided = [a for a in advances if names_in(a.value) & set(strides)]
            for node in advances:
                if node in strided:
                    continue
                cue = (
                    f"`{program.code(node)}` advances without a stride while `{program.code(strided[0])}` has one"
                    if strided
                    else ""
                )
                for stride in strides:
                    new = f"({program.code(node.value)}) * {stride}"
                    description = f"advance `{program.code(node.value)}` -> `{new}`"
                    yield replace(edit_at(program, "advance-stride", node.value, new, description), cue=cue)


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
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


@mutation
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
