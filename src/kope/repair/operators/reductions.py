"""Reduction repairs: padding values, initial values, accumulators' places and scan kinds."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.repair.operators._core import Edit, Program, assignments, edit_at, keyword_of, names_in, operator
from kope.source import call_name


def _feeds(kernel: ast.FunctionDef, name: str, tree: ast.Module | None = None) -> set[str]:
    """The reductions (`sum`, `max`, `min`, ...) a loaded name flows into, directly or through one assignment; a
    `tl.reduce` by what its combine function returns (`tl.minimum(a, b)`: `minimum`), when `tree` holds it."""
    assigned = assignments(kernel)
    users = {name} | {n for n, a in assigned.items() if any(name in names_in(x.value) for x in a)}
    found: set[str] = set()
    for node in ast.walk(kernel):
        fn = call_name(node, last=True)
        if (
            fn in ("sum", "max", "min", "maximum", "minimum", "reduce", "cumsum", "argmax", "argmin")
            and names_in(node) & users
        ):
            found.add(fn)
            if fn == "reduce" and tree is not None and isinstance(node, ast.Call):
                found |= _combine_kind(node, tree)
    return found


def _combine_kind(call: ast.Call, tree: ast.Module) -> set[str]:
    """What a `tl.reduce(x, axis, combine)`'s combine function computes: `minimum`, `maximum`, `sum` or nothing."""
    keyword = next((k.value for k in call.keywords if k.arg == "combine_fn"), None)
    combine = call.args[2] if len(call.args) > 2 else keyword
    if not isinstance(combine, ast.Name):
        return set()
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == combine.id]
    returned = [r.value for f in functions for r in ast.walk(f) if isinstance(r, ast.Return) and r.value is not None]
    kinds: set[str] = set()
    for value in returned:
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("minimum", "maximum"):
            kinds.add(call_name(value, last=True))
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            kinds.add("sum")
    return kinds


IDENTITIES = {
    "sum": "0.0",
    "cumsum": "0.0",
    "max": "-float('inf')",
    "maximum": "-float('inf')",
    "argmax": "-float('inf')",
    "min": "float('inf')",
    "minimum": "float('inf')",
    "argmin": "float('inf')",
}


