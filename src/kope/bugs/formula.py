"""Reference-guided formula repairs: a kernel's elementwise formula brought to the one the reference applies.

Real models write the right kernel with the wrong formula in one line: Swish stored as `sigmoid(x)`, ELU's
negative branch `alpha * (x + 1)`, a softplus without its threshold, GELU's tanh form for the exact one. The
reference says which formula it is (kope.bugs.reference reads the activations its `forward` calls, with
their arguments); these operators write it, in Triton's terms, where the kernel computes its version:

- `formula-store`: the value a kernel stores replaced by the reference's last activation (or its last two or
  three, composed) of a value the kernel computed before it (the activation's input);
- `formula-swap`: an assignment that computes an activation-like value (`tl.exp`, `tl.where`, `tl.maximum`...), or
  approximates one by a ratio of polynomials of one value (`t * (27 + t * t) / (27 + 9 * t * t)` for tanh), given
  the reference's activation of one of the values it reads instead.

The search keeps what the evaluator says is right; the formulas are the verified table's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.bugs.analysis import names_in
from kope.bugs.edit import (
    Edit,
    Program,
    _definitions,
    edit_at,
    operator,
    stored_results,
    value_flow,
    value_names,
)
from kope.bugs.reference import Activation, Expression, activations, expressions
from kope.source import call_name

_MAX_INPUTS = 6
"""Input names tried per site: the nearest ones first."""
_TAILS = 3
"""The reference's last one, two or three activations (composed) are offered where a value is stored."""
_MATH = ("exp", "exp2", "log", "log2", "where", "maximum", "minimum", "sigmoid", "erf", "abs", "sqrt", "tanh")
"""Calls that mark an assignment as computing an activation (`tl.exp`, `tl.math.erf`, `libdevice.tanh`...)."""


Step = Activation | Expression
"""One elementwise step of the reference: an activation of the table, or a formula it writes out."""


def _activations(program: Program) -> list[Step]:
    """The reference's elementwise steps in the order it applies them: its activations, and the formulas it writes
    out of calls and arithmetic (an activation inside such a formula is the formula's, not a step of its own)."""
    if not program.reference:
        return []
    written = expressions(program.reference)
    lines = {e.line for e in written}
    acts: list[Step] = [a for a in activations(program.reference) if a.line not in lines]
    return sorted([*acts, *written], key=lambda step: step.line)


def _tails(acts: list[Step]) -> list[tuple[str, list[Step]]]:
    """The last one, two, three activations: (description, in application order)."""
    found = []
    for k in range(1, min(_TAILS, len(acts)) + 1):
        chain = acts[-k:]
        found.append((" of ".join(a.text() for a in reversed(chain)), chain))
    return found


def _apply(chain: list[Step], x: str) -> str:
    text = x
    for act in chain:
        text = act.triton(text)
    return text


def _inputs(kernel: ast.FunctionDef, program: Program, line: int, first: list[str]) -> list[str]:
    """Names a formula may take as its input at `line`: those read by `first` (the site's own value), then those
    the values that reach it read; each assigned in the kernel before `line` (not a parameter: a scale, a bound).
    First the names that pass another on (`x = acc`, where models start an activation), then values that are not
    an activation's work (a load, a product, an accumulator), then the rest."""
    params = {a.arg for a in kernel.args.args}
    defined = _definitions(kernel)
    order: list[str] = []
    for name in first:
        if name not in order:
            order.append(name)
    tested: list[str] = []
    for k, expr in value_flow(program, depth=3):
        if k is kernel:
            for name in value_names(expr):
                if name not in order:
                    order.append(name)
            tested += _tested(expr)
    order += [n for n in dict.fromkeys(tested) if n not in order]
    usable = [
        n
        for n in order
        if n not in params and any(d.lineno < line for d in defined.get(n, [])) and not _constant(n, defined, line)
    ]
    renamed = [n for n in usable if isinstance(_last(n, defined, line), ast.Name)]
    plain = [n for n in usable if n not in renamed and _plain(n, defined, line)]
    return [*renamed, *plain, *[n for n in usable if n not in renamed and n not in plain]][:_MAX_INPUTS]


