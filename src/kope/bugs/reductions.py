"""Reductions and accumulators: the normaliser, a reset inside the loop, the initial value.

The bug kind's cues, recipes, edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: wrong-normalizer, accumulator-reset, wrong-reduction-init.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import (
    Kernel,
    assigned_names,
    calls_in,
    constant_value,
    constexprs_of,
    keyword_of,
    names_in,
    params_of,
    statements,
)
from kope.bugs.cue import Source, _derived_from, _kernel_loops, _kernels, _reduction_result, cue
from kope.bugs.edit import Edit, Program, assignments, autotune_configs, edit_at, operator
from kope.bugs.mutation import (
    Context,
    KernelFacts,
    Mutation,
    binary,
    cst_names_in,
    float_value,
    mutation,
    positional,
    single_target,
    without_args,
)
from kope.bugs.recipe import NEG_INF, _analysed, _bounds_for, _cue_nodes, _expr, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue("divide-by-block-size", "a reduction is divided by a block size (a constexpr) instead of the element count")
def divide_by_block_size(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Div)
                and isinstance(node.right, ast.Name)
                and node.right.id in _masked_block_widths(kernel)
                and _reduction_result(node.left, kernel)
            ):
                yield node


def _masked_block_widths(kernel: Kernel) -> set[str]:
    """Constexpr widths of tl.arange blocks whose offsets are masked against a size (so the block
    can be wider than the data it covers)."""
    widths: set[str] = set()
    masked = {n for m in kernel.masks for v in kernel.assigns.get(m, []) for n in names_in(v)}
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.Compare) and names_in(node) & kernel.aranges:
            masked |= names_in(node)
    for name, values in kernel.assigns.items():
        for value in values:
            for call in calls_in(value, "arange"):
                width = call.args[1] if len(call.args) == 2 else None
                if (
                    isinstance(width, ast.Name)
                    and width.id in kernel.constexprs
                    and (name in masked or masked & _derived_from(kernel, name))
                ):
                    widths.add(width.id)
    return widths


@cue(
    "divide-by-n-minus-one", "a reduction is divided by (n - 1): the unbiased normaliser, where the biased one is usual"
)
def divide_by_n_minus_one(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for node in ast.walk(kernel.node):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.BinOp):
                right = node.right
                if (
                    isinstance(right.op, ast.Sub)
                    and constant_value(right.right) == 1.0
                    and _reduction_result(node.left, kernel)
                ):
                    yield node


def _initialiser(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and call_name(value, last=True) in ("zeros", "full", "zeros_like", "full_like")


def _loop_dependencies(loop: ast.For, name: str, kernel: Kernel) -> dict[str, set[str]]:
    """For each name assigned in the loop, the names its new value reads, transitively within the loop."""
    direct: dict[str, set[str]] = {}
    for stmt in statements(loop.body):
        if isinstance(stmt, ast.Assign):
            for target in assigned_names(stmt):
                direct.setdefault(target, set()).update(names_in(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            for target in assigned_names(stmt):
                direct.setdefault(target, set()).update(names_in(stmt.value) | {target})
    closure = {k: set(v) for k, v in direct.items()}
    changed = True
    while changed:
        changed = False
        for deps in closure.values():
            extra = set().union(*(closure.get(d, set()) for d in deps)) - deps
            if extra:
                deps |= extra
                changed = True
    return closure


@cue(
    "accumulator-overwritten-in-loop",
    "an accumulator is re-initialised or overwritten (= instead of +=) inside the loop that accumulates it",
)
def accumulator_overwritten_in_loop(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            inside = {id(s) for s in statements(loop.body)}
            before: set[str] = set()
            for stmt in statements(kernel.node.body):
                if stmt is loop:
                    break
                if isinstance(stmt, ast.Assign) and _initialiser(stmt.value) and id(stmt) not in inside:
                    before.update(assigned_names(stmt))
            after = _names_read_after(kernel, loop)
            for stmt in loop.body:
                if not isinstance(stmt, ast.Assign):
                    continue
                for name in assigned_names(stmt):
                    if _reads_loop_state(stmt, name, loop, kernel):
                        continue
                    accumulated = _accumulated_in(loop, name, stmt)
                    if (name in before and (name in after or accumulated)) or (
                        name not in before and _initialiser(stmt.value) and accumulated and name in after
                    ):
                        yield stmt


def _accumulated_in(loop: ast.For, name: str, skip: ast.stmt) -> bool:
    """Whether the loop also updates `name` from its own value (`name += ...`, `name = f(name, ...)`)."""
    for stmt in statements(loop.body):
        if stmt is skip:
            continue
        if isinstance(stmt, ast.AugAssign) and name in assigned_names(stmt):
            return True
        if isinstance(stmt, ast.Assign) and name in assigned_names(stmt) and name in names_in(stmt.value):
            return True
    return False


def _reads_loop_state(stmt: ast.Assign, name: str, loop: ast.For, kernel: Kernel) -> bool:
    deps = _loop_dependencies(loop, name, kernel)
    reads = names_in(stmt.value)
    return name in reads or any(name in deps.get(r, set()) for r in reads)


def _names_read_after(kernel: Kernel, loop: ast.For) -> set[str]:
    names: set[str] = set()
    found = False
    for stmt in statements(kernel.node.body):
        if stmt is loop:
            found = True
            continue
        if found and not _within(stmt, loop):
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return names


def _within(stmt: ast.AST, loop: ast.For) -> bool:
    return any(stmt is inner for inner in ast.walk(loop))


def _zero_init(kernel: Kernel, name: str) -> bool:
    first = kernel.assigns.get(name, [None])[0]
    if isinstance(first, ast.Call) and call_name(first, last=True) in ("zeros", "zeros_like"):
        return True
    if isinstance(first, ast.Call) and call_name(first, last=True) == "full" and len(first.args) > 1:
        return constant_value(first.args[1]) == 0.0
    return constant_value(first) == 0.0


@cue("max-init-zero", "a running max (or min) starts at 0 instead of -inf (+inf): all-negative data comes out as 0")
def max_init_zero(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            for stmt in statements(loop.body):
                if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
                    continue
                for name in assigned_names(stmt):
                    if _zero_init(kernel, name) and _running_extreme(stmt.value, name, kernel):
                        yield stmt.value


def _running_extreme(value: ast.Call, name: str, kernel: Kernel) -> bool:
    """`m = tl.maximum(m, x)` or `m = tl.where(x > m, x, m)`: a running max or min of `name`."""
    direct = lambda e: isinstance(e, ast.Name) and e.id == name  # noqa: E731
    if call_name(value, last=True) in ("maximum", "minimum"):
        return any(direct(a) for a in value.args)
    if call_name(value, last=True) == "where" and len(value.args) == 3 and direct(value.args[2]):
        cond = value.args[0]
        compares = (
            [cond]
            if isinstance(cond, ast.Compare)
            else [v for v in kernel.assigns.get(cond.id, []) if isinstance(v, ast.Compare)]
            if isinstance(cond, ast.Name)
            else []
        )
        return any(name in names_in(c) and isinstance(c.ops[0], ast.Gt | ast.GtE | ast.Lt | ast.LtE) for c in compares)
    return False


@cue(
    "online-normalizer-init",
    "an online-softmax running sum starts at 0 although the running max already holds the first block",
)
def online_normalizer_init(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for name, values in kernel.assigns.items():
            if not _zero_init(kernel, name):
                continue
            for value in values[1:]:
                if not (isinstance(value, ast.BinOp) and name in names_in(value)):
                    continue
                for call in calls_in(value, "exp", "exp2"):
                    arg = call.args[0] if call.args else None
                    if not (
                        isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Sub) and isinstance(arg.left, ast.Name)
                    ):
                        continue
                    running = arg.left.id
                    first = kernel.assigns.get(running, [None])[0]
                    from_data = first is not None and any(True for _ in calls_in(first, "load"))
                    if from_data and _running_max(kernel, running):
                        yield value


def _running_max(kernel: Kernel, name: str) -> bool:
    """`name` is re-assigned `tl.maximum(name, ...)`, directly or through another name."""
    for value in kernel.assigns.get(name, [])[1:]:
        candidates = [value] + (kernel.assigns.get(value.id, []) if isinstance(value, ast.Name) else [])
        for candidate in candidates:
            if (
                isinstance(candidate, ast.Call)
                and call_name(candidate, last=True) == "maximum"
                and any(isinstance(a, ast.Name) and a.id == name for a in candidate.args)
            ):
                return True
    return False


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


POS_INF = 'float("inf")'


class _Divisor(_LineTransformer):
    def __init__(self, line: int, divisor: str) -> None:
        super().__init__()
        self.target, self.divisor = line, divisor

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if (
            self.line(original_node) == self.target
            and isinstance(updated_node.operator, cst.Divide)
            and not self.changed
        ):
            right = updated_node.right
            blockish = isinstance(right, cst.Name) and right.value != self.divisor
            minus_one = (
                isinstance(right, cst.BinaryOperation)
                and isinstance(right.operator, cst.Subtract)
                and m.matches(right.right, m.Integer("1"))
            )
            if blockish or minus_one:
                self.changed = True
                return updated_node.with_changes(right=_expr(self.divisor))
        return updated_node


@recipe(
    "count-normalizer",
    "divide a reduction by the element count (the size its mask compares with), not by BLOCK or n - 1",
)
def count_normalizer(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for name in ("divide-by-block-size", "divide-by-n-minus-one"):
        for node in _cue_nodes(parsed, name):
            assert isinstance(node, ast.BinOp)
            kernel = next(
                (k for k in parsed.dataflow.kernels.values() if any(w is node for w in ast.walk(k.node))), None
            )
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
        return updated_node.with_changes(
            body=[
                cst.AugAssign(
                    target=stmt.targets[0].target,
                    operator=cst.AddAssign(),
                    value=stmt.value,
                )
            ]
        )

    def leave_For(
        self, original_node: cst.For, updated_node: cst.For
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if self.hoisted is not None:
            hoisted, self.hoisted = self.hoisted, None
            return cst.FlattenSentinel([hoisted, updated_node])
        return updated_node


@recipe(
    "hoist-accumulator",
    "keep an accumulator across loop iterations: drop (or hoist) its re-initialisation, or turn = into +=",
)
def hoist_accumulator(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "accumulator-overwritten-in-loop"):
        if not isinstance(node, ast.Assign):
            continue
        initialiser = isinstance(node.value, ast.Call) and call_name(node.value, last=True) in (
            "zeros",
            "full",
            "zeros_like",
            "full_like",
        )
        modes = ("drop", "hoist") if initialiser else ("accumulate",)
        for mode in modes:
            edited = _rewrite(source, _FixAccumulator(node.lineno, mode))
            if edited is not None:
                yield edited


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
            value = cst.Arg(
                _expr(self.value),
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                if len(args) > 1
                else cst.MaybeSentinel.DEFAULT,
            )
            self.changed = True
            return updated_node.with_changes(func=new_func, args=[shape, value, *args[1:]])
        if name == "full" and len(updated_node.args) > 1:
            args = list(updated_node.args)
            args[1] = args[1].with_changes(value=_expr(self.value))
            self.changed = True
            return updated_node.with_changes(args=args)
        return updated_node


@recipe(
    "reduction-identity",
    "start a running max at -inf (min at +inf); start an online-softmax sum at 1 when its max starts from data",
)
def reduction_identity(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    targets: list[tuple[str, str, ast.AST]] = []
    for node in _cue_nodes(parsed, "max-init-zero"):
        assert isinstance(node, ast.Call)
        smaller = call_name(node, last=True) == "minimum" or (
            call_name(node, last=True) == "where"
            and isinstance(node.args[0], ast.Compare)
            and isinstance(node.args[0].ops[0], ast.Lt | ast.LtE)
        )
        targets.append(("", POS_INF if smaller else NEG_INF, node))
    for node in _cue_nodes(parsed, "online-normalizer-init"):
        targets.append(("", "1.0", node))
    for _, value, node in targets:
        kernel = next((k for k in parsed.dataflow.kernels.values() if any(w is node for w in ast.walk(k.node))), None)
        if kernel is None:
            continue
        for values in kernel.assigns.values():
            if any(v is node for v in values) and values:
                first = values[0]
                edited = _rewrite(source, _Identity(getattr(first, "lineno", -1), value))
                if edited is not None:
                    yield edited


# -- the search's edits (repair operators) -----------------------------------------------------


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
            start, end = program.lines_of(node)
            statement = program.text[start:end].strip()
            if isinstance(loop, ast.For):
                loop_start, _ = program.lines_of(loop)
                indent = program.indent_of(loop)
                text = program.text
                new = text[:loop_start] + indent + statement + "\n" + text[loop_start:start] + text[end:]
                yield Edit(
                    "accumulator-move", "accumulator-reset", node.lineno, f"`{statement}` moved before the loop", new
                )
            index = next(i for i, s in enumerate(block) if s is node)
            for later in block[index + 1 :]:
                if isinstance(later, ast.For) and name in names_in(later) and later.body:
                    first = later.body[0]
                    first_start, _ = program.lines_of(first)
                    indent = program.indent_of(first)
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


@operator("autotune-restore", "wrong-reduction-init")
def autotune_restore(program: Program) -> Iterator[Edit]:
    """An autotuned kernel (several configs) that adds into a pointer parameter atomically, which its autotune
    neither resets nor restores: on a GPU the first call with a new tuning key benchmarks the configs, each run
    adding into the buffer before the run whose result is returned. `restore_value=[...]` (the buffer as the host
    made it, restored after each benchmark run: right whatever it held) is grounded; `reset_to_zero=[...]` (right
    where the host zeroed it) is offered too."""
    for kernel in program.kernels:
        tune = program.parsed.autotune(kernel)
        if tune is None or _config_count(program, tune) < 2 or any(k.arg == "pre_hook" for k in tune.keywords):
            continue
        covered = {
            element.value
            for k in tune.keywords
            if k.arg in ("reset_to_zero", "restore_value") and isinstance(k.value, ast.List | ast.Tuple)
            for element in k.value.elts
            if isinstance(element, ast.Constant)
        }
        params = set(params_of(kernel)) - set(constexprs_of(kernel))
        assigned = assignments(kernel)
        targets = sorted(
            {
                base
                for node in ast.walk(kernel)
                if isinstance(node, ast.Call) and call_name(node, last=True).startswith("atomic_") and node.args
                for base in _address_bases(node.args[0], assigned) & params
                if base not in covered
            }
        )
        if not targets:
            continue
        cue = (
            f"`{kernel.name}` is autotuned over several configs and adds atomically into {_named(targets)}, never reset"
        )
        # all of them at once, then (where the address names more than one) each alone: a name the address reaches
        # may be a scalar the host passes, which the autotuner cannot restore
        for chosen in [targets] + ([[t] for t in targets] if len(targets) > 1 else []):
            for keyword, grounded in (("restore_value", True), ("reset_to_zero", False)):
                made = _with_keyword(program, tune, keyword, chosen)
                if made is not None:
                    yield Edit(
                        "autotune-restore",
                        "wrong-reduction-init",
                        tune.lineno,
                        f"`{keyword}=[{_named(chosen)}]` in `{kernel.name}`'s autotune: its benchmark runs add into"
                        " them too",
                        made,
                        cue,
                        grounded=grounded,
                    )


def _named(targets: list[str]) -> str:
    return ", ".join(f"{t!r}" for t in targets)


def _config_count(program: Program, tune: ast.Call) -> int:
    configs = autotune_configs(tune, program.parsed.tree)
    return len(configs.elts) if isinstance(configs, ast.List | ast.Tuple) else 0


def _address_bases(address: ast.expr, assigned: dict[str, list[ast.Assign]], depth: int = 0) -> set[str]:
    """The names an address adds bare (`ptr + offs * stride` -> {ptr}), through names the kernel assigns once
    (`ptrs = out_ptr + rows`): the pointer it is made from, not the sizes and strides that scale its offsets."""
    if isinstance(address, ast.BinOp) and isinstance(address.op, ast.Sub):  # `... - pad_w`: an offset, not a base
        return _address_bases(address.left, assigned, depth)
    if isinstance(address, ast.BinOp) and isinstance(address.op, ast.Add):
        return _address_bases(address.left, assigned, depth) | _address_bases(address.right, assigned, depth)
    if isinstance(address, ast.Name):
        values = assigned.get(address.id, [])
        if len(values) == 1 and depth < 8:
            return _address_bases(values[0].value, assigned, depth + 1)
        return set() if values else {address.id}
    return set()


def _with_keyword(program: Program, tune: ast.Call, keyword: str, names: list[str]) -> str | None:
    """The source with `keyword=[names]` in the autotune call (joined to a list it has already)."""
    present = next((k for k in tune.keywords if k.arg == keyword), None)
    if present is not None:
        if not isinstance(present.value, ast.List | ast.Tuple):
            return None
        items = [program.code(e) for e in present.value.elts] + [repr(n) for n in names]
        return program.replace(present.value, f"[{', '.join(items)}]")
    text = program.code(tune)
    if not text.rstrip().endswith(")"):
        return None
    body = text.rstrip()[:-1].rstrip()
    separator = "" if body.endswith(("(", ",")) else ","
    return program.replace(tune, f"{body}{separator} {keyword}=[{', '.join(repr(n) for n in names)}])")


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class WrongDivisor(Mutation):
    name = "wrong-divisor"
    label = "wrong-normalizer"
    summary = "a mean divides by n - 1, or by the block width, instead of the count"
    where = "any"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide)):
            return []
        if not isinstance(node.right, cst.Name):
            return []
        divisor = node.right.value
        found: list[cst.CSTNode] = [
            binary(node.left, cst.Divide(), binary(node.right, cst.Subtract(), cst.Integer("1")))
        ]
        facts = context.kernel
        if facts is not None and divisor not in facts.constexprs:
            blocks = [c for c in facts.constexprs if "BLOCK" in c]
            if blocks:
                found.append(node.with_changes(right=cst.Name(blocks[0])))
        return found


class _AccumulatorRewrite(Mutation):
    def _reset(self, statement: cst.BaseSmallStatement, facts: KernelFacts) -> list[cst.BaseSmallStatement]:
        if isinstance(statement, cst.AugAssign) and isinstance(statement.operator, cst.AddAssign):
            if isinstance(statement.target, cst.Name) and statement.target.value in facts.accumulators:
                return [cst.Assign(targets=[cst.AssignTarget(target=statement.target)], value=statement.value)]
            return []
        assigned = single_target(statement)
        if assigned is None or assigned[0] not in facts.accumulators:
            return []
        assert isinstance(statement, cst.Assign)
        name, value = assigned
        new_value: cst.BaseExpression | None = None
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            left, right = name in cst_names_in(value.left), name in cst_names_in(value.right)
            if left != right:
                new_value = value.right if left else value.left
        elif call_name(value) == "tl.dot":
            assert isinstance(value, cst.Call)
            args = [
                a
                for a in value.args
                if not (isinstance(a.value, cst.Name) and a.value.value == name)
                and not (a.keyword is not None and a.keyword.value == "acc")
            ]
            if len(args) < len(value.args):
                new_value = without_args(value.with_changes(args=args), ())
        elif call_name(value) in ("tl.maximum", "tl.minimum"):
            assert isinstance(value, cst.Call)
            others = [
                a.value for a in positional(value) if not (isinstance(a.value, cst.Name) and a.value.value == name)
            ]
            if len(others) == 1:
                new_value = others[0]
        return [statement.with_changes(value=new_value)] if new_value is not None else []


@mutation
class AccumulatorReset(_AccumulatorRewrite):
    name = "accumulator-reset"
    label = "accumulator-reset"
    summary = "an accumulator is overwritten in its loop (acc = x for acc += x), or re-initialised inside it"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        facts = context.kernel
        if facts is None:
            return []
        if isinstance(node, cst.SimpleStatementLine) and context.loops:
            found: list[cst.CSTNode] = []
            for index, statement in enumerate(node.body):
                for replacement in self._reset(statement, facts):
                    body = list(node.body)
                    body[index] = replacement
                    found.append(node.with_changes(body=body))
            return found
        if isinstance(node, cst.For) and isinstance(node.body, cst.IndentedBlock):
            updated = names_assigned(node.body)
            found = []
            for name, init in facts.accumulators.items():
                if name in updated and not any(s.deep_equals(init) for s in node.body.body):
                    block = node.body.with_changes(body=[init.with_changes(leading_lines=[]), *node.body.body])
                    found.append(node.with_changes(body=block))
            return found
        return []


def names_assigned(block: cst.CSTNode) -> set[str]:
    found: set[str] = set()
    for statement in m.findall(block, m.AugAssign() | m.Assign()):
        targets = [statement.target] if isinstance(statement, cst.AugAssign) else [t.target for t in statement.targets]  # type: ignore[attr-defined]
        found |= {t.value for t in targets if isinstance(t, cst.Name)}
    return found


@mutation
class WrongReductionInit(Mutation):
    name = "wrong-reduction-init"
    label = "wrong-reduction-init"
    summary = "a running max starts at 0 instead of -inf, or a running sum at 0 instead of 1"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) != "tl.full":
            return []
        assert isinstance(node, cst.Call)
        args = list(node.args)
        if len(args) < 2 or args[1].keyword is not None:
            return []
        value = float_value(args[1].value)
        if value is None or value == 0.0:
            return []
        args[1] = args[1].with_changes(value=cst.Float("0.0"))
        return [node.with_changes(args=args)]


def _running_values(loop: ast.For | ast.While) -> dict[str, int]:
    """The names a loop's body carries a reduction in (`acc += tl.sum(x)`, `m = tl.maximum(m, tl.max(x))`), by the
    index of the top-level statement that updates each."""
    found: dict[str, int] = {}
    for index, statement in enumerate(loop.body):
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            if isinstance(statement.op, ast.Add | ast.Mult):
                found[statement.target.id] = index
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id in names_in(statement.value)
            and any(call_name(c, last=True) in ("maximum", "minimum", "sum", "max", "min") for c in calls_in(statement))
        ):
            found[statement.targets[0].id] = index
    return found


def _divides_by(value: ast.AST, names: set[str]) -> bool:
    """Whether an expression divides by one of `names` (or takes a root of it, as a normaliser does)."""
    for node in ast.walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and names_in(node.right) & names:
            return True
        if isinstance(node, ast.Call) and call_name(node, last=True) in ("rsqrt", "sqrt") and names_in(node) & names:
            return True
    return False


@operator("normalize-after", "wrong-normalizer")
def normalize_after(program: Program) -> Iterator[Edit]:
    """A loop that stores values scaled by a reduction it is still accumulating (`row_sum += tl.sum(e)` then
    `tl.store(out, e / row_sum)` in one pass: every tile but the last is divided by a partial sum) split in two: the
    loop without its stores computes the whole reduction, then a copy without the accumulation stores. Grounded
    where the stored value divides by the running value (a scan that stores the running value itself is right)."""
    for kernel in program.kernels:
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For | ast.While)):
            running = _running_values(loop)
            if not running:
                continue
            derived: dict[str, set[str]] = {}
            scaled_names: set[str] = set()
            stores: list[tuple[int, set[str], bool]] = []
            for index, statement in enumerate(loop.body):
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                    target = statement.targets[0]
                    used = names_in(statement.value)
                    sources = {r for r, at in running.items() if at < index and r in used}
                    sources |= {s for name, via in derived.items() if name in used for s in via}
                    if isinstance(target, ast.Name) and sources and target.id not in running:
                        derived[target.id] = sources
                        if _divides_by(statement.value, sources) or used & scaled_names:
                            scaled_names.add(target.id)
                if not (
                    isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Call)
                    and call_name(statement.value, last=True) == "store"
                    and len(statement.value.args) > 1
                ):
                    continue
                value = statement.value.args[1]
                used = names_in(value)
                sources = {r for r, at in running.items() if at < index and r in used}
                sources |= {s for name, via in derived.items() if name in used for s in via}
                if not sources:
                    continue
                stores.append((index, sources, _divides_by(value, sources) or bool(used & scaled_names)))
            if not stores:
                continue
            accumulating = {running[s] for _, sources, _ in stores for s in sources}
            storing = {index for index, _, _ in stores}
            start, end = program.lines_of(loop)
            header = program.text[start : program.lines_of(loop.body[0])[0]]
            first = header + "".join(
                program.text[slice(*program.lines_of(s))] for i, s in enumerate(loop.body) if i not in storing
            )
            second = header + "".join(
                program.text[slice(*program.lines_of(s))] for i, s in enumerate(loop.body) if i not in accumulating
            )
            names = sorted({s for _, sources, _ in stores for s in sources})
            grounded = any(scaled for _, _, scaled in stores)
            yield Edit(
                "normalize-after",
                "wrong-normalizer",
                loop.lineno,
                f"the loop at line {loop.lineno} split: `{', '.join(names)}` accumulated over the whole loop first, "
                "then a second pass stores",
                program.text[:start] + first + second + program.text[end:],
                cue="a store in the loop scales by a reduction the loop is still accumulating",
                grounded=grounded,
            )
