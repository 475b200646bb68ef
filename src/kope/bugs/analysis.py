"""Static facts about a candidate's Triton kernels, shared by the code cues and the recipes.

Everything here reads Python's `ast` of the whole file: which kernels are launched where and with
what grid and arguments, which names hold block offsets (`tl.arange`), masks or program ids, which
values are floating point, and what the masked-out lanes of a masked load hold after each
statement (`padding`). The analyses are deliberately simple (straight-line, one pass over a
kernel's statements, no aliasing): they answer "surely" or "don't know", and the cues fire only on
"surely".
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from kope.source import LaunchSite, ParsedSource, call_name, names_in

TRITON_MODULES = {"tl", "triton.language", "libdevice", "tl.math", "tl.extra.cuda.libdevice"}
INT_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "long", "int", "short"}
FLOAT_DTYPES = {"float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5", "half", "float", "double"}
HALF_DTYPES = {"float16", "bfloat16", "half"}


def keyword_of(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value of a call's keyword argument `name` (None when not given)."""
    found = keyword_of(call, name)
    return None if found is None else found.value


def params_of(kernel: ast.FunctionDef) -> list[str]:
    return [a.arg for a in kernel.args.args]


def constexprs_of(kernel: ast.FunctionDef) -> list[str]:
    """Parameters annotated `tl.constexpr` (block sizes, flags)."""
    return [a.arg for a in kernel.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)]


def argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """A call's argument by keyword, else by position."""
    value = keyword(call, name)
    if value is not None:
        return value
    return call.args[position] if len(call.args) > position else None


def calls_in(node: ast.AST | None, *names: str) -> Iterator[ast.Call]:
    if node is None:
        return
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and call_name(inner, last=True) in names:
            yield inner


def constant_value(node: ast.AST | None) -> float | None:
    """The value of a numeric literal, `-x`, `float("inf")`, `-float("inf")`, `math.inf` (else None)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = constant_value(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Call) and call_name(node, last=True) == "float" and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            try:
                return float(arg.value)
            except ValueError:
                return None
    if isinstance(node, ast.Attribute) and node.attr == "inf":
        return math.inf
    return None


def dtype_name(node: ast.AST | None) -> str | None:
    """`tl.float16` / `torch.float16` / `torch.long` -> the dtype's name (else None)."""
    if isinstance(node, ast.Attribute) and node.attr in INT_DTYPES | FLOAT_DTYPES:
        return node.attr
    return None


def assigned_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    else:
        return []
    names: list[str] = []
    for target in targets:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple):
            names += [t.id for t in target.elts if isinstance(t, ast.Name)]
    return names


def ceil_division(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """(size, divisor) of a ceiling division: `cdiv(S, D)` (`triton.cdiv`, `tl.cdiv`), `(S + D - 1) // D` or
    `(S + (D - 1)) // D`; None for anything else."""
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("cdiv") and len(node.args) == 2:
        return node.args[0], node.args[1]
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and isinstance(node.left, ast.BinOp)):
        return None
    top, divisor = node.left, ast.dump(node.right)
    one = ast.dump(ast.Constant(1))
    if (  # (S + D) - 1
        isinstance(top.op, ast.Sub)
        and ast.dump(top.right) == one
        and isinstance(top.left, ast.BinOp)
        and isinstance(top.left.op, ast.Add)
        and ast.dump(top.left.right) == divisor
    ):
        return top.left.left, node.right
    if (  # S + (D - 1)
        isinstance(top.op, ast.Add)
        and isinstance(top.right, ast.BinOp)
        and isinstance(top.right.op, ast.Sub)
        and ast.dump(top.right.left) == divisor
        and ast.dump(top.right.right) == one
    ):
        return top.left, node.right
    return None


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a body in source order, entering if/for/while/with blocks."""
    for stmt in body:
        yield stmt
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list) and not isinstance(stmt, ast.FunctionDef | ast.ClassDef):
                yield from statements(inner)


def names_made_from(body: list[ast.stmt], names: set[str]) -> set[str]:
    """`names` and the names `body` assigns from them, transitively (through loads, and accumulators: `acc += ...`)."""
    found = set(names)
    assigns = [s for s in statements(body) if isinstance(s, ast.Assign | ast.AugAssign | ast.AnnAssign) and s.value]
    changed = True
    while changed:
        changed = False
        for stmt in assigns:
            made = set(assigned_names(stmt)) - found
            if made and stmt.value is not None and names_in(stmt.value) & found:
                found |= made
                changed = True
    return found


@dataclass
class Launch:
    """One `kernel[grid](args...)` in host code."""

    call: ast.Call
    kernel: ast.FunctionDef
    grid: list[ast.expr] | None
    """The grid's axes (None when the grid cannot be read: a call, an unknown name)."""
    args: dict[str, ast.expr]
    """Kernel parameter name -> the argument passed for it."""
    host: ast.FunctionDef | None
    """The host function that launches it."""


