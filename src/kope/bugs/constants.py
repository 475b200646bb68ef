"""Constants: near misses of well-known constants, exp2 without log2(e), a formula's missing factor.

The bug kind's cues, recipes, edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: wrong-constant.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from kope.bugs.analysis import constexprs_of
from kope.bugs.cue import Source, cue
from kope.bugs.edit import Edit, Program, assignments, boolean, edit_at, operator, stored_results, value_flow
from kope.bugs.formulas import MATH
from kope.bugs.mutation import Context, Mutation, mutation
from kope.bugs.recipe import _analysed, _cue_nodes, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


KNOWN_CONSTANTS: dict[str, float] = {
    "GELU tanh cubic coefficient": 0.044715,
    "sqrt(2/pi)": math.sqrt(2 / math.pi),
    "log2(e)": math.log2(math.e),
    "ln(2)": math.log(2),
    "1/sqrt(2)": 1 / math.sqrt(2),
    "sqrt(2)": math.sqrt(2),
    "pi": math.pi,
    "e": math.e,
    "1/pi": 1 / math.pi,
    "sqrt(2*pi)": math.sqrt(2 * math.pi),
    "1/sqrt(2*pi)": 1 / math.sqrt(2 * math.pi),
    "2/sqrt(pi)": 2 / math.sqrt(math.pi),
    "sigmoid-GELU coefficient": 1.702,
    "SELU scale": 1.0507009873554805,
    "SELU alpha": 1.6732632423543772,
}


def _significant(text: str) -> str:
    digits = text.lower().split("e")[0].replace(".", "").replace("-", "").lstrip("0")
    return digits.rstrip("0") or "0"


def near_constant(value: float, text: str) -> str | None:
    """The known constant a literal looks like a slip of (wrong decimal place, a mistyped digit)."""
    if value <= 0 or not math.isfinite(value):
        return None
    digits = _significant(text)
    if len(digits) < 3:
        return None
    for constant in KNOWN_CONSTANTS.values():
        if math.isclose(
            value, constant, rel_tol=0, abs_tol=0.51 * 10 ** (math.floor(math.log10(value)) - len(digits) + 1)
        ):
            return None
    for name, constant in KNOWN_CONSTANTS.items():
        reference = _significant(repr(constant))
        ratio = value / constant
        decade = round(math.log10(ratio))
        if decade != 0 and abs(ratio / 10**decade - 1) < 10 ** (1 - len(digits)):
            return name
        if decade == 0 and abs(ratio - 1) < 0.2 and _digit_slip(digits, reference[: len(digits) + 1]):
            return name
    return None


def _digit_slip(digits: str, reference: str) -> bool:
    """One digit changed, dropped, added, or two adjacent digits swapped."""
    a, b = digits, reference[: len(digits)]
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
            return True
    longer = reference[: len(digits) + 1]
    return any(longer[:i] + longer[i + 1 :] == a for i in range(len(longer))) or any(
        a[:i] + a[i + 1 :] == reference[: len(digits) - 1] for i in range(len(a))
    )


@cue("suspicious-constant", "a float literal close to a well-known constant but not equal to it (0.44715, 0.7978...)")
def suspicious_constant(source: Source) -> Iterator[ast.AST]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            text = ast.get_source_segment(source.text, node) or repr(node.value)
            if near_constant(node.value, text) is not None:
                yield node


@cue("exp2-without-log2e", "tl.exp2 is used but no log2(e) factor appears: the softmax runs at base 2, not e")
def exp2_without_log2e(source: Source) -> Iterator[ast.AST]:
    text = source.text.lower().replace("_", "")
    if any(marker in text for marker in ("1.44269", "log2(math.e)", "log2e", "0.693147", "log(2", "ln2")):
        return
    yield from source.kernel_calls("exp2")


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


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
def known_constant(source: str) -> Iterator[str]:
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


# -- the search's edits (repair operators) -----------------------------------------------------


def _typos(text: str) -> list[str]:
    """Nearby decimal typos of a literal: adjacent digits swapped, one digit dropped, times or over ten."""
    mantissa, _, exponent = text.lower().partition("e")
    digits = [i for i, ch in enumerate(mantissa) if ch.isdigit()]
    found: list[str] = []
    for a, b in itertools.pairwise(digits):
        if b == a + 1 and mantissa[a] != mantissa[b]:
            found.append(mantissa[:a] + mantissa[b] + mantissa[a] + mantissa[b + 1 :])
    for i in digits:
        dropped = mantissa[:i] + mantissa[i + 1 :]
        if any(ch.isdigit() for ch in dropped) and not dropped.startswith("."):
            found.append(dropped)
    try:
        value = float(text)
    except ValueError:
        return []
    found += [repr(value * 10), repr(value / 10)]
    out: list[str] = []
    for candidate in found:
        full = candidate + (f"e{exponent}" if exponent and "e" not in candidate else "")
        try:
            if float(full) != value and full not in out:
                out.append(full)
        except ValueError:
            continue
    return out


def _transforms(value: float) -> list[float]:
    """What a formula's constant becomes when one step of its derivation is lost: sqrt, square, inverse, x2, /2."""
    found = [value * 2.0, value / 2.0]
    if value > 0:
        found += [math.sqrt(value), value * value, 1.0 / value]
    return found


