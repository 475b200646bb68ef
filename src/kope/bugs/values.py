"""Edits inside a computed value (not its addresses or masks): a sign, the branches of a `tl.where`, an axis.

Repair operators for any bug kind (kope.bugs.registry lists them as a kind of their own).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import replace

from kope.bugs.analysis import constant_value
from kope.bugs.edit import (
    REDUCTIONS,
    Edit,
    Program,
    assignments,
    boolean,
    edit_at,
    operator,
    stored_results,
    value_flow,
    value_nodes,
)
from kope.source import call_name

# -- the search's edits (repair operators) -----------------------------------------------------


def _value_nodes(program: Program) -> Iterator[ast.expr]:
    """Every node of the stored values and the assignments reaching them (`value_nodes`), once."""
    seen: set[int] = set()
    for _, value in value_flow(program):
        for node in value_nodes(value):
            if id(node) not in seen:
                seen.add(id(node))
                yield node


def _grouped(program: Program, node: ast.expr) -> str:
    text = program.code(node)
    return f"({text})" if isinstance(node, ast.BinOp | ast.UnaryOp | ast.IfExp) else text


@operator("sign", "wrong-constant")
def sign(program: Program) -> Iterator[Edit]:
    """A sign wrong in a computed value: `a - b` <-> `a + b`, `a - b` -> `b - a`, `tl.exp(x)` <-> `tl.exp(-x)`
    (a sigmoid written with `exp(x)`), a negation dropped."""
    for node in _value_nodes(program):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            left, right = program.code(node.left), _grouped(program, node.right)
            yield edit_at(program, "sign", node, f"({left} + {right})", f"`{program.code(node)}` -> `{left} + {right}`")
            swapped = f"({program.code(node.right)} - {_grouped(program, node.left)})"
            yield edit_at(program, "sign", node, swapped, f"`{program.code(node)}` -> `{swapped[1:-1]}`")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = program.code(node.left), _grouped(program, node.right)
            yield edit_at(program, "sign", node, f"({left} - {right})", f"`{program.code(node)}` -> `{left} - {right}`")
        elif isinstance(node, ast.Call) and call_name(node) in ("tl.exp", "tl.exp2") and len(node.args) == 1:
            inner = node.args[0]
            if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.USub):
                flipped = program.code(inner.operand)
            else:
                flipped = f"-{_grouped(program, inner)}"
            new = f"{call_name(node)}({flipped})"
            yield edit_at(program, "sign", node, new, f"`{program.code(node)}` -> `{new}`")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = _grouped(program, node.operand)
            yield edit_at(program, "sign", node, operand, f"`{program.code(node)}` -> `{operand}`")


@operator("branch-swap", "wrong-constant")
def branch_swap(program: Program) -> Iterator[Edit]:
    """The two branches of a `tl.where` exchanged (the condition written the other way round: `x > 0` for
    `x <= 0`), where the value is computed, not where padding is masked out."""
    for node in _value_nodes(program):
        if not (isinstance(node, ast.Call) and call_name(node) == "tl.where" and len(node.args) == 3):
            continue
        condition, yes, no = node.args
        if isinstance(condition, ast.Name | ast.Subscript):
            continue  # tl.where(mask, value, 0.0): padding, which the mask operators repair
        new = f"tl.where({program.code(condition)}, {program.code(no)}, {program.code(yes)})"
        yield edit_at(program, "branch-swap", node, new, f"the branches of `{program.code(node)}` exchanged")


_AXIS_REDUCTIONS = (*REDUCTIONS, "tl.cumsum", "tl.cumprod")


@operator("reduce-axis", "broadcast-error")
def reduce_axis(program: Program) -> Iterator[Edit]:
    """A reduction over a 2-D block along the other axis: `axis=0` <-> `axis=1` (rows summed where columns belong),
    in kernels that build 2-D blocks (`x[:, None]`)."""
    for kernel in program.kernels:
        text = ast.unparse(kernel)
        if "None]" not in text and "[None" not in text:
            continue
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) in _AXIS_REDUCTIONS):
                continue
            axis: ast.expr | None = next((k.value for k in node.keywords if k.arg == "axis"), None)
            if axis is None and len(node.args) >= 2 and call_name(node) != "tl.reduce":
                axis = node.args[1]
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value in (0, 1):
                other = str(1 - axis.value)
                yield edit_at(
                    program,
                    "reduce-axis",
                    axis,
                    other,
                    f"`{call_name(node)}` over axis {other}, not {axis.value} (line {node.lineno})",
                )


@operator("xlogy", "numerical-instability")
def xlogy(program: Program) -> Iterator[Edit]:
    """`t * tl.log(u)` guarded where `t` is 0 (0 * log(0) is 0 in the reference's `xlogy`, NaN unguarded): KL
    divergence, entropy, cross-entropy against soft targets."""
    for node in _value_nodes(program):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        for factor, other in ((node.left, node.right), (node.right, node.left)):
            logs = [n for n in ast.walk(other) if isinstance(n, ast.Call) and call_name(n) in ("tl.log", "tl.log2")]
            if logs and not isinstance(factor, ast.Constant):
                new = f"tl.where({_grouped(program, factor)} == 0, 0.0, {program.code(node)})"
                yield edit_at(
                    program, "xlogy", node, new, f"`{program.code(node)}` is 0 where `{program.code(factor)}` is"
                )
                break


@operator("true-division", "dtype-mismatch")
def true_division(program: Program) -> Iterator[Edit]:
    """`a // b` in a computed value -> `a / b`: a floor division where a mean or a scale was meant (integer
    arithmetic on a float result)."""
    for node in _value_nodes(program):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            new = f"{_grouped(program, node.left)} / {_grouped(program, node.right)}"
            yield edit_at(program, "true-division", node, new, f"`{program.code(node)}` -> `{new}`")


_INSIDE = ("tl.sqrt", "tl.rsqrt", "tl.log", "tl.log2", "tl.exp", "libdevice.sqrt", "libdevice.rsqrt")


@operator("into-call", "wrong-epsilon")
def into_call(program: Program) -> Iterator[Edit]:
    """A term added outside a call that belongs inside it: `tl.sqrt(v) + eps` -> `tl.sqrt(v + eps)` (and `rsqrt`,
    `log`, `exp`), in a computed value."""
    for node in _value_nodes(program):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)):
            continue
        call, term = node.left, node.right
        if not (isinstance(call, ast.Call) and call_name(call) in _INSIDE and len(call.args) == 1):
            continue
        op = "+" if isinstance(node.op, ast.Add) else "-"
        new = f"{call_name(call)}({program.code(call.args[0])} {op} {_grouped(program, term)})"
        yield edit_at(program, "into-call", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("abs-argument", "numerical-instability")
def abs_argument(program: Program) -> Iterator[Edit]:
    """A name inside an exponential's argument taken in absolute value: `tl.exp(-x)` -> `tl.exp(-tl.abs(x))`, the
    stable form of softplus, log-sigmoid and friends (the sign is handled by a `tl.where` around it)."""
    for node in _value_nodes(program):
        if not (isinstance(node, ast.Call) and call_name(node) in ("tl.exp", "tl.exp2") and node.args):
            continue
        for name in ast.walk(node.args[0]):
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load):
                new = f"tl.abs({name.id})"
                yield edit_at(program, "abs-argument", name, new, f"`{name.id}` -> `{new}` in `{program.code(node)}`")


@operator("clamp-exponent", "numerical-instability")
def clamp_exponent(program: Program) -> Iterator[Edit]:
    """An exponential's argument capped where the function it computes has saturated: `tl.exp(2.0 * z)` ->
    `tl.exp(tl.minimum(2.0 * z, 20.0))`, so that `(e - 1) / (e + 1)` (tanh), `e / (1 + e)` (sigmoid) or `log(1 + e)`
    never divide or subtract infinities. In float32 tanh and sigmoid are 1 well before 20; an argument already capped
    or shifted by a maximum is left alone."""
    for kernel, node in program.kernel_nodes():
        if not (isinstance(node, ast.Call) and call_name(node) in ("tl.exp", "tl.exp2") and node.args):
            continue
        if _bounded(kernel, node.args[0]):
            continue
        argument = program.code(node.args[0])
        new = f"tl.minimum({argument}, 20.0)"
        yield edit_at(program, "clamp-exponent", node.args[0], new, f"`{program.code(node)}` argument capped at 20")


_BOUNDING = ("minimum", "maximum", "max", "min", "clamp")


def _bounded(kernel: ast.FunctionDef, argument: ast.expr) -> bool:
    """Whether an exponential's argument is capped or shifted by an extreme already: it calls `tl.minimum`,
    `tl.max`... itself, or reads a name the kernel assigns from such a call (`m = tl.max(x)`; `tl.exp(x - m)`)."""
    extremes = {
        name
        for name, assigns in assignments(kernel).items()
        if any(
            isinstance(c, ast.Call) and call_name(c, last=True) in _BOUNDING for a in assigns for c in ast.walk(a.value)
        )
    }
    return any(
        (isinstance(n, ast.Call) and call_name(n, last=True) in _BOUNDING)
        or (isinstance(n, ast.Name) and n.id in extremes)
        for n in ast.walk(argument)
    )


@operator("padding-where", "padding-in-reduction")
def padding_where(program: Program) -> Iterator[Edit]:
    """A computed block that a reduction or an accumulator sums zeroed where the kernel's mask is off: `d = x - mean` ->
    `d = tl.where(mask, x - mean, 0.0)` (padded lanes loaded as 0 are not 0 after the subtraction). Where several
    such blocks feed reductions (a shifted input for the mean, its deviation for the variance), first all of them at
    once with each mask: each alone still leaves the other's padding in its sum."""
    for kernel in program.kernels:
        masks = _mask_names(kernel)
        if not masks:
            continue
        bound = _padded_sites(kernel)
        sites = [site for _, site in bound]
        if len(sites) > 1:
            for mask in masks:
                texts = [_mask_at(kernel, mask, site.lineno) for site in sites]
                if None in texts:
                    continue
                changes: list[tuple[ast.AST, str]] = [
                    (s, f"tl.where({t}, {program.code(s)}, 0.0)") for s, t in zip(sites, texts, strict=True)
                ]
                named = ", ".join(f"`{program.code(site)}`" for site in sites)
                description = f"{named} each -> `tl.where({mask}, ..., 0.0)`"
                yield Edit(
                    "padding-where", "padding-in-reduction", sites[0].lineno, description, program.replace_all(changes)
                )
        stored = next(iter(_named_masks(kernel, ("tl.store",))), None)
        for name, site in bound:
            for mask in masks:
                if (text := _mask_at(kernel, mask, site.lineno)) is not None:
                    new = f"tl.where({text}, {program.code(site)}, 0.0)"
                    edit = edit_at(program, "padding-where", site, new, f"`{program.code(site)}` -> `{new}`")
                    if mask == stored and _positive_padding(kernel, name, site):
                        cue = f"`{program.code(site)}` is positive on every lane, the ones `{mask}` leaves out too"
                        edit = replace(edit, cue=cue, grounded=True)
                    yield edit
        for node in ast.walk(kernel):  # `s += x` where only the selected lanes count: `s += tl.where(keep, x, 0.0)`
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.value, ast.Name):
                for mask in masks:
                    if (text := _mask_at(kernel, mask, node.lineno)) is not None:
                        new = f"tl.where({text}, {node.value.id}, 0.0)"
                        yield edit_at(program, "padding-where", node.value, new, f"`{node.value.id}` -> `{new}`")


