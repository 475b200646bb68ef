"""Indexing: missing offsets (a batch's, a head's), shifted indices, indices of the wrong program axis.

The bug kind's cues, recipes, edits, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: index-shift, missing-batch-offset.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import (
    Kernel,
    assigned_names,
    calls_in,
    constant_value,
    constexprs_of,
    expand,
    gathered_indices,
    names_in,
    polynomial,
    statements,
)
from kope.bugs.cue import Source, _kernel_loops, _kernels, cue
from kope.bugs.edit import (
    STORING,
    Edit,
    Program,
    address_exprs,
    arange_names,
    assignments,
    config_tables,
    edit_at,
    feeding,
    memory_accesses,
    operator,
    pointers_of,
    program_id_names,
    reached,
    site_arguments,
    slice_text,
    terms_of,
)
from kope.bugs.mutation import Context, Mutation, binary, cst_calls_in, cst_names_in, mutation
from kope.bugs.recipe import _analysed, _cue_nodes, _expr, _hit_lines, _LineTransformer, _names, _rewrite, parse, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue("unused-program-id", "a program id is read but never used: that grid axis selects nothing")
def unused_program_id(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = kernel.used_names()
        for stmt in statements(kernel.node.body):
            if isinstance(stmt, ast.Assign) and any(True for _ in calls_in(stmt.value, "program_id")):
                for name in assigned_names(stmt):
                    if name not in used:
                        yield stmt


@cue(
    "offset-literal-shift",
    "a literal +1 or -1 added to an index (block offsets, gathered indices) in a load or store address",
)
def offset_literal_shift(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        indices = kernel.aranges | gathered_indices(kernel)
        addresses = {ast.unparse(c.args[0]) for c in calls_in(kernel.node, "load", "store") if c.args}
        for call in calls_in(kernel.node, "load", "store"):
            pointer = call.args[0] if call.args else None
            for root in expand(pointer, kernel, depth=2):
                for node in ast.walk(root):
                    if (
                        isinstance(node, ast.BinOp)
                        and isinstance(node.op, ast.Add | ast.Sub)
                        and constant_value(node.right) in (1.0, -1.0)
                        and names_in(node.left) & indices
                        and not _interleaved(node.left)
                        and not (root is pointer and _without(pointer, node) in addresses)
                    ):
                        yield call
                        break


def _interleaved(node: ast.AST) -> bool:
    """`i * 2 + 1`: an odd element of interleaved pairs, not a shift."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (constant_value(node.right) or 0) >= 2


def _without(pointer: ast.expr, shift: ast.BinOp) -> str:
    """The address text with `e + 1` replaced by `e`: when the kernel also accesses that address,
    the +1 reads a deliberate neighbour (start/end pairs, stencils)."""
    return ast.unparse(_drop_node(pointer, shift))


def _drop_node(pointer: ast.expr, shift: ast.BinOp) -> ast.expr:
    if pointer is shift:
        return shift.left
    if isinstance(pointer, ast.BinOp):
        return ast.BinOp(left=_drop_node(pointer.left, shift), op=pointer.op, right=_drop_node(pointer.right, shift))
    if isinstance(pointer, ast.Subscript):
        return ast.Subscript(value=_drop_node(pointer.value, shift), slice=pointer.slice, ctx=pointer.ctx)
    return pointer