@operator("other-identity", "padding-in-reduction")
def other_identity(program: Program) -> Iterator[Edit]:
    """A masked load's `other=` set to the identity of the reduction its value feeds (0, -inf, +inf, 1)."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.load" and keyword_of(node, "mask")):
                continue
            target = next((n for n, a in assigned.items() if any(_contains(x.value, node) for x in a)), "")
            feeds = _feeds(kernel, target) if target else set()
            values = [IDENTITIES[f] for f in sorted(feeds) if f in IDENTITIES] + [
                "0.0",
                "-float('inf')",
                "float('inf')",
                "1.0",
            ]
            current = keyword_of(node, "other")
            for value in dict.fromkeys(values):
                if current is not None and ast.unparse(current.value).replace('"', "'") == value:
                    continue
                if current is not None:
                    new = program.replace(current.value, value)
                else:
                    _, end = program.span(node)
                    new = program.text[: end - 1].rstrip() + f", other={value})" + program.text[end:]
                yield Edit("other-identity", "padding-in-reduction", node.lineno, f"`other={value}` on the load", new)
        yield from _where_paddings(program, kernel)


def _where_paddings(program: Program, kernel: ast.FunctionDef) -> Iterator[Edit]:
    """`x_lo = tl.where(mask, x, 0.0)` feeding a minimum: the padding set to the identity of the reductions it feeds
    (only those: a `tl.where` that pads with a literal is common, and its other literals are no reduction's)."""
    for name, assigns in assignments(kernel).items():
        for statement in assigns:
            value = statement.value
            if not (isinstance(value, ast.Call) and call_name(value) == "tl.where" and len(value.args) == 3):
                continue
            pad = value.args[2]
            padded = _literal(pad)
            if padded is None:
                continue
            feeds = _feeds(kernel, name, program.tree)
            current = program.code(pad)
            for identity in dict.fromkeys(IDENTITIES[f] for f in sorted(feeds) if f in IDENTITIES):
                if _literal(ast.parse(identity, mode="eval").body) == padded:
                    continue
                yield edit_at(
                    program, "other-identity", pad, identity, f"`tl.where` padding `{current}` -> `{identity}`"
                )


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


@operator("reduction-init", "wrong-reduction-init")
def reduction_init(program: Program) -> Iterator[Edit]:
    """An accumulator's initial value (`tl.zeros`, `tl.full`) set to another reduction identity."""
    for _, node in program.kernel_nodes():
        fn = call_name(node)
        if not isinstance(node, ast.Call) or fn not in ("tl.zeros", "tl.full") or not node.args:
            continue
        shape = ast.unparse(node.args[0])
        dtype = keyword_of(node, "dtype")
        dtype_text = (
            ast.unparse(dtype.value)
            if dtype
            else (ast.unparse(node.args[-1]) if fn == "tl.zeros" and len(node.args) > 1 else "tl.float32")
        )
        if fn == "tl.full" and len(node.args) >= 3:
            dtype_text = ast.unparse(node.args[2])
        current = "0.0" if fn == "tl.zeros" else ast.unparse(node.args[1]) if len(node.args) > 1 else ""
        for value in ("0.0", "-float('inf')", "float('inf')", "1.0"):
            if value.replace("'", '"') == current.replace("'", '"'):
                continue
            new = f"tl.full({shape}, {value}, dtype={dtype_text})"
            yield edit_at(program, "reduction-init", node, new, f"`{program.code(node)}` -> `{new}`")


def _block_of(kernel: ast.FunctionDef, target: ast.stmt) -> tuple[list[ast.stmt], ast.AST | None]:
    """The statement list holding `target` and the For that owns that list (None if not a loop body)."""
    for node in ast.walk(kernel):
        for attr in ("body", "orelse"):
            block = getattr(node, attr, None)
            if isinstance(block, list) and any(s is target for s in block):
                return block, node if isinstance(node, ast.For) and attr == "body" else None
    return [], None


def _line_span(program: Program, statement: ast.stmt) -> tuple[int, int]:
    start = program.parsed.line_offsets[statement.lineno - 1]
    end = program.parsed.line_offsets[statement.end_lineno or statement.lineno]
    return start, end


def _indent(program: Program, statement: ast.stmt) -> str:
    line = program.text[program.parsed.line_offsets[statement.lineno - 1] :].split("\n", 1)[0]
    return line[: len(line) - len(line.lstrip())]


def _initial_value(value: ast.expr) -> bool:
    if isinstance(value, ast.Call):
        return call_name(value) in ("tl.zeros", "tl.full")
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    return (
        isinstance(value, ast.Constant) and isinstance(value.value, int | float) and not isinstance(value.value, bool)
    )


@operator("accumulator-move", "accumulator-reset")
def accumulator_move(program: Program) -> Iterator[Edit]:
    """An accumulator's initialisation (`tl.zeros`, `tl.full`, or a scalar `carry = 0.0`) moved out of the loop
    that updates it, or into it."""
    for kernel in program.kernels:
        for node in ast.walk(kernel):
            if not (
                isinstance(node, ast.Assign)
                and _initial_value(node.value)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                continue
            name = node.targets[0].id
            block, loop = _block_of(kernel, node)
            start, end = _line_span(program, node)
            statement = program.text[start:end].strip()
            if isinstance(loop, ast.For):
                loop_start, _ = _line_span(program, loop)
                indent = _indent(program, loop)
                text = program.text
                new = text[:loop_start] + indent + statement + "\n" + text[loop_start:start] + text[end:]
                yield Edit(
                    "accumulator-move", "accumulator-reset", node.lineno, f"`{statement}` moved before the loop", new
                )
            index = next(i for i, s in enumerate(block) if s is node)
            for later in block[index + 1 :]:
                if isinstance(later, ast.For) and name in names_in(later) and later.body:
                    first = later.body[0]
                    first_start, _ = _line_span(program, first)
                    indent = _indent(program, first)
                    text = program.text
                    new = text[:start] + text[end:first_start] + indent + statement + "\n" + text[first_start:]
                    yield Edit(
                        "accumulator-move", "accumulator-reset", node.lineno, f"`{statement}` moved into the loop", new
                    )
                    break


@operator("scan-kind", "index-shift")
def scan_kind(program: Program) -> Iterator[Edit]:
    """Inclusive against exclusive scans: `tl.cumsum(x)` -> `tl.cumsum(x) - x` and back; `reverse` toggled."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) in ("tl.cumsum", "tl.cumprod") and node.args:
            x = ast.unparse(node.args[0])
            op = "-" if node.func.attr == "cumsum" else "/"  # type: ignore[attr-defined]
            new = f"({program.code(node)} {op} {x})"
            yield edit_at(program, "scan-kind", node, new, f"inclusive -> exclusive: `{new}`")
            reverse = keyword_of(node, "reverse")
            if reverse is None:
                _, end = program.span(node)
                text = program.text[: end - 1].rstrip() + ", reverse=True)" + program.text[end:]
                yield Edit("scan-kind", "index-shift", node.lineno, "scan reversed", text)
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Sub | ast.Div)
            and isinstance(node.left, ast.Call)
            and call_name(node.left) in ("tl.cumsum", "tl.cumprod")
            and node.left.args
            and ast.unparse(node.left.args[0]) == ast.unparse(node.right)
        ):
            new = program.code(node.left)
            yield edit_at(program, "scan-kind", node, new, f"exclusive -> inclusive: `{new}`")


@operator("accumulate", "accumulator-reset")
def accumulate(program: Program) -> Iterator[Edit]:
    """A running value overwritten in its loop (`carry = p`) combined with itself instead (`carry = carry * p`,
    `+`, `tl.maximum`, `tl.minimum`): the name is set before the loop and read after it. The combination the
    reduction computing `p` names comes first (`carry + tl.sum(x)`)."""
    for kernel in program.kernels:
        assigned = assignments(kernel)
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            for statement in loop.body:
                if not (
                    isinstance(statement, ast.Assign)
                    and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)
                ):
                    continue
                name = statement.targets[0].id
                before = [a for a in assigned.get(name, []) if a.lineno < loop.lineno]
                if not before or name in names_in(statement.value):
                    continue
                value = program.code(statement.value)
                combined = {
                    "*": f"{name} * ({value})",
                    "+": f"{name} + ({value})",
                    "max": f"tl.maximum({name}, {value})",
                    "min": f"tl.minimum({name}, {value})",
                }
                first = _combination(statement.value)
                for new in sorted(combined.values(), key=lambda text: text != combined.get(first, "")):
                    yield edit_at(
                        program, "accumulate", statement.value, new, f"`{name} = {value}` -> `{name} = {new}`"
                    )


_COMBINE = {"tl.sum": "+", "tl.cumsum": "+", "tl.max": "max", "tl.cummax": "max", "tl.min": "min"}


def _combination(value: ast.expr) -> str:
    """How a running value is combined with what its loop computes, by the reduction that computes it: a sum's
    partial is added, a maximum's taken the maximum of ("" when no reduction says)."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and call_name(node) in _COMBINE:
            return _COMBINE[call_name(node)]
    return ""


@operator("running-init", "wrong-reduction-init")
def running_init(program: Program) -> Iterator[Edit]:
    """A scalar carried through a loop started at the wrong identity: `carry = 0.0` before a loop that takes its
    maximum or log-sum-exp -> `float("-inf")` (and `float("inf")`, 0.0, 1.0)."""
    for kernel in program.kernels:
        loops = [n for n in ast.walk(kernel) if isinstance(n, ast.For | ast.While)]
        for node in ast.walk(kernel):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and _literal(node.value) is not None
            ):
                continue
            name = node.targets[0].id
            carried = any(
                loop.lineno > node.lineno
                and any(
                    isinstance(n, ast.Assign | ast.AugAssign)
                    and name in {t.id for t in ast.walk(n) if isinstance(t, ast.Name)}
                    for n in ast.walk(loop)
                )
                for loop in loops
            )
            if not carried:
                continue
            current = _literal(node.value)
            for value in ('float("-inf")', 'float("inf")', "0.0", "1.0"):
                if _literal(ast.parse(value, mode="eval").body) == current:
                    continue
                yield edit_at(
                    program, "running-init", node.value, value, f"`{name} = {program.code(node.value)}` -> `{value}`"
                )


def _literal(node: ast.expr) -> float | None:
    """The value of a float literal, `float("inf")`-style constant or its negation; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return -inner if inner is not None else None
    if (
        isinstance(node, ast.Call)
        and call_name(node) == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        try:
            return float(node.args[0].value)
        except ValueError:
            return None
    return None