def _positive_padding(kernel: ast.FunctionDef, name: str, site: ast.expr) -> bool:
    """Whether `site` (an exponential bound to `name`) is positive on the lanes the kernel's masks leave out: `name`
    is bound once and summed, and nothing it is computed from is selected (`tl.where`) or loaded with an `other=`
    other than a finite number above -1e4 (`-inf`, `-1e30` or a name give `exp(...) = 0` there). Then every padded
    lane adds to the sum: a contradiction the source shows."""
    if not (isinstance(site, ast.Call) and call_name(site) in ("tl.exp", "tl.exp2")):
        return False
    binds = assignments(kernel)
    if len(binds.get(name, [])) != 1:
        return False
    summed = {
        n.id
        for c in ast.walk(kernel)
        if isinstance(c, ast.Call) and call_name(c) == "tl.sum"
        for n in ast.walk(c)
        if isinstance(n, ast.Name)
    }
    if name not in summed:
        return False
    seen: set[str] = set()
    stack: list[ast.expr] = [site]
    while stack:
        expr = stack.pop()
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and (
                call_name(node) == "tl.where" or (call_name(node) == "tl.load" and not _finite_padding(node))
            ):
                return False
            if isinstance(node, ast.Name) and node.id not in seen:
                seen.add(node.id)
                stack += [a.value for a in binds.get(node.id, [])]
    return True