def _near(a: float, b: float, tolerance: float = 2e-2) -> bool:
    return a != b and abs(a - b) <= tolerance * max(abs(a), abs(b))


def _float_literals(program: Program) -> Iterator[ast.Constant]:
    """Float literals other than 0 and 1, in kernels and in the host code (an `eps` set in `__init__`)."""
    for node in ast.walk(program.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and node.value not in (0.0, 1.0):
            yield node


@operator("constant", "wrong-constant")
def constant(program: Program) -> Iterator[Edit]:
    """A float literal (in a kernel or the host code around it) replaced by the reference's constants (nearest
    first), by what a constant becomes when a derivation step is lost (sqrt, square, inverse, x2, /2), by
    common mathematical constants and by nearby decimal typos."""
    references = program.reference_constants
    for node in _float_literals(program):
        text = program.code(node)
        value = node.value
        assert isinstance(value, float)

        def distance(c: float, value: float = value) -> float:
            return abs(math.log(abs(c) / abs(value))) if c and value else 9e9

        close = [c for c in references if _near(c, value)]
        derived = [c for c in references if any(abs(d - value) <= 1e-6 * abs(value) for d in _transforms(c))]
        cue = ""
        if close:
            cue = f"`{text}` is close to, not equal to, a constant of the reference's formula"
        elif derived:
            cue = f"`{text}` is a transform (sqrt, square, inverse, x2, /2) of a constant of the reference's formula"
        cued = close or derived
        candidates = sorted(references, key=distance)
        candidates += sorted((t for t in _transforms(value) if t not in candidates), key=distance)
        candidates += sorted((m for m in MATH if m not in candidates), key=distance)[:3]
        replacements = [repr(c) for c in candidates if c != value] + _typos(text)
        for replacement in dict.fromkeys(replacements):
            edit = edit_at(program, "constant", node, replacement, f"constant `{text}` -> `{replacement}`")
            yield replace(edit, cue=cue if float(replacement) in cued else "")


SIMPLE_FACTORS = (0.5, 2.0, 0.25, 4.0)
"""Factors a formula loses whole (GELU's 0.5, a doubled sum): offered from a measured scale even when the reference
does not hold them."""


def _factors_of_scale(scale: float, references: list[float]) -> list[float]:
    """The factor that undoes a measured scale, as the constant it most likely is: a reference constant, a simple
    factor or a mathematical constant (ln 2 for a `log2` left unscaled) within 0.5%. None otherwise: a fitted number
    would hide the bug, not repair it."""
    value = 1.0 / scale
    return [c for c in (*references, *SIMPLE_FACTORS, *MATH) if abs(c - value) <= 5e-3 * abs(value)][:1]


@operator("missing-factor", "wrong-constant")
def missing_factor(program: Program) -> Iterator[Edit]:
    """A missing factor put back where a result is stored or computed: 1/scale when the diagnosis measured the
    output as a constant multiple of the reference, a constant of the reference's formula the kernel never uses,
    or a multiplication or division by a formula parameter (`beta`) passed to the kernel."""
    used = {n.value for n in ast.walk(program.tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)}
    factors: list[tuple[str, str]] = []
    if program.scale is not None and program.scale and abs(program.scale - 1.0) > 1e-3:
        for c in _factors_of_scale(program.scale, program.reference_constants):
            factors.append((f"* {c!r}", f"the output is {program.scale:.4g} x the reference"))
    factors += [(f"* {c!r}", "") for c in program.reference_constants if c not in used]
    seen: set[tuple[int, str]] = set()
    for kernel, value in value_flow(program):
        ops = factors + [(f"{op} {p}", "") for p in program.value_scalars(kernel) for op in ("/", "*")]
        for factor, hint in ops:
            if (id(value), factor) in seen:
                continue
            seen.add((id(value), factor))
            new = f"({program.code(value)}) {factor}"
            edit = edit_at(program, "missing-factor", value, new, f"`{program.code(value)}` {factor}")
            yield replace(edit, cue=hint)


@operator("divisor", "wrong-normalizer")
def divisor(program: Program) -> Iterator[Edit]:
    """A division's divisor replaced: by another scalar or block-size parameter of the kernel (the count of elements,
    not of partial sums or of a block's lanes), by its square root (`1/D` for `1/sqrt(D)`), by one less (`n - 1`:
    an unbiased variance) or by the count a loop before it visits (`end - start`), in a kernel or the host code."""
    for node in ast.walk(program.tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        right = node.right
        if isinstance(right, ast.Constant):
            continue
        inside = program.in_kernel(node)
        text = program.code(right)
        root = f"tl.sqrt(({text}) * 1.0)" if inside else f"({text}) ** 0.5"
        yield edit_at(program, "divisor", right, root, f"divisor `{text}` -> `{root}`")
        if isinstance(node.left, ast.Constant) and node.left.value == 1.0:  # an inverse too many: 1 / sqrt(d)
            kept = program.fitted(node, text)
            yield edit_at(program, "divisor", node, kept, f"`{program.code(node)}` -> `{text}` (not its inverse)")
        if not (isinstance(right, ast.BinOp) and isinstance(right.op, ast.Sub)):
            unbiased = f"({text} - 1)"
            yield edit_at(program, "divisor", right, unbiased, f"divisor `{text}` -> `{unbiased[1:-1]}` (unbiased)")
        if not (isinstance(right, ast.BinOp) and isinstance(right.op, ast.Add)):
            counted = f"({text} + 1)"  # a count of positions 0..i is i + 1
            yield edit_at(program, "divisor", right, counted, f"divisor `{text}` -> `{counted[1:-1]}` (a count)")
        if inside:  # a count that can be 0 (no element selected): the mean of nothing is 0, not NaN
            guarded = f"tl.maximum({text}, 1.0)"
            yield edit_at(program, "divisor", right, guarded, f"divisor `{text}` -> `{guarded}` (never 0)")
        if inside:
            kernel = next(k for k in program.kernels if k.lineno <= node.lineno <= (k.end_lineno or k.lineno))
            counts = program.scalars(kernel) + constexprs_of(kernel)
            if isinstance(right, ast.Name) and right.id in counts:
                for other in counts:
                    if other != right.id:
                        yield edit_at(program, "divisor", right, other, f"divisor `{text}` -> `{other}`")
            for span in _visited(kernel, node):
                if span != text:
                    yield edit_at(
                        program, "divisor", right, f"({span})", f"divisor `{text}` -> `{span}` (the loop's count)"
                    )
            yield from _whole_window(program, kernel, right)


def _visited(kernel: ast.FunctionDef, node: ast.AST) -> list[str]:
    """How many elements the loops before a division visit, when they start other than at 0: `end - start` for
    `for w in range(start, end, BLOCK)` (an adaptive pool's window, not a fixed size)."""
    found = []
    for loop in ast.walk(kernel):
        if not (
            isinstance(loop, ast.For)
            and isinstance(loop.iter, ast.Call)
            and call_name(loop.iter, last=True) in ("range", "static_range")
            and len(loop.iter.args) >= 2
            and loop.lineno < getattr(node, "lineno", 0)
        ):
            continue
        start, stop = loop.iter.args[0], loop.iter.args[1]
        if not (isinstance(start, ast.Constant) and start.value == 0):
            found.append(f"{ast.unparse(stop)} - {ast.unparse(start)}")
    return found


def _whole_window(program: Program, kernel: ast.FunctionDef, right: ast.expr) -> Iterator[Edit]:
    """A divisor made from a count its loops add to (`tl.maximum(count, 1.0)`) -> every position those loops visit;
    grounded where the reference's average pool counts the padding in."""
    names = dict.fromkeys(n.id for n in ast.walk(right) if isinstance(n, ast.Name))
    window = next((w for w in map(functools.partial(_window, kernel), names) if w is not None), None)
    if window is None:
        return
    text = program.code(right)
    edit = edit_at(
        program,
        "divisor",
        right,
        f"({window})",
        f"divisor `{text}` -> `{window}` (every position its loops visit: a pool's window, padding in)",
    )
    pool = _padded_average(program.reference)
    if pool:
        cue = f"the reference's `{pool}` divides by its whole window, padding included; `{text}` counts"
        edit = replace(edit, cue=cue, grounded=True)
    yield edit


def _window(kernel: ast.FunctionDef, name: str) -> str | None:
    """The positions the loops around `name += ...` visit, when `name` is a count the kernel adds to in loops (`count
    += valid`): the product of their trip counts (`KD * KH * KW`), what an average pool divides by where it counts
    the padding (PyTorch's default); None where it is not added to in a loop of known trip count."""

    def trips(loop: ast.For) -> str | None:
        if not (isinstance(loop.iter, ast.Call) and call_name(loop.iter, last=True) in ("range", "static_range")):
            return None
        args = loop.iter.args
        if len(args) == 1:
            return ast.unparse(args[0])
        if len(args) == 2:
            return f"({ast.unparse(args[1])} - {ast.unparse(args[0])})"
        return None

    def walk(node: ast.AST, loops: tuple[ast.For, ...]) -> Iterator[tuple[ast.For, ...]]:
        for child in ast.iter_child_nodes(node):
            if (
                isinstance(child, ast.AugAssign)
                and isinstance(child.op, ast.Add)
                and isinstance(child.target, ast.Name)
                and child.target.id == name
            ):
                yield loops
            yield from walk(child, (*loops, child) if isinstance(child, ast.For) else loops)

    found = {around for around in walk(kernel, ()) if around}
    if len(found) != 1:
        return None
    counts = [trips(loop) for loop in next(iter(found))]
    if any(c is None for c in counts):
        return None
    return " * ".join(c for c in counts if c is not None)


_AVERAGE_POOLS = {f"{name}{n}d" for name in ("AvgPool", "avg_pool") for n in (1, 2, 3)}


def _padded_average(reference: str) -> str:
    """The reference's average pool that counts the padding in its divisor (PyTorch's default `count_include_pad=True`:
    `nn.AvgPool2d(3, padding=1)`, `F.avg_pool3d(x, 3, 2, 1)`); "" when it has none."""
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError):
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node, last=True) in _AVERAGE_POOLS:
            counted = next((k.value for k in node.keywords if k.arg == "count_include_pad"), None)
            if not (isinstance(counted, ast.Constant) and counted.value is False):
                return call_name(node, last=True)
    return ""


