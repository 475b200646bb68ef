"""Repair operators: families of small edits a kernel engineer makes, each with a taxonomy id.

An operator looks at a parsed candidate (`Program`) and yields every edit of its family it can
make (`Edit`: operator, taxonomy id, the line it touches, a one-line description and the edited
source). Operators do not judge: they are general edits (a mask bound, an `other=` value, a stride
argument, an offset term, a loop bound, a constant, an accumulator's place, a scan's kind), and the
search (kope.repair.search) decides which to try first from the diagnosis and keeps what the
evaluator says is better. Edits are made by splicing the source text at the node's position, so
everything outside the edit is kept byte for byte.

    program = Program.parse(source, reference=task.source)
    for edit in edits(program):
        print(edit.operator, edit.label, edit.line, edit.description)
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kope.source import ParsedSource, call_name


@dataclass(frozen=True)
class Edit:
    operator: str
    label: str
    """The bug-taxonomy id this edit repairs."""
    line: int
    description: str
    source: str


@dataclass
class Program:
    """A parsed candidate (kope.source) with the reference's constants."""

    parsed: ParsedSource
    reference_constants: list[float] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, reference: str = "") -> Program | None:
        """None when the source does not parse (no operator applies)."""
        parsed = ParsedSource.parse(text)
        if parsed is None:
            return None
        return cls(parsed=parsed, reference_constants=_constants(reference))

    @property
    def text(self) -> str:
        return self.parsed.text

    @property
    def tree(self) -> ast.Module:
        return self.parsed.tree

    @property
    def kernels(self) -> list[ast.FunctionDef]:
        return self.parsed.kernels

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of a node (ast columns are UTF-8 bytes)."""
        return self.parsed.span(node)

    def code(self, node: ast.AST) -> str:
        return self.parsed.code(node)

    def replace(self, node: ast.AST, text: str) -> str:
        return self.parsed.replace(node, text)

    def in_kernel(self, node: ast.AST) -> bool:
        line = getattr(node, "lineno", 0)
        return any(k.lineno <= line <= (k.end_lineno or k.lineno) for k in self.kernels)

    def kernel_nodes(self) -> Iterator[tuple[ast.FunctionDef, ast.AST]]:
        for kernel in self.kernels:
            for node in ast.walk(kernel):
                yield kernel, node

    def host_nodes(self) -> Iterator[ast.AST]:
        for node in ast.walk(self.tree):
            if hasattr(node, "lineno") and not self.in_kernel(node):
                yield node


def _constants(reference: str) -> list[float]:
    """Float literals of the reference's formula (0 and 1 excluded), in order of appearance."""
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError):
        return []
    found: list[float] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float) and node.value not in (0.0, 1.0, *found):
            found.append(node.value)
    return found