def _finite_padding(load: ast.Call) -> bool:
    """Whether a load's masked-off lanes hold a finite value an exponential keeps positive: no `other=`, or a number
    above -1e4."""
    other = next((k.value for k in load.keywords if k.arg == "other"), load.args[2] if len(load.args) > 2 else None)
    value = constant_value(other) if other is not None else 0.0
    return value is not None and -1e4 < value < float("inf")


def _padded_sites(kernel: ast.FunctionDef) -> list[tuple[str, ast.expr]]:
    """The computed values (not loads, `tl.where`s or constant blocks) bound to names a reduction or an accumulator
    reads, with those names."""
    summed: list[ast.expr] = [c for c in ast.walk(kernel) if isinstance(c, ast.Call) and call_name(c) in REDUCTIONS]
    summed += [a.value for a in ast.walk(kernel) if isinstance(a, ast.AugAssign)]  # acc += d * d
    reduced = {n.id for expr in summed for n in ast.walk(expr) if isinstance(n, ast.Name)}
    sites: list[tuple[str, ast.expr]] = []
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if node.targets[0].id not in reduced or not isinstance(value, ast.BinOp | ast.Call):
            continue
        skipped = ("tl.load", "tl.where", *_CONSTANT_BLOCKS, *REDUCTIONS)
        if isinstance(value, ast.Call) and call_name(value) in skipped:
            continue  # a load's padding is its `other=`; a `tl.where` is masked already; zeros are zeros
        sites.append((node.targets[0].id, value))
    return sites


