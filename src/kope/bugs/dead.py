"""Edits that put a dead value back to use: a name a kernel computes (or takes) and never reads.

Repair operators for any bug kind (kope.bugs.registry lists them as a kind of their own).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

from kope.bugs.analysis import keyword_of, names_in, names_made_from, params_of
from kope.bugs.edit import (
    OPERATORS,
    Edit,
    Program,
    address_exprs,
    arange_names,
    assignments,
    boolean,
    edit_at,
    feeding,
    memory_accesses,
    operator,
    pointers_of,
    program_id_names,
    value_flow,
    value_nodes,
)
from kope.source import call_name

# -- the search's edits (repair operators) -----------------------------------------------------


@dataclass(frozen=True)
class Dead:
    """A dead name of a kernel: what it is (`value` or `position`), where it is defined and from what."""

    name: str
    kind: str
    line: int
    definition: ast.expr | None
    """None for a parameter."""

    @property
    def cue(self) -> str:
        made = "taken as a parameter" if self.definition is None else f"computed at line {self.line}"
        return f"`{self.name}` is {made} but never used"


def dead_names(program: Program, kernel: ast.FunctionDef) -> list[Dead]:
    """The kernel's dead names, in source order: assigned (or scalar parameters) and never read, except by their own
    augmented assignments."""
    read: set[str] = set()
    own: dict[str, int] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            own[node.target.id] = own.get(node.target.id, 0) + 1
            read |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id != node.target.id}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
    pids = program_id_names(kernel)
    launched = program.launch_arguments(kernel)
    found = [
        Dead(name, "value", kernel.lineno, None)
        for name in program.value_scalars(kernel)
        if name not in read and "ptr" not in name.lower() and not _tensor(program, launched.get(name))
    ]
    seen: set[str] = set()
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name in read or name in seen or name.startswith("_"):
            continue
        seen.add(name)
        found.append(Dead(name, _kind(node.value, pids), node.lineno, node.value))
    for name in own:
        if name not in read and name not in seen:
            first = next(
                n for n in ast.walk(kernel) if isinstance(n, ast.AugAssign) and getattr(n.target, "id", "") == name
            )
            found.append(Dead(name, "value", first.lineno, None))
    return sorted(found, key=lambda d: d.line)


def _tensor(program: Program, argument: ast.expr | None) -> bool:
    """A launch argument that is a tensor: a parameter of the host function (`forward(self, x, w)`), or a host name
    made by a `torch.` call or a tensor method (`torch.empty_like(x)`, `x.contiguous()`)."""
    if not isinstance(argument, ast.Name):
        return False
    for node in program.host_nodes():
        if isinstance(node, ast.FunctionDef) and argument.id in {a.arg for a in node.args.args} - {"self"}:
            return True
        if (
            isinstance(node, ast.Assign)
            and any(argument.id in {n.id for n in ast.walk(t) if isinstance(n, ast.Name)} for t in node.targets)
            and isinstance(node.value, ast.Call)
            and (call_name(node.value).startswith("torch.") or call_name(node.value, last=True) in TENSOR_METHODS)
        ):
            return True
    return False


TENSOR_METHODS = frozenset({"contiguous", "view", "reshape", "to", "float", "half", "flatten", "empty_like", "clone"})


def _kind(value: ast.expr, pids: set[str]) -> str:
    if boolean(value):
        return "mask"
    calls = {call_name(n) for n in ast.walk(value) if isinstance(n, ast.Call)}
    if "tl.load" in calls:
        return "value"
    if calls & {"tl.program_id", "tl.arange"} or {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & pids:
        return "position"
    return "value"


def _enclosing(kernel: ast.FunctionDef, line: int) -> ast.AST:
    """The innermost loop or the kernel around a line: a dead name defined in a loop belongs in that loop."""
    best: ast.AST = kernel
    for node in ast.walk(kernel):
        if isinstance(node, ast.For | ast.While) and node.lineno <= line <= (node.end_lineno or node.lineno):
            best = node
    return best


def _after(node: ast.AST, dead: Dead, scope: ast.AST) -> bool:
    line = getattr(node, "lineno", 0)
    return line > dead.line and getattr(scope, "lineno", 0) <= line <= (getattr(scope, "end_lineno", None) or line)


def _substitutions(program: Program, kernel: ast.FunctionDef, dead: Dead) -> Iterator[tuple[ast.expr, str]]:
    """(node, why) for the uses a dead name most likely replaces, read after it: the names and sub-expressions its
    definition reads, then the names defined the same way (`pid_m` for a dead `pid_n`, both `tl.program_id`)."""
    if dead.definition is None:
        return
    scope = _enclosing(kernel, dead.line) if dead.kind == "value" else kernel
    defined = set(params_of(kernel)) - pointers_of(kernel) | set(assignments(kernel))
    inputs = {n.id for n in ast.walk(dead.definition) if isinstance(n, ast.Name)} & defined - {dead.name}
    parts = {
        ast.unparse(n)
        for n in ast.walk(dead.definition)
        if n is not dead.definition and isinstance(n, ast.BinOp | ast.Call) and call_name(n) != "tl.load"
    }
    shape = _shape(dead.definition)
    alike = {
        name
        for name, assigns in assignments(kernel).items()
        if name != dead.name and name not in inputs and len(assigns) == 1 and _shape(assigns[0].value) == shape
    }
    later: list[tuple[ast.expr, str]] = []
    for node in ast.walk(scope):
        if not _after(node, dead, scope) or not isinstance(node, ast.expr):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in inputs:
            yield node, f"`{node.id}` is what `{dead.name}` is made from"
        elif isinstance(node, ast.BinOp | ast.Call) and ast.unparse(node) in parts:
            yield node, f"`{ast.unparse(node)}` is part of `{dead.name}`"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in alike:
            later.append((node, f"`{node.id}` is made the way `{dead.name}` is"))
    yield from later


def _shape(value: ast.expr) -> tuple[str, ...]:
    """What a definition calls, and whether it loads: `pid_m = tl.program_id(0)` and `pid_n = tl.program_id(1)`
    have one shape, `offs_m` and `offs_n` (each a block start plus an `arange`) another."""
    return tuple(sorted({call_name(n) for n in ast.walk(value) if isinstance(n, ast.Call)}))


def _stored_sites(program: Program, kernel: ast.FunctionDef, dead: Dead) -> list[ast.expr]:
    """The stored values, the values reaching them and what they compute with (`value_nodes`: not addresses, masks
    or conditions), after the dead name's definition, outermost first; no literals."""
    found: dict[int, ast.expr] = {}
    for k, value in value_flow(program):
        if k is not kernel:
            continue
        callees = {id(n) for c in ast.walk(value) if isinstance(c, ast.Call) for n in ast.walk(c.func)}
        for node in value_nodes(value):
            if (
                getattr(node, "lineno", 0) >= dead.line
                and not isinstance(node, ast.Constant)
                and id(node) not in callees
            ):
                found.setdefault(id(node), node)
    return list(found.values())