def _kwarg(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _params(kernel: ast.FunctionDef) -> list[str]:
    return [a.arg for a in kernel.args.args]


def _strides(kernel: ast.FunctionDef) -> list[str]:
    return [p for p in _params(kernel) if "stride" in p.lower()]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assigned(kernel: ast.FunctionDef) -> dict[str, list[ast.Assign]]:
    found: dict[str, list[ast.Assign]] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.setdefault(node.targets[0].id, []).append(node)
    return found


def _program_ids(kernel: ast.FunctionDef) -> set[str]:
    """Names derived from tl.program_id (rows, batches, heads), transitively."""
    assigned = _assigned(kernel)
    pids: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, assigns in assigned.items():
            if name in pids:
                continue
            for a in assigns:
                if "program_id" in ast.unparse(a.value) or (
                    _names(a.value) & pids and "arange" not in ast.unparse(a.value)
                ):
                    pids.add(name)
                    changed = True
                    break
    return pids


def _pointer_args(kernel: ast.FunctionDef) -> Iterator[ast.expr]:
    """The address expressions of the kernel's loads and stores, and the values assigned to names used as such."""
    assigned = _assigned(kernel)
    seen: set[int] = set()
    for node in ast.walk(kernel):
        name = call_name(node)
        if (
            isinstance(node, ast.Call)
            and name.startswith("tl.")
            and name.split(".")[-1] in ("load", "store", "atomic_add", "atomic_max", "atomic_min")
            and node.args
        ):
            pointer = node.args[0]
            stack: list[ast.expr] = [pointer]
            while stack:
                expr = stack.pop()
                if id(expr) in seen:
                    continue
                seen.add(id(expr))
                yield expr
                for used in _names(expr):
                    for a in assigned.get(used, []):
                        if isinstance(a.value, ast.BinOp | ast.Name):
                            stack.append(a.value)


def _terms(expr: ast.expr) -> list[ast.expr]:
    """The additive terms of `a + b + c` (a single term otherwise)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


# -- the operators -----------------------------------------------------------------------------

Operator = Callable[[Program], Iterator[Edit]]
OPERATORS: dict[str, tuple[str, Operator]] = {}
"""name -> (taxonomy id, operator)"""


def operator(name: str, label: str) -> Callable[[Operator], Operator]:
    def register(fn: Operator) -> Operator:
        OPERATORS[name] = (label, fn)
        return fn

    return register


def edits(program: Program, names: list[str] | None = None) -> list[Edit]:
    """Every distinct edit of the operators (`names`, default all), in operator then source order."""
    found: list[Edit] = []
    sources = {program.text}
    for name in names or list(OPERATORS):
        for edit in OPERATORS[name][1](program):
            if edit.source in sources:
                continue
            try:
                ast.parse(edit.source)
            except SyntaxError:
                continue
            sources.add(edit.source)
            found.append(edit)
    return found


def _edit(program: Program, name: str, node: ast.AST, text: str, description: str) -> Edit:
    return Edit(name, OPERATORS[name][0], getattr(node, "lineno", 0), description, program.replace(node, text))


_FLIP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}


@operator("compare-flip", "mask-off-by-one")
def compare_flip(program: Program) -> Iterator[Edit]:
    """`<` to `<=` and back (and `>`/`>=`) in a kernel's comparisons: masks and bounds."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            new = f"{ast.unparse(node.left)} {_FLIP[type(node.ops[0])]} {ast.unparse(node.comparators[0])}"
            yield _edit(program, "compare-flip", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("floor-to-cdiv", "grid-too-small")
def floor_to_cdiv(program: Program) -> Iterator[Edit]:
    """`a // b` to a ceiling division: `triton.cdiv` on the host (grids), `tl.cdiv` in kernels (loop counts)."""
    for node in ast.walk(program.tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            fn = "tl.cdiv" if program.in_kernel(node) else "triton.cdiv"
            new = f"{fn}({ast.unparse(node.left)}, {ast.unparse(node.right)})"
            yield _edit(program, "floor-to-cdiv", node, new, f"`{program.code(node)}` -> `{new}`")


def _range_calls(program: Program) -> Iterator[ast.Call]:
    for _, node in program.kernel_nodes():
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter, last=True) in ("range", "static_range")
        ):
            yield node.iter


@operator("loop-bound", "loop-bound")
def loop_bound(program: Program) -> Iterator[Edit]:
    """A loop's stop without its trailing `- k` term, or one step further; a start other than 0 back to 0."""
    for call in _range_calls(program):
        args = call.args
        if not args:
            continue
        stop = args[1] if len(args) >= 2 else args[0]
        if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Sub):
            new = ast.unparse(stop.left)
            yield _edit(program, "loop-bound", stop, new, f"loop stop `{program.code(stop)}` -> `{new}`")
        step = ast.unparse(args[2]) if len(args) >= 3 else "1"
        new = f"{ast.unparse(stop)} + {step}"
        yield _edit(program, "loop-bound", stop, new, f"loop stop `{program.code(stop)}` -> `{new}`")
        if len(args) >= 2 and not (isinstance(args[0], ast.Constant) and args[0].value == 0):
            yield _edit(program, "loop-bound", args[0], "0", f"loop start `{program.code(args[0])}` -> `0`")


def _launches(program: Program) -> Iterator[ast.Call]:
    for node in program.host_nodes():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            yield node


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


@operator("stride-argument", "wrong-stride")
def stride_argument(program: Program) -> Iterator[Edit]:
    """At a launch: a `t.stride(i)` argument replaced by the tensor's other strides or another tensor's
    stride of the same dimension; two stride arguments swapped."""
    for call in _launches(program):
        strides = [(i, arg, s) for i, arg in enumerate(call.args) if (s := _stride_call(arg)) is not None]
        if not strides:
            continue
        tensors = list(dict.fromkeys(s[0] for _, _, s in strides))
        dims = max(2, max(s[1] for _, _, s in strides) + 1)
        for _, arg, (tensor, dim) in strides:
            for other in range(dims):
                if other != dim:
                    new = f"{tensor}.stride({other})"
                    yield _edit(
                        program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                    )
            for other_tensor in tensors:
                if other_tensor != tensor:
                    new = f"{other_tensor}.stride({dim})"
                    yield _edit(
                        program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                    )
        for (_, a, sa), (_, b, sb) in itertools.combinations(strides, 2):
            if sa[0] == sb[0] and sa != sb:
                first, second = sorted((a, b), key=lambda n: (n.lineno, n.col_offset))
                s1, e1 = program.span(first)
                s2, e2 = program.span(second)
                text = program.text
                swapped = text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]
                yield Edit(
                    "stride-argument",
                    "wrong-stride",
                    first.lineno,
                    f"swap launch arguments `{text[s1:e1]}` and `{text[s2:e2]}`",
                    swapped,
                )