def _constant(name: str, defined: dict[str, list[ast.Assign | ast.AugAssign]], line: int) -> bool:
    """A name bound only to a number before `line` (`zero = 0.0`): an activation of it is a constant, never the
    formula of a value computed from the inputs (and a constant store can score better than a wrong one)."""
    earlier = [d for d in defined.get(name, []) if d.lineno < line]
    return bool(earlier) and all(
        isinstance(d, ast.Assign)
        and (
            isinstance(d.value, ast.Constant)
            or (isinstance(d.value, ast.UnaryOp) and isinstance(d.value.operand, ast.Constant))
        )
        for d in earlier
    )


def _tested(expr: ast.expr) -> list[str]:
    """The names a `tl.where` in `expr` tests (`x` of `tl.where(x < 0.0, -y, y)`): a branch's condition reads the
    activation's input, where the branches have moved on from it (`tl.where(|x| > 2, 1.0, y)`)."""
    return [
        n.id
        for node in ast.walk(expr)
        if isinstance(node, ast.Call) and call_name(node) == "tl.where" and node.args
        for n in ast.walk(node.args[0])
        if isinstance(n, ast.Name)
    ]


def _last(name: str, defined: dict[str, list[ast.Assign | ast.AugAssign]], line: int) -> ast.expr | None:
    """The value last assigned to a name before `line` (None for an augmented assignment or none)."""
    earlier = sorted((d for d in defined.get(name, []) if d.lineno < line), key=lambda d: d.lineno)
    return earlier[-1].value if earlier and isinstance(earlier[-1], ast.Assign) else None


def _plain(name: str, defined: dict[str, list[ast.Assign | ast.AugAssign]], line: int, depth: int = 4) -> bool:
    """A name whose value at `line` is not an activation's work, nor made from one: a load, a matrix product, an
    accumulator, or another name passed on (`x = acc`). An activation's input is such a value."""
    earlier = sorted((d for d in defined.get(name, []) if d.lineno < line), key=lambda d: d.lineno)
    if not earlier or isinstance(earlier[-1], ast.AugAssign):
        return True
    last = earlier[-1]
    if _computes_activation(last.value):
        return False
    if depth == 0:
        return True
    return all(_plain(n, defined, last.lineno, depth - 1) for n in value_names(last.value) if n != name)


@operator("formula-store", "wrong-constant")
def formula_store(program: Program) -> Iterator[Edit]:
    """A stored value replaced by the reference's last activation(s) of a value the kernel computed before it."""
    acts = _activations(program)
    if not acts:
        return
    for kernel, node, value in stored_results(program):
        names = value_names(value) if not isinstance(value, ast.Name) else [value.id]
        inputs = _inputs(kernel, program, node.lineno, names)
        for rank, (what, chain) in enumerate(_tails(acts)):
            for at, name in enumerate(inputs):
                new = _apply(chain, name)
                edit = edit_at(
                    program,
                    "formula-store",
                    value,
                    new,
                    f"stored `{program.code(value)}` -> the reference's {what} of `{name}`",
                )
                cue = f"the reference applies {what}" if rank == 0 and at < 2 else ""
                yield Edit(edit.operator, edit.label, edit.line, edit.description, edit.source, cue)


def _computes_activation(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and call_name(n).split(".")[-1] in _MATH for n in ast.walk(expr))


def _assembles_activation(kernel: ast.FunctionDef, node: ast.Assign) -> bool:
    """An assignment that finishes, by arithmetic alone, an activation from a helper value the kernel computed with
    activation-like calls (`g = 0.5 * x * (1.0 + t)` after `t = tl.minimum(tl.maximum(poly(x), -1.0), 1.0)`: a
    hand-written tanh), and that also reads a value that is not such a helper (the activation's input)."""
    if any(isinstance(n, ast.Call) for n in ast.walk(node.value)):
        return False  # finished by arithmetic alone (a reduction or a call is a step of its own)
    defined = _definitions(kernel)
    target = node.targets[0] if node.targets else None
    names = [n for n in value_names(node.value) if not (isinstance(target, ast.Name) and n == target.id)]
    helpers = [n for n in names if isinstance(_last(n, defined, node.lineno), ast.expr)]
    helpers = [n for n in helpers if _computes_activation(_last(n, defined, node.lineno) or ast.Constant(0))]
    return bool(helpers) and (any(n not in helpers for n in names) or bool(_gate_inputs(kernel, node)))