def _grouped(program: Program, node: ast.expr) -> str:
    text = program.code(node)
    return f"({text})" if isinstance(node, ast.BinOp | ast.UnaryOp | ast.IfExp | ast.Compare) else text


@operator("dead-value", "wrong-constant")
def dead_value(program: Program) -> Iterator[Edit]:
    """A value the kernel computes or takes and never uses, put back: in place of what it is made from, or as a
    factor or term (`+`, `-`) of a stored value."""
    for kernel in program.kernels:
        for dead in dead_names(program, kernel):
            if dead.kind != "value":
                continue
            yield from _substitution_edits(program, kernel, dead, "dead-value")
            sites = _stored_sites(program, kernel, dead)
            for op in ("*", "/", "+", "-"):
                for site in sites:
                    new = f"{_grouped(program, site)} {op} {dead.name}"
                    edit = edit_at(program, "dead-value", site, f"({new})", f"`{program.code(site)}` -> `{new}`")
                    yield replace(edit, cue=dead.cue)


@operator("dead-position", "missing-batch-offset")
def dead_position(program: Program) -> Iterator[Edit]:
    """A position (from a program id or an `arange`) the kernel computes and never uses, put back: in place of the
    index it is made from, or as a term of an address after it (of one, or of every memory access at once: an
    offset left out of the load's and the store's addresses alike)."""
    for kernel in program.kernels:
        for dead in dead_names(program, kernel):
            if dead.kind != "position":
                continue
            yield from _substitution_edits(program, kernel, dead, "dead-position")
            yield from _block_starts(program, kernel, dead)
            vector = dead.definition is not None and "tl.arange" in _shape(dead.definition)
            terms = [dead.name] if vector else _strided(program, kernel, dead.name)
            addressing = pointers_of(kernel) | set(program.strides(kernel))
            sites = []
            for expr in sorted(address_exprs(kernel), key=lambda e: (e.lineno, e.col_offset)):
                if getattr(expr, "lineno", 0) <= dead.line or isinstance(expr, ast.Name):
                    continue
                if not vector and not {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} & addressing:
                    continue  # an index (`pid * BLOCK + arange`), not an offset in memory: no stride term on it
                sites.append(expr)
            for term in terms:
                for expr in sites:
                    new = f"{program.code(expr)} + {term}"
                    edit = edit_at(program, "dead-position", expr, new, f"`{program.code(expr)}` -> `{new}`")
                    yield replace(edit, cue=dead.cue)
            accessed = _accessed(program, kernel, sites)
            if len(accessed) > 1:
                for term in terms:
                    text = program.replace_all([(e, f"{program.code(e)} + {term}") for e in accessed])
                    description = f"`+ {term}` on every strided memory access's address ({len(accessed)})"
                    yield Edit("dead-position", "missing-batch-offset", dead.line, description, text, dead.cue)