@cue(
    "block-relative-index",
    "inside a loop over blocks, a position is recorded from tl.arange alone, without the block start",
)
def block_relative_index(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            if not isinstance(loop.target, ast.Name):
                continue
            start = loop.target.id
            relative = {n for n in kernel.aranges if start not in _depends(kernel, n)}
            absolute = {
                name
                for stmt in statements(loop.body)
                for name in assigned_names(stmt)
                if isinstance(stmt, ast.Assign) and start in names_in(stmt.value) and names_in(stmt.value) & relative
            }
            if not absolute:
                continue
            for call in calls_in(loop, "where"):
                for value in call.args[1:3]:
                    if isinstance(value, ast.Name) and value.id in relative:
                        yield call


def _depends(kernel: Kernel, name: str) -> set[str]:
    """Every name the values of `name` are computed from, transitively."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for value in kernel.assigns.get(current, []):
            for used in names_in(value) - found:
                found.add(used)
                frontier.append(used)
    return found


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _DropShift(_LineTransformer):
    """On the given lines, `expr + 1` / `expr - 1` over block offsets -> `expr`."""

    def __init__(self, lines: set[int], offsets: set[str]) -> None:
        super().__init__()
        self.lines, self.offsets = lines, offsets

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if self.line(original_node) not in self.lines or self.changed:
            return updated_node
        if isinstance(updated_node.operator, cst.Add | cst.Subtract) and m.matches(updated_node.right, m.Integer("1")):
            left_names = _names(updated_node.left)
            if left_names & self.offsets:
                self.changed = True
                left = updated_node.left
                atomic = isinstance(left, cst.Name | cst.Subscript | cst.Call | cst.Attribute)
                return (
                    left.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
                    if updated_node.lpar and not atomic
                    else left
                )
        return updated_node


@recipe(
    "remove-index-shift",
    "drop a stray +1/-1 from block-offset addresses; record start + lane instead of the block-relative lane",
)
def remove_index_shift(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in parsed.kernels:
        kernel = parsed.dataflow.kernel_of(node)
        if kernel is None:
            continue
        for call in calls_in(node, "load", "store"):
            if call.lineno not in _hit_lines(source, "offset-literal-shift"):
                continue
            lines = {getattr(p, "lineno", -1) for p in expand(call.args[0] if call.args else None, kernel, depth=2)}
            for line in sorted(lines):
                edited = _rewrite(source, _DropShift({line}, kernel.aranges | gathered_indices(kernel)))
                if edited is not None:
                    yield edited
    for where in _cue_nodes(parsed, "block-relative-index"):
        assert isinstance(where, ast.Call)
        kernel = next((k for k in parsed.dataflow.kernels.values() if any(w is where for w in ast.walk(k.node))), None)
        if kernel is None:
            continue
        for relative in [a.id for a in where.args[1:3] if isinstance(a, ast.Name) and a.id in kernel.aranges]:
            for name, values in kernel.assigns.items():
                if any(
                    isinstance(v, ast.BinOp)
                    and isinstance(v.op, ast.Add)
                    and relative in names_in(v)
                    and len(names_in(v)) == 2
                    for v in values
                ):
                    edited = _rewrite(source, _RenameArgs(where.lineno, relative, name))
                    if edited is not None:
                        yield edited


class _RenameArgs(_LineTransformer):
    """In the tl.where call at a line, the value argument `old` -> `new`."""

    def __init__(self, line: int, old: str, new: str) -> None:
        super().__init__()
        self.target, self.old, self.new = line, old, new

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if call_name(updated_node, last=True) != "where" or self.line(original_node) != self.target:
            return updated_node
        args = list(updated_node.args)
        for i in (1, 2):
            if i < len(args) and m.matches(args[i].value, m.Name(self.old)):
                args[i] = args[i].with_changes(value=cst.Name(self.new))
                self.changed = True
        return updated_node.with_changes(args=args)


class _OffsetBase(_LineTransformer):
    """At a line, the pointer parameter `ptr` -> `ptr + index * stride`."""

    def __init__(self, line: int, ptr: str, index: str, stride: str) -> None:
        super().__init__()
        self.target, self.ptr, self.index, self.stride = line, ptr, index, stride

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value == self.ptr and self.line(original_node) == self.target and not self.changed:
            self.changed = True
            return _expr(f"({self.ptr} + {self.index} * {self.stride})")
        return updated_node


class _Unparen(cst.CSTTransformer):
    """`(p + i * s) + rest` -> `p + i * s + rest` (the parentheses the edit added, where redundant)."""

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        left = updated_node.left
        if (
            isinstance(updated_node.operator, cst.Add)
            and isinstance(left, cst.BinaryOperation)
            and isinstance(left.operator, cst.Add)
        ):
            return updated_node.with_changes(left=left.with_changes(lpar=[], rpar=[]))
        return updated_node


class _DropOuterParens(cst.CSTTransformer):
    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        value = updated_node.value
        if isinstance(value, cst.BinaryOperation) and value.lpar:
            return updated_node.with_changes(value=value.with_changes(lpar=[], rpar=[]))
        return updated_node


@recipe(
    "add-batch-offset",
    "offset a base pointer by its batch (or head) index times the stride the kernel receives but never uses",
)
def add_batch_offset(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for arg in _cue_nodes(parsed, "unused-stride-param"):
        assert isinstance(arg, ast.arg)
        kernel = next((k for k in parsed.dataflow.kernels.values() if arg in k.node.args.args), None)
        if kernel is None:
            continue
        prefixes = sorted((p[:-4] for p in kernel.params if p.endswith("_ptr")), key=len, reverse=True)
        rest = arg.arg[len("stride_") :]
        prefix = next((p for p in prefixes if rest.startswith(p)), None)
        if prefix is None:
            continue
        dim = rest[len(prefix) :]
        partners = [f"stride_{p}{dim}" for p in prefixes if p != prefix and f"stride_{p}{dim}" in kernel.params]
        indices = _multipliers(kernel, partners)
        first = _first_use(kernel, f"{prefix}_ptr")
        if first is None:
            continue
        for index in indices[:2]:
            edited = _rewrite(source, _OffsetBase(first, f"{prefix}_ptr", index, arg.arg))
            if edited is not None:
                yield parse(edited).visit(_Unparen()).visit(_DropOuterParens()).code


def _multipliers(kernel: Kernel, strides: list[str]) -> list[str]:
    """What the partner strides are multiplied by (`b` in `b * stride_qb`)."""
    found: list[str] = []
    for node in ast.walk(kernel.node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(side, ast.Name) and side.id in strides:
                    found.append(ast.unparse(other))
    return list(dict.fromkeys(found))


def _first_use(kernel: Kernel, name: str) -> int | None:
    lines = [
        n.lineno
        for n in ast.walk(kernel.node)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    return min(lines) if lines else None


# -- the search's edits (repair operators) -----------------------------------------------------


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


@operator("loop-offset", "index-shift")
def loop_offset(program: Program) -> Iterator[Edit]:
    """A value inside a loop that ignores the loop's variable given it: a load whose address does not use it
    (every tap reads the same input), or an `argmax`/`argmin` taken in a chunk and not offset by the chunk start."""
    for kernel in program.kernels:
        ranges = arange_names(kernel)
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
        ranges = arange_names(kernel)
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


@operator("named-index", "index-shift")
def named_index(program: Program) -> Iterator[Edit]:
    """An index written raw where the kernel has a name for the whole of it: `tl.arange(0, BLOCK)` (or `rk`) in an
    address, where `offs = start + tl.arange(0, BLOCK)` (`kk = k + rk`) is defined before it (the start left out)."""
    for kernel in program.kernels:
        wholes: list[tuple[str, int, set[str]]] = []
        ranges = arange_names(kernel)
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
    blocks = arange_names(kernel)

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


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class ShiftIndex(Mutation):
    name = "shift-index"
    label = "index-shift"
    summary = "a load reads one element further: tl.load(p + offs + 1, ...)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) == "tl.load":
            assert isinstance(node, cst.Call)
            args = list(node.args)
            if args and args[0].keyword is None:
                args[0] = args[0].with_changes(value=binary(args[0].value, cst.Add(), cst.Integer("1")))
                return [node.with_changes(args=args)]
        return []


@mutation
class DropRowOffset(Mutation):
    name = "drop-row-offset"
    label = "missing-batch-offset"
    summary = "a base pointer omits its row (or batch) offset: x_ptr instead of x_ptr + row * stride"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        facts = context.kernel
        if facts is None or not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
            return []
        if not facts.program_ids:
            return []

        def is_offset(term: cst.BaseExpression) -> bool:
            if isinstance(term, cst.Name):
                return term.value in facts.program_ids
            if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply):
                names = cst_names_in(term)
                return bool(names & facts.program_ids) and "tl.arange" not in cst_calls_in(term)
            return False

        pointer_names = facts.pointers | {n for n in facts.params if n.endswith("ptr")}
        if cst_names_in(node.left) & pointer_names and is_offset(node.right):
            return [node.left.with_changes(lpar=node.lpar, rpar=node.rpar) if node.lpar else node.left]
        return []


# -- a flat index decoded into coordinates -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Decoded:
    """A value of the form `(root // (d1 * d2 ...)) % size` (`size` None: no modulo), sizes as written."""

    root: str
    divisors: tuple[str, ...]
    size: str | None


def _factors(node: ast.expr) -> tuple[str, ...]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return (ast.unparse(node),)


def _decoded(node: ast.expr, env: dict[str, _Decoded]) -> _Decoded | None:
    """What an expression of `//` and `%` over one name is, through the decodes bound before it; None otherwise."""
    if isinstance(node, ast.Name):
        return env.get(node.id, _Decoded(node.id, (), None))
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod)):
        return None
    inner = _decoded(node.left, env)
    if inner is None or inner.size is not None:
        return None
    if isinstance(node.op, ast.FloorDiv):
        return _Decoded(inner.root, inner.divisors + _factors(node.right), None)
    if not isinstance(node.right, ast.Name | ast.Constant):
        return None
    return _Decoded(inner.root, inner.divisors, ast.unparse(node.right))


def _bound_by(stmt: ast.stmt) -> list[str]:
    """The names a statement binds (a loop: its target's)."""
    if isinstance(stmt, ast.For):
        return [n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)]
    return assigned_names(stmt)


def _decodes(kernel: ast.FunctionDef) -> dict[str, list[tuple[ast.Assign, _Decoded]]]:
    """The coordinates decoded from each flat index, by root: names bound once, to a value with a `//` or a `%`."""
    env: dict[str, _Decoded] = {}
    counts: dict[str, int] = {}
    bound: list[tuple[str, ast.Assign, _Decoded]] = []
    for stmt in statements(kernel.body):
        targets = _bound_by(stmt)
        for name in targets:
            counts[name] = counts.get(name, 0) + 1
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            for name in targets:
                env.pop(name, None)
            continue
        name = stmt.targets[0].id
        value = _decoded(stmt.value, env)
        if value is None or value.root == name or not (value.divisors or value.size):
            env.pop(name, None)
            continue
        env[name] = value
        bound.append((name, stmt, value))
    found: dict[str, list[tuple[ast.Assign, _Decoded]]] = {}
    for name, stmt, value in bound:
        if counts[name] == 1 and counts.get(value.root, 0) <= 1:
            found.setdefault(value.root, []).append((stmt, value))
    return found


def _canonical(coordinates: list[tuple[ast.Assign, _Decoded]]) -> list[tuple[ast.Assign, _Decoded]] | None:
    """The coordinates in mixed-radix order (innermost first, by how much each divides out) with the divisors that
    order gives each; None where they are not the coordinates of one decode (two of one size, ties, foreign
    divisors, more than one without a modulo)."""
    modded = sorted((c for c in coordinates if c[1].size is not None), key=lambda c: len(c[1].divisors))
    outer = [c for c in coordinates if c[1].size is None]
    sizes = [value.size for _, value in modded]
    if len(modded) < 2 or len(outer) > 1 or len(set(sizes)) != len(sizes):
        return None
    depths = [len(value.divisors) for _, value in modded]
    if len(set(depths)) != len(depths) or (outer and len(outer[0][1].divisors) < depths[-1]):
        return None
    if any(not set(value.divisors) <= set(sizes) for _, value in coordinates):
        return None
    if not all(t.isidentifier() for _, value in coordinates for t in (*value.divisors, value.size or "_")):
        return None  # sizes written as numbers (`x // 10240 % 32`): a number may be several sizes' product
    ordered = [str(size) for size in sizes]
    made = [(stmt, _Decoded(value.root, tuple(ordered[:i]), value.size)) for i, (stmt, value) in enumerate(modded)]
    for stmt, value in outer:  # the dimensions outside some of the sizes, taken together, are a coordinate too
        prefixes = [sorted(ordered[:j]) for j in range(1, len(ordered) + 1)]
        kept = sorted(value.divisors) in prefixes
        made.append((stmt, value if kept else _Decoded(value.root, tuple(ordered), None)))
    return made


def _decode_text(value: _Decoded) -> str:
    divided = value.root
    if value.divisors:
        divisor = value.divisors[0] if len(value.divisors) == 1 else f"({' * '.join(value.divisors)})"
        divided = f"{value.root} // {divisor}"
    if value.size is None:
        return divided
    return f"({divided}) % {value.size}" if value.divisors else f"{divided} % {value.size}"


@operator("index-decode", "index-shift")
def index_decode(program: Program) -> Iterator[Edit]:
    """A flat index decoded into coordinates whose divisors do not make one mixed-radix decode (`kh = (k // (kH *
    kW)) % kH` beside `kw = k % kW`: the coordinate just outside `kW` divided by `kW` alone): each coordinate's
    divisor made the product of the sizes inside it, ordered by how much each divides out; one edit per decode.
    Grounded where a coordinate divides by its own size or by one size twice (no decode order does that)."""
    for kernel in program.kernels:
        for coordinates in _decodes(kernel).values():
            made = _canonical(coordinates)
            if made is None:
                continue
            old = {id(stmt): value for stmt, value in coordinates}
            changes: list[tuple[ast.expr, str]] = [
                (stmt.value, _decode_text(value))
                for stmt, value in made
                if sorted(old[id(stmt)].divisors) != sorted(value.divisors)
            ]
            if not changes:
                continue
            grounded = any(len(set(v.divisors)) != len(v.divisors) or (v.size in v.divisors) for v in old.values())
            first = min(changes, key=lambda c: c[0].lineno)
            yield Edit(
                "index-decode",
                "index-shift",
                first[0].lineno,
                f"decode `{made[0][1].root}` in one order: {', '.join(t for _, t in changes)}",
                program.replace_all([(node, text) for node, text in changes]),
                "coordinates of one flat index whose divisors are not the sizes inside them",
                grounded=grounded,
            )


def _remainder_splits(kernel: ast.FunctionDef) -> dict[str, tuple[str, set[str]]]:
    """Remainders split by one size (`r = k % (Kh * Kw)`, then `kh = r // Kw`), by name: the size and the names
    the quotients are bound to. Names bound once; a remainder divided by more than one size is left."""
    counts: dict[str, int] = {}
    remainders: set[str] = set()
    splits: dict[str, set[str]] = {}
    quotients: dict[str, set[str]] = {}
    for stmt in statements(kernel.body):
        targets = _bound_by(stmt)
        for name in targets:
            counts[name] = counts.get(name, 0) + 1
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod):
            remainders.add(stmt.targets[0].id)
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv) and isinstance(value.left, ast.Name):
            splits.setdefault(value.left.id, set()).add(ast.unparse(value.right))
            quotients.setdefault(value.left.id, set()).add(stmt.targets[0].id)
    return {
        name: (next(iter(sizes)), quotients[name])
        for name, sizes in splits.items()
        if name in remainders and counts.get(name) == 1 and len(sizes) == 1
    }


