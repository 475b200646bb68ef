"""Offset repairs: terms of address expressions, index shifts and broadcast axes."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import replace

from kope.repair.operators._core import (
    REDUCTIONS,
    Edit,
    Program,
    address_exprs,
    assignments,
    constexprs_of,
    edit_at,
    feeding,
    memory_accesses,
    names_in,
    operator,
    pointers_of,
    program_id_names,
    terms_of,
)
from kope.source import call_name


@operator("offset-term", "missing-batch-offset")
def offset_term(program: Program) -> Iterator[Edit]:
    """Add or remove an offset term `pid * stride` in an address expression: a term another address
    expression of the kernel has, with this pointer's stride; a program id the address lacks, alone or with a
    stride; or every program-id term dropped. An address of a pointer that lacks a program id the kernel's
    other addresses use is cued (`tl.load(mean_ptr)` in a kernel with one program per row). Terms with a stride of
    the address's own tensor (the launch says which: `out_ptr` passed `out`, `stride_ob` passed `out.stride(0)`)
    come first."""
    for kernel in program.kernels:
        pids = program_id_names(kernel)
        direct = [n for n, a in assignments(kernel).items() if any("program_id" in ast.unparse(x.value) for x in a)]
        strides = program.strides(kernel)
        exprs = list(address_exprs(kernel))
        pointers = pointers_of(kernel)
        indices = _pid_indices(kernel, pids, direct, pointers)
        owners = program.tensors(kernel)
        strided = {owners.get(st) for st in strides} - {None}
        vectors = {p for p in pointers if strided and owners.get(p) and owners[p] not in strided}
        missing = _lacking(kernel, indices, pointers - vectors)
        targets = {id(a.value): name for name, assigns in assignments(kernel).items() for a in assigns}
        coordinates = _coordinates(kernel, strides, pids)
        offsets: list[ast.expr] = []
        for expr in exprs:
            for term in terms_of(expr):
                if names_in(term) & pids and isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                    offsets.append(term)
        made: list[tuple[int, int, Edit]] = []
        for expr in exprs:
            terms = terms_of(expr)
            has_pid = any(names_in(t) & pids for t in terms)
            tensor = next((owners.get(t.id, "") for t in terms if isinstance(t, ast.Name) and t.id in pointers), "")
            base = terms[0]
            lacking = missing.get(id(expr), [])  # a tensor passed without strides beside strided ones is a vector
            cue = ""
            if lacking:
                cue = f"`{program.code(expr)}` lacks the program id `{lacking[0]}` the kernel's other addresses use"
            if has_pid:
                texts = _missing_pid_terms(expr, indices, strides)
            else:
                texts = _offset_texts(offsets, pids, strides, direct)
            partners = coordinates.get(program.code(expr), []) if isinstance(expr, ast.Name) else []
            texts += partners

            def supplies(text: str, lacking: list[str] = lacking) -> bool:
                return any(re.search(rf"\b{re.escape(name)}\b", text) for name in lacking)

            defined = targets.get(id(expr), "")
            for text in sorted(dict.fromkeys(texts), key=lambda x: not supplies(x)):
                if defined and re.search(rf"\b{re.escape(defined)}\b", text):
                    continue  # `cpg = C // G + g * cpg`: a name in its own definition
                new = f"{ast.unparse(base)} + {text}"
                edit = edit_at(program, "offset-term", base, new, f"add `+ {text}` to `{program.code(expr)}`")
                own = bool(tensor) and any(owners.get(n) == tensor for n in names_in(ast.parse(text, mode="eval")))
                if text in partners:
                    why = f"another address offsets `{program.code(expr)}` by `{text}` along the same stride"
                    made.append((0, len(made), replace(edit, cue=why)))
                else:
                    made.append((0 if own else 1, len(made), replace(edit, cue=cue if supplies(text) else "")))
            for term in terms[1:]:
                if names_in(term) & pids:
                    kept = " + ".join(ast.unparse(t) for t in terms if t is not term)
                    description = f"drop `{ast.unparse(term)}` from `{program.code(expr)}`"
                    made.append((1, len(made), edit_at(program, "offset-term", expr, f"({kept})", description)))
        # a term with a stride of the address's own tensor (`out_ptr + ...` gets `pid_b * stride_ob`, which the
        # launch passes as `out.stride(0)`) goes before the same term on another tensor's address
        yield from (edit for _, _, edit in sorted(made, key=lambda m: (m[0], m[1])))


def _offset_texts(offsets: list[ast.expr], pids: set[str], strides: list[str], direct: list[str]) -> list[str]:
    """Terms to add to an address without a program id: another address's `pid * stride` term, its program-id
    side with each stride, or alone (a contiguous tensor's unit stride is not passed); a program id times each
    stride, or alone."""
    texts: list[str] = []
    for offset in offsets:
        pid_side = offset.left if names_in(offset.left) & pids else offset.right  # type: ignore[attr-defined]
        texts += [ast.unparse(offset)] + [f"{ast.unparse(pid_side)} * {s}" for s in strides]
        if isinstance(pid_side, ast.BinOp):
            texts.append(ast.unparse(pid_side))
    return texts + [f"{pid} * {s}" for pid in direct for s in strides] + list(direct)


def _coordinates(kernel: ast.FunctionDef, strides: list[str], pids: set[str]) -> dict[str, list[str]]:
    """For an index used along a stride together with a program-id term (`base + c * stride_c` where
    `base = n * stride_n + g * cpg * stride_c`: the channel is `g * cpg + c`), the terms it goes with: another
    tensor indexed by `c` alone (`w_ptr + c`) lacks them."""
    assigned = assignments(kernel)

    def expanded(expr: ast.expr, depth: int = 0) -> list[ast.expr]:
        out: list[ast.expr] = []
        for term in terms_of(expr):
            values = assigned.get(term.id, []) if isinstance(term, ast.Name) else []
            if depth < 2 and len(values) == 1 and isinstance(values[0].value, ast.BinOp):
                out += expanded(values[0].value, depth + 1)
            else:
                out.append(term)
        return out

    found: dict[str, list[str]] = {}
    for access in memory_accesses(kernel):
        along: dict[str, list[ast.expr]] = {}
        for term in expanded(access.args[0]):
            if (
                isinstance(term, ast.BinOp)
                and isinstance(term.op, ast.Mult)
                and isinstance(term.right, ast.Name)
                and term.right.id in strides
            ):
                along.setdefault(term.right.id, []).append(term.left)
        for parts in along.values():
            for index in parts:
                if not isinstance(index, ast.Name) or index.id in pids:
                    continue
                for other in parts:
                    text = ast.unparse(other)
                    if other is not index and names_in(other) & pids and text not in found.get(index.id, []):
                        found.setdefault(index.id, []).append(text)
    return found


def _lacking(kernel: ast.FunctionDef, indices: list[str], pointers: AbstractSet[str]) -> dict[int, list[str]]:
    """For the expressions feeding each memory access: the program indices every other pointer's accesses use and
    this access does not (V's address without the head `h` that Q's, K's and O's have)."""
    by_pointer: dict[str, list[tuple[ast.Call, set[str]]]] = {}
    for access in memory_accesses(kernel):
        fed = feeding(kernel, access.args[0])
        bases = [t.id for e in fed for t in terms_of(e) if isinstance(t, ast.Name) and t.id in pointers]
        if bases:
            by_pointer.setdefault(bases[-1], []).append((access, _pid_roots(kernel, access.args[0], indices)))
    found: dict[int, list[str]] = {}
    for pointer, accesses in by_pointer.items():
        others = [roots for p, group in by_pointer.items() if p != pointer for _, roots in group]
        if not others:
            continue
        common = set.intersection(*others)
        for access, roots in accesses:
            lacking = sorted(common - roots)
            if lacking:
                for expr in feeding(kernel, access.args[0]):
                    found.setdefault(id(expr), lacking)
    return found


def _pid_indices(kernel: ast.FunctionDef, pids: set[str], direct: list[str], pointers: AbstractSet[str]) -> list[str]:
    """The program ids and the scalar indices made from them (`b = pid_bh // H`, `h = pid_bh % H`), not the
    pointers and offsets built from them."""
    assigned = assignments(kernel)
    found = list(direct)
    for name in sorted(pids):
        if name in found:
            continue
        values = [a.value for a in assigned.get(name, [])]
        if values and all(not (names_in(v) & pointers) and "arange" not in ast.unparse(v) for v in values):
            found.append(name)
    return found


def _pid_roots(kernel: ast.FunctionDef, expr: ast.expr, direct: list[str]) -> set[str]:
    """The program ids (or indices made from them) an expression depends on, through the names assigned from
    them (not through loaded values); the first index met on each path counts."""
    return reached(kernel, expr, set(direct), through_loads=False)


def reached(kernel: ast.FunctionDef, expr: ast.expr, targets: set[str], *, through_loads: bool) -> set[str]:
    """The `targets` an expression uses, directly or through the names assigned before it (transitively),
    stopping at the first target on each path; `through_loads=False` does not follow a loaded value."""
    assigned = assignments(kernel)
    found: set[str] = set()
    seen: set[str] = set()
    stack = sorted(names_in(expr))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in targets:
            found.add(name)
            continue
        for a in assigned.get(name, []):
            if through_loads or "load(" not in ast.unparse(a.value):
                stack += sorted(names_in(a.value))
    return found


@operator("index-shift", "index-shift")
def index_shift(program: Program) -> Iterator[Edit]:
    """An address or offset `e + k` / `e - k` (small integer k) back to `e`."""
    for kernel in program.kernels:
        for expr in address_exprs(kernel):
            for node in ast.walk(expr):
                if (
                    isinstance(node, ast.BinOp)
                    and isinstance(node.op, ast.Add | ast.Sub)
                    and isinstance(node.right, ast.Constant)
                    and isinstance(node.right.value, int)
                    and 0 < node.right.value <= 2
                ):
                    new = ast.unparse(node.left)
                    yield edit_at(program, "index-shift", node, new, f"`{program.code(node)}` -> `{new}`")


def _broadcast_axis(node: ast.AST) -> int | None:
    """0 for `v[:, None]`, 1 for `v[None, :]`, None for anything else."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2):
        return None
    kinds = [
        "none" if isinstance(e, ast.Constant) and e.value is None else "slice" if isinstance(e, ast.Slice) else "?"
        for e in node.slice.elts
    ]
    return {("slice", "none"): 0, ("none", "slice"): 1}.get((kinds[0], kinds[1]))


def _reduced_axes(kernel: ast.FunctionDef) -> dict[str, set[int]]:
    """Names assigned a reduction of a 2-D block along one axis: they run along the other (`m = tl.max(s, axis=1)`
    has one value per row, so it broadcasts as `m[:, None]`). Wins over how the name is broadcast, which may be the
    bug."""
    found: dict[str, set[int]] = {}
    for name, assigns in assignments(kernel).items():
        for a in assigns:
            for call in ast.walk(a.value):
                if isinstance(call, ast.Call) and call_name(call) in REDUCTIONS:
                    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
                    if isinstance(axis, ast.Constant) and axis.value in (0, 1) and isinstance(axis.value, int):
                        found.setdefault(name, set()).add(1 - axis.value)
    return found


@operator("broadcast-swap", "broadcast-error")
def broadcast_swap(program: Program) -> Iterator[Edit]:
    """`x[:, None]` <-> `x[None, :]`: broadcasting along the other axis. Cued where a vector is broadcast along
    another axis than it runs along: a reduction's result along the axis it kept (`m[None, :]` for
    `m = tl.max(s, axis=1)`), a vector computed from an index along the axis the index runs along everywhere else
    (`shift[None, :]` for a `shift` loaded at `ch`, which the kernel's addresses use as `ch[:, None]`)."""
    for kernel in program.kernels:
        reduced = _reduced_axes(kernel)
        axes: dict[str, set[int]] = {}
        for node in ast.walk(kernel):
            axis = _broadcast_axis(node)
            if axis is not None and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                axes.setdefault(node.value.id, set()).add(axis)
        axes.update(reduced)
        for node in ast.walk(kernel):
            axis = _broadcast_axis(node)
            if axis is None or not isinstance(node, ast.Subscript):
                continue
            swapped = "[None, :]" if axis == 0 else "[:, None]"
            new = f"{ast.unparse(node.value)}{swapped}"
            edit = edit_at(program, "broadcast-swap", node, new, f"`{program.code(node)}` -> `{new}`")
            yield replace(edit, cue=_axis_cue(kernel, node.value, axis, axes, reduced))


def _axis_cue(
    kernel: ast.FunctionDef, vector: ast.expr, axis: int, axes: dict[str, set[int]], reduced: dict[str, set[int]]
) -> str:
    if not isinstance(vector, ast.Name):
        return ""
    name = vector.id
    if name in reduced:
        along, why = set(reduced[name]), f"`{name}` is a reduction that keeps axis"
    else:
        roots = reached(kernel, vector, set(axes) - {name}, through_loads=True)
        along = {a for root in roots for a in axes[root]}
        why = f"`{name}` comes from `{sorted(roots)[0]}`, which runs along axis" if roots else ""
    if len(along) == 1 and axis not in along:
        return f"{why} {along.pop()}, not {axis}"
    return ""


def _missing_pid_terms(expr: ast.expr, direct: list[str], strides: list[str]) -> list[str]:
    """`pid * stride` for program ids an address lacks while it has another one, with the strides of the same
    tensor (those sharing a name prefix with the strides it uses: `svb` -> `svh`; `stride_qb` -> `stride_qh`)."""
    used = names_in(expr)
    own = [s for s in strides if s in used]
    family = [
        s
        for s in strides
        if s not in used and any(s[:-1] == o[:-1] or s.rstrip("0123456789")[:-1] == o[:-1] for o in own)
    ]
    return [f"{pid} * {s}" for pid in direct if pid not in used for s in family]


def _enclosing_kernel(program: Program, node: ast.AST) -> ast.FunctionDef | None:
    line = getattr(node, "lineno", 0)
    return next((k for k in program.kernels if k.lineno <= line <= (k.end_lineno or k.lineno)), None)


@operator("pid-swap", "index-shift")
def pid_swap(program: Program) -> Iterator[Edit]:
    """A program id used where the kernel's other program id belongs (`pid_m * BLOCK_N` for the column block)."""
    for kernel in program.kernels:
        direct = [n for n, a in assignments(kernel).items() if any("program_id" in ast.unparse(x.value) for x in a)]
        if len(direct) < 2:
            continue
        for node in ast.walk(kernel):
            if isinstance(node, ast.Name) and node.id in direct and isinstance(node.ctx, ast.Load):
                for other in direct:
                    if other != node.id:
                        yield edit_at(
                            program, "pid-swap", node, other, f"`{node.id}` -> `{other}` (line {node.lineno})"
                        )


@operator("floor-mod", "broadcast-error")
def floor_mod(program: Program) -> Iterator[Edit]:
    """`i // n` and `i % n` exchanged in a kernel (the row index taken for the column, or back)."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod):
            op = "%" if isinstance(node.op, ast.FloorDiv) else "//"
            new = f"{ast.unparse(node.left)} {op} {ast.unparse(node.right)}"
            yield edit_at(program, "floor-mod", node, new, f"`{program.code(node)}` -> `{new}`")


def _loads(kernel: ast.FunctionDef) -> list[ast.Call]:
    return [n for n in ast.walk(kernel) if isinstance(n, ast.Call) and call_name(n) == "tl.load" and n.args]


@operator("sibling-offset", "index-shift")
def sibling_offset(program: Program) -> Iterator[Edit]:
    """Two loads of one address: one of them offset by a scalar parameter of the kernel (the second half of a
    row, the next tensor packed after the first)."""
    for kernel in program.kernels:
        by_address: dict[str, list[ast.Call]] = {}
        for load in _loads(kernel):
            by_address.setdefault(ast.unparse(load.args[0]), []).append(load)
        for address, loads in by_address.items():
            if len(loads) < 2:
                continue
            cue = f"two loads read the same address `{address}`"
            for load in loads:
                for scalar in program.scalars(kernel):
                    new = f"{program.code(load.args[0])} + {scalar}"
                    edit = edit_at(program, "sibling-offset", load.args[0], new, f"`{address}` -> `{new}`")
                    yield replace(edit, cue=cue)


def _loop_var(loop: ast.For) -> str | None:
    return loop.target.id if isinstance(loop.target, ast.Name) else None


def _arange_names(kernel: ast.FunctionDef) -> set[str]:
    return {n for n, a in assignments(kernel).items() if any("arange" in ast.unparse(x.value) for x in a)}


@operator("loop-offset", "index-shift")
def loop_offset(program: Program) -> Iterator[Edit]:
    """A value inside a loop that ignores the loop's variable given it: a load whose address does not use it
    (every tap reads the same input), or an `argmax`/`argmin` taken in a chunk and not offset by the chunk start."""
    for kernel in program.kernels:
        ranges = _arange_names(kernel)
        for loop in (n for n in ast.walk(kernel) if isinstance(n, ast.For)):
            var = _loop_var(loop)
            if var is None:
                continue
            for node in (n for s in loop.body for n in ast.walk(s)):
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and "tl.arange" in ast.unparse(node.value)
                    and not reached(kernel, node.value, {var}, through_loads=True)
                ):  # an index made in the loop without the loop's offset (`cols = tl.arange(0, B)` for `off + ...`)
                    new = f"{var} + {program.code(node.value)}"
                    cue = f"`{node.targets[0].id}` is made in the loop over `{var}` without it"
                    edit = edit_at(program, "loop-offset", node.value, new, f"`{program.code(node.value)}` -> `{new}`")
                    yield replace(edit, cue=cue)
                if isinstance(node, ast.Call) and call_name(node) == "tl.load" and node.args:
                    address = node.args[0]
                    if reached(kernel, address, {var}, through_loads=True):
                        continue
                    cue = f"the load `{program.code(address)}` does not change with the loop's `{var}`"
                    for index in (n for n in ast.walk(address) if _is_index(n, ranges)):
                        new = f"({program.code(index)} + {var})"
                        edit = edit_at(program, "loop-offset", index, new, f"`{program.code(index)}` -> `{new}`")
                        yield replace(edit, cue=cue)
                if isinstance(node, ast.Call) and call_name(node, last=True) in ("argmax", "argmin"):
                    new = f"({program.code(node)} + {var})"
                    yield edit_at(program, "loop-offset", node, new, f"`{program.code(node)}` -> `{new}`")


def _is_index(node: ast.AST, ranges: set[str]) -> bool:
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id in ranges
    return isinstance(node, ast.Name) and node.id in ranges


@operator("index-scalar", "wrong-stride")
def index_scalar(program: Program) -> Iterator[Edit]:
    """A scalar or block-size parameter scaling an index replaced by another (`o * kernel_size` for `o * stride`):
    the factors of products in the kernel's index arithmetic."""
    for kernel in program.kernels:
        names = [*program.scalars(kernel), *constexprs_of(kernel)]
        ranges = _arange_names(kernel)
        indexed = {id(n) for e in address_exprs(kernel) for n in ast.walk(e)}
        for name, assigns in assignments(kernel).items():
            if name in ranges:
                indexed |= {id(n) for a in assigns for n in ast.walk(a.value)}
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and id(node) in indexed):
                continue
            for side in (node.left, node.right):
                if isinstance(side, ast.Name) and side.id in names:
                    for other in names:
                        if other != side.id:
                            description = f"`{program.code(node)}`: `{side.id}` -> `{other}`"
                            yield edit_at(program, "index-scalar", side, other, description)