@operator("dead-stride", "wrong-stride")
def dead_stride(program: Program) -> Iterator[Edit]:
    """A stride the kernel is passed and never reads, put where an index steps by another stride of the same tensor:
    in its place (`offs_c * stride_l` -> `offs_c * stride_c`: the stride it was mistaken for), then added to it
    (`offs * stride_r` -> `offs * stride_r + offs * stride_c`: a diagonal walks rows and columns at once). Cued: the
    unused stride."""
    for kernel in program.kernels:
        strides = program.strides(kernel)
        read = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        owner = program.tensors(kernel)
        for dead in (s for s in strides if s not in read):
            cue = f"`{dead}` is passed but never used"
            seen: set[int] = set()
            for expr in address_exprs(kernel):
                for node in ast.walk(expr):
                    if id(node) in seen or not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
                        continue
                    seen.add(id(node))
                    stride, index = _stride_operand(node, strides)
                    if stride is None or index is None or owner.get(stride, "") != owner.get(dead, ""):
                        continue
                    term = program.code(index)
                    for new in (f"{term} * {dead}", f"{program.code(node)} + {term} * {dead}"):
                        edit = edit_at(program, "dead-stride", node, new, f"`{program.code(node)}` -> `{new}`")
                        yield replace(edit, cue=cue)


def _stride_operand(node: ast.BinOp, strides: list[str]) -> tuple[str | None, ast.expr | None]:
    """`i * s` or `s * i` for a stride parameter `s`: (s, i)."""
    for stride, index in ((node.right, node.left), (node.left, node.right)):
        if isinstance(stride, ast.Name) and stride.id in strides:
            return stride.id, index
    return None, None


def _block_starts(program: Program, kernel: ast.FunctionDef, dead: Dead) -> Iterator[Edit]:
    """A dead program id as the start of a block of indices made without one: `offs_k = tl.arange(0, BLOCK_K)` ->
    `offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)` (every program of that axis would do the first block)."""
    definition = dead.definition
    if definition is None or not any(
        isinstance(n, ast.Call) and call_name(n) == "tl.program_id" for n in ast.walk(definition)
    ):
        return
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Assign) and node.lineno > dead.line and isinstance(node.value, ast.Call)):
            continue
        block = node.value
        if call_name(block) != "tl.arange" or len(block.args) != 2 or program.code(block.args[0]) != "0":
            continue
        size = program.code(block.args[1])
        new = f"{dead.name} * {size} + {program.code(block)}"
        edit = edit_at(program, "dead-position", block, new, f"`{program.code(block)}` -> `{new}` (a block's start)")
        yield replace(edit, cue=dead.cue)