def _read_together(kernel: ast.FunctionDef, one: str, others: set[str]) -> bool:
    """Whether a statement of the kernel reads `one` and one of `others` in one value (`x + kh * sh + kw * sw`)."""
    for stmt in statements(kernel.body):
        value = getattr(stmt, "value", None)
        if not isinstance(value, ast.expr):
            continue
        read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        if one in read and read & others:
            return True
    return False


@operator("remainder-coordinate", "index-shift")
def remainder_coordinate(program: Program) -> Iterator[Edit]:
    """A remainder split by a size into the coordinate outside it (`kh = rem // Kw`) and also taken whole as another
    coordinate (`kw = rem`, with `rem = k % (Kh * Kw)`): the whole remainder runs past that size, so the coordinate
    inside it is `rem % Kw`. Offered where the whole is bound to a name of its own (read whole in an address, a
    remainder is often the flat offset it should be); grounded where that name and the quotient's are read in one
    value (an address of both coordinates counts the part of `rem` past `Kw` twice)."""
    for kernel in program.kernels:
        splits = _remainder_splits(kernel)
        for stmt in statements(kernel.body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            if not (isinstance(stmt.value, ast.Name) and stmt.value.id in splits):
                continue
            name, (size, quotients) = stmt.value.id, splits[stmt.value.id]
            divisor = size if size.isidentifier() or size.isdigit() else f"({size})"
            yield Edit(
                "remainder-coordinate",
                "index-shift",
                stmt.lineno,
                f"`{stmt.targets[0].id} = {name}` beside `{name} // {divisor}`: `{name} % {divisor}`",
                program.replace(stmt.value, f"{name} % {divisor}"),
                "a remainder taken whole as a coordinate beside the coordinate that divides it",
                grounded=_read_together(kernel, stmt.targets[0].id, quotients),
            )


# -- a coordinate an address leaves out --------------------------------------------------------------

_Monomial = tuple[str, ...]


def _address_locals(kernel: ast.FunctionDef) -> dict[str, ast.expr]:
    """Names bound once to a sum or product and read only to build addresses (in a load's or store's pointer, or
    in another such name's value): `base = ((n * C + c) * H + h) * W`, the temporaries of an address."""
    single = {
        n: a[0].value
        for n, a in assignments(kernel).items()
        if len(a) == 1
        and isinstance(a[0].value, ast.BinOp)
        and not any(isinstance(o, ast.Sub | ast.USub) for o in ast.walk(a[0].value))
    }
    pointer_reads = [n for access in memory_accesses(kernel) for n in ast.walk(access.args[0])]
    kept: dict[str, ast.expr] = dict(single)
    while True:
        allowed = {id(n) for n in pointer_reads} | {id(n) for v in kept.values() for n in ast.walk(v)}
        dropped = {
            node.id
            for node in ast.walk(kernel)
            if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in kept
            and id(node) not in allowed
        }
        if not dropped:
            return kept
        kept = {n: v for n, v in kept.items() if n not in dropped}


def _size_names(program: Program, kernel: ast.FunctionDef) -> tuple[set[str], dict[str, ast.expr]]:
    """The kernel's sizes (scalar parameters, and names bound once to values of them alone) and, of those names, the
    ones bound to a product (written out, so that `HW = H * W` and `H * W` are one stride)."""
    sizes = set(program.scalars(kernel))
    products: dict[str, ast.expr] = {}
    single = {n: a[0].value for n, a in assignments(kernel).items() if len(a) == 1}
    grown = True
    while grown:
        grown = False
        for name, value in single.items():
            read = names_in(value)
            if name not in sizes and read and read <= sizes and not list(calls_in(value)):
                sizes.add(name)
                grown = True
                if _is_product(value):
                    products[name] = value
    return sizes, products


def _is_product(value: ast.expr) -> bool:
    """Whether an expression is names multiplied (`H * W`)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return _is_product(value.left) and _is_product(value.right)
    return isinstance(value, ast.Name)


def _bounds(kernel: ast.FunctionDef) -> dict[str, set[str]]:
    """The sizes each name is bounded by: compared below them (`c < C`), a remainder of them (`c = i % C`), or the
    index of a loop over them (`for c in range(C)`)."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, op, right = node.left, node.ops[0], node.comparators[0]
            if isinstance(op, ast.Gt | ast.GtE):
                left, right = right, left
            elif not isinstance(op, ast.Lt | ast.LtE):
                continue
            if isinstance(left, ast.Name) and isinstance(right, ast.Name):
                found.setdefault(left.id, set()).add(right.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod) and isinstance(value.right, ast.Name):
                found.setdefault(node.targets[0].id, set()).add(value.right.id)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call):
            args = node.iter.args
            if call_name(node.iter).endswith("range") and len(args) == 1 and isinstance(args[0], ast.Name):
                found.setdefault(node.target.id, set()).add(args[0].id)
    return found


