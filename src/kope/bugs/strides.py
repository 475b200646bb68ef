"""Strides: a stride argument at a launch, a stride parameter in a kernel's addresses.

The bug kind's cues, recipes, edits and mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: wrong-stride.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst
from libcst.metadata import PositionProvider

from kope.bugs.analysis import (
    Kernel,
    Polynomial,
    argument,
    calls_in,
    constant_value,
    expand,
    host_assignments,
    names_in,
    params_of,
    pointer_roots,
    polynomial,
)
from kope.bugs.cue import Source, _kernels, cue, range_call
from kope.bugs.edit import (
    Edit,
    Program,
    address_exprs,
    arange_names,
    assignments,
    edit_at,
    feeding,
    launches_of,
    operator,
    swapped,
    terms_of,
)
from kope.bugs.mutation import Context, Mutation, mutation, positional
from kope.bugs.recipe import _analysed, _cue_nodes, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


def _stride_call(node: ast.AST) -> tuple[str, int] | None:
    """`t.stride(k)` -> ("t", k)."""
    if (
        isinstance(node, ast.Call)
        and call_name(node, last=True) == "stride"
        and isinstance(node.func, ast.Attribute)
        and node.args
    ):
        dim = constant_value(node.args[0])
        owner = ast.unparse(node.func.value)
        if dim is not None:
            return owner, int(dim)
    return None


@cue("single-inner-stride", "a launch passes one stride of a tensor, and it is an inner one (stride(1), stride(-1))")
def single_inner_stride(source: Source) -> Iterator[ast.AST]:
    for launch in source.dataflow.launches:
        by_tensor: dict[str, list[tuple[int, ast.AST]]] = {}
        for value in launch.args.values():
            found = _stride_call(value)
            if found is not None:
                by_tensor.setdefault(found[0], []).append((found[1], value))
        for tensor, strides in by_tensor.items():
            if len(strides) == 1 and strides[0][0] in (1, -1) and _known_2d(launch.host, tensor):
                yield strides[0][1]


_SAME_SHAPE = {"contiguous", "float", "half", "to", "clone", "detach", "cuda", "cpu"}


def _known_2d(host: ast.FunctionDef | None, name: str, depth: int = 3) -> bool:
    """Whether the host code makes `name` a 2-D tensor (`x.view(-1, n)`, `m, n = x.shape`...)."""
    if host is None or depth < 0:
        return False
    for stmt in ast.walk(host):
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.targets[0], ast.Tuple)
            and len(stmt.targets[0].elts) == 2
            and isinstance(stmt.value, ast.Attribute)
            and stmt.value.attr == "shape"
            and ast.unparse(stmt.value.value) == name
        ):
            return True
    for value in host_assignments(host, name):
        while (
            isinstance(value, ast.Call)
            and call_name(value, last=True) in _SAME_SHAPE
            and isinstance(value.func, ast.Attribute)
        ):
            value = value.func.value
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("view", "reshape") and len(value.args) == 2:
            return True
        if (
            isinstance(value, ast.Call)
            and call_name(value, last=True) in ("empty", "zeros", "ones", "randn")
            and (
                len(value.args) == 2
                or (len(value.args) == 1 and isinstance(value.args[0], ast.Tuple) and len(value.args[0].elts) == 2)
            )
        ):
            return True
        if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty_like", "zeros_like") and value.args:
            return _known_2d(host, ast.unparse(value.args[0]), depth - 1)
        if isinstance(value, ast.Name):
            return _known_2d(host, value.id, depth - 1)
    return False


@cue("duplicate-stride-arg", "a launch passes the same stride of a tensor for two different parameters")
def duplicate_stride_arg(source: Source) -> Iterator[ast.AST]:
    for launch in source.dataflow.launches:
        seen: set[str] = set()
        for value in launch.args.values():
            if _stride_call(value) is not None:
                text = ast.unparse(value)
                if text in seen:
                    yield value
                seen.add(text)


def _pointer_prefixes(kernel: Kernel) -> dict[str, str]:
    prefixes: dict[str, str] = {}
    for param in kernel.params:
        if param.endswith("_ptr") and len(param) > 4:
            prefixes[param] = param[:-4]
    return prefixes


@cue("foreign-stride", "a pointer is advanced with another tensor's stride (x_ptr + i * stride_y...)")
def foreign_stride(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        prefixes = _pointer_prefixes(kernel)
        if len(prefixes) < 2:
            continue
        strides = [p for p in kernel.params if p.startswith("stride_")]

        def owner(stride: str, prefixes: dict[str, str] = prefixes) -> str | None:
            rest = stride[len("stride_") :]
            matches = [p for p in prefixes.values() if rest.startswith(p)]
            return max(matches, key=len) if matches else None

        for call in calls_in(kernel.node, "load", "store", "atomic_add"):
            pointer = call.args[0] if call.args else None
            roots = {prefixes[r] for r in pointer_roots(pointer, kernel) if r in prefixes}
            if len(roots) != 1:
                continue
            (root,) = roots
            used = set().union(*(names_in(n) for n in expand(pointer, kernel, depth=4)))
            for stride in strides:
                if stride in used and owner(stride) not in (None, root):
                    yield call
                    break


@cue("unused-stride-param", "a kernel takes a stride it never uses (often a batch or head offset left out)")
def unused_stride_param(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        for arg in kernel.node.args.args:
            if arg.arg.startswith("stride") and arg.arg not in used:
                yield arg


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _StrideDim(_LineTransformer):
    """`t.stride(k)` starting at (line, column) -> `t.stride(dim)`."""

    def __init__(self, line: int, column: int, dim: int) -> None:
        super().__init__()
        self.target, self.column, self.dim = line, column, dim

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        start = self.get_metadata(PositionProvider, original_node).start
        if (
            call_name(updated_node, last=True) == "stride"
            and (start.line, start.column) == (self.target, self.column)
            and updated_node.args
            and not self.changed
        ):
            self.changed = True
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=cst.Integer(str(self.dim)))])
        return updated_node


class _RenameIn(_LineTransformer):
    """Rename `old` to `new` on the given lines."""

    def __init__(self, lines: set[int], old: str, new: str) -> None:
        super().__init__()
        self.lines, self.old, self.new = lines, old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value == self.old and self.line(original_node) in self.lines:
            self.changed = True
            return updated_node.with_changes(value=self.new)
        return updated_node


@recipe(
    "outer-stride",
    "pass the right stride: an inner or repeated t.stride(k) -> another dimension; stride_y used with x_ptr -> "
    "stride_x",
)
def outer_stride(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    flagged: list[tuple[ast.AST, tuple[int, ...]]] = [(n, (0,)) for n in _cue_nodes(parsed, "single-inner-stride")]
    flagged += [(n, (0, 1, 2)) for n in _cue_nodes(parsed, "duplicate-stride-arg")]
    for node, dims in flagged:
        if not (isinstance(node, ast.Call) and node.args):
            continue
        current = constant_value(node.args[0])
        for dim in dims:
            if current is not None and dim != int(current):
                edited = _rewrite(source, _StrideDim(node.lineno, node.col_offset, dim))
                if edited is not None:
                    yield edited
    for node in parsed.kernels:
        kernel = parsed.dataflow.kernel_of(node)
        if kernel is None:
            continue
        prefixes = {p[:-4] for p in kernel.params if p.endswith("_ptr")}
        strides = [p for p in kernel.params if p.startswith("stride_")]
        for call in calls_in(node, "load", "store", "atomic_add"):
            pointer = call.args[0] if call.args else None
            roots = {r[:-4] for r in pointer_roots(pointer, kernel) if r.endswith("_ptr")}
            if len(roots) != 1:
                continue
            (root,) = roots
            parts = expand(pointer, kernel, depth=4)
            lines = {getattr(p, "lineno", -1) for p in parts} | {call.lineno}
            used = set().union(*(names_in(p) for p in parts))
            for stride in strides:
                rest = stride[len("stride_") :]
                owner = max((p for p in prefixes if rest.startswith(p)), key=len, default=None)
                if stride in used and owner not in (None, root):
                    assert owner is not None
                    replacement = "stride_" + root + rest[len(owner) :]
                    if replacement in kernel.params:
                        edited = _rewrite(source, _RenameIn(lines, stride, replacement))
                        if edited is not None:
                            yield edited


# -- the search's edits (repair operators) -----------------------------------------------------


def _int_stride_call(node: ast.AST) -> tuple[str, int] | None:
    """`x.stride(1)` -> ("x", 1): one int literal only (the cues' `_stride_call` also reads `stride(-1)` and floats)."""
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


def _odd_ones(strides: list[tuple[int, ast.expr, tuple[str, int]]]) -> dict[int, str]:
    """Stride arguments of one tensor in the middle of a run of another's (`x.stride(1), out.stride(2),
    x.stride(3)`): the argument's node id -> the run's tensor."""
    found: dict[int, str] = {}
    for (i0, _, (t0, d0)), (i1, arg, (t1, d1)), (i2, _, (t2, d2)) in zip(
        strides, strides[1:], strides[2:], strict=False
    ):
        if i1 == i0 + 1 and i2 == i1 + 1 and t0 == t2 != t1 and d0 + 1 == d1 == d2 - 1:
            found[id(arg)] = t0
    return found


@operator("stride-argument", "wrong-stride")
def stride_argument(program: Program) -> Iterator[Edit]:
    """At a launch: a `t.stride(i)` argument replaced by the tensor's other strides or another tensor's
    stride of the same dimension; two stride arguments swapped."""
    for call in launches_of(program):
        strides = [(i, arg, s) for i, arg in enumerate(call.args) if (s := _int_stride_call(arg)) is not None]
        if not strides:
            continue
        tensors = list(dict.fromkeys(s[0] for _, _, s in strides))
        dims = max(2, max(s[1] for _, _, s in strides) + 1)
        odd = _odd_ones(strides)
        for _, arg, (tensor, dim) in strides:
            if id(arg) in odd:  # first: the run's own tensor in place of the odd one
                new = f"{odd[id(arg)]}.stride({dim})"
                cue = f"`{program.code(arg)}` sits among `{odd[id(arg)]}`'s strides"
                edit = edit_at(
                    program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                )
                yield replace(edit, cue=cue)
            for other in range(dims):
                if other != dim:
                    new = f"{tensor}.stride({other})"
                    yield edit_at(
                        program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                    )
            for other_tensor in tensors:
                if other_tensor != tensor:
                    new = f"{other_tensor}.stride({dim})"
                    yield edit_at(
                        program, "stride-argument", arg, new, f"launch argument `{program.code(arg)}` -> `{new}`"
                    )
        for (i, a, sa), (j, b, sb) in itertools.combinations(strides, 2):
            if sa[0] == sb[0] and sa != sb:
                first, new, one, two = swapped(program, a, b)
                # a tensor's strides passed in falling order (`A.stride(1), A.stride(0)`): a transposed operand
                # passed as stored, or the order mixed up; cued, it is tried early
                falling = j == i + 1 and sb[1] < sa[1]
                cue = f"`{one}` and `{two}` are passed in falling dimension order" if falling else ""
                yield Edit(
                    "stride-argument",
                    "wrong-stride",
                    getattr(first, "lineno", 0),
                    f"swap launch arguments `{one}` and `{two}`",
                    new,
                    cue,
                )


@operator("stride-name", "wrong-stride")
def stride_name(program: Program) -> Iterator[Edit]:
    """In a kernel's address arithmetic: one stride parameter replaced by another of the same kernel."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        if len(strides) < 2:
            continue
        for node in ast.walk(kernel):
            if isinstance(node, ast.Name) and node.id in strides and isinstance(node.ctx, ast.Load):
                for other in strides:
                    if other != node.id:
                        yield edit_at(
                            program, "stride-name", node, other, f"`{node.id}` -> `{other}` (line {node.lineno})"
                        )


@operator("stride-swap", "wrong-stride")
def stride_swap(program: Program) -> Iterator[Edit]:
    """Two stride parameters swapped within one address expression (dimensions exchanged)."""
    for kernel in program.kernels:
        strides = set(program.strides(kernel))
        for expr in address_exprs(kernel):
            used = [n for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in strides]
            for a, b in itertools.combinations(used, 2):
                if a.id == b.id:
                    continue
                first, new, _, _ = swapped(program, a, b)
                yield Edit(
                    "stride-swap",
                    "wrong-stride",
                    getattr(first, "lineno", 0),
                    f"swap `{a.id}` and `{b.id}` in `{ast.unparse(expr)}`",
                    new,
                )


@operator("stride-factor", "wrong-stride")
def stride_factor(program: Program) -> Iterator[Edit]:
    """An address term not scaled by any stride, multiplied by a stride parameter the kernel never uses
    (a stride dropped for a transposed or non-contiguous operand)."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        body_names: set[str] = set()
        for statement in kernel.body:
            body_names |= names_in(statement)
        unused = [s for s in strides if s not in body_names]
        if not unused:
            continue
        for expr in address_exprs(kernel):
            for term in terms_of(expr):
                if names_in(term) & set(strides) or isinstance(term, ast.Constant):
                    continue
                if isinstance(term, ast.Name) and term.id in params_of(kernel):
                    continue
                for stride in unused:
                    new = f"({ast.unparse(term)}) * {stride}"
                    yield edit_at(program, "stride-factor", term, new, f"`{program.code(term)}` -> `{new}`")


@operator("advance-stride", "wrong-stride")
def advance_stride(program: Program) -> Iterator[Edit]:
    """A pointer advanced by a count of elements (`b_ptrs += BLOCK_K`) scaled by a stride of the kernel: the
    count of rows it means. Cued when another pointer of the same loop advances by a stride."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            addressing = {n for e in address_exprs(kernel) for n in names_in(e)}
            advances = [
                n
                for s in loop.body
                for n in ast.walk(s)
                if isinstance(n, ast.AugAssign)
                and isinstance(n.op, ast.Add)
                and isinstance(n.target, ast.Name)
                and n.target.id in addressing  # a pointer, not an accumulator (`acc += tl.dot(a, b)`)
            ]
            strided = [a for a in advances if names_in(a.value) & set(strides)]
            for node in advances:
                if node in strided:
                    continue
                cue = (
                    f"`{program.code(node)}` advances without a stride while `{program.code(strided[0])}` has one"
                    if strided
                    else ""
                )
                for stride in strides:
                    new = f"({program.code(node.value)}) * {stride}"
                    description = f"advance `{program.code(node.value)}` -> `{new}`"
                    yield replace(edit_at(program, "advance-stride", node.value, new, description), cue=cue)


@operator("missing-advance", "wrong-stride")
def missing_advance(program: Program) -> Iterator[Edit]:
    """A loop advances one operand's pointer along a block of lanes (`a_ptrs += BLOCK_K * stride_ak`, the stride
    its address pairs with the lanes `offs_k`), while another load of the loop, indexed by the same lanes with
    its own stride, reads the same addresses on every iteration: that pointer advanced the same way
    (`b_ptrs += BLOCK_K * stride_bk`), after the other advance. Grounded: a block indexed by the loop's lanes that
    never moves while its partner does is a contradiction the source shows."""
    for kernel in program.kernels:
        strides = set(program.strides(kernel))
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            varying = _varying(loop)
            loads = [n for n in ast.walk(loop) if isinstance(n, ast.Call) and call_name(n) == "tl.load" and n.args]
            pairs = {id(load): _lane_strides(kernel, load.args[0], strides) for load in loads}
            for advance in _advances(loop):
                moved = names_in(_step(kernel, advance.value)) & strides
                if len(moved) != 1:
                    continue
                stride = moved.pop()
                lanes = {lane for load in loads for lane, s in pairs[id(load)] if s == stride}
                for load in loads:
                    if _address_names(kernel, load.args[0]) & varying:
                        continue
                    for lane, other in pairs[id(load)]:
                        base = _loop_invariant_pointer(kernel, loop, load.args[0])
                        if lane not in lanes or other == stride or base is None:
                            continue
                        step = _renamed(_step(kernel, advance.value), stride, other)
                        yield _advance_after(program, loop, advance, base, step, load)
            yield from _offset_loads(program, kernel, loop, varying, loads, pairs)


@operator("advance-axis", "wrong-stride")
def advance_axis(program: Program) -> Iterator[Edit]:
    """A pointer advanced along the wrong axis: its load pairs the loop's lanes with one stride (`offs_k[:, None] *
    stride_bk`) and another block of lanes with another (`offs_n[None, :] * stride_bn`), and the loop advances it
    by the other one (`b_ptrs += BLOCK_K * stride_bn`): the stride paired with the loop's lanes instead. The loop's
    lanes are those its masks bound by where the loop is (`offs_k < K - k`) and those its other pointers advance
    along. Grounded: an advance along lanes the loop does not walk is a contradiction the source shows."""
    for kernel in program.kernels:
        strides = set(program.strides(kernel))
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            varying = _varying(loop)
            loads = [n for n in ast.walk(loop) if isinstance(n, ast.Call) and call_name(n) == "tl.load" and n.args]
            pairs = {id(load): _lane_strides(kernel, load.args[0], strides) for load in loads}
            masks = [mask for load in loads if (mask := argument(load, 1, "mask")) is not None]
            bounded = {lane for mask in masks for lane in _bounded_by(_computed_from(kernel, mask), varying)}
            moved: list[tuple[ast.AugAssign, str, list[tuple[str, str]]]] = []
            for advance in _advances(loop):
                names = names_in(_step(kernel, advance.value)) & strides
                target = ast.unparse(advance.target)
                fed = [
                    pair for load in loads if target in _address_names(kernel, load.args[0]) for pair in pairs[id(load)]
                ]
                if len(names) == 1 and fed:
                    moved.append((advance, next(iter(names)), fed))
            for advance, stride, fed in moved:
                walked = bounded | {lane for a, s, f in moved if a is not advance for lane, t in f if t == s}
                if not walked or {lane for lane, s in fed if s == stride} & walked:
                    continue
                pointer = ast.unparse(advance.target)
                for lane, other in sorted({(lane, s) for lane, s in fed if lane in walked and s != stride}):
                    new = _renamed(_step(kernel, advance.value), stride, other)
                    cue = f"`{pointer}` walks `{lane}` (stride `{other}`) in this loop but advances by `{stride}`"
                    description = f"advance `{program.code(advance.value)}` -> `{new}`"
                    yield replace(
                        edit_at(program, "advance-axis", advance.value, new, description), cue=cue, grounded=True
                    )


def _offset_loads(
    program: Program,
    kernel: ast.FunctionDef,
    loop: ast.For,
    varying: set[str],
    loads: list[ast.Call],
    pairs: dict[int, list[tuple[str, str]]],
) -> Iterator[Edit]:
    """Loads whose mask bounds their lanes by where the loop is (`offs_k < K - k * BLOCK_K`) but whose address
    never moves: the block's start along the lanes' stride added to the address (`+ (k * BLOCK_K) * stride_ak`),
    every such load of the loop at once (grounded), then each alone."""
    fixes: list[tuple[ast.Call, str]] = []
    for load in loads:
        mask = argument(load, 1, "mask")
        if mask is None or _address_names(kernel, load.args[0]) & varying:
            continue
        computed = _computed_from(kernel, mask)
        masked = {name for expr in computed for name in names_in(expr)}
        start = _block_start(loop, computed)
        bounded = _bounded_by(computed, varying)
        moving = [(lane, stride) for lane, stride in pairs[id(load)] if lane in bounded]
        if not masked & varying or start is None or len(moving) != 1:
            continue
        pointer = program.code(load.args[0])
        offset = start if start.isidentifier() else f"({start})"
        fixes.append((load, f"{program.fitted(load.args[0], pointer)} + {offset} * {moving[0][1]}"))
    if not fixes:
        return
    cue = "a load's mask moves with the loop, its address does not"
    if len(fixes) > 1:
        description = f"every load whose mask moves with the loop offset by its block's start ({len(fixes)})"
        yield Edit(
            "missing-advance",
            "wrong-stride",
            fixes[0][0].lineno,
            description,
            program.replace_all([(load.args[0], text) for load, text in fixes]),
            cue,
            True,
        )
    for load, text in fixes:
        yield Edit(
            "missing-advance",
            "wrong-stride",
            load.lineno,
            f"`{program.code(load.args[0])}` -> `{text}` (the block's start along the loop)",
            program.replace(load.args[0], text),
            cue,
            len(fixes) == 1,
        )


def _computed_from(kernel: ast.FunctionDef, expr: ast.expr) -> list[ast.expr]:
    """An expression and the values of the names it is computed from, transitively (not through a loaded value)."""
    assigned = assignments(kernel)
    found, stack, seen = [expr], sorted(names_in(expr)), set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in assigned.get(name, []):
            if "load(" not in ast.unparse(node.value):
                found.append(node.value)
                stack += sorted(names_in(node.value))
    return found


def _bounded_by(computed: list[ast.expr], varying: set[str]) -> set[str]:
    """The names a comparison bounds by something that changes with the loop (`offs_k` in `offs_k < K - k * B`)."""
    found: set[str] = set()
    for expr in computed:
        for node in ast.walk(expr):
            if isinstance(node, ast.Compare) and len(node.comparators) == 1:
                left, right = names_in(node.left), names_in(node.comparators[0])
                found |= left if right & varying and not left & varying else set()
                found |= right if left & varying and not right & varying else set()
    return found


def _block_start(loop: ast.For, computed: list[ast.expr]) -> str | None:
    """Where the loop's block starts, as its mask computes it (`k * BLOCK_K` in `offs_k < K - k * BLOCK_K`), else
    the loop's own variable where the loop steps by a block (`range(0, K, BLOCK_K)`)."""
    target = loop.target.id if isinstance(loop.target, ast.Name) else None
    if target is None:
        return None
    for expr in computed:
        for node in ast.walk(expr):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                sides = (node.left, node.right)
                if any(isinstance(side, ast.Name) and side.id == target for side in sides):
                    return ast.unparse(node)
    call = range_call(loop)
    if call is not None and len(call.args) == 3 and constant_value(call.args[2]) != 1.0:
        return target
    return None


def _varying(loop: ast.For) -> set[str]:
    """The names whose value changes from one iteration of `loop` to the next: its target, what it advances
    in place, and what is assigned from those (transitively)."""
    varying = names_in(loop.target)
    varying |= {n.target.id for n in ast.walk(loop) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    assigns = [n for n in ast.walk(loop) if isinstance(n, ast.Assign) and len(n.targets) == 1]
    grew = True
    while grew:
        before = len(varying)
        for node in assigns:
            if names_in(node.value) & varying:
                varying |= names_in(node.targets[0])
        grew = len(varying) > before
    return varying


def _advances(loop: ast.For) -> list[ast.AugAssign]:
    """In-place additions to a name in the loop's body: `ptrs += BLOCK_K * stride_k`."""
    return [
        n
        for n in ast.walk(loop)
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name)
    ]


def _step(kernel: ast.FunctionDef, value: ast.expr) -> ast.expr:
    """An advance's step, seen through a name the kernel binds once (`k_step = BLOCK_K * stride_ak` before the loop,
    then `a_ptrs += k_step` and `b_ptrs += k_step`: one shared step, right for one pointer of the two at most)."""
    if isinstance(value, ast.Name):
        bound = assignments(kernel).get(value.id, [])
        if len(bound) == 1:
            return bound[0].value
    return value


def _address_names(kernel: ast.FunctionDef, address: ast.expr) -> set[str]:
    return {name for expr in feeding(kernel, address) for name in names_in(expr)}


def _lane_strides(kernel: ast.FunctionDef, address: ast.expr, strides: set[str]) -> list[tuple[str, str]]:
    """(lanes, stride) for every product of a block of lanes (`offs_k[:, None]`) and one stride in an address."""
    lanes = arange_names(kernel)
    found: list[tuple[str, str]] = []
    for expr in feeding(kernel, address):
        for node in ast.walk(expr):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
                continue
            for left, right in ((node.left, node.right), (node.right, node.left)):
                lane = left.value if isinstance(left, ast.Subscript) else left
                named = isinstance(lane, ast.Name) and lane.id in lanes
                if named and isinstance(right, ast.Name) and right.id in strides:
                    found.append((ast.unparse(lane), right.id))
    return found


def _loop_invariant_pointer(kernel: ast.FunctionDef, loop: ast.For, address: ast.expr) -> str | None:
    """The name to advance for a load's address: the address itself where it is a name assigned before the loop,
    else a name it is computed from in the loop that is assigned before it (`b_ptrs = b_base + offs_k * s`)."""
    inside = {id(n) for n in ast.walk(loop)}
    assigned = assignments(kernel)

    def before(name: str) -> bool:
        found = assigned.get(name, [])
        return bool(found) and all(id(a) not in inside and a.lineno < loop.lineno for a in found)

    if isinstance(address, ast.Name):
        if before(address.id):
            return address.id
        made = [a for a in assigned.get(address.id, []) if id(a) in inside]
        if len(made) != 1:
            return None
        address = made[0].value
    roots = [t.id for t in terms_of(address) if isinstance(t, ast.Name) and before(t.id)]
    return roots[0] if len(roots) == 1 else None


def _renamed(expr: ast.expr, old: str, new: str) -> str:
    """`expr`'s text with the name `old` replaced by `new`."""
    renamed = copy.deepcopy(expr)
    for node in ast.walk(renamed):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
    return ast.unparse(renamed)


def _advance_after(
    program: Program, loop: ast.For, advance: ast.AugAssign, base: str, step: str, load: ast.Call
) -> Edit:
    """`base += step` inserted after `advance` where it is a statement of the loop's body, else at the body's end."""
    anchor = advance if any(s is advance for s in loop.body) else loop.body[-1]
    _, end = program.lines_of(anchor)
    statement = f"{base} += {step}"
    text = program.text[:end] + program.indent_of(anchor) + statement + "\n" + program.text[end:]
    cue = (
        f"line {load.lineno} loads `{program.code(load.args[0])}` at the same addresses on every iteration, while "
        f"`{program.code(advance)}` moves its partner along the loop"
    )
    return Edit("missing-advance", "wrong-stride", load.lineno, f"`{statement}` added to the loop", text, cue, True)


def _per_step(poly: Polynomial, index: str, step: Polynomial | None) -> Polynomial | None:
    """How much `poly` grows when `index` grows by `step`, where `index` appears at most once in each product
    (linear in it) and the growth does not involve it; None otherwise."""
    if step is None:
        return None
    found: Polynomial = {}
    for names, coefficient in poly.items():
        if names.count(index) > 1:
            return None
        if index not in names:
            continue
        rest = list(names)
        rest.remove(index)
        for more, factor in step.items():
            key = tuple(sorted((*rest, *more)))
            found[key] = found.get(key, 0) + coefficient * factor
    found = {k: v for k, v in found.items() if v}
    return found if found and not any(index in names for names in found) else None


def _poly_text(poly: Polynomial) -> str:
    """`BLOCK_K * stride_ak - 2 * s`: products with more names first, the constant last."""
    text = ""
    for names, coefficient in sorted(poly.items(), key=lambda t: (len(t[0]) == 0, t[0])):
        factors = [*([str(abs(coefficient))] if abs(coefficient) != 1 or not names else []), *names]
        term = " * ".join(factors)
        text += (" - " if coefficient < 0 else " + ") + term if text else ("-" if coefficient < 0 else "") + term
    return text or "0"


def _loop_values(loop: ast.For, name: str) -> tuple[dict[str, ast.expr], set[str]]:
    """The names the loop's body assigns once (their values) and those of them that follow the loop's index."""
    made: dict[str, list[ast.expr]] = {}
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            made.setdefault(node.targets[0].id, []).append(node.value)
    values = {k: v[0] for k, v in made.items() if len(v) == 1}
    following = {name}
    grew = True
    while grew:
        grew = False
        for key, value in values.items():
            if key not in following and names_in(value) & following:
                following.add(key)
                grew = True
    return values, following


def _drifts(
    kernel: ast.FunctionDef, loop: ast.For, values: dict[str, ast.expr], following: set[str]
) -> Iterator[tuple[str, ast.expr, ast.stmt]]:
    """(pointer, increment, statement) for each pointer the loop carries from one iteration to the next by an
    increment that follows the loop's index: `p += k * s`, or `p = p + next_k * s` (also through a name:
    `p_next = p + next_k * s`, then `p = p_next`). The pointer is assigned before the loop and nowhere else in it."""
    if not isinstance(loop.target, ast.Name):
        return
    values, following = _loop_values(loop, loop.target.id)
    assigned = assignments(kernel)
    inside = {id(n) for n in ast.walk(loop)}
    for node in ast.walk(loop):
        statement: ast.stmt
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            pointer, increment, statement = node.target.id, node.value, node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            pointer = node.targets[0].id
            value = node.value
            if isinstance(value, ast.Name) and value.id in values and value.id != pointer:
                carried = next(
                    (a for a in assigned.get(value.id, []) if id(a) in inside and isinstance(a, ast.Assign)), None
                )
                if carried is None:
                    continue
                value, statement = carried.value, carried
            else:
                statement = node
            if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
                continue
            if not (isinstance(value.left, ast.Name) and value.left.id == pointer):
                continue
            increment = value.right
        else:
            continue
        before = [a for a in assigned.get(pointer, []) if id(a) not in inside and a.lineno < loop.lineno]
        rebound = [
            a
            for a in assigned.get(pointer, [])
            if id(a) in inside and a is not node and isinstance(a, ast.Assign) and a is not statement
        ]
        if (before or pointer in params_of(kernel)) and not rebound and names_in(increment) & following:
            yield pointer, increment, statement


@operator("pointer-drift", "wrong-stride")
def pointer_drift(program: Program) -> Iterator[Edit]:
    """A pointer a loop carries from one iteration to the next, advanced by an amount that follows the loop's index
    (`p += k * s`; `p_next = p + next_k * s`, `p = p_next`, with `next_k = k + BLOCK`): each iteration adds the whole
    offset again, so the pointer runs ahead of the index. Two readings: the amount is the offset from the loop's
    start (the advance becomes the change of that offset from one iteration to the next, `BLOCK * s`, where it is
    a polynomial of the index), or the offset from the pointer's base for the statements that follow
    (`p += off` becomes `p_at = p + off`, read by the rest of its block). Every carried pointer of a loop changed
    at once first, then each alone. Cued: the source shows the index added again on every iteration."""
    for kernel in program.kernels:
        used = {
            name
            for call in ast.walk(kernel)
            if isinstance(call, ast.Call) and call_name(call) in ("tl.load", "tl.store") and call.args
            for name in _address_names(kernel, call.args[0])
        }
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            call = range_call(loop)
            if call is None or not isinstance(loop.target, ast.Name):
                continue
            index = loop.target.id
            step = call.args[2] if len(call.args) > 2 else ast.Constant(1)
            values, following = _loop_values(loop, index)
            changes: list[tuple[ast.AST, str]] = []
            singles: list[Edit] = []
            for pointer, increment, statement in _drifts(kernel, loop, values, following):
                if pointer not in used:
                    continue
                expanded = {k: v for k, v in values.items() if k in following}
                now = polynomial(increment, expanded)
                if now is None:
                    continue
                change = _per_step(now, index, polynomial(step, {}))
                if not change:
                    continue
                text = _poly_text(change)
                grows = f"`{program.code(increment)}`, which grows with `{index}`"
                cue = f"`{program.code(statement)}` adds {grows}, on every iteration"
                wrapped = f"({text})" if isinstance(statement, ast.Assign) and " " in text else text
                changes.append((increment, wrapped))
                description = f"advance `{pointer}` by `{text}` (the offset's change per iteration)"
                singles.append(
                    Edit(
                        "pointer-drift",
                        "wrong-stride",
                        statement.lineno,
                        description,
                        program.replace(increment, wrapped),
                        cue,
                        False,
                    )
                )
                if isinstance(statement, ast.AugAssign):
                    singles.extend(_rebased(program, kernel, statement, pointer, cue))
            if len(changes) > 1:
                description = f"advance {len(changes)} pointers by their offsets' change per iteration"
                text = program.replace_all(changes)
                yield Edit("pointer-drift", "wrong-stride", loop.lineno, description, text, singles[0].cue, False)
            yield from singles


def _rebased(
    program: Program, kernel: ast.FunctionDef, statement: ast.AugAssign, pointer: str, cue: str
) -> Iterator[Edit]:
    """`p += off` as `p_at = p + off`, the statements after it in its block reading `p_at`."""
    block = next(
        (
            body
            for node in ast.walk(kernel)
            for body in (getattr(node, "body", None), getattr(node, "orelse", None))
            if isinstance(body, list) and any(s is statement for s in body)
        ),
        None,
    )
    if block is None:
        return
    after = block[block.index(statement) + 1 :]
    reads = [n for s in after for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == pointer]
    if not reads or any(isinstance(n.ctx, ast.Store) for n in reads):
        return
    taken = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)}
    fresh = f"{pointer}_at"
    while fresh in taken:
        fresh += "_"
    changes: list[tuple[ast.AST, str]] = [(n, fresh) for n in reads]
    changes.append((statement, f"{fresh} = {pointer} + {program.code(statement.value)}"))
    text = program.replace_all(changes)
    description = f"`{program.code(statement)}` -> `{fresh} = {pointer} + ...`, read by the rest of its block"
    yield Edit("pointer-drift", "wrong-stride", statement.lineno, description, text, cue, False)


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class StrideOfOtherDim(Mutation):
    name = "stride-other-dim"
    label = "wrong-stride"
    summary = "a stride argument is taken from another dimension: x.stride(1) for x.stride(0)"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "stride":
            args = positional(node)
            if len(args) == 1 and isinstance(args[0].value, cst.Integer):
                dim = int(args[0].value.value)
                other = 1 if dim == 0 else dim - 1
                return [node.with_changes(args=[args[0].with_changes(value=cst.Integer(str(other)))])]
        return []


def _stride_term(node: cst.BaseExpression) -> tuple[cst.BinaryOperation, cst.Name] | None:
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply)):
        return None
    if isinstance(node.right, cst.Name) and node.right.value.startswith("stride"):
        return node, node.right
    return None


@mutation
class SwapStrides(Mutation):
    name = "swap-strides"
    label = "wrong-stride"
    summary = "two dimensions' strides are swapped in a pointer expression"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
            return []
        right = _stride_term(node.right)
        left_term = node.left
        outer: cst.BinaryOperation | None = None
        if isinstance(left_term, cst.BinaryOperation) and isinstance(left_term.operator, cst.Add):
            outer, left_term = left_term, left_term.right
        left = _stride_term(left_term)
        if right is None or left is None or left[1].value == right[1].value:
            return []
        new_left: cst.BaseExpression = left[0].with_changes(right=right[1])
        if outer is not None:
            new_left = outer.with_changes(right=new_left)
        return [node.with_changes(left=new_left, right=right[0].with_changes(right=left[1]))]