def _accessed(program: Program, kernel: ast.FunctionDef, sites: list[ast.expr]) -> list[ast.expr]:
    """Of the address sites, the loads' and stores' whole addresses that stride through memory (through the names
    they use): the accesses of the tensors a position indexes, not those of a per-channel weight (`w_ptr + ch`); all
    of them in a kernel that passes no strides."""
    strides = set(program.strides(kernel))
    strided = {
        id(a.args[0]) for a in memory_accesses(kernel) if any(names_in(e) & strides for e in feeding(kernel, a.args[0]))
    }
    whole = {id(a.args[0]) for a in memory_accesses(kernel)}
    return [e for e in sites if id(e) in (strided or whole)]


def _substitution_edits(program: Program, kernel: ast.FunctionDef, dead: Dead, name: str) -> Iterator[Edit]:
    """The dead name in place of each use it most likely replaces, then in place of all of them that read alike at
    once (`raw` -> `wide` everywhere after `wide = raw.to(tl.float32)`)."""
    groups: dict[str, list[ast.expr]] = {}
    for node, why in _substitutions(program, kernel, dead):
        edit = edit_at(program, name, node, dead.name, f"`{program.code(node)}` -> `{dead.name}` ({why})")
        yield replace(edit, cue=dead.cue)
        groups.setdefault(program.code(node), []).append(node)
    for old, nodes in groups.items():
        if len(nodes) > 1:
            text = program.replace_all([(n, dead.name) for n in nodes])
            description = f"`{old}` -> `{dead.name}` everywhere after line {dead.line} ({len(nodes)})"
            yield Edit(name, OPERATORS[name][0], nodes[0].lineno, description, text, dead.cue)


def _strided(program: Program, kernel: ast.FunctionDef, name: str) -> list[str]:
    """A scalar position as an address term: times each stride of the kernel, those it never reads first; alone
    when it has none (a contiguous tensor's unit stride is not passed)."""
    read = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    strides = sorted(program.strides(kernel), key=lambda s: s in read)
    return [f"{name} * {s}" for s in strides] or [name]


_MASKED = ("tl.load", "tl.store", "tl.atomic_add", "tl.atomic_max", "tl.atomic_min")


@operator("dead-mask", "missing-mask")
def dead_mask(program: Program) -> Iterator[Edit]:
    """A mask the kernel computes and never uses, put back on the loads and stores after it: joined to their masks
    (`rmask[:, None]` -> `rmask[:, None] & cmask[None, :]`), or as the mask of one that has none. Where its lanes
    can be followed (`cmask = cols < N`, `cols` an `arange`), only on the accesses whose addresses index them, along
    the axis they put them on, then on all of them at once (a padded column two loads feed is zero only when both
    are masked), and around a reduction of a block made from them (`tl.sum(v, axis=1)` ->
    `tl.sum(tl.where(cmask[None, :], v, 0.0), axis=1)`); else along either axis of a 2-D block."""
    for kernel in program.kernels:
        two_d = any(isinstance(n, ast.Subscript) and "None" in ast.unparse(n.slice) for n in ast.walk(kernel))
        for dead in dead_names(program, kernel):
            if dead.kind != "mask":
                continue
            block = dead.definition is not None and _two_d(kernel, dead.definition)
            forms = (
                [dead.name, f"{dead.name}[:, None]", f"{dead.name}[None, :]"] if two_d and not block else [dead.name]
            )
            after = [n for n in memory_accesses(kernel) if call_name(n) in _MASKED and n.lineno > dead.line]
            lanes = _lanes(kernel, dead)
            along = (
                {id(n): _lane_form(program, kernel, n.args[0], lanes, dead.name, block) for n in after} if lanes else {}
            )
            if not any(along.values()):
                along = {}
            together: list[tuple[ast.AST, str]] = []
            for node in after:
                fn = call_name(node, last=True)
                lane_form = along.get(id(node))
                # along its lanes where they can be followed (none on an access that does not index them), else all
                chosen = forms if not along else [lane_form] if lane_form else []
                for form in chosen:
                    change = _masked(program, node, form)
                    if change is None:
                        continue
                    if along:
                        together.append(change)
                    target, new = change
                    described = f"the {fn}'s mask `{new}`" if target is not node else f"`mask={form}` on the {fn}"
                    yield replace(edit_at(program, "dead-mask", target, new, described), cue=dead.cue)
            if len(together) > 1:
                text = program.replace_all(together)
                line = max(getattr(n, "lineno", dead.line) for n, _ in together)
                description = f"`{dead.name}` on every access along its lanes ({len(together)})"
                yield Edit("dead-mask", "missing-mask", line, description, text, dead.cue)
            if lanes:
                yield from _reductions_masked(program, kernel, dead, lanes, forms)