def _defined_before(kernel: ast.FunctionDef, name: str, access: ast.Call) -> bool:
    """Whether `name` is bound once at the kernel's top level before `access`, or is the index of a loop around it."""
    for stmt in kernel.body:
        if stmt.lineno >= access.lineno:
            break
        if name in _bound_by(stmt) and isinstance(stmt, ast.Assign):
            return len(assignments(kernel).get(name, [])) == 1
    return any(
        isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
        and any(inner is access for inner in ast.walk(node))
        for node in ast.walk(kernel)
    )


def _size_monomial(name: str, products: dict[str, ast.expr]) -> _Monomial | None:
    """A size as the sizes it multiplies (`HW` bound to `H * W`: `(H, W)`)."""
    found = polynomial(ast.Name(id=name), products, atoms=True, limit=16)
    return next(iter(found)) if found and len(found) == 1 and next(iter(found.values())) == 1 else None


def _decoded_from(kernel: ast.FunctionDef, name: str, coordinates: set[str]) -> bool:
    """Whether a coordinate is computed from one of `coordinates` (`h = (s // W) % H` from `s`)."""
    return any(reached(kernel, a.value, coordinates, through_loads=False) for a in assignments(kernel).get(name, []))


def _read_through(expr: ast.expr, inline: dict[str, ast.expr]) -> set[str]:
    """The names an expression reads, and those the values of its `inline` names read (transitively)."""
    read: set[str] = set()
    stack: list[ast.expr] = [expr]
    while stack:
        for node in ast.walk(stack.pop()):
            if isinstance(node, ast.Name) and node.id not in read:
                read.add(node.id)
                if node.id in inline:
                    stack.append(inline[node.id])
    return read