@operator("block-scale", "uninitialized-output")
def block_scale(program: Program) -> Iterator[Edit]:
    """A program id used unscaled as the start of a block of indices (`pid + tl.arange(0, B)`) multiplied by a
    block size: the programs' blocks overlap otherwise and part of the output is never written."""
    for kernel in program.kernels:
        direct = [n for n, a in assignments(kernel).items() if any("program_id" in ast.unparse(x.value) for x in a)]
        blocks = constexprs_of(kernel)
        for assigns in assignments(kernel).values():
            for a in assigns:
                if "arange" not in ast.unparse(a.value):
                    continue
                for term in terms_of(a.value):
                    if isinstance(term, ast.Name) and term.id in direct:
                        for block in blocks:
                            new = f"{term.id} * {block}"
                            yield edit_at(
                                program, "block-scale", term, new, f"`{term.id}` -> `{new}` (line {term.lineno})"
                            )


@operator("index-divide", "broadcast-error")
def index_divide(program: Program) -> Iterator[Edit]:
    """A flat index reduced modulo a size without dividing out the dimensions inside it: `i % C` -> `(i // L) % C`
    (the channel of element i of a (B, C, L) tensor), for the kernel's other scalar and block-size parameters."""
    for kernel in program.kernels:
        counts = [*program.scalars(kernel), *constexprs_of(kernel)]
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
                continue
            if isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.FloorDiv):
                continue
            modulus = program.code(node.right)
            for inner in counts:
                if inner == modulus:
                    continue
                new = f"({_group(program, node.left)} // {inner}) % {_group(program, node.right)}"
                yield edit_at(program, "index-divide", node, new, f"`{program.code(node)}` -> `{new}`")