def _masked(program: Program, access: ast.Call, form: str) -> tuple[ast.AST, str] | None:
    """The change that joins `form` to an access's mask (its mask's new text), or gives it that mask (the access's
    new text); None for an access whose arguments leave no place for one."""
    mask = keyword_of(access, "mask")
    if mask is not None:
        joined = program.code(mask.value)
        if not isinstance(mask.value, ast.Name | ast.Subscript | ast.Call | ast.Attribute):
            joined = f"({joined})"
        return mask.value, f"{joined} & {form}"
    fn = call_name(access, last=True)
    if len(access.args) > (1 if fn == "load" else 2) or access.keywords:
        return None
    extra = f", mask={form}" + (", other=0.0" if fn == "load" else "")
    return access, program.code(access)[:-1].rstrip().rstrip(",") + extra + ")"


def _lanes(kernel: ast.FunctionDef, dead: Dead) -> set[str]:
    """The names made from the block lanes a dead mask reads (`cols` of `cmask = cols < N`, and what is made from
    `cols`); empty when it reads none."""
    if dead.definition is None:
        return set()
    roots = names_in(dead.definition) & names_made_from(kernel.body, arange_names(kernel))
    return names_made_from(kernel.body, roots) if roots else set()


def _reductions_masked(
    program: Program, kernel: ast.FunctionDef, dead: Dead, lanes: set[str], forms: list[str]
) -> Iterator[Edit]:
    """The dead mask around the block a reduction after it takes, where that block is made from its lanes: the
    padded lanes out of a sum (0), a maximum (-inf) or a minimum (inf)."""
    for node in ast.walk(kernel):
        neutral = _NEUTRAL.get(call_name(node)) if isinstance(node, ast.Call) else None
        if neutral is None or not isinstance(node, ast.Call) or not node.args or node.lineno <= dead.line:
            continue
        block = node.args[0]
        if not names_in(block) & lanes:
            continue
        for form in forms:
            new = f"tl.where({form}, {program.code(block)}, {neutral})"
            described = f"`{program.code(block)}` -> `{new}` (its padded lanes out)"
            yield replace(edit_at(program, "dead-mask", block, new, described), cue=dead.cue)


_NEUTRAL = {"tl.sum": "0.0", "tl.max": 'float("-inf")', "tl.min": 'float("inf")'}


def _two_d(kernel: ast.FunctionDef, expr: ast.expr) -> bool:
    """Whether an expression is made 2-D by a `None` index, in itself or in the names it is made from
    (`row_mask[:, None] & (cols[None, :] < N)`)."""
    return any(
        isinstance(node, ast.Subscript) and "None" in ast.unparse(node.slice)
        for e in feeding(kernel, expr)
        for node in ast.walk(e)
    )


def _lane_form(
    program: Program, kernel: ast.FunctionDef, address: ast.expr, lanes: set[str], mask: str, block: bool
) -> str | None:
    """How a mask over `lanes` joins an access's mask: with the subscript its address gives those lanes
    (`cols[None, :]` -> `mask[None, :]`), bare where it uses them bare, None where it does not index them. A mask
    that is a 2-D `block` already goes bare on the 2-D addresses, and on no other."""
    exprs = feeding(kernel, address)
    if block:
        return mask if _two_d(kernel, address) and any(names_in(e) & lanes for e in exprs) else None
    for expr in exprs:
        for node in ast.walk(expr):
            if isinstance(node, ast.Subscript) and names_in(node.value) & lanes:
                index = program.code(node.slice)
                if "None" in index:
                    return f"{mask}[{index}]"
    return mask if any(names_in(e) & lanes for e in exprs) else None


