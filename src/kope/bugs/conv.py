"""Convolution taps: a tap's input position un-flattened from a difference of flattened positions.

A convolution (or a transposed one, or a pooling window) reads, for an output position `(oh, ow)` and a tap
`(kh, kw)`, the input at `(oh - kh, ow - kw)` (or `+`, with strides and padding). Real models save a division by
working on flattened positions, `s = (oh * W + ow) - (kh * W + kw)`, then recover the row and column with
`ih = s // W`, `iw = s % W`. That is the same position only while `ow - kw` stays in `[0, W)`: at the border the
column wraps into the row above (`ow - kw = -1` gives `iw = W - 1`, `ih = oh - kh - 1`), so the padding taps read
the far end of another row instead of being masked out, and a bound check on the column (`iw < W`) holds by
construction and masks nothing. Where the output rows are another width than the input's (a transposed or padded
convolution), `oh * W` is not even the output's flattened index.

- `flat-tap` (index-shift): `q = s // D` and `r = s % D`, where `s` expands (through the kernel's single
  assignments) into a sum of terms `X * D` and others, with at least two other terms (two positions combined):
  `q` becomes the sum of the `X`s, `r` the sum of the others, with their signs (`ih = oh - kh`, `iw = ow - kw`).
  Cued always; grounded when the kernel bounds the remainder by the divisor (`iw < W`: a check that holds by
  construction, so the author meant the unwrapped column).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from kope.bugs.edit import Edit, Program, operator

_DEPTH = 4
"""Assignments followed back when a flattened position is expanded."""


@dataclass(frozen=True)
class _Split:
    """A flattened position's terms: `(sign, X)` of the terms `X * D`, and `(sign, term)` of the others."""

    rows: tuple[tuple[int, ast.expr], ...]
    columns: tuple[tuple[int, ast.expr], ...]


def _single_assignments(kernel: ast.FunctionDef) -> tuple[dict[str, ast.Assign], set[str]]:
    """Names assigned exactly once (by a plain `name = value`), and every name assigned more than once or otherwise
    (augmented, tuple targets, loop targets)."""
    counts: dict[str, int] = {}
    single: dict[str, ast.Assign] = {}
    other: set[str] = set()
    for node in ast.walk(kernel):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in (n for n in ast.walk(target) if isinstance(n, ast.Name)):
                    counts[name.id] = counts.get(name.id, 0) + 1
                    if isinstance(target, ast.Name):
                        single[name.id] = node
                    else:
                        other.add(name.id)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            other.add(node.target.id)
        elif isinstance(node, ast.For | ast.comprehension):
            other.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    other.update(key for key, count in counts.items() if count > 1)
    return {k: v for k, v in single.items() if k not in other}, other


def _same(a: ast.expr, b: ast.expr) -> bool:
    return ast.dump(a) == ast.dump(b)


def _terms(expr: ast.expr, sign: int, defs: dict[str, ast.Assign], depth: int) -> list[tuple[int, ast.expr]]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        right = -sign if isinstance(expr.op, ast.Sub) else sign
        return _terms(expr.left, sign, defs, depth) + _terms(expr.right, right, defs, depth)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _terms(expr.operand, -sign, defs, depth)
    if isinstance(expr, ast.Name) and expr.id in defs and depth < _DEPTH:
        value = defs[expr.id].value
        if isinstance(value, ast.BinOp | ast.UnaryOp | ast.Name):
            expanded = _terms(value, sign, defs, depth + 1)
            if len(expanded) > 1 or isinstance(value, ast.Name):
                return expanded
            only = expanded[0][1]
            if isinstance(only, ast.BinOp) and isinstance(only.op, ast.Mult):
                return expanded
    return [(sign, expr)]


def _split(expr: ast.expr, divisor: ast.expr, defs: dict[str, ast.Assign]) -> _Split:
    rows: list[tuple[int, ast.expr]] = []
    columns: list[tuple[int, ast.expr]] = []
    for sign, term in _terms(expr, 1, defs, 0):
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            if _same(term.right, divisor):
                rows.append((sign, term.left))
                continue
            if _same(term.left, divisor):
                rows.append((sign, term.right))
                continue
        columns.append((sign, term))
    return _Split(tuple(rows), tuple(columns))


