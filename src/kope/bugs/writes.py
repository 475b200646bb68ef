"""How outputs are written: shared addresses without atomics, partly written empty buffers.

The bug kind's cues, recipes, edits and mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: missing-atomic (and a cue and a mutation of uninitialized-output, whose home is kope.bugs.grid).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from kope.bugs.analysis import (
    Kernel,
    Launch,
    argument,
    calls_in,
    constant_value,
    expand,
    host_assignments,
    names_in,
    pointer_roots,
)
from kope.bugs.cue import Source, _kernels, cue
from kope.bugs.edit import Edit, Program, assignments, operator, pointers_of, reached, site_arguments
from kope.bugs.mutation import Context, Mutation, cst_calls_in, expr, mutation, range_args, without_args
from kope.bugs.recipe import _analysed, _cue_nodes, _EmptyToZeros, _kwarg, _LineTransformer, _rewrite, recipe
from kope.source import call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue("store-shared-address", "every program of a multi-program launch stores to the same address (needs tl.atomic_add)")
def store_shared_address(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        launches = source.dataflow.launches_of(kernel)
        if not launches or all(_single_program(launch) for launch in launches):
            continue
        for call in calls_in(kernel.node, "store"):
            pointer = call.args[0] if call.args else None
            if not (names_in(pointer) & kernel.pids) and not any(True for _ in calls_in(pointer, "program_id")):
                yield call


def _single_program(launch: Launch) -> bool:
    return launch.grid is not None and all(constant_value(axis) == 1.0 for axis in launch.grid)


@cue(
    "partial-store-into-empty",
    "a store masked by a data condition into a buffer from torch.empty: the other elements stay unwritten",
)
def partial_store_into_empty(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        params: set[str] = set()
        for call in calls_in(kernel.node, "store"):
            mask = argument(call, 2, "mask")
            data_condition = any(
                isinstance(n, ast.Compare) and names_in(n) & kernel.loaded - kernel.aranges
                for part in expand(mask, kernel, depth=2)
                for n in ast.walk(part)
            )
            if data_condition:
                params |= pointer_roots(call.args[0] if call.args else None, kernel)
        for launch in source.dataflow.launches_of(kernel):
            for param in params:
                arg = launch.args.get(param)
                if isinstance(arg, ast.Name):
                    for value in host_assignments(launch.host, arg.id):
                        if isinstance(value, ast.Call) and call_name(value, last=True) in (
                            "empty",
                            "empty_like",
                            "empty_strided",
                        ):
                            yield value


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _StoreToAtomic(_LineTransformer):
    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.lines = lines

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "store" and self.line(original_node) in self.lines:
            self.changed = True
            args = [a for a in updated_node.args if a.keyword is None or a.keyword.value in ("mask",)]
            if len(args) > 2 and args[2].keyword is None:
                args[2] = _kwarg("mask", args[2].value).with_changes(comma=args[2].comma)
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("atomic_add")), args=args)
        return updated_node


def _buffers_of(parsed: Source, kernel: Kernel, params: set[str]) -> set[int]:
    """Lines of the host allocations (torch.empty...) passed for these kernel parameters."""
    lines: set[int] = set()
    for launch in parsed.dataflow.launches_of(kernel):
        for param in params:
            arg = launch.args.get(param)
            if isinstance(arg, ast.Name):
                for value in host_assignments(launch.host, arg.id):
                    if isinstance(value, ast.Call) and call_name(value, last=True) in ("empty", "empty_like"):
                        lines.add(value.lineno)
    return lines


@recipe(
    "atomic-accumulate",
    "replace stores that every program makes to one address with tl.atomic_add (into a zeroed buffer)",
)
def atomic_accumulate(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    stores = [n for n in _cue_nodes(parsed, "store-shared-address") if isinstance(n, ast.Call)]
    if not stores:
        return
    lines = {s.lineno for s in stores}
    edited = _rewrite(source, _StoreToAtomic(lines))
    if edited is None:
        return
    buffers: set[int] = set()
    for kernel in parsed.dataflow.kernels.values():
        mine = [s for s in stores if any(s is w for w in ast.walk(kernel.node))]
        params = set().union(*(pointer_roots(s.args[0] if s.args else None, kernel) for s in mine)) if mine else set()
        buffers |= _buffers_of(parsed, kernel, params)
    if buffers:
        zeroed = _rewrite(edited, _EmptyToZeros(buffers))
        if zeroed is not None:
            yield zeroed
    yield edited


# -- the search's edits (repair operators) -----------------------------------------------------


@operator("atomic-store", "missing-atomic")
def atomic_store(program: Program) -> Iterator[Edit]:
    """A kernel's store made an atomic add: programs that each hold part of one result (a partial sum per block, a
    row scattered to an index another program also hits) must add into it, not overwrite it."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) == "tl.store":
            start, end = program.span(node.func)
            text = program.text[:start] + "tl.atomic_add" + program.text[end:]
            yield Edit("atomic-store", "missing-atomic", node.lineno, "`tl.store` -> `tl.atomic_add`", text)