@dataclass
class Kernel:
    """Facts about one `@triton.jit` function."""

    node: ast.FunctionDef
    params: list[str]
    constexprs: set[str]
    assigns: dict[str, list[ast.expr]] = field(default_factory=dict)
    """Name -> every value assigned to it (augmented assignments as `name op value`)."""
    aranges: set[str] = field(default_factory=set)
    """Names that hold block offsets (derived from tl.arange)."""
    pids: set[str] = field(default_factory=set)
    """Names derived from tl.program_id (directly or through arithmetic)."""
    loaded: set[str] = field(default_factory=set)
    """Names that hold values derived from tl.load."""
    floats: set[str] = field(default_factory=set)
    """Names that surely hold floating-point values."""
    masks: set[str] = field(default_factory=set)
    """Names that hold boundary masks (comparisons of block offsets)."""

    def used_names(self) -> set[str]:
        used: set[str] = set()
        for node in ast.walk(self.node):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used.add(node.id)
        return used


class Dataflow:
    """The dataflow facts of a parsed candidate's kernels (`Kernel`) and their launches (`Launch`): what the cues,
    recipes and mutations read. Not the repair search's `kope.bugs.edit.Program`, which is the candidate as the
    search edits it (its source, the task's reference, the edit primitives)."""

    def __init__(self, parsed: ParsedSource) -> None:
        self.parsed = parsed
        self.tree = parsed.tree
        self.kernels: dict[str, Kernel] = {node.name: _analyse_kernel(node) for node in parsed.kernels}
        self.launches: list[Launch] = list(self._find_launches())

    def kernel_of(self, node: ast.FunctionDef) -> Kernel | None:
        kernel = self.kernels.get(node.name)
        return kernel if kernel is not None and kernel.node is node else None

    def launches_of(self, kernel: Kernel) -> list[Launch]:
        return [launch for launch in self.launches if launch.kernel is kernel.node]

    def _find_launches(self) -> Iterator[Launch]:
        for site in self.parsed.launches:
            kernel = self.kernels.get(site.kernel.name)
            if kernel is None or kernel.node is not site.kernel:
                continue
            node = site.call
            grid = _grid_axes(site.grid, site.host) if site.grid is not None else None
            args: dict[str, ast.expr] = {}
            for param, value in zip(kernel.params, node.args, strict=False):
                args[param] = value
            for kw in node.keywords:
                if kw.arg is not None and not (isinstance(node.func, ast.Attribute) and kw.arg in ("grid", "warmup")):
                    args[kw.arg] = kw.value
            yield Launch(call=node, kernel=kernel.node, grid=grid, args=args, host=site.host)