def _atom(node: ast.expr) -> str:
    text = ast.unparse(node)
    simple = ast.Name | ast.Constant | ast.Call | ast.Subscript | ast.Attribute
    if isinstance(node, simple) or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.FloorDiv)):
        return text
    return f"({text})"


def _sum(terms: tuple[tuple[int, ast.expr], ...]) -> str:
    text = ""
    for sign, node in terms:
        atom = _atom(node)
        if not text:
            text = atom if sign > 0 else f"-{atom}"
        else:
            text += f" + {atom}" if sign > 0 else f" - {atom}"
    return text


def _names(terms: tuple[tuple[int, ast.expr], ...]) -> set[str]:
    return {n.id for _, t in terms for n in ast.walk(t) if isinstance(n, ast.Name)}


def _bounded_by(kernel: ast.FunctionDef, name: str, divisor: ast.expr) -> bool:
    """Whether the kernel compares `name` with the divisor (`iw < W`): a bound a remainder holds by construction."""
    for node in ast.walk(kernel):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(isinstance(s, ast.Name) and s.id == name for s in sides) and any(_same(s, divisor) for s in sides):
            return True
    return False


def _decompositions(kernel: ast.FunctionDef) -> Iterator[tuple[ast.expr, ast.expr, list[ast.Assign]]]:
    """Each flattened position a kernel divides and takes the remainder of by one divisor: (position, divisor,
    the assignments `q = s // D`, `r = s % D`, in source order)."""
    groups: dict[str, list[ast.Assign]] = {}
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv | ast.Mod):
            key = ast.dump(value.left) + "|" + ast.dump(value.right)
            groups.setdefault(key, []).append(node)
    for group in groups.values():
        first = group[0].value
        assert isinstance(first, ast.BinOp)
        yield first.left, first.right, sorted(group, key=lambda n: n.lineno)


@operator("flat-tap", "index-shift")
def flat_tap(program: Program) -> Iterator[Edit]:
    """`ih = s // W`, `iw = s % W` for `s = (oh * W + ow) - (kh * W + kw)` → `ih = oh - kh`, `iw = ow - kw`."""
    for kernel in program.kernels:
        defs, other = _single_assignments(kernel)
        loops = [node.target for node in ast.walk(kernel) if isinstance(node, ast.For)]
        loop_targets = {n.id for target in loops for n in ast.walk(target) if isinstance(n, ast.Name)}
        for position, divisor, sites in _decompositions(kernel):
            if any(isinstance(n, ast.Name) and n.id in other - loop_targets for n in ast.walk(divisor)):
                continue
            split = _split(position, divisor, defs)
            if not split.rows or len(split.columns) < 2:
                continue
            used = _names(split.rows) | _names(split.columns)
            if used & (other - loop_targets):
                continue  # a name whose value at the division is not the one the expansion read
            changes: list[tuple[ast.AST, str]] = []
            grounded = False
            for site in sites:
                value = site.value
                assert isinstance(value, ast.BinOp)
                if isinstance(value.op, ast.FloorDiv):
                    changes.append((value, program.fitted(value, _sum(split.rows))))
                else:
                    changes.append((value, program.fitted(value, _sum(split.columns))))
                    target = site.targets[0]
                    assert isinstance(target, ast.Name)
                    grounded = grounded or _bounded_by(kernel, target.id, divisor)
            pairs = zip(sites, changes, strict=True)
            described = "; ".join(f"{ast.unparse(s.targets[0])} = {text}" for s, (_, text) in pairs)
            yield Edit(
                "flat-tap",
                "index-shift",
                sites[0].lineno,
                f"un-flattened tap position: {described}",
                program.replace_all(changes),
                cue="a position recovered by // and % from a difference of flattened positions wraps across rows",
                grounded=grounded,
            )