@operator("stride-name", "wrong-stride")
def stride_name(program: Program) -> Iterator[Edit]:
    """In a kernel's address arithmetic: one stride parameter replaced by another of the same kernel."""
    for kernel in program.kernels:
        strides = _strides(kernel)
        if len(strides) < 2:
            continue
        for node in ast.walk(kernel):
            if isinstance(node, ast.Name) and node.id in strides and isinstance(node.ctx, ast.Load):
                for other in strides:
                    if other != node.id:
                        yield _edit(
                            program, "stride-name", node, other, f"`{node.id}` -> `{other}` (line {node.lineno})"
                        )


@operator("stride-swap", "wrong-stride")
def stride_swap(program: Program) -> Iterator[Edit]:
    """Two stride parameters swapped within one address expression (dimensions exchanged)."""
    for kernel in program.kernels:
        strides = set(_strides(kernel))
        for expr in _pointer_args(kernel):
            used = [n for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in strides]
            for a, b in itertools.combinations(used, 2):
                if a.id == b.id:
                    continue
                first, second = sorted((a, b), key=lambda n: (n.lineno, n.col_offset))
                s1, e1 = program.span(first)
                s2, e2 = program.span(second)
                text = program.text
                swapped = text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]
                yield Edit(
                    "stride-swap",
                    "wrong-stride",
                    first.lineno,
                    f"swap `{a.id}` and `{b.id}` in `{ast.unparse(expr)}`",
                    swapped,
                )


@operator("grid-axis", "uninitialized-output")
def grid_axis(program: Program) -> Iterator[Edit]:
    """A launch grid's axis fixed at 1 given a ceiling division of the function's sizes by its block sizes
    (the shape of the grid's other axes)."""
    for function in ast.walk(program.tree):
        if not isinstance(function, ast.FunctionDef) or program.parsed.is_kernel(function):
            continue
        names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
        blocks = sorted(n for n in names if "block" in n.lower() or n.lower().startswith("b_"))
        sizes: list[str] = []
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                value = ast.unparse(node.value)
                if ".shape" in value or "numel" in value or "size(" in value:
                    sizes += [n.id for n in ast.walk(node.targets[0]) if isinstance(n, ast.Name)]
        for node in ast.walk(function):
            if not isinstance(node, ast.Tuple) or len(node.elts) < 2:
                continue
            if not any("cdiv" in ast.unparse(e) or "//" in ast.unparse(e) for e in node.elts):
                continue
            for element in node.elts:
                if isinstance(element, ast.Constant) and element.value == 1:
                    for size, block in itertools.islice(itertools.product(dict.fromkeys(sizes), blocks or ["1"]), 16):
                        new = f"triton.cdiv({size}, {block})" if block != "1" else size
                        yield _edit(program, "grid-axis", element, new, f"grid axis `1` -> `{new}`")


@operator("stride-factor", "wrong-stride")
def stride_factor(program: Program) -> Iterator[Edit]:
    """An address term not scaled by any stride, multiplied by a stride parameter the kernel never uses
    (a stride dropped for a transposed or non-contiguous operand)."""
    for kernel in program.kernels:
        strides = _strides(kernel)
        body_names: set[str] = set()
        for statement in kernel.body:
            body_names |= _names(statement)
        unused = [s for s in strides if s not in body_names]
        if not unused:
            continue
        for expr in _pointer_args(kernel):
            for term in _terms(expr):
                if _names(term) & set(strides) or isinstance(term, ast.Constant):
                    continue
                if isinstance(term, ast.Name) and term.id in _params(kernel):
                    continue
                for stride in unused:
                    new = f"({ast.unparse(term)}) * {stride}"
                    yield _edit(program, "stride-factor", term, new, f"`{program.code(term)}` -> `{new}`")