@operator("drop-operation", "wrong-normalizer")
def drop_operation(program: Program) -> Iterator[Edit]:
    """An extra operation on a result just before its store taken away: the stored value, or the last
    assignment of the stored name, replaced by one of its operands."""
    for kernel, node, value in stored_results(program):
        assigned = assignments(kernel)
        targets: list[ast.expr] = [value]
        if isinstance(value, ast.Name):
            earlier = [a for a in assigned.get(value.id, []) if a.lineno < node.lineno]
            if earlier:
                targets.append(earlier[-1].value)
        for target in targets:
            for operand in _operands(target):
                new = program.code(operand)
                yield edit_at(
                    program,
                    "drop-operation",
                    target,
                    f"({new})" if isinstance(operand, ast.BinOp) else new,
                    f"`{program.code(target)}` -> `{new}`",
                )


def _operands(expr: ast.expr) -> list[ast.expr]:
    if isinstance(expr, ast.BinOp):
        return [expr.left, expr.right]
    if isinstance(expr, ast.UnaryOp):
        return [expr.operand]
    if isinstance(expr, ast.Call) and call_name(expr).startswith("tl.") and len(expr.args) == 1 and not expr.keywords:
        return [expr.args[0]]
    return []


def _nested_sites(value: ast.expr) -> Iterator[ast.expr]:
    """The parts of a computed value a factor is often missing from: the operands of its arithmetic, the terms of
    its sums and differences (`diff - beta` for `diff - 0.5 * beta`) and the arguments of the calls in it (a
    `tl.where` branch, a `tl.sigmoid` argument), not other names or literals alone, nor anything inside a load's
    address or mask."""
    conditions = {
        id(n)
        for call in ast.walk(value)
        if isinstance(call, ast.Call) and call_name(call) == "tl.where" and call.args
        for n in ast.walk(call.args[0])
    }
    terms = {
        id(side)
        for n in ast.walk(value)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add | ast.Sub)
        for side in (n.left, n.right)
    }
    addresses = {
        id(n)
        for call in ast.walk(value)
        if isinstance(call, ast.Call) and call_name(call) in ("tl.load", "tl.store")
        for argument in [*call.args, *(k.value for k in call.keywords)]
        for n in ast.walk(argument)
    }
    for node in ast.walk(value):
        if node is value or id(node) in conditions or id(node) in addresses or not isinstance(node, ast.expr):
            continue
        if boolean(node):
            continue
        if isinstance(node, ast.BinOp | ast.Call) or (
            isinstance(node, ast.Name | ast.Attribute) and (id(node) in terms or _in_call_argument(value, node))
        ):
            yield node