def _gate_inputs(kernel: ast.FunctionDef, node: ast.Assign) -> list[str]:
    """The names an assignment reads that a helper it also reads is made from, by arithmetic (`v` of `y = v * (g /
    6.0)` after `g = tl.minimum(tl.maximum(v + 3.0, 0.0), 6.0)`: a gate times its own input), though that value is
    an activation's work too (`v = m + tl.log(s)`, a logsumexp): the activation's input. [] when none."""
    defined = _definitions(kernel)
    names = value_names(node.value)
    found: list[str] = []
    for helper in names:
        last = _last(helper, defined, node.lineno)
        if last is None or not _computes_activation(last):
            continue
        earlier = max((d for d in defined[helper] if d.lineno < node.lineno), key=lambda d: d.lineno)
        made_from = _arithmetic_names(last, defined, earlier.lineno)
        found += [n for n in names if n != helper and n in made_from and n not in found]
    return found


def _arithmetic_names(
    expr: ast.expr, defined: dict[str, list[ast.Assign | ast.AugAssign]], line: int, depth: int = 6
) -> dict[str, int]:
    """The names an expression reads, and those their values read, through assignments of arithmetic alone (no call:
    a load or an activation ends the path), each with the line of its last assignment; constants left out."""
    found: dict[str, int] = {}
    for name in value_names(expr):
        earlier = sorted((d for d in defined.get(name, []) if d.lineno < line), key=lambda d: d.lineno)
        if not earlier or isinstance(earlier[-1].value, ast.Constant):
            continue
        last = earlier[-1]
        found[name] = last.lineno
        if depth and isinstance(last, ast.Assign) and not any(isinstance(n, ast.Call) for n in ast.walk(last.value)):
            for deeper, at in _arithmetic_names(last.value, defined, last.lineno, depth - 1).items():
                found.setdefault(deeper, at)
    return found


def _rational_inputs(kernel: ast.FunctionDef, node: ast.Assign) -> list[str]:
    """For an assignment that divides two polynomials of one value by arithmetic alone (`t * (27.0 + t * t) / (27.0
    + 9.0 * t * t)`: a hand-written rational tanh), the values both sides are made from, nearest first; else []."""
    if any(isinstance(n, ast.Call) for n in ast.walk(node.value)):
        return []
    defined = _definitions(kernel)
    common: dict[str, int] = {}
    for div in ast.walk(node.value):
        if isinstance(div, ast.BinOp) and isinstance(div.op, ast.Div):
            top = _arithmetic_names(div.left, defined, node.lineno)
            bottom = _arithmetic_names(div.right, defined, node.lineno)
            common.update({n: at for n, at in top.items() if n in bottom})
            direct = set(value_names(div.left)) & set(value_names(div.right))
            common.update({n: node.lineno for n in direct if n not in common})
    return sorted(common, key=lambda n: -common[n])


@operator("formula-swap", "wrong-constant")
def formula_swap(program: Program) -> Iterator[Edit]:
    """An assignment that computes an activation-like value given the reference's activation of a value it reads."""
    acts = _activations(program)
    if not acts:
        return
    distinct: list[Step] = []
    for act in reversed(acts):
        if act not in distinct:
            distinct.append(act)
    for kernel in program.kernels:
        sites = [
            node
            for node in ast.walk(kernel)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ]
        assembling = [node for node in sites if _assembles_activation(kernel, node)]
        # an activation finished from a helper is the site, first; the helper (a hand-written tanh) is not cued
        helpers = {n for node in assembling for n in value_names(node.value)}
        plain = [node for node in sites if node not in assembling and _computes_activation(node.value)]
        rational = {id(node): r for node in sites if node not in assembling and (r := _rational_inputs(kernel, node))}
        chosen = [node for node in sites if id(node) in rational]
        for node in [*assembling, *plain, *chosen]:
            target = node.targets[0]
            assert isinstance(target, ast.Name)
            inputs = _inputs(kernel, program, node.lineno, value_names(node.value))
            inputs = [*rational.get(id(node), [])[:_MAX_INPUTS], *_gate_inputs(kernel, node), *inputs]
            inputs = list(dict.fromkeys(inputs))[:_MAX_INPUTS]
            for act in distinct:
                for at, name in enumerate(inputs):
                    new = act.triton(name)
                    edit = edit_at(
                        program,
                        "formula-swap",
                        node.value,
                        new,
                        f"`{target.id} = ...` -> the reference's {act.text()} of `{name}`",
                    )
                    cued = at < 2 and target.id not in helpers
                    cue = f"the reference applies {act.text()}" if cued else ""
                    yield Edit(edit.operator, edit.label, edit.line, edit.description, edit.source, cue)