def host_assignments(
    host: ast.FunctionDef | None, name: str, *, before: int | None = None, unpacked: bool = False
) -> list[ast.expr]:
    """Values assigned to `name` in a host function, in source order (on lines before `before`, when given).
    `unpacked`: a name unpacked from a value that is not a tuple literal (`M, K = a.shape`) counts too, as that
    value subscripted (`a.shape[1]`, a node with no position of its own)."""
    if host is None:
        return []
    values: list[ast.expr] = []
    for stmt in ast.walk(host):
        if not isinstance(stmt, ast.Assign) or (before is not None and stmt.lineno >= before):
            continue
        for target in stmt.targets:
            if isinstance(target, ast.Name) and target.id == name:
                values.append(stmt.value)
            elif isinstance(target, ast.Tuple):
                for i, element in enumerate(target.elts):
                    if not (isinstance(element, ast.Name) and element.id == name):
                        continue
                    if isinstance(stmt.value, ast.Tuple):
                        values.append(stmt.value.elts[i])
                    elif unpacked:
                        values.append(ast.Subscript(value=stmt.value, slice=ast.Constant(i), ctx=ast.Load()))
    return values


def launch_grid(site: LaunchSite, *, body: bool = False) -> ast.expr | None:
    """A launch's grid, through the name it is bound to before the launch (`grid = (...)`; `kernel[grid](...)`); with
    `body`, a `lambda META: (...)`'s tuple. None for a launch without a grid."""
    grid = site.grid
    if isinstance(grid, ast.Name):
        bound = host_assignments(site.host, grid.id, before=site.call.lineno)
        grid = bound[-1] if bound else grid
    if body and isinstance(grid, ast.Lambda):
        return grid.body
    return grid


def _grid_axes(grid: ast.expr, host: ast.FunctionDef | None) -> list[ast.expr] | None:
    if isinstance(grid, ast.Name):
        values = host_assignments(host, grid.id)
        if not values:
            return None
        grid = values[-1]
    if isinstance(grid, ast.Lambda):
        grid = grid.body
    if isinstance(grid, ast.Tuple | ast.List):
        return list(grid.elts)
    if isinstance(grid, ast.Constant | ast.BinOp | ast.Name):
        return [grid]
    return None


def _analyse_kernel(node: ast.FunctionDef) -> Kernel:
    kernel = Kernel(node=node, params=params_of(node), constexprs=set(constexprs_of(node)))
    for stmt in statements(node.body):
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            for name in assigned_names(stmt):
                kernel.assigns.setdefault(name, []).append(stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            value: ast.expr = stmt.value  # a subscript's augmented write: its value (kept where the source has it)
            if isinstance(stmt.target, ast.Name):  # `x += v` as the new node `x + v`, placed at the statement
                value = ast.copy_location(
                    ast.BinOp(left=ast.Name(id=stmt.target.id, ctx=ast.Load()), op=stmt.op, right=stmt.value), stmt
                )
            for name in assigned_names(stmt):
                kernel.assigns.setdefault(name, []).append(value)
        elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
            kernel.assigns.setdefault(stmt.target.id, []).append(stmt.iter)
    kernel.aranges = _index_names(kernel)
    kernel.pids = _closure(kernel, lambda v: any(True for _ in calls_in(v, "program_id")))
    kernel.loaded = _closure(kernel, lambda v: any(True for _ in calls_in(v, "load")))
    kernel.masks = _mask_names(kernel)
    kernel.floats = _float_names(kernel)
    return kernel


_INDEX_PASS = {"to", "multiple_of", "max_contiguous", "broadcast_to", "reshape", "expand_dims"}


def is_index_expr(expr: ast.AST | None, known: set[str]) -> bool:
    """Index arithmetic over block offsets: `start + tl.arange(0, B)`, `offs[:, None] * stride`...
    (not values loaded through them, not comparisons)."""
    if expr is None:
        return False
    if isinstance(expr, ast.Name):
        return expr.id in known
    if isinstance(expr, ast.BinOp):
        return is_index_expr(expr.left, known) or is_index_expr(expr.right, known)
    if isinstance(expr, ast.UnaryOp):
        return is_index_expr(expr.operand, known)
    if isinstance(expr, ast.Subscript):
        return is_index_expr(expr.value, known)
    if isinstance(expr, ast.Call):
        name = call_name(expr, last=True)
        if name == "arange":
            return True
        if name == "to" and isinstance(expr.func, ast.Attribute):
            return is_index_expr(expr.func.value, known)
        if name in _INDEX_PASS:
            return is_index_expr(expr.args[0] if expr.args else None, known)
        if name == "where" and len(expr.args) == 3:
            return is_index_expr(expr.args[1], known) or is_index_expr(expr.args[2], known)
    return False


def _index_names(kernel: Kernel) -> set[str]:
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, values in kernel.assigns.items():
            if name not in found and any(is_index_expr(v, found) for v in values):
                found.add(name)
                changed = True
    return found


def _closure(kernel: Kernel, seed: object) -> set[str]:
    """Names whose value (transitively) satisfies `seed` or uses a name that does."""
    assert callable(seed)
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, values in kernel.assigns.items():
            if name in found:
                continue
            if any(seed(v) or names_in(v) & found for v in values):
                found.add(name)
                changed = True
    return found


def is_mask_expr(expr: ast.AST | None, kernel: Kernel) -> bool:
    """A comparison involving block offsets, a mask name, or `&`/`|` of those."""
    if expr is None:
        return False
    if isinstance(expr, ast.Name):
        return expr.id in kernel.masks
    if isinstance(expr, ast.Subscript):
        return is_mask_expr(expr.value, kernel)
    if isinstance(expr, ast.Compare):
        return bool(names_in(expr) & kernel.aranges)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd | ast.BitOr):
        return is_mask_expr(expr.left, kernel) or is_mask_expr(expr.right, kernel)
    if isinstance(expr, ast.BoolOp):
        return any(is_mask_expr(v, kernel) for v in expr.values)
    return False