def _group(program: Program, node: ast.expr) -> str:
    text = program.code(node)
    return f"({text})" if isinstance(node, ast.BinOp) else text


@operator("named-index", "index-shift")
def named_index(program: Program) -> Iterator[Edit]:
    """An index written raw where the kernel has a name for the whole of it: `tl.arange(0, BLOCK)` (or `rk`) in an
    address, where `offs = start + tl.arange(0, BLOCK)` (`kk = k + rk`) is defined before it (the start left out)."""
    for kernel in program.kernels:
        wholes: list[tuple[str, int, set[str]]] = []
        ranges = _arange_names(kernel)
        for name, assigns in assignments(kernel).items():
            if len(assigns) != 1:
                continue
            value = assigns[0].value
            if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)) or "load(" in ast.unparse(value):
                continue  # an index is a start plus a range: not a mask, a loaded block or a product
            parts = {
                ast.unparse(t)
                for t in terms_of(value)
                if (isinstance(t, ast.Call | ast.BinOp) and "arange" in ast.unparse(t))
                or (isinstance(t, ast.Name) and t.id in ranges and t.id != name)
            }
            if parts:
                wholes.append((name, assigns[0].lineno, parts))
        sites = [*address_exprs(kernel)]
        sites += [  # a position used in a computed value (a running count `offs + 1` for `cols + 1`)
            a.value for a in ast.walk(kernel) if isinstance(a, ast.Assign) and "load(" not in ast.unparse(a.value)
        ]
        seen: set[int] = set()
        for expr in sites:
            for node in ast.walk(expr):
                if id(node) in seen or not isinstance(node, ast.Call | ast.BinOp | ast.Name):
                    continue
                seen.add(id(node))
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    continue
                text = ast.unparse(node)
                for name, line, parts in wholes:
                    if text in parts and node.lineno > line:
                        edit = edit_at(program, "named-index", node, name, f"`{program.code(node)}` -> `{name}`")
                        yield replace(edit, cue=f"`{name}` (line {line}) is `{text}` plus a start")