_EUCLIDEAN = ("triplet_margin", "tripletmargin", "pairwise_distance", "pairwisedistance", "cdist", "norm(", "dist(")
"""Reference calls whose formula takes a Euclidean distance: the square root of a sum of squares."""


def _sums_of_squares(defined: dict[str, list[ast.Assign | ast.AugAssign]]) -> set[str]:
    """The names a kernel holds a sum of squares in: `s = tl.sum(d * d)`, `s += d * d`, or the same through a name
    that holds the elementwise squares (`sq = d * d`, then `s += tl.sum(sq)`), which is not itself one."""
    elementwise = {
        name for name, ds in defined.items() if ds and all(isinstance(d, ast.Assign) and _square(d.value) for d in ds)
    }

    def summed(d: ast.Assign | ast.AugAssign) -> bool:
        if isinstance(d, ast.AugAssign) and names_in(d.value) & elementwise:
            return True
        return any(
            isinstance(c, ast.Call) and call_name(c, last=True) == "sum" and bool(names_in(c) & elementwise)
            for c in ast.walk(d.value)
        )

    return {
        name
        for name, ds in defined.items()
        if name not in elementwise and any(_sum_of_squares(d.value) or summed(d) for d in ds)
    }


def _square(expr: ast.expr) -> bool:
    """`d * d` or `d ** 2` (nothing reduced)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return ast.dump(expr.left) == ast.dump(expr.right)
    return isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Pow) and ast.unparse(expr.right) in ("2", "2.0")


def _sum_of_squares(expr: ast.expr) -> bool:
    """`tl.sum(d * d)` (or `d * d` accumulated): a squared norm."""
    for node in ast.walk(expr):
        if not isinstance(node, ast.BinOp):
            continue
        if isinstance(node.op, ast.Mult) and ast.dump(node.left) == ast.dump(node.right):
            return True
        if isinstance(node.op, ast.Pow) and ast.unparse(node.right) in ("2", "2.0"):
            return True
    return False


@operator("norm-sqrt", "wrong-normalizer")
def norm_sqrt(program: Program) -> Iterator[Edit]:
    """A squared distance used where the reference's formula takes the distance: every read of the kernel's sums of
    squares in one statement after they are complete wrapped in `tl.sqrt` (a triplet margin loss on squared
    distances)."""
    if not any(mark in program.reference.lower().replace(" ", "") for mark in _EUCLIDEAN):
        return
    for kernel in program.kernels:
        defined = _definitions(kernel)
        squares = _sums_of_squares(defined)
        if not squares:
            continue
        last = max(d.lineno for n in squares for d in defined[n])
        for node in ast.walk(kernel):
            if not isinstance(node, ast.Assign | ast.Expr) or node.lineno <= last:
                continue
            reads = [n for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in squares]
            if not reads or "sqrt" in ast.unparse(node.value):
                continue
            yield Edit(
                "norm-sqrt",
                "wrong-normalizer",
                node.lineno,
                f"the squared distance{'s' if len(reads) > 1 else ''} "
                f"{', '.join(sorted({r.id for r in reads}))} -> their square root",
                program.replace_all([(r, f"tl.sqrt({r.id})") for r in reads]),
                "the reference takes a Euclidean distance; the kernel sums squares and never takes their root",
            )