def _mask_names(kernel: Kernel) -> set[str]:
    masks: set[str] = set()
    changed = True
    while changed:
        changed = False
        kernel.masks = masks
        for name, values in kernel.assigns.items():
            if name not in masks and any(is_mask_expr(v, kernel) for v in values):
                masks.add(name)
                changed = True
    return masks


_FLOAT_FUNCS = {
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "sin",
    "cos",
    "tanh",
    "erf",
    "dot",
    "fdiv",
    "div_rn",
    "softmax",
    "log1p",
    "expm1",
    "pow",
}
_PASS_FUNCS = {
    "sum",
    "max",
    "min",
    "cumsum",
    "cumprod",
    "abs",
    "maximum",
    "minimum",
    "where",
    "reshape",
    "trans",
    "broadcast_to",
    "expand_dims",
    "view",
    "clamp",
}


def is_float_expr(expr: ast.AST | None, floats: set[str]) -> bool:  # noqa: C901 - one case per expression form of a Triton kernel, a flat dispatch
    """Whether an expression surely has a floating-point value."""
    if expr is None:
        return False
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, float)
    if isinstance(expr, ast.Name):
        return expr.id in floats
    if isinstance(expr, ast.Attribute):
        return expr.attr in FLOAT_DTYPES
    if isinstance(expr, ast.Subscript):
        return is_float_expr(expr.value, floats)
    if isinstance(expr, ast.UnaryOp):
        return is_float_expr(expr.operand, floats)
    if isinstance(expr, ast.Compare | ast.BoolOp):
        return False
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Div):
            return True
        if isinstance(expr.op, ast.BitAnd | ast.BitOr | ast.BitXor | ast.LShift | ast.RShift | ast.FloorDiv | ast.Mod):
            return False
        return is_float_expr(expr.left, floats) or is_float_expr(expr.right, floats)
    if isinstance(expr, ast.IfExp):
        return is_float_expr(expr.body, floats) or is_float_expr(expr.orelse, floats)
    if isinstance(expr, ast.Call):
        name = call_name(expr, last=True)
        if name == "to":
            target = expr.args[0] if expr.args else keyword(expr, "dtype")
            if dtype_name(target) is not None:
                return dtype_name(target) in FLOAT_DTYPES
            receiver = expr.func.value if isinstance(expr.func, ast.Attribute) else None
            return is_float_expr(receiver, floats)
        if name in ("zeros", "full", "zeros_like", "full_like"):
            dtype = keyword(expr, "dtype") or (expr.args[2] if name == "full" and len(expr.args) > 2 else None)
            if dtype is not None and dtype_name(dtype) is not None:
                return dtype_name(dtype) in FLOAT_DTYPES
            value = expr.args[1] if name == "full" and len(expr.args) > 1 else None
            return is_float_expr(value, floats)
        if name in _FLOAT_FUNCS:
            return True
        if name == "where":
            return any(is_float_expr(a, floats) for a in expr.args[1:3])
        if name in _PASS_FUNCS:
            return any(is_float_expr(a, floats) for a in expr.args)
    return False