@operator("index-factor", "index-shift")
def index_factor(program: Program) -> Iterator[Edit]:
    """A scalar index scaled by what it steps over: `g * sxc` -> `g * group_size * sxc` in an address (the group's
    first channel), `oh + kh` -> `oh * 2 + kh` in an index (a window of stride 2); by the kernel's scalar and
    block-size parameters, and 2."""
    for kernel in program.kernels:
        factors = [*program.scalars(kernel), *constexprs_of(kernel), "2"]
        for node, index in _scaled_sites(program, kernel):
            for factor in factors:
                if factor != index.id:
                    new = f"{index.id} * {factor}"
                    description = f"`{program.code(node)}`: `{index.id}` -> `{new}`"
                    yield edit_at(program, "index-factor", index, new, description)


def _scaled_sites(program: Program, kernel: ast.FunctionDef) -> Iterator[tuple[ast.BinOp, ast.Name]]:
    """(node, index): a scalar index times a stride, or an index (a block of them too) as a term of an index sum."""
    positions = program_id_names(kernel) | {
        n.target.id for n in ast.walk(kernel) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
    }
    positions |= {n for n, a in assignments(kernel).items() if len(a) == 1 and _scalar_index(a[0].value, positions)}
    strides = set(program.strides(kernel))
    blocks = _arange_names(kernel)

    def position(node: ast.expr, vectors: bool = False) -> bool:
        return isinstance(node, ast.Name) and (node.id in positions or (vectors and node.id in blocks))

    for node in ast.walk(kernel):
        if not isinstance(node, ast.BinOp):
            continue
        if isinstance(node.op, ast.Mult):
            for index, stride in ((node.left, node.right), (node.right, node.left)):
                if position(index) and isinstance(stride, ast.Name) and stride.id in strides:
                    yield node, index  # type: ignore[misc]
        elif isinstance(node.op, ast.Add) and _in_index(node, kernel):
            for side in (node.left, node.right):
                if position(side, vectors=True):
                    yield node, side  # type: ignore[misc]


def _scalar_index(value: ast.expr, pids: set[str]) -> bool:
    """An index made from program ids or loop variables by integer arithmetic (`oh = pid % OH`), not a block."""
    text = ast.unparse(value)
    return bool(names_in(value) & pids) and "arange" not in text and "load(" not in text


def _in_index(node: ast.BinOp, kernel: ast.FunctionDef) -> bool:
    """A sum that is an index: assigned to a name used in an address, or inside an address."""
    addresses = address_exprs(kernel)
    inside = {id(n) for e in addresses for n in ast.walk(e)}
    if id(node) in inside:
        return True
    used = {n for e in addresses for n in names_in(e)}
    return any(
        a.value is node and a.targets[0].id in used
        for a in ast.walk(kernel)
        if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
    )
