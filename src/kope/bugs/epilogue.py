"""An epilogue step applied to the wrong operand, or in the wrong order, against the reference's chain of steps.

A fused kernel finishes its product with the reference's elementwise steps: the layer's bias, a scale, an
activation. Real models get the steps right and their scope or order wrong:

- `scale-scope`: a factor applied to one term of a sum where the reference scales the whole sum
  (`acc += bias * s` for `(x @ W.T + b) * s`: `acc = (acc + bias) * s`), or the other way round
  (`(acc + b) * s` -> `acc * s + b`, `acc + b * s`). Only outside loops (inside one, the sum is not complete).
- `epilogue-order`: two adjacent statements that each update one value in place (`acc = acc * s`,
  `acc = tl.maximum(acc, 0.0)`, `acc += bias`) exchanged.

Both are reference-guided (kope.bugs.reference.steps: shift, scale, activation, in the order `forward` applies
them): an edit is made only where the reference applies the steps in the order the edit makes (for
`epilogue-order`: the kinds of the value's updates are a subsequence of the reference's steps after the exchange
and not before it), and is cued.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from kope.bugs.edit import Edit, Program, edit_at, operator, swapped
from kope.bugs.reference import steps
from kope.source import call_name

_SUMS = (ast.Add, ast.Sub)
_SCALES = (ast.Mult, ast.Div)
_ACTIVATING = ("exp", "exp2", "log", "where", "maximum", "minimum", "sigmoid", "erf", "tanh", "sqrt", "abs")


def _looped(kernel: ast.FunctionDef) -> set[int]:
    """The nodes inside the kernel's loops."""
    return {id(n) for loop in ast.walk(kernel) if isinstance(loop, ast.For | ast.While) for n in ast.walk(loop)}


def _factor(program: Program, kernel: ast.FunctionDef, node: ast.expr) -> bool:
    """A scalar: a number, a scalar parameter, or a name assigned only from those."""
    scalars = set(program.scalars(kernel))
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if not isinstance(node, ast.Name):
        return False
    if node.id in scalars:
        return True
    values = [
        a.value
        for a in ast.walk(kernel)
        if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
        if a.targets[0].id == node.id
    ]
    return bool(values) and all(
        all(isinstance(n, ast.Constant) or (isinstance(n, ast.Name) and n.id in scalars) for n in _leaves(v))
        for v in values
    )