def _float_names(kernel: Kernel) -> set[str]:
    floats: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, values in kernel.assigns.items():
            if name not in floats and any(is_float_expr(v, floats) for v in values):
                floats.add(name)
                changed = True
    return floats


def pointer_roots(expr: ast.AST | None, kernel: Kernel, seen: set[str] | None = None) -> set[str]:
    """The pointer parameters (names ending in `_ptr` or `ptr`) a pointer expression is built from."""
    seen = set() if seen is None else seen
    roots: set[str] = set()
    for name in names_in(expr):
        if name in kernel.params and name.endswith("ptr"):
            roots.add(name)
        elif name in kernel.assigns and name not in seen and name not in kernel.params:
            seen.add(name)
            for value in kernel.assigns[name]:
                roots |= pointer_roots(value, kernel, seen)
    return roots


def base_pointer(expr: ast.AST | None, kernel: Kernel, depth: int = 6) -> str | None:
    """The pointer parameter an address is an offset from (`x_ptr` in `x_row + cols` after
    `x_row = x_ptr + row * stride`), not the pointers its offsets were loaded from."""
    if expr is None or depth < 0:
        return None
    if isinstance(expr, ast.Name):
        if expr.id in kernel.params:
            return expr.id if expr.id.endswith("ptr") or expr.id.isupper() else None
        for value in kernel.assigns.get(expr.id, [])[:1]:
            return base_pointer(value, kernel, depth - 1)
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        return base_pointer(expr.left, kernel, depth) or base_pointer(expr.right, kernel, depth)
    if isinstance(expr, ast.Subscript):
        return base_pointer(expr.value, kernel, depth)
    return None


def gathered_indices(kernel: Kernel) -> set[str]:
    """Names holding blocks of loaded values (loaded through block offsets) that are used inside
    another load or store address: gather indices. Scalar lookups such as `offsets[i + 1]` are not."""
    used: set[str] = set()
    for call in calls_in(kernel.node, "load", "store"):
        pointer = call.args[0] if call.args else None
        for part in expand(pointer, kernel, depth=2):
            used |= names_in(part)
    blocks = {
        name
        for name, values in kernel.assigns.items()
        if any(names_in(load.args[0]) & kernel.aranges for v in values for load in calls_in(v, "load") if load.args)
    }
    return used & kernel.loaded & blocks


def expand(expr: ast.AST | None, kernel: Kernel, depth: int = 3) -> list[ast.AST]:
    """An expression and the values assigned to the local names it uses, `depth` levels deep."""
    if expr is None:
        return []
    found: list[ast.AST] = [expr]
    frontier = [expr]
    seen: set[str] = set()
    for _ in range(depth):
        following: list[ast.AST] = []
        for node in frontier:
            for name in names_in(node):
                if name in kernel.assigns and name not in seen and name not in kernel.params:
                    seen.add(name)
                    following += kernel.assigns[name]
        found += following
        frontier = following
    return found


# -- padding: what the masked-out lanes of a masked load hold ---------------------------------