def _in_call_argument(value: ast.expr, target: ast.expr) -> bool:
    return any(isinstance(c, ast.Call) and any(a is target for a in c.args) for c in ast.walk(value))


@operator("complement", "wrong-constant")
def complement(program: Program) -> Iterator[Edit]:
    """A formula parameter read where its complement belongs: `decay = alpha` -> `decay = (1.0 - alpha)` (a decay
    against a smoothing factor, a keep against a drop probability, a momentum written the other way round)."""
    for kernel in program.kernels:
        parameters = set(program.value_scalars(kernel))
        for node in ast.walk(kernel):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in parameters:
                new = f"(1.0 - {node.id})"
                yield edit_at(program, "complement", node, new, f"`{node.id}` -> `{new}` (line {node.lineno})")


@operator("nested-factor", "wrong-constant")
def nested_factor(program: Program) -> Iterator[Edit]:
    """A factor missing inside a computed value: a term, a branch of a `tl.where` or a function's argument multiplied
    by a formula parameter passed to the kernel (`beta`), 0.5, 2 or an unused formula constant, or divided by the
    parameter (`exp(x / alpha)`) or given it as a term (`2 * inter + smooth`). The parameter goes first: the
    reference's constants include the task's init values (`beta = 1.7`), and a kernel that bakes one in where it is
    passed the parameter is right only for that value."""
    used = {n.value for n in ast.walk(program.tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)}
    constants = [c for c in (0.5, 2.0, *program.reference_constants) if c not in used or c in (0.5, 2.0)]
    seen: set[int] = set()
    for kernel, value in value_flow(program):
        parameters = program.value_scalars(kernel)
        factors = [f"{p} *" for p in parameters] + [f"{c!r} *" for c in dict.fromkeys(constants)]
        after = [f"/ {p}" for p in parameters] + [f"+ {p}" for p in parameters]
        for site in _nested_sites(value):
            if id(site) in seen:
                continue
            seen.add(id(site))
            code = program.code(site)
            if isinstance(site, ast.BinOp) and not isinstance(site.op, ast.Mult | ast.Div | ast.Pow):
                code = f"({code})"
            for new in [f"({factor} {code})" for factor in factors] + [f"({code} {op})" for op in after]:
                yield edit_at(program, "nested-factor", site, new, f"`{program.code(site)}` -> `{new}`")