_CONSTANT_BLOCKS = ("tl.zeros", "tl.zeros_like", "tl.full")


def _mask_at(kernel: ast.FunctionDef, mask: str, line: int) -> str | None:
    """`mask` as it can be read on `line`: its name where it is bound before, else the comparison it is bound to
    further down, written out (a store's mask is often built just before the store, after the value it guards:
    `mask = mask_m & mask_n` -> `(rm[:, None] < M) & (rn[None, :] < N)`); None where a name it needs is bound more
    than once below `line`."""
    binds = assignments(kernel)

    def written(name: str, depth: int) -> ast.expr | None:
        found = binds.get(name, [])
        if not found or found[0].lineno < line:
            return ast.Name(name, ast.Load())
        if len(found) > 1 or depth > 8:
            return None
        value = found[0].value
        parts: dict[str, ast.expr] = {}
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and node.id not in parts:
                part = written(node.id, depth + 1)
                if part is None:
                    return None
                parts[node.id] = part

        class Inline(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.expr:
                return parts[node.id]

        return Inline().visit(copy.deepcopy(value))

    expr = written(mask, 0)
    return None if expr is None else ast.unparse(expr)


def _mask_names(kernel: ast.FunctionDef) -> list[str]:
    """The kernel's masks: those of its loads and stores that are names (`mask=cmask`), then the other names bound to
    comparisons (a selection read from memory: `keep = tl.load(m_ptr + offs) != 0`), in source order."""
    found = _named_masks(kernel, ("tl.load", "tl.store"))
    for node in ast.walk(kernel):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and boolean(node.value)
            and node.targets[0].id not in found
        ):
            found.append(node.targets[0].id)
    return found