DIRTY = "dirty"
"""Padding lanes hold a value that is not a known constant (for instance `0 - mean`)."""
UNDEF = "undefined"
"""Padding lanes were never given a value (a masked load without `other`)."""

Pad = float | str | None
"""None: not a padded value (or unknown); a float: the padding lanes hold that constant."""

_REDUCTION_NEUTRAL = {"sum": 0.0, "max": -math.inf, "argmax": -math.inf, "min": math.inf, "argmin": math.inf}


@dataclass(frozen=True)
class PaddingLeak:
    """A reduction over a value whose padding lanes hold something that changes its result."""

    call: ast.Call
    reduction: str
    padding: Pad


def padding_leaks(kernel: Kernel) -> list[PaddingLeak]:
    """Reductions (`tl.sum`, `tl.max`, `tl.min`, argmax/argmin) over values whose masked-out lanes
    surely hold something other than the reduction's neutral element.

    Padding is followed through straight-line code. Entering a loop forgets the padding of the
    names the loop reassigns (their lanes mix iterations); accumulators start from their
    initialiser (`tl.zeros`, `tl.full`).
    """
    env: dict[str, Pad] = {}
    leaks: list[PaddingLeak] = []
    _pad_block(kernel.node.body, kernel, env, leaks)
    return leaks


def _pad_block(body: list[ast.stmt], kernel: Kernel, env: dict[str, Pad], leaks: list[PaddingLeak]) -> None:
    for stmt in body:
        for call in _own_calls(stmt):
            name = call_name(call, last=True)
            if name in _REDUCTION_NEUTRAL and _is_triton_call(call) and call.args:
                pad = _pad(call.args[0], env, kernel)
                if pad is not None and pad != _REDUCTION_NEUTRAL[name]:
                    leaks.append(PaddingLeak(call=call, reduction=name, padding=pad))
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env[stmt.targets[0].id] = _pad(stmt.value, env, kernel)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            target = stmt.target.id
            value = _pad(stmt.value, env, kernel)
            current = env.get(target)
            if value is None:
                env[target] = None if current is None else _combine(stmt.op, current, None, kernel, None, stmt.value)
            else:
                if current is None:
                    current = _initial(kernel, target)
                env[target] = _combine(stmt.op, current, value, kernel)
        elif isinstance(stmt, ast.For | ast.While):
            for inner in statements(stmt.body):
                for name in assigned_names(inner):
                    env[name] = None
            _pad_block(stmt.body, kernel, env, leaks)
        elif isinstance(stmt, ast.If):
            _pad_block(stmt.body, kernel, env, leaks)
            _pad_block(stmt.orelse, kernel, env, leaks)


def _own_calls(stmt: ast.stmt) -> Iterator[ast.Call]:
    """Calls in a statement, not in the bodies of the blocks it opens."""
    if isinstance(stmt, ast.For | ast.While):
        parts: list[ast.AST] = [stmt.iter if isinstance(stmt, ast.For) else stmt.test]
    elif isinstance(stmt, ast.If):
        parts = [stmt.test]
    elif isinstance(stmt, ast.With):
        parts = list(stmt.items)
    else:
        parts = [stmt]
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Call):
                yield node


def _is_triton_call(call: ast.Call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("tl", "libdevice")


def _initial(kernel: Kernel, name: str) -> Pad:
    values = kernel.assigns.get(name, [])
    first = values[0] if values else None
    if isinstance(first, ast.Call) and call_name(first, last=True) in ("zeros", "zeros_like"):
        return 0.0
    if isinstance(first, ast.Call) and call_name(first, last=True) == "full" and len(first.args) > 1:
        return constant_value(first.args[1])
    return None


_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}