def _stride_gaps(terms: dict[str, _Monomial], extents: dict[str, set[_Monomial]]) -> list[tuple[_Monomial, list[str]]]:
    """The coordinates' strides as one chain, innermost first (`1`, `W`, `C * H * W`: each the one before times
    sizes), and the steps of it that skip a size or more (`W` to `C * H * W`: the stride after the step and the sizes
    skipped); [] where the strides are no chain. A step is no gap where the coordinate before it is bounded by the
    sizes it steps over (a flat index `s < D * H * W` under a stride `D * H * W`)."""
    strides = sorted(terms.items(), key=lambda item: len(item[1]))
    if len({s for _, s in strides}) != len(strides) or len(strides) < 2 or strides[0][1] != ():
        return []
    gaps = []
    for (coordinate, inner), (_, outer) in itertools.pairwise(strides):
        rest = list(outer)
        for size in inner:
            if size not in rest:
                return []
            rest.remove(size)
        if len(rest) >= 2 and tuple(sorted(rest)) not in extents.get(coordinate, set()):
            gaps.append((outer, rest))
    return gaps


@operator("address-coordinate", "missing-batch-offset")
def address_coordinate(program: Program) -> Iterator[Edit]:
    """An address whose coordinates' strides are one chain of the kernel's sizes (`((n * C_out) * H + oy) * W + ox`:
    strides `1`, `W`, `C_out * H * W`) with a step that skips a size (`C_out`), and a coordinate the kernel bounds by
    that size (`oc < C_out`) that the address never reads: the term `oc * (H * W)` is added. Grounded on a store whose
    value depends on that coordinate (lanes of other `oc` write one element)."""
    for kernel in program.kernels:
        inline = _address_locals(kernel)
        sizes, products = _size_names(program, kernel)
        bounds = _bounds(kernel)
        pointers = pointers_of(kernel)
        for access in memory_accesses(kernel):
            written = polynomial(access.args[0], {**inline, **products}, atoms=True, limit=16)
            if written is None:
                continue
            terms: dict[str, _Monomial] = {}
            for monomial, factor in written.items():
                coordinates = [f for f in monomial if f not in sizes and f not in pointers]
                if not coordinates and len(monomial) >= 2:  # a scalar parameter as a coordinate (`c * H * W`)
                    terms = {}
                    break
                if len(coordinates) != 1 or not coordinates[0].isidentifier():
                    continue
                if factor != 1 or coordinates[0] in terms:
                    terms = {}
                    break
                terms[coordinates[0]] = tuple(f for f in monomial if f in sizes)
            read = _read_through(access.args[0], inline)
            extents = {
                name: {tuple(sorted(m)) for b in bounded if (m := _size_monomial(b, products)) is not None}
                for name, bounded in bounds.items()
            }
            for outer, skipped in _stride_gaps(terms, extents):
                for name, bounded in sorted(bounds.items()):
                    for size in sorted(bounded & set(skipped)):
                        if name in read or name in sizes or not _defined_before(kernel, name, access):
                            continue
                        if _decoded_from(kernel, name, set(terms) - sizes):
                            continue  # a coordinate of a flat index the address reads whole
                        stride = list(outer)
                        stride.remove(size)
                        term = f"{name} * ({' * '.join(stride)})" if stride else name
                        stored = call_name(access) in STORING and len(access.args) >= 2
                        value_reads = stored and name in reached(kernel, access.args[1], {name}, through_loads=True)
                        yield Edit(
                            "address-coordinate",
                            "missing-batch-offset",
                            access.lineno,
                            f"`{program.code(access.args[0])}` skips `{size}` in its strides: `+ {term}`",
                            program.replace(access.args[0], f"{program.code(access.args[0])} + {term}"),
                            f"an address whose strides skip `{size}`, beside `{name}` that ranges over it",
                            grounded=value_reads,
                        )