_ATOMICS = ("tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_and", "tl.atomic_or", "tl.atomic_xor")


def _first_program(test: ast.expr, kernel: ast.FunctionDef) -> tuple[str, str] | None:
    """The program id a test singles out (`tl.program_id(1) == 0`, `pid_n == 0`): its text and the axis's
    `tl.program_id(k)`; else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    sides = (test.left, test.comparators[0])
    if not any(isinstance(side, ast.Constant) and side.value == 0 for side in sides):
        return None
    assigned = assignments(kernel)
    for side in sides:
        if isinstance(side, ast.Call) and call_name(side) == "tl.program_id":
            return ast.unparse(side), ast.unparse(side)
        if isinstance(side, ast.Name) and len(assigned.get(side.id, [])) == 1:
            value = assigned[side.id][0].value
            if isinstance(value, ast.Call) and call_name(value) == "tl.program_id":
                return side.id, ast.unparse(value)
    return None


def _along(kernel: ast.FunctionDef, axis: str) -> set[str]:
    """The names a kernel assigns from one `tl.program_id(k)` (`pid_n = tl.program_id(1)`, `offs = pid_n * B + ...`
    reaches it through them)."""
    return {name for name, assigns in assignments(kernel).items() if any(axis in ast.unparse(a.value) for a in assigns)}


@operator("guarded-atomic", "missing-atomic")
def guarded_atomic(program: Program) -> Iterator[Edit]:
    """An atomic accumulation only the first program along an axis makes (`if tl.program_id(1) == 0:
    tl.atomic_add(out, partial)`): every program of that axis holds a partial of the result, and the atomic is
    there so that all of them add it. Offered where the partial is made from the program's own slice of the data
    (a load at offsets of that axis). The guard dropped, its body run by every program. Grounded: an atomic add of
    one slice's partial, which the other slices never add, cannot hold the whole result. The same with a plain store
    (`if pid_spatial == 0: tl.store(mean_ptr + c, partial)`, each program's partial lost but the first's): its
    stores become `tl.atomic_add`s and what they write is allocated as zeros (`torch.empty` -> `torch.zeros` at the
    launch's host; not where the host does not allocate it)."""
    for kernel in program.kernels:
        for node in ast.walk(kernel):
            if not isinstance(node, ast.If) or node.orelse:
                continue
            found = _first_program(node.test, kernel)
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
            atomics = [c for c in calls if call_name(c) in _ATOMICS]
            stores = [c for c in calls if call_name(c) == "tl.store"] if not atomics else []
            if found is None or not (atomics or stores):
                continue
            who, axis = found
            # the partial an atomic adds (a store writes) is made from data of that program's own slice (a load at
            # its offsets)
            writes = atomics or stores
            values = [
                a for c in writes for a in [*c.args[1:2], *(k.value for k in c.keywords if k.arg in ("val", "value"))]
            ]
            own = any(reached(kernel, value, _along(kernel, axis), through_loads=True) for value in values)
            if not own:
                continue
            zeroed = _allocations(program, kernel, stores) if stores else []
            if stores and (zeroed is None or any(k.arg not in ("mask", "value") for c in stores for k in c.keywords)):
                continue  # a store the atomic cannot replace, or an output kope cannot zero
            start, end = program.lines_of(node)
            first, last = program.lines_of(node.body[0]), program.lines_of(node.body[-1])
            body = program.text[first[0] : last[1]].replace("tl.store(", "tl.atomic_add(")
            inner, outer = program.indent_of(node.body[0]), program.indent_of(node)
            lines = [line[len(inner) - len(outer) :] if line.startswith(inner) else line for line in body.split("\n")]
            spans = [(start, end, "\n".join(lines))]
            spans += [(*program.span(call.func), call_name(call).replace("empty", "zeros")) for call in zeroed or []]
            text = program.text
            for at, to, written in sorted(spans, reverse=True):
                text = text[:at] + written + text[to:]
            what = "adds its partial" if atomics else "adds its partial (atomic adds into zeroed outputs)"
            yield Edit(
                "guarded-atomic",
                "missing-atomic",
                node.lineno,
                f"the guard `if {program.code(node.test)}:` dropped: every program {what}",
                text,
                f"only the program with {who} == 0 makes the {'atomic' if atomics else 'store'} "
                f"`{call_name(writes[0])}` of its own slice's partial",
                grounded=True,
            )


_ALLOCATIONS = ("torch.empty", "torch.empty_like")
_ZEROED = ("torch.zeros", "torch.zeros_like")


def _allocations(program: Program, kernel: ast.FunctionDef, stores: list[ast.Call]) -> list[ast.Call] | None:
    """The host allocations (`torch.empty(...)`, `torch.empty_like(...)`) of the tensors `stores` write, at each
    launch of `kernel`: what must start at zero once every program adds into them (none where they are zeros
    already); None where a stored tensor is not allocated so (an input, made elsewhere: not this edit's to change)."""
    stored = {
        name
        for call in stores
        if call.args
        for name in reached(kernel, call.args[0], set(pointers_of(kernel)), through_loads=False)
    }
    found: list[ast.Call] = []
    sites = [site for site in program.parsed.launches if site.kernel is kernel and site.host is not None]
    if not sites:
        return None
    for site in sites:
        args = site_arguments(site)
        for param in sorted(stored):
            arg = args.get(param)
            if not isinstance(arg, ast.Name):
                return None
            made = host_assignments(site.host, arg.id, before=site.call.lineno)
            last = made[-1] if made else None
            if not isinstance(last, ast.Call) or call_name(last) not in (*_ALLOCATIONS, *_ZEROED):
                return None
            if call_name(last) in _ALLOCATIONS:
                found.append(last)
    return found


def _accessed(kernel: ast.FunctionDef, how: str) -> set[str]:
    """The pointer parameters a kernel's `tl.load`s (`how="tl.load"`) or `tl.store`s address."""
    pointers = set(pointers_of(kernel))
    return {
        name
        for node in ast.walk(kernel)
        if isinstance(node, ast.Call) and call_name(node) == how and node.args
        for name in reached(kernel, node.args[0], pointers, through_loads=False)
    }


def _statement_of(host: ast.FunctionDef, node: ast.AST) -> ast.stmt | None:
    """The statement of `host`'s body (at any depth) that holds `node`."""
    for statement in ast.walk(host):
        if isinstance(statement, ast.stmt) and statement is not host and any(n is node for n in ast.walk(statement)):
            inner = [s for s in ast.iter_child_nodes(statement) if isinstance(s, ast.stmt)]
            if not any(any(n is node for n in ast.walk(s)) for s in inner):
                return statement
    return None


@operator("own-output", "uninitialized-output")
def own_output(program: Program) -> Iterator[Edit]:
    """A launch that stores its result over the tensor it reads (`kernel[grid](x, norms, x, ...)`, then `return x`):
    the caller's input is overwritten, and the result is only right while nobody reads the input again. The result
    gets its own buffer: `x_out = torch.empty_like(x)` before the launch, passed where the kernel stores and returned
    in `x`'s place. Grounded: one tensor is both what the kernel reads and what it writes."""
    for site in program.parsed.launches:
        if site.host is None:
            continue
        args = site_arguments(site)
        loaded, stored = _accessed(site.kernel, "tl.load"), _accessed(site.kernel, "tl.store")
        read = {ast.unparse(args[p]) for p in loaded - stored if p in args}
        for param in sorted(stored - loaded):
            arg = args.get(param)
            if not isinstance(arg, ast.Name) or arg.id not in read:
                continue
            launch = _statement_of(site.host, site.call)
            returns = [
                r
                for r in ast.walk(site.host)
                if isinstance(r, ast.Return)
                and isinstance(r.value, ast.Name)
                and r.value.id == arg.id
                and r.lineno > site.call.lineno
            ]
            if launch is None or not returns:
                continue
            fresh = f"{arg.id}_out"
            start, _ = program.lines_of(launch)
            spans = [(start, start, f"{program.indent_of(launch)}{fresh} = torch.empty_like({arg.id})\n")]
            spans += [
                (*program.span(node), fresh) for node in (arg, *(r.value for r in returns if r.value is not None))
            ]
            text = program.text
            for begin, end, new in sorted(spans, reverse=True):
                text = text[:begin] + new + text[end:]
            yield Edit(
                "own-output",
                "uninitialized-output",
                site.call.lineno,
                f"`{arg.id}` stored over at `{param}`: `{fresh} = torch.empty_like({arg.id})` written and returned",
                text,
                f"the launch passes `{arg.id}` both where the kernel loads and where it stores (`{param}`)",
                grounded=True,
            )


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class StoreInsteadOfAtomic(Mutation):
    name = "store-not-atomic"
    label = "missing-atomic"
    summary = "tl.atomic_add becomes tl.store: concurrent programs overwrite each other's partials"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) == "tl.atomic_add":
            assert isinstance(node, cst.Call)
            stored = without_args(node, ("sem", "scope"))
            return [stored.with_changes(func=expr("tl.store"))]
        return []


@mutation
class SkipFirstBlock(Mutation):
    name = "skip-first-block"
    label = "uninitialized-output"
    summary = "a write loop starts at BLOCK instead of 0, so the first block is never written"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.For) or "tl.store" not in cst_calls_in(node.body):
            return []
        args = range_args(node.iter)
        if args is None or len(args) != 3:
            return []
        if not (isinstance(args[0].value, cst.Integer) and args[0].value.value == "0"):
            return []
        assert isinstance(node.iter, cst.Call)
        new = list(node.iter.args)
        new[0] = new[0].with_changes(value=args[2].value)
        return [node.with_changes(iter=node.iter.with_changes(args=new))]