class _Inlined(ast.NodeTransformer):
    """An address with the names that lead to one pointer written out (single assignments before `line`), that
    pointer replaced by another: `x_ptrs` (for `x_ptrs = input_ptr + offs`) as `output_ptr + offs`."""

    def __init__(self, kernel: ast.FunctionDef, line: int, old: str, new: str) -> None:
        self.kernel, self.assigned = kernel, assignments(kernel)
        self.line, self.old, self.new = line, old, new
        self.depth = 0

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.old:
            return ast.Name(self.new, ast.Load())
        assigns = [a for a in self.assigned.get(node.id, []) if a.lineno < self.line]
        if len(assigns) != 1 or self.depth > 4 or _base(self.kernel, assigns[0].value, assigns[0].lineno) != self.old:
            return node
        self.depth += 1
        inlined = self.visit(_copied(assigns[0].value))
        self.depth -= 1
        return inlined if isinstance(inlined, ast.expr) else node


def _copied(expr: ast.expr) -> ast.expr:
    """A fresh tree of an expression (the transformer rewrites it in place)."""
    return ast.parse(ast.unparse(expr), mode="eval").body


def _base(kernel: ast.FunctionDef, expr: ast.expr, line: int, depth: int = 5) -> str | None:
    """The parameter an address starts from: the first term of its sum, through single assignments before `line`
    (`x_ptrs` for `x_ptrs = base + offs`, `base = input_ptr + pid * stride`: `input_ptr`)."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        expr = expr.left
    if not isinstance(expr, ast.Name):
        return None
    if expr.id in params_of(kernel):
        return expr.id
    assigns = [a for a in assignments(kernel).get(expr.id, []) if a.lineno < line]
    if len(assigns) != 1 or not depth:
        return None
    return _base(kernel, assigns[0].value, assigns[0].lineno, depth - 1)


@operator("dead-pointer", "uninitialized-output")
def dead_pointer(program: Program) -> Iterator[Edit]:
    """A pointer the kernel takes and never uses (`output_ptr`) while it stores to the pointer it loads from: the
    result is written over the input and the output the host returns is never written. Each store to the loaded
    pointer is given the unused one, its address written out (`tl.store(x_ptrs, y)` for `x_ptrs = input_ptr + offs`
    becomes `tl.store(output_ptr + offs, y)`). Grounded: an output taken and never written."""
    for kernel in program.kernels:
        params = params_of(kernel)
        used = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        launched = program.launch_arguments(kernel)
        dead = [p for p in params if p not in used and ("ptr" in p.lower() or _tensor(program, launched.get(p)))]
        if not dead:
            continue
        stores = [n for n in ast.walk(kernel) if isinstance(n, ast.Call) and call_name(n) == "tl.store" and n.args]
        loads = [n for n in ast.walk(kernel) if isinstance(n, ast.Call) and call_name(n) == "tl.load" and n.args]
        loaded = {_base(kernel, load.args[0], load.lineno) for load in loads}
        for pointer in sorted(p for p in loaded if p is not None):
            mine = [s for s in stores if _base(kernel, s.args[0], s.lineno) == pointer]
            if not mine:
                continue
            for target in dead:
                text = program.text
                for store in sorted(mine, key=lambda s: program.span(s.args[0]), reverse=True):
                    address = _Inlined(kernel, store.lineno, pointer, target).visit(_copied(store.args[0]))
                    start, end = program.span(store.args[0])
                    text = text[:start] + ast.unparse(address) + text[end:]
                yield Edit(
                    "dead-pointer",
                    "uninitialized-output",
                    mine[0].lineno,
                    f"the stores to `{pointer}` (which the kernel loads) made to the unused `{target}`",
                    text,
                    f"`{target}` is taken as a parameter but never used, and the kernel stores over `{pointer}`",
                    grounded=True,
                )