@operator("offset-term", "missing-batch-offset")
def offset_term(program: Program) -> Iterator[Edit]:
    """Add or remove an offset term `pid * stride` in an address expression: a term another address
    expression of the kernel has, with this pointer's stride; or every program-id term dropped."""
    for kernel in program.kernels:
        pids = _program_ids(kernel)
        direct = [n for n, a in _assigned(kernel).items() if any("program_id" in ast.unparse(x.value) for x in a)]
        strides = _strides(kernel)
        exprs = list(_pointer_args(kernel))
        offsets: list[ast.expr] = []
        for expr in exprs:
            for term in _terms(expr):
                if _names(term) & pids and isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                    offsets.append(term)
        for expr in exprs:
            terms = _terms(expr)
            has_pid = any(_names(t) & pids for t in terms)
            base = terms[0]
            if not has_pid:
                texts: list[str] = []
                for offset in offsets:
                    pid_side = offset.left if _names(offset.left) & pids else offset.right  # type: ignore[attr-defined]
                    texts += [ast.unparse(offset)] + [f"{ast.unparse(pid_side)} * {s}" for s in strides]
                texts += [f"{pid} * {s}" for pid in direct for s in strides]
                for text in dict.fromkeys(texts):
                    new = f"{ast.unparse(base)} + {text}"
                    yield _edit(program, "offset-term", base, new, f"add `+ {text}` to `{program.code(expr)}`")
            for term in terms[1:]:
                if _names(term) & pids:
                    kept = " + ".join(ast.unparse(t) for t in terms if t is not term)
                    yield _edit(
                        program,
                        "offset-term",
                        expr,
                        f"({kept})",
                        f"drop `{ast.unparse(term)}` from `{program.code(expr)}`",
                    )


@operator("index-shift", "index-shift")
def index_shift(program: Program) -> Iterator[Edit]:
    """An address or offset `e + k` / `e - k` (small integer k) back to `e`."""
    for kernel in program.kernels:
        for expr in _pointer_args(kernel):
            for node in ast.walk(expr):
                if (
                    isinstance(node, ast.BinOp)
                    and isinstance(node.op, ast.Add | ast.Sub)
                    and isinstance(node.right, ast.Constant)
                    and isinstance(node.right.value, int)
                    and 0 < node.right.value <= 2
                ):
                    new = ast.unparse(node.left)
                    yield _edit(program, "index-shift", node, new, f"`{program.code(node)}` -> `{new}`")