def is_uniform(expr: ast.AST | None, kernel: Kernel, depth: int = 4) -> bool:
    """Whether a value is the same on every lane of a block axis: a scalar argument, a literal, a
    reduction's result, a broadcast (`v[:, None]`), or arithmetic on those."""
    if expr is None or depth < 0:
        return False
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        if expr.id in kernel.params:
            return not expr.id.endswith("ptr")
        values = kernel.assigns.get(expr.id, [])
        return bool(values) and all(is_uniform(v, kernel, depth - 1) for v in values)
    if isinstance(expr, ast.Subscript):
        broadcast = any(isinstance(e, ast.Constant) and e.value is None for e in ast.walk(expr.slice))
        return broadcast or is_uniform(expr.value, kernel, depth)
    if isinstance(expr, ast.UnaryOp):
        return is_uniform(expr.operand, kernel, depth)
    if isinstance(expr, ast.BinOp):
        return is_uniform(expr.left, kernel, depth) and is_uniform(expr.right, kernel, depth)
    if isinstance(expr, ast.Call):
        name = call_name(expr, last=True)
        if name in _REDUCTIONS:
            return True
        if name == "to" and isinstance(expr.func, ast.Attribute):
            return is_uniform(expr.func.value, kernel, depth)
        if name in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "maximum", "minimum"):
            return all(is_uniform(a, kernel, depth) for a in expr.args)
    return False


def _pad(expr: ast.AST | None, env: dict[str, Pad], kernel: Kernel) -> Pad:
    if expr is None:
        return None
    if isinstance(expr, ast.Name):
        return env.get(expr.id)
    if isinstance(expr, ast.Subscript):
        return _pad(expr.value, env, kernel)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = _pad(expr.operand, env, kernel)
        return -inner if isinstance(inner, float) else inner
    if isinstance(expr, ast.BinOp):
        left, right = _pad(expr.left, env, kernel), _pad(expr.right, env, kernel)
        if left is None and right is None:
            return None
        return _combine(expr.op, left, right, kernel, expr.left, expr.right)
    if isinstance(expr, ast.Call):
        return _pad_call(expr, env, kernel)
    return None


def _pad_call(expr: ast.Call, env: dict[str, Pad], kernel: Kernel) -> Pad:
    name = call_name(expr, last=True)
    if name == "load":
        if argument(expr, 1, "mask") is None:
            return None
        other = argument(expr, 2, "other")
        return UNDEF if other is None else constant_value(other)
    if name == "to" and isinstance(expr.func, ast.Attribute):
        return _pad(expr.func.value, env, kernel)
    if name in ("reshape", "broadcast_to", "expand_dims", "view"):
        return _pad(expr.args[0] if expr.args else None, env, kernel)
    if name in ("exp", "exp2", "log", "log2", "sqrt", "abs"):
        inner = _pad(expr.args[0] if expr.args else None, env, kernel)
        return _apply(name, inner) if isinstance(inner, float) else inner
    if name == "where" and len(expr.args) == 3:
        cond, a, b = expr.args
        if is_mask_expr(cond, kernel):
            value = constant_value(b)
            return value if value is not None else _pad(b, env, kernel)
        pa, pb = _pad(a, env, kernel), _pad(b, env, kernel)
        return pa if pa == pb else None
    if name in ("maximum", "minimum") and len(expr.args) == 2:
        pads = [_pad(a, env, kernel) for a in expr.args]
        neutral = -math.inf if name == "maximum" else math.inf
        if all(isinstance(p, float) for p in pads):
            return max(pads) if name == "maximum" else min(pads)  # type: ignore[type-var]
        known = [p for p in pads if p is not None]
        if not known:
            return None
        return None if known[0] == neutral else (known[0] if known[0] in (UNDEF, DIRTY) else DIRTY)
    return None


def _apply(name: str, value: float) -> Pad:
    try:
        if name == "exp":
            return 0.0 if value == -math.inf else math.exp(value)
        if name == "exp2":
            return 0.0 if value == -math.inf else 2.0**value
        if name in ("log", "log2"):
            return -math.inf if value == 0 else (math.log(value) if name == "log" else math.log2(value))
        if name == "sqrt":
            return math.sqrt(value)
        if name == "abs":
            return abs(value)
    except (OverflowError, ValueError):
        return DIRTY
    return DIRTY