def _leaves(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp):
        return _leaves(expr.left) + _leaves(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _leaves(expr.operand)
    return [expr]


def _scaled(program: Program, kernel: ast.FunctionDef, node: ast.expr) -> tuple[ast.expr, ast.expr, str] | None:
    """`term * factor`, `factor * term`, `term / factor`: (term, factor, operator text)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, _SCALES)):
        return None
    op = "*" if isinstance(node.op, ast.Mult) else "/"
    if _factor(program, kernel, node.right) and not _factor(program, kernel, node.left):
        return node.left, node.right, op
    if op == "*" and _factor(program, kernel, node.left) and not _factor(program, kernel, node.right):
        return node.right, node.left, op
    return None


def _loaded(kernel: ast.FunctionDef, node: ast.expr) -> bool:
    """A value loaded from memory: a `tl.load(...)` (perhaps indexed or cast), or a name assigned one."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if any(isinstance(c, ast.Call) and call_name(c) == "tl.load" for c in ast.walk(node)):
        return True
    if not isinstance(node, ast.Name):
        return False
    return any(
        isinstance(a, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == node.id for t in a.targets)
        and any(isinstance(c, ast.Call) and call_name(c) == "tl.load" for c in ast.walk(a.value))
        for a in ast.walk(kernel)
    )


def _cued(reference: str, first: str, then: str) -> bool:
    """Whether the reference applies a `first` step before a `then` step."""
    chain = steps(reference) if reference else []
    return any(a == first and then in chain[i + 1 :] for i, a in enumerate(chain))


@operator("scale-scope", "wrong-constant")
def scale_scope(program: Program) -> Iterator[Edit]:
    """A factor moved from a loaded term of a sum to the whole sum where the reference scales a sum, or from a sum
    with a loaded term to one of its terms where the reference adds after it scales."""
    whole = "the reference scales the sum (a layer's bias or `x + b` comes first)"
    part = "the reference adds after it scales"
    scales_sum, adds_after = _cued(program.reference, "shift", "scale"), _cued(program.reference, "scale", "shift")
    for kernel in program.kernels:
        looped = _looped(kernel)
        for node in ast.walk(kernel):
            if id(node) in looped:
                continue
            if (
                scales_sum
                and isinstance(node, ast.AugAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(node.op, _SUMS)
            ):
                made = _scaled(program, kernel, node.value)
                if made is not None and _loaded(kernel, made[0]):
                    term, factor, op = made
                    sign = "+" if isinstance(node.op, ast.Add) else "-"
                    name = node.target.id
                    text = f"{name} = ({name} {sign} {program.code(term)}) {op} {program.code(factor)}"
                    yield _edit(program, node, text, f"`{program.code(node)}` -> `{text}`", whole)
            if not isinstance(node, ast.BinOp):
                continue
            if scales_sum and isinstance(node.op, _SUMS):
                sign = "+" if isinstance(node.op, ast.Add) else "-"
                for side in (node.right, node.left):
                    made = _scaled(program, kernel, side)
                    if made is None or not _loaded(kernel, made[0]):
                        continue
                    term, factor, op = made
                    other = node.left if side is node.right else node.right
                    a, b = (program.code(other), program.code(term))
                    inner = f"{a} {sign} {b}" if side is node.right else f"{b} {sign} {a}"
                    text = program.fitted(node, f"({inner}) {op} {program.code(factor)}")
                    yield _edit(program, node, text, f"`{program.code(node)}` -> `{text}`", whole)
            made = _scaled(program, kernel, node)
            if (
                adds_after
                and made is not None
                and isinstance(made[0], ast.BinOp)
                and isinstance(made[0].op, _SUMS)
                and (_loaded(kernel, made[0].left) or _loaded(kernel, made[0].right))
            ):
                term, factor, op = made
                assert isinstance(term, ast.BinOp)
                sign = "+" if isinstance(term.op, ast.Add) else "-"
                f = program.code(factor)
                left, right = program.code(term.left), program.code(term.right)
                for text in (f"{left} {op} {f} {sign} {right}", f"{left} {sign} {right} {op} {f}"):
                    fitted = program.fitted(node, text)
                    yield _edit(program, node, fitted, f"`{program.code(node)}` -> `{fitted}`", part)


def _edit(program: Program, node: ast.AST, text: str, description: str, cue: str) -> Edit:
    made = edit_at(program, "scale-scope", node, text, description)
    return Edit(made.operator, made.label, made.line, made.description, made.source, cue)


def _updated(statement: ast.stmt) -> str:
    """The name a statement updates in place (`v = f(v)`, `v += e`); "" for any other statement."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        name = statement.targets[0].id
        if name in {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}:
            return name
    return ""


def _step(statement: ast.stmt) -> str:
    """The kind of an in-place update, in kope.bugs.reference.steps' terms."""
    value = statement.value if isinstance(statement, ast.Assign | ast.AugAssign) else None
    if value is None:
        return ""
    if any(isinstance(c, ast.Call) and call_name(c).split(".")[-1] in _ACTIVATING for c in ast.walk(value)):
        return "act"
    if isinstance(statement, ast.AugAssign):
        return "shift" if isinstance(statement.op, _SUMS) else "scale" if isinstance(statement.op, _SCALES) else ""
    if isinstance(value, ast.BinOp):
        return "shift" if isinstance(value.op, _SUMS) else "scale" if isinstance(value.op, _SCALES) else ""
    return ""


def _bodies(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for child in ast.walk(node):
        for field in ("body", "orelse"):
            body = getattr(child, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def _within(kinds: list[str], chain: list[str]) -> bool:
    """Whether `kinds` occur in `chain` in this order (a subsequence)."""
    rest = iter(chain)
    return all(kind in rest for kind in kinds)


@operator("epilogue-order", "wrong-constant")
def epilogue_order(program: Program) -> Iterator[Edit]:
    """Two adjacent in-place updates of one value (outside loops) exchanged, where the kinds of that value's updates
    are in the reference's order after the exchange and not before it."""
    chain = steps(program.reference) if program.reference else []
    if not chain:
        return
    for kernel in program.kernels:
        looped = _looped(kernel)
        for body in _bodies(kernel):
            for first, second in itertools.pairwise(body):
                if id(first) in looped or id(second) in looped:
                    continue
                name = _updated(first)
                if not name or _updated(second) != name:
                    continue
                updates = [s for s in body if id(s) not in looped and _updated(s) == name]
                kinds = [_step(s) for s in updates]
                at = updates.index(first)
                exchanged = [*kinds[:at], kinds[at + 1], kinds[at], *kinds[at + 2 :]]
                if _within([k for k in kinds if k], chain) or not _within([k for k in exchanged if k], chain):
                    continue
                _, source, one, other = swapped(program, first, second)
                yield Edit(
                    "epilogue-order",
                    "wrong-constant",
                    first.lineno,
                    f"`{one}` and `{other}` exchanged",
                    source,
                    f"the reference applies its steps ({', '.join(chain)}) in the exchanged order",
                )