def _feeds(kernel: ast.FunctionDef, name: str) -> set[str]:
    """The reductions (`sum`, `max`, `min`, ...) a loaded name flows into, directly or through one assignment."""
    assigned = _assigned(kernel)
    users = {name} | {n for n, a in assigned.items() if any(name in _names(x.value) for x in a)}
    found: set[str] = set()
    for node in ast.walk(kernel):
        fn = call_name(node, last=True)
        if (
            fn in ("sum", "max", "min", "maximum", "minimum", "reduce", "cumsum", "argmax", "argmin")
            and _names(node) & users
        ):
            found.add(fn)
    return found


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
        assigned = _assigned(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.load" and _kwarg(node, "mask")):
                continue
            target = next((n for n, a in assigned.items() if any(_contains(x.value, node) for x in a)), "")
            feeds = _feeds(kernel, target) if target else set()
            values = [IDENTITIES[f] for f in sorted(feeds) if f in IDENTITIES] + [
                "0.0",
                "-float('inf')",
                "float('inf')",
                "1.0",
            ]
            current = _kwarg(node, "other")
            for value in dict.fromkeys(values):
                if current is not None and ast.unparse(current.value).replace('"', "'") == value:
                    continue
                if current is not None:
                    new = program.replace(current.value, value)
                else:
                    _, end = program.span(node)
                    new = program.text[: end - 1].rstrip() + f", other={value})" + program.text[end:]
                yield Edit("other-identity", "padding-in-reduction", node.lineno, f"`other={value}` on the load", new)


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
        dtype = _kwarg(node, "dtype")
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
            yield _edit(program, "reduction-init", node, new, f"`{program.code(node)}` -> `{new}`")


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


@operator("accumulator-move", "accumulator-reset")
def accumulator_move(program: Program) -> Iterator[Edit]:
    """An accumulator's initialisation moved out of the loop that updates it, or into it."""
    for kernel in program.kernels:
        for node in ast.walk(kernel):
            if not (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and call_name(node.value) in ("tl.zeros", "tl.full")
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
                if isinstance(later, ast.For) and name in _names(later) and later.body:
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
            yield _edit(program, "scan-kind", node, new, f"inclusive -> exclusive: `{new}`")
            reverse = _kwarg(node, "reverse")
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
            yield _edit(program, "scan-kind", node, new, f"exclusive -> inclusive: `{new}`")


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


@operator("constant", "wrong-constant")
def constant(program: Program) -> Iterator[Edit]:
    """A float literal in a kernel replaced by the reference's constants (nearest first) and by nearby typos."""
    for _, node in program.kernel_nodes():
        if not (isinstance(node, ast.Constant) and isinstance(node.value, float)) or node.value in (0.0, 1.0):
            continue
        text = program.code(node)
        value = float(node.value)
        ranked = sorted(program.reference_constants, key=lambda c: abs(math.log(abs(c) / abs(value))) if c else 9e9)
        for replacement in [repr(c) for c in ranked if c != value] + _typos(text):
            yield _edit(program, "constant", node, replacement, f"constant `{text}` -> `{replacement}`")


@operator("missing-factor", "wrong-constant")
def missing_factor(program: Program) -> Iterator[Edit]:
    """A reference constant the kernel never uses, as a factor of the value a kernel stores."""
    used = {n.value for n in ast.walk(program.tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)}
    missing = [c for c in program.reference_constants if c not in used]
    if not missing:
        return
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) == "tl.store" and len(node.args) >= 2:
            value = node.args[1]
            for c in missing:
                new = f"({program.code(value)}) * {c!r}"
                yield _edit(program, "missing-factor", value, new, f"stored value times {c!r}")


@operator("drop-operation", "wrong-normalizer")
def drop_operation(program: Program) -> Iterator[Edit]:
    """An extra operation on a result just before its store taken away: the stored value, or the last
    assignment of the stored name, replaced by one of its operands."""
    for kernel in program.kernels:
        assigned = _assigned(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.store" and len(node.args) >= 2):
                continue
            value = node.args[1]
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
                value = value.func.value
            targets: list[ast.expr] = [value]
            if isinstance(value, ast.Name):
                earlier = [a for a in assigned.get(value.id, []) if a.lineno < node.lineno]
                if earlier:
                    targets.append(earlier[-1].value)
            for target in targets:
                for operand in _operands(target):
                    new = program.code(operand)
                    yield _edit(
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


@operator("add-mask", "missing-mask")
def add_mask(program: Program) -> Iterator[Edit]:
    """A load or store without a mask given one of the kernel's masks (names bound to comparisons)."""
    for kernel in program.kernels:
        masks = [
            n
            for n, a in _assigned(kernel).items()
            if any(
                isinstance(x.value, ast.Compare)
                or (isinstance(x.value, ast.BinOp) and isinstance(x.value.op, ast.BitAnd))
                for x in a
            )
        ]
        for node in ast.walk(kernel):
            fn = call_name(node)
            if isinstance(node, ast.Call) and fn in ("tl.load", "tl.store") and not _kwarg(node, "mask"):
                limit = 2 if fn == "tl.store" else 1
                if len(node.args) > limit:
                    continue
                _, end = program.span(node)
                for mask in masks:
                    extra = f", mask={mask}" + (", other=0.0" if fn == "tl.load" else "")
                    new = program.text[: end - 1].rstrip() + extra + ")" + program.text[end:]
                    yield Edit(
                        "add-mask", "missing-mask", node.lineno, f"`mask={mask}` on the {fn.split('.')[-1]}", new
                    )


@operator("max-subtraction", "numerical-instability")
def max_subtraction(program: Program) -> Iterator[Edit]:
    """`tl.exp(e)` without a running max subtracted: `tl.exp(e - m)` for the kernel's maxima."""
    for kernel in program.kernels:
        maxima = [
            n for n, a in _assigned(kernel).items() if any(call_name(x.value) in ("tl.max", "tl.maximum") for x in a)
        ]
        for node in ast.walk(kernel):
            if isinstance(node, ast.Call) and call_name(node) in ("tl.exp", "tl.exp2") and node.args:
                inner = node.args[0]
                if set(maxima) & _names(inner):
                    continue
                for m in maxima:
                    new = f"{call_name(node)}({ast.unparse(inner)} - {m})"
                    yield _edit(program, "max-subtraction", node, new, f"`{program.code(node)}` -> `{new}`")


@operator("broadcast-swap", "broadcast-error")
def broadcast_swap(program: Program) -> Iterator[Edit]:
    """`x[:, None]` <-> `x[None, :]`: broadcasting along the other axis."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
            kinds = [
                "none"
                if isinstance(e, ast.Constant) and e.value is None
                else "slice"
                if isinstance(e, ast.Slice)
                else "?"
                for e in node.slice.elts
            ]
            if sorted(kinds) == ["none", "slice"]:
                swapped = "[None, :]" if kinds[0] == "slice" else "[:, None]"
                new = f"{ast.unparse(node.value)}{swapped}"
                yield _edit(program, "broadcast-swap", node, new, f"`{program.code(node)}` -> `{new}`")