def _combine(
    op: ast.operator,
    left: Pad,
    right: Pad,
    kernel: Kernel,
    left_node: ast.AST | None = None,
    right_node: ast.AST | None = None,
) -> Pad:
    """The padding lanes of `left op right`; a side that is None is an ordinary value."""
    if isinstance(op, ast.Mult) and 0.0 in (left, right):
        return 0.0
    if isinstance(op, ast.Div) and left == 0.0:
        return 0.0
    if not isinstance(op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        return None
    if left == UNDEF or right == UNDEF:
        return UNDEF
    if left == DIRTY or right == DIRTY:
        return DIRTY
    if left is None:
        left = constant_value(left_node)
    if right is None:
        right = constant_value(right_node)
    if isinstance(left, float) and isinstance(right, float):
        return _arith(op, left, right)
    known = left if isinstance(left, float) else right
    other = right_node if isinstance(left, float) else left_node
    if not isinstance(known, float):
        return None
    if isinstance(op, ast.Mult) and known == 0.0:
        return 0.0
    if isinstance(op, ast.Div) and isinstance(left, float) and left == 0.0:
        return 0.0
    if isinstance(op, ast.Add | ast.Sub) and math.isinf(known):
        return known if isinstance(op, ast.Add) or isinstance(left, float) else -known
    if isinstance(op, ast.Mult | ast.Div) and math.isinf(known) and isinstance(left, float):
        return known  # -inf scaled by a (positive) temperature or softmax scale stays -inf
    # a padded constant combined with a value: garbage if that value is the same on every lane
    # (a scalar, a reduction's result), unknown if it is per-lane state
    return DIRTY if is_uniform(other, kernel) else None


def _arith(op: ast.operator, left: float, right: float) -> Pad:
    try:
        if isinstance(op, ast.Add):
            value = left + right
        elif isinstance(op, ast.Sub):
            value = left - right
        elif isinstance(op, ast.Mult):
            value = left * right
        elif isinstance(op, ast.Div):
            value = left / right
        else:
            return DIRTY
    except (OverflowError, ZeroDivisionError):
        return DIRTY
    return DIRTY if math.isnan(value) else value


# -- integer expressions as polynomials ------------------------------------------------------------

Polynomial = dict[tuple[str, ...], int]
"""A sum of products: each product's names, sorted, and its integer coefficient."""


def polynomial(
    node: ast.expr, values: dict[str, ast.expr], *, atoms: bool = False, limit: int = 8, depth: int = 0
) -> Polynomial | None:
    """`node` as a polynomial over names, where it is made of `+`, `-`, `*`, integers and names (a name in `values`
    read through its value); anything else is None, or with `atoms` one factor by its text (`offs[:, None]`,
    `i // W`). None past `limit` levels of names read through, or past 64 products."""
    if depth > limit:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {(): node.value} if node.value else {}
    if isinstance(node, ast.Name):
        if node.id in values:
            return polynomial(values[node.id], values, atoms=atoms, limit=limit, depth=depth + 1)
        return {(node.id,): 1}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = polynomial(node.operand, values, atoms=atoms, limit=limit, depth=depth + 1)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        left = polynomial(node.left, values, atoms=atoms, limit=limit, depth=depth + 1)
        right = polynomial(node.right, values, atoms=atoms, limit=limit, depth=depth + 1)
        if left is None or right is None:
            return None
        found: Polynomial = {}
        if isinstance(node.op, ast.Mult):
            for (a, x), (b, y) in itertools.product(left.items(), right.items()):
                key = tuple(sorted(a + b))
                found[key] = found.get(key, 0) + x * y
        else:
            sign = 1 if isinstance(node.op, ast.Add) else -1
            found = dict(left)
            for key, value in right.items():
                found[key] = found.get(key, 0) + sign * value
        found = {k: v for k, v in found.items() if v}
        return found if len(found) <= 64 else None
    return {(ast.unparse(node),): 1} if atoms else None
