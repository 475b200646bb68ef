"""Generic one-token edits, for bugs no specific operator names: a name for another of its kind, a term.

Repair operators for any bug kind (kope.bugs.registry lists them as a kind of their own).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.bugs.analysis import constexprs_of, params_of
from kope.bugs.edit import Edit, Program, address_exprs, assignments, boolean, edit_at, operator, pointers_of
from kope.bugs.ids import BugId
from kope.source import call_name

# -- the search's edits (repair operators) -----------------------------------------------------


_ROLE_LABEL: dict[str, BugId] = {
    "stride": "wrong-stride",
    "pointer": "wrong-stride",
    "size": "missing-mask",
    "block": "index-shift",
}
"""The taxonomy id of a swap between parameters of one role; locals: `index-shift` for positions, else
`wrong-constant`."""


def kinds(program: Program, kernel: ast.FunctionDef) -> dict[str, str]:
    """Every parameter's and single-assignment local's kind (see the module's docstring)."""
    strides = set(program.strides(kernel))
    pointers = pointers_of(kernel)
    blocks = set(constexprs_of(kernel))
    values = set(program.value_scalars(kernel))
    found: dict[str, str] = {}
    for name in params_of(kernel):
        if name in strides:
            found[name] = "stride"
        elif name in pointers:
            found[name] = "pointer"
        elif name in blocks:
            found[name] = "block"
        elif name in values:
            found[name] = "value"
        else:
            found[name] = "size"
    for name, assigns in assignments(kernel).items():
        if len(assigns) != 1 or name in found:
            continue
        value = assigns[0].value
        calls = sorted({call_name(n) for n in ast.walk(value) if isinstance(n, ast.Call)} - {""})
        position = any(c in ("tl.program_id", "tl.arange") for c in calls)
        found[name] = ("position:" if position else "local:") + ",".join(calls)
    return found


def _label(kind: str) -> BugId:
    if kind in _ROLE_LABEL:
        return _ROLE_LABEL[kind]
    return "index-shift" if kind.startswith("position:") else "wrong-constant"


def _defined_before(kernel: ast.FunctionDef, name: str, line: int) -> bool:
    if name in params_of(kernel):
        return True
    return any(a.lineno < line for a in assignments(kernel).get(name, []))


@operator("name-swap", "wrong-stride")
def name_swap(program: Program) -> Iterator[Edit]:
    """A name read in a kernel replaced by another of its kind defined before it (`x` for `x_f32`, `stride_ym` for
    `stride_xm`, `n_rows` for `n_cols`, `pid_m` for `pid_n`)."""
    for kernel in program.kernels:
        kind_of = kinds(program, kernel)
        by_kind: dict[str, list[str]] = {}
        for name, kind in kind_of.items():
            by_kind.setdefault(kind, []).append(name)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in kind_of):
                continue
            kind = kind_of[node.id]
            for other in by_kind[kind]:
                if other == node.id or not _defined_before(kernel, other, node.lineno):
                    continue
                edit = edit_at(program, "name-swap", node, other, f"`{node.id}` -> `{other}` (line {node.lineno})")
                yield Edit(edit.operator, _label(kind), edit.line, edit.description, edit.source)


def _context(kernel: ast.FunctionDef) -> dict[int, BugId]:
    """The taxonomy id of an edit by where its node is: in an address, a comparison, or a computed value."""
    found: dict[int, BugId] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.expr) and boolean(node):
            for inner in ast.walk(node):
                found.setdefault(id(inner), "mask-off-by-one")
    for expr in address_exprs(kernel):
        for inner in ast.walk(expr):
            found.setdefault(id(inner), "index-shift")
    return found


@operator("drop-term", "wrong-normalizer")
def drop_term(program: Program) -> Iterator[Edit]:
    """A sum, difference, product or quotient in a kernel replaced by one of its operands: a term or a factor too
    many (`row * stride + 1`, `acc / n / n`, `x * scale` where the scale was applied already)."""
    for kernel in program.kernels:
        context = _context(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div)):
                continue
            label = context.get(id(node), "wrong-normalizer")
            sides = [node.left] if isinstance(node.op, ast.Sub | ast.Div) else [node.left, node.right]
            for side in sides:
                text = program.code(side)
                edit = edit_at(
                    program, "drop-term", node, program.fitted(node, text), f"`{program.code(node)}` -> `{text}`"
                )
                yield Edit(edit.operator, label, edit.line, edit.description, edit.source)


_SHAPES = ("tl.arange", "tl.zeros", "tl.full", "tl.program_id", "tl.num_programs", "tl.reshape", "tl.view")
"""Calls whose integer arguments are shapes, axes or ranges: other operators edit those."""


@operator("int-literal", "index-shift")
def int_literal(program: Program) -> Iterator[Edit]:
    """An integer literal in a kernel's arithmetic one more or one less (`n - 2` for `n - 1`, `i + 1` for `i`, a
    start of 1 for 0), not in shapes, axes, ranges or program ids."""
    for kernel in program.kernels:
        context = _context(kernel)
        skip = {
            id(inner)
            for node in ast.walk(kernel)
            if isinstance(node, ast.Call) and (call_name(node) in _SHAPES or call_name(node, last=True) == "range")
            for inner in ast.walk(node)
        }
        skip |= {id(k.value) for node in ast.walk(kernel) if isinstance(node, ast.Call) for k in node.keywords}
        for node in ast.walk(kernel):
            if isinstance(node, ast.BinOp | ast.Compare):
                operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.left, *node.comparators]
                for operand in operands:
                    if not (
                        isinstance(operand, ast.Constant)
                        and type(operand.value) is int
                        and id(operand) not in skip
                        and id(node) not in skip
                    ):
                        continue
                    value = operand.value
                    label = context.get(id(node), "index-shift")
                    for new in (value + 1, value - 1):
                        if new < 0:
                            continue
                        edit = edit_at(
                            program, "int-literal", operand, str(new), f"`{program.code(node)}`: {value} -> {new}"
                        )
                        yield Edit(edit.operator, label, edit.line, edit.description, edit.source)


@operator("if-branch", "wrong-constant")
def if_branch(program: Program) -> Iterator[Edit]:
    """A conditional expression `a if c else b` replaced by one of its branches, in a kernel or on the host (a
    half-precision accumulator chosen for half inputs: `ACC=tl.float16 if x.dtype == torch.float16 else
    tl.float32`)."""
    for node in ast.walk(program.tree):
        if isinstance(node, ast.IfExp):
            label: BugId = "precision-loss" if "float16" in program.code(node) else "wrong-constant"
            for branch in (node.body, node.orelse):
                text = program.code(branch)
                description = f"`{program.code(node)}` -> `{text}`"
                edit = edit_at(program, "if-branch", node, program.fitted(node, text), description)
                yield Edit(edit.operator, label, edit.line, edit.description, edit.source)