def _ancestors(kernel: ast.FunctionDef, name: str) -> set[str]:
    """The names `name` is computed from in a kernel, transitively (through its assignments and, for a loop's
    variable, the loop's range)."""
    assigned = assignments(kernel)
    ranges = {
        target.id: loop.iter
        for loop in ast.walk(kernel)
        if isinstance(loop, ast.For)
        for target in ast.walk(loop.target)
        if isinstance(target, ast.Name)
    }
    found, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.add(current)
        sources = [a.value for a in assigned.get(current, [])] + ([ranges[current]] if current in ranges else [])
        todo += [n for value in sources for n in names_in(value)]
    return found


def _unscaled_lanes(kernel: ast.FunctionDef, blocks: set[str]) -> Iterator[tuple[ast.BinOp, str]]:
    """`x[:, None] + tl.arange(0, V)[None, :]` (either order) where `x`'s lanes are one apart and nothing scales
    them by `V`: each of `x`'s lanes reads `V` elements, the next lane's `V - 1` of them again."""
    lanes = arange_names(kernel)
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
            continue
        for base, vector in ((node.left, node.right), (node.right, node.left)):
            if not (isinstance(base, ast.Subscript) and isinstance(vector, ast.Subscript)):
                continue
            arange = vector.value
            if not (
                isinstance(arange, ast.Call)
                and call_name(arange, last=True) == "arange"
                and len(arange.args) == 2
                and isinstance(arange.args[1], ast.Name)
                and arange.args[1].id in blocks
                and slice_text(vector) == "None,:"
                and slice_text(base) == ":,None"
                and isinstance(base.value, ast.Name)
            ):
                continue
            width = arange.args[1].id
            upstream = _ancestors(kernel, base.value.id)
            if width in upstream or not upstream & lanes:
                continue
            yield node, width