def _named_masks(kernel: ast.FunctionDef, calls: tuple[str, ...]) -> list[str]:
    """The masks of the kernel's `calls` that are names (`mask=cmask`), in source order, once each."""
    found: list[str] = []
    for node in ast.walk(kernel):
        if isinstance(node, ast.Call) and call_name(node) in calls:
            for keyword in node.keywords:
                if keyword.arg == "mask" and isinstance(keyword.value, ast.Name) and keyword.value.id not in found:
                    found.append(keyword.value.id)
    return found


_NARROW = ("tl.float16", "tl.bfloat16")


@operator("drop-downcast", "precision-loss")
def drop_downcast(program: Program) -> Iterator[Edit]:
    """A cast to half precision inside a kernel's arithmetic taken away (`tl.dot(a.to(tl.float16), b.to(...))`): one
    at a time, then all of them at once. Casts of a stored value are left alone (the output's dtype)."""
    stored = {id(value) for _, _, value in stored_results(program)}
    casts = [
        node
        for _, node in program.kernel_nodes()
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
        and len(node.args) == 1
        and ast.unparse(node.args[0]) in _NARROW
        and id(node) not in stored
    ]
    for node in casts:
        inner = program.code(node.func.value)  # type: ignore[attr-defined]
        yield edit_at(program, "drop-downcast", node, inner, f"`{program.code(node)}` -> `{inner}`")
    if len(casts) > 1:
        text = program.replace_all([(n, program.code(n.func.value)) for n in casts])  # type: ignore[attr-defined]
        yield Edit(
            "drop-downcast",
            "precision-loss",
            casts[0].lineno,
            f"every half-precision cast dropped ({len(casts)})",
            text,
        )


_BASES = {"tl.log2": "tl.log", "tl.log": "tl.log2", "tl.exp2": "tl.exp", "tl.exp": "tl.exp2"}


@operator("log-base", "wrong-constant")
def log_base(program: Program) -> Iterator[Edit]:
    """A logarithm or exponential in the other base: `tl.log2(u)` -> `tl.log(u)` (a base-2 log left unscaled by
    ln 2), `tl.exp2(v)` -> `tl.exp(v)` (its argument never scaled by log2(e)), and back, in a computed value."""
    for node in _value_nodes(program):
        if isinstance(node, ast.Call) and call_name(node) in _BASES and len(node.args) == 1:
            start, end = program.span(node.func)
            text = program.text[:start] + _BASES[call_name(node)] + program.text[end:]
            description = f"`{call_name(node)}` -> `{_BASES[call_name(node)]}` (line {node.lineno})"
            yield Edit("log-base", "wrong-constant", node.lineno, description, text)


@operator("shared-term", "wrong-epsilon")
def shared_term(program: Program) -> Iterator[Edit]:
    """A smoothing term the denominator of a quotient has and its numerator lacks, added to the numerator:
    `(2 * inter) / (ps + ts + smooth)` -> `(2 * inter + smooth) / (...)` (Dice, Jaccard, Laplace smoothing)."""
    for node in _value_nodes(program):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        numerator = {ast.unparse(n) for n in ast.walk(node.left)}
        terms = _sum_terms(node.right)
        if len(terms) < 2:
            continue
        for term in terms:
            if isinstance(term, ast.Name | ast.Attribute) and ast.unparse(term) not in numerator:
                new = f"{_grouped(program, node.left)} + {program.code(term)}"
                description = f"numerator `{program.code(node.left)}` -> `{new}`"
                yield edit_at(program, "shared-term", node.left, program.fitted(node.left, new), description)


def _sum_terms(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _sum_terms(expr.left) + _sum_terms(expr.right)
    return [expr]


@operator("log-one-plus", "wrong-constant")
def log_one_plus(program: Program) -> Iterator[Edit]:
    """`tl.log(u)` -> `tl.log(1.0 + u)` in a computed value: a `log1p` written as a plain log."""
    for node in _value_nodes(program):
        if isinstance(node, ast.Call) and call_name(node) in ("tl.log", "tl.log2") and len(node.args) == 1:
            inner = node.args[0]
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add):
                continue
            new = f"{call_name(node)}(1.0 + {_grouped(program, inner)})"
            yield edit_at(program, "log-one-plus", node, new, f"`{program.code(node)}` -> `{new}`")