@operator("host-dtype", "dtype-mismatch")
def host_dtype(program: Program) -> Iterator[Edit]:
    """A tensor reinterpreted on the host (`t.view(torch.int32)`) converted instead (`t.to(torch.int32)`)."""
    for node in program.host_nodes():
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "view"
            and len(node.args) == 1
            and "torch." in ast.unparse(node.args[0])
        ):
            new = f"{program.code(node.func.value)}.to({program.code(node.args[0])})"
            yield edit_at(program, "host-dtype", node, new, f"`{program.code(node)}` -> `{new}`")


# -- how the bench injects it (mutations) ------------------------------------------------------


def _interesting_float(value: float) -> bool:
    if value != value or value in (float("inf"), float("-inf")):
        return False
    digits = f"{abs(value):.12g}".replace(".", "").replace("-", "").strip("0")
    return len(digits) >= 3


@mutation
class ChangeConstant(Mutation):
    name = "change-constant"
    label = "wrong-constant"
    summary = "a mathematical constant loses a digit or a decimal place (0.044715 -> 0.44715)"
    where = "any"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.Float):
            return []
        value = float(node.value)
        if not _interesting_float(value):
            return []
        shifted = cst.Float(repr(value * 10))
        rounded = float(f"{value:.2g}")
        return [shifted, cst.Float(repr(rounded))] if rounded != value else [shifted]