@operator("vector-lanes", "index-shift")
def vector_lanes(program: Program) -> Iterator[Edit]:
    """A vector width whose lanes overlap: `offs[:, None] + tl.arange(0, VEC)[None, :]` where `offs` steps by one
    element per lane and nothing scales it by `VEC` (each lane reads `VEC` elements, the next lane `VEC - 1` of
    them again, so sums count elements several times) -> `VEC` set to 1 in every autotune config and launch that
    gives it (the kernel's scalar path then reads each element once). Grounded: the overlap is in the source."""
    for kernel in program.kernels:
        blocks = set(constexprs_of(kernel))
        widths = dict.fromkeys(width for _, width in _unscaled_lanes(kernel, blocks))
        for width in widths:
            changes: list[tuple[ast.AST, str]] = [
                (value, "1")
                for table in config_tables(program, kernel)
                if table is not None
                for key, value in zip(table.keys, table.values, strict=True)
                if isinstance(key, ast.Constant) and key.value == width and ast.unparse(value) != "1"
            ]
            for site in program.parsed.launches:
                if site.kernel is kernel:
                    given = site_arguments(site).get(width)
                    if given is not None and ast.unparse(given) != "1":
                        changes.append((given, "1"))
            if changes:
                yield Edit(
                    "vector-lanes",
                    "index-shift",
                    getattr(changes[0][0], "lineno", kernel.lineno),
                    f"`{width}` -> 1 ({len(changes)} places): its lanes overlap the next lane's",
                    program.replace_all(changes),
                    cue=f"`tl.arange(0, {width})` widens lanes that step by one element",
                    grounded=True,
                )
