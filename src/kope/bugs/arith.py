"""Integer and launch arithmetic real models get wrong, and results several programs write at once.

- `self-operand`: `BLOCK_N // BLOCK_N`, `n - n`, `tl.cdiv(K, K)`: an operation of a name with itself (always 1
  or 0, never what was meant) given another name of its kind on one side: the kernel's other block sizes or
  scalar parameters, the host's other sizes.
- `pool-floor`: where the reference pools with fixed windows and PyTorch's default `ceil_mode=False` (a window that
  does not fit is dropped), a ceiling division by a size that is not a block size (`(D + K - 1) // K`,
  `triton.cdiv(D, K)`) made a floor division: the kernel counts a partial window the reference leaves out.
- `cross-program-atomic`: a store whose address does not depend on the program id, in a kernel launched over
  more than one program (several programs write one element: each its partial sum, the last one wins) made an
  atomic add, with the output it adds into allocated as zeros.
- `axis-once`: a grid axis no store's address reaches (`pid_k` offsets what a program reads, never where it
  writes): every program along it writes the same elements; the axis launched once.
- `whole-block`: a block that is the only one along its dimension (`cols = tl.arange(0, BLOCK)`, masked by
  `cols < n_cols`, never offset by a program id or a loop over blocks) launched with a fixed size
  (`BLOCK=1024`) -> `BLOCK=triton.next_power_of_2(n_cols)`: a row longer than the block is cut off. Also where
  programs tile the row and each reduces its own tile (a softmax normalised by one tile's sum).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.bugs.analysis import ceil_division, constant_value, launch_grid, names_in
from kope.bugs.edit import (
    Edit,
    Program,
    _definitions,
    assignments,
    axis_names,
    config_tables,
    constexprs_of,
    derived_names,
    edit_at,
    feeding,
    operator,
    params_of,
    program_id_names,
    site_arguments,
    slice_text,
)
from kope.bugs.reference import pool_ceil_modes
from kope.source import call_name

_SELF_OPS = (ast.FloorDiv, ast.Div, ast.Sub, ast.Mod)


def _self_operations(root: ast.AST) -> Iterator[tuple[ast.expr, ast.expr, ast.expr]]:
    """(node, left, right) for `a op a` (op: //, /, -, %) and `cdiv(a, a)` whose operands are one name."""
    for node in ast.walk(root):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _SELF_OPS):
            left, right = node.left, node.right
        elif isinstance(node, ast.Call) and call_name(node).endswith("cdiv") and len(node.args) == 2:
            left, right = node.args
        else:
            continue
        if isinstance(left, ast.Name | ast.Attribute) and ast.dump(left) == ast.dump(right):
            yield node, left, right


@operator("self-operand", "grid-too-small")
def self_operand(program: Program) -> Iterator[Edit]:
    """`a // a` (and `/`, `-`, `%`, `cdiv(a, a)`) with one side replaced by another name of the same kind."""
    cue = "an operation of a name with itself (always 1 or 0)"
    for kernel in program.kernels:
        blocks = constexprs_of(kernel)
        scalars = program.scalars(kernel)
        for _node, left, right in _self_operations(kernel):
            name = ast.unparse(left)
            kind = blocks if name in blocks else scalars
            for other in [n for n in [*kind, *blocks, *scalars] if n != name]:
                for side in (left, right):
                    edit = edit_at(program, "self-operand", side, other, f"`{name}` -> `{other}` in a self-operation")
                    yield Edit(edit.operator, edit.label, edit.line, edit.description, edit.source, cue)
    sizes = sorted(program.host_sizes())
    for node in program.host_nodes():
        for _found, left, right in _self_operations(node) if isinstance(node, ast.BinOp | ast.Call) else ():
            name = ast.unparse(left)
            for other in [s for s in sizes if s != name]:
                for side in (left, right):
                    edit = edit_at(program, "self-operand", side, other, f"`{name}` -> `{other}` in a self-operation")
                    yield Edit(edit.operator, edit.label, edit.line, edit.description, edit.source, cue)


@operator("pool-floor", "grid-too-small")
def pool_floor(program: Program) -> Iterator[Edit]:
    """Where the reference pools with `ceil_mode=False`, a ceiling division by a size that is not a block size
    (in a kernel or the host code, not in a launch grid) made a floor division."""
    modes = pool_ceil_modes(program.reference)
    if not modes or all(modes):
        return
    cue = "the reference pools with ceil_mode=False: windows that do not fit are dropped (a floor division)"
    in_grids = {id(n) for site in program.parsed.launches for n in ast.walk(site.call.func)}
    roots: list[tuple[ast.AST, set[str]]] = [(k, set(constexprs_of(k))) for k in program.kernels]
    roots += [(node, set()) for node in program.host_nodes() if isinstance(node, ast.stmt)]
    found: dict[int, tuple[ast.expr, str, str]] = {}
    for root, blocks in roots:
        for node in ast.walk(root):
            division = ceil_division(node) if isinstance(node, ast.expr) else None
            if division is None or not isinstance(node, ast.expr):
                continue
            numerator, divisor = division
            text = program.code(divisor)
            if id(node) not in in_grids and text not in blocks and "block" not in text.lower():
                found.setdefault(id(node), (node, text, f"(({program.code(numerator)}) // ({text}))"))
    by_divisor: dict[str, list[tuple[ast.expr, str]]] = {}
    for node, text, floor in found.values():
        by_divisor.setdefault(text, []).append((node, floor))
    for text, sites in by_divisor.items():
        if len(sites) > 1:  # one pooled size per dimension: the same division, every one of them at once
            yield Edit(
                "pool-floor",
                "grid-too-small",
                sites[0][0].lineno,
                f"every ceiling division by `{text}` -> a floor division (pooled sizes without the partial window)",
                program.replace_all([(node, floor) for node, floor in sites]),
                cue,
                grounded=True,
            )
        for node, floor in sites:
            yield Edit(
                "pool-floor",
                "grid-too-small",
                node.lineno,
                f"`{program.code(node)}` -> `{floor}` (a pooled size without the partial window)",
                program.replace(node, floor),
                cue,
                grounded=len(sites) == 1,
            )


def _grid_is_one(program: Program, kernel: ast.FunctionDef) -> bool:
    """Every launch of `kernel` uses a grid of literal 1s (`[(1,)]`, `[(1, 1)]`)."""
    grids = [
        site.call.func.slice
        for site in program.parsed.launches
        if site.kernel is kernel and isinstance(site.call.func, ast.Subscript)
    ]
    if not grids:
        return False
    for grid in grids:
        axes = grid.elts if isinstance(grid, ast.Tuple) else [grid]
        if not all(isinstance(a, ast.Constant) and a.value == 1 for a in axes):
            return False
    return True


def _allocation(program: Program, tensor: str) -> ast.Call | None:
    """The `torch.empty(...)` / `torch.empty_like(...)` a host name is bound to."""
    for node in program.host_nodes():
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == tensor for t in node.targets)
            and isinstance(node.value, ast.Call)
            and call_name(node.value) in ("torch.empty", "torch.empty_like")
        ):
            return node.value
    return None


@operator("cross-program-atomic", "missing-atomic")
def cross_program_atomic(program: Program) -> Iterator[Edit]:
    """A store to an address no program id reaches, in a kernel launched over several programs: an atomic add into
    a zeroed output."""
    for kernel in program.kernels:
        if _grid_is_one(program, kernel):
            continue
        pids = program_id_names(kernel)
        tensors = program.tensors(kernel)
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Call) and call_name(node) == "tl.store" and node.args):
                continue
            address = feeding(kernel, node.args[0])
            used = {n.id for expr in address for n in ast.walk(expr) if isinstance(n, ast.Name)}
            text = " ".join(ast.unparse(e) for e in address)
            if used & pids or "program_id" in text:
                continue
            changes: list[tuple[ast.AST, str]] = [(node.func, "tl.atomic_add")]
            base = next((n for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and n.id in tensors), None)
            made = _allocation(program, tensors[base.id]) if base is not None else None
            if made is not None:
                changes.append((made.func, call_name(made).replace("empty", "zeros")))
            yield Edit(
                "cross-program-atomic",
                "missing-atomic",
                node.lineno,
                "several programs write one element: `tl.store` -> `tl.atomic_add`"
                + (", output zeroed" if made is not None else ""),
                program.replace_all(changes),
                "the store's address does not depend on the program id, and the grid has more than one program",
            )


@operator("axis-once", "missing-atomic")
def axis_once(program: Program) -> Iterator[Edit]:
    """A grid axis that no store's address reaches (`pid_k` offsets what a program reads, never where it writes):
    every program along it writes the same elements, the last one's values winning (a K split across programs with
    no atomic add, each program still looping from its own start). The axis launched once (its grid count `1`), so
    the one program left along it computes the whole. Cued: the kernel reads the axis's id, its stores never do."""
    for kernel in program.kernels:
        stores = [
            node
            for node in ast.walk(kernel)
            if isinstance(node, ast.Call) and call_name(node) == "tl.store" and node.args
        ]
        addresses = [{n for e in feeding(kernel, s.args[0]) for n in names_in(e)} for s in stores]
        for axis in range(3):
            names = axis_names(kernel, axis)
            if not names or not stores or any(address & names for address in addresses):
                continue
            if any(f"program_id({axis})" in ast.unparse(s.args[0]) for s in stores):
                continue
            changes: list[tuple[ast.AST, str]] = []
            for site in program.parsed.launches:
                grid = launch_grid(site, body=True) if site.kernel is kernel else None
                if isinstance(grid, ast.Tuple | ast.List) and len(grid.elts) > axis:
                    element = grid.elts[axis]
                    if not (isinstance(element, ast.Constant) and element.value == 1):
                        changes.append((element, "1"))
            if changes:
                yield Edit(
                    "axis-once",
                    "missing-atomic",
                    getattr(changes[0][0], "lineno", 0),
                    f"grid axis {axis} launched once: no store's address depends on `tl.program_id({axis})`",
                    program.replace_all(changes),
                    f"the kernel reads `tl.program_id({axis})` ({', '.join(sorted(names)[:3])}), its stores never do",
                )


@operator("drop-cap", "loop-bound")
def drop_cap(program: Program) -> Iterator[Edit]:
    """A host `min(a, b)` / `max(a, b)` replaced by one of its arguments: a block size capped below the row it must
    cover (`min(next_power_of_2(n), 1024)` for a kernel without a loop over blocks). Cued where an argument is a
    power of two of a size."""
    for node in program.host_nodes():
        if not (isinstance(node, ast.Call) and call_name(node) in ("min", "max") and len(node.args) == 2):
            continue
        cue = "a block size capped" if "next_power_of_2" in ast.unparse(node) else ""
        for arg in node.args:
            what = f"`{program.code(node)}` -> `{program.code(arg)}`"
            edit = edit_at(program, "drop-cap", node, program.code(arg), what)
            yield Edit(edit.operator, edit.label, edit.line, edit.description, edit.source, cue)


def _lanes(value: ast.expr | None, blocks: set[str]) -> tuple[str, bool] | None:
    """(block, tiled) of `tl.arange(0, BLOCK)` (tiled False) or `start + tl.arange(0, BLOCK)` (tiled True)."""
    tiled = isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
    if isinstance(value, ast.BinOp) and tiled:
        value = next((v for v in (value.left, value.right) if isinstance(v, ast.Call)), None)
    if (
        isinstance(value, ast.Call)
        and call_name(value) == "tl.arange"
        and len(value.args) == 2
        and isinstance(value.args[0], ast.Constant)
        and value.args[0].value == 0
        and isinstance(value.args[1], ast.Name)
        and value.args[1].id in blocks
    ):
        return value.args[1].id, tiled
    return None


_ARITHMETIC = (ast.Name, ast.BinOp, ast.Constant, ast.operator, ast.expr_context)


def _size_locals(kernel: ast.FunctionDef, sizes: set[str]) -> dict[str, ast.expr]:
    """Names the kernel assigns once from its size parameters alone (`n = height * width`)."""
    found: dict[str, ast.expr] = {}
    for name, assigns in assignments(kernel).items():
        value = assigns[0].value
        arithmetic = all(isinstance(n, _ARITHMETIC) for n in ast.walk(value))
        if len(assigns) == 1 and isinstance(value, ast.BinOp) and arithmetic and names_in(value) <= sizes:
            found[name] = value
    return found


def _at_launch(program: Program, size: ast.expr, given: dict[str, ast.expr]) -> str | None:
    """A size the kernel writes with its parameters, written with what the launch passes for them."""
    if isinstance(size, ast.Name):
        return program.code(given[size.id]) if size.id in given else None
    if not names_in(size) <= set(given):
        return None
    passed = {name: f"({program.code(value)})" for name, value in given.items()}

    class _Passed(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Name(id=passed[node.id], ctx=ast.Load())

    return ast.unparse(_Passed().visit(ast.parse(ast.unparse(size), mode="eval")).body)


def _reduced(kernel: ast.FunctionDef, name: str) -> str:
    """Whether the kernel reduces (`tl.sum`, `tl.max`, `tl.min`) a value that `name`'s lanes feed (through loads,
    calls and arithmetic), the lanes a row of one axis (never widened: `name[:, None]` tiles one axis of several);
    or, lanes of one axis of a tile (`name[None, :]` only), reduces the tile along that axis and scales the tile by
    the result (`x - row_max[:, None]`), adding nothing atomically: each program normalises its own tile. "row",
    "tile" or "" (neither)."""
    slices = {slice_text(n) for n in ast.walk(kernel)
              if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name}  # fmt: skip
    if not slices:
        fed = derived_names(kernel, {name})
        rows = any(
            isinstance(node, ast.Call)
            and call_name(node, last=True) in ("sum", "max", "min")
            and bool(node.args)
            and bool(names_in(node.args[0]) & fed)
            for node in ast.walk(kernel)
        )
        return "row" if rows else ""
    axis = {"None,:": 1, ":,None": 0}.get(next(iter(slices))) if len(slices) == 1 else None
    if axis is None or any("atomic" in call_name(n, last=True) for n in ast.walk(kernel) if isinstance(n, ast.Call)):
        return ""
    fed = _fed(_followed(kernel), name)
    back = ":,None" if axis == 1 else "None,:"
    for target, values in _definitions(kernel).items():
        for value in (d.value for d in values):
            reductions = [
                c
                for c in ast.walk(value)
                if isinstance(c, ast.Call)
                and call_name(c, last=True) in ("sum", "max", "min")
                and c.args
                and names_in(c.args[0]) & fed
                and constant_value(
                    next((k.value for k in c.keywords if k.arg == "axis"), c.args[1] if len(c.args) > 1 else None)
                )
                == axis
            ]
            if not reductions:
                continue
            if any(  # broadcast back at once: `tl.max(x, axis=1)[:, None]`
                isinstance(n, ast.Subscript) and any(n.value is r for r in reductions) and slice_text(n) == back
                for n in ast.walk(value)
            ):
                return "tile"
            results = derived_names(kernel, {target})
            if any(
                isinstance(n, ast.Subscript)
                and isinstance(n.value, ast.Name)
                and n.value.id in results
                and slice_text(n) == back
                for n in ast.walk(kernel)
            ):
                return "tile"
    return ""


def _followed(kernel: ast.FunctionDef) -> dict[str, list[ast.Assign | ast.AugAssign]]:
    """The kernel's definitions (`_definitions`) of names it assigns at most once, besides accumulating into them
    (`acc = tl.zeros(...)`, `acc += tl.dot(a, b)`): which of a reassigned name's values a later line reads, the text
    alone does not say."""
    return {
        name: values
        for name, values in _definitions(kernel).items()
        if sum(isinstance(v, ast.Assign) for v in values) <= 1
    }


def _fed(definitions: dict[str, list[ast.Assign | ast.AugAssign]], name: str) -> set[str]:
    """`name` and every name computed from it through `definitions`."""
    found, changed = {name}, True
    while changed:
        grown = {target for target, values in definitions.items() if any(names_in(v.value) & found for v in values)}
        changed, found = not grown <= found, found | grown
    return found


@operator("whole-block", "loop-bound")
def whole_block(program: Program) -> Iterator[Edit]:
    """A launch's fixed size for a block that must cover a whole dimension -> the next power of two of that
    dimension's size: the kernel ranges over the block once (`cols = tl.arange(0, BLOCK)`), masks it by a size
    (`cols < n_cols`: a parameter, or a name the kernel computes from parameters alone, `n = height * width`), and
    tiles no dimension by it (no program id or loop variable multiplied by it, no loop whose range holds it), so
    lanes past the block are never computed. Cued: the mask says the dimension can be longer than the block. Where
    programs do tile it (`cols = pid * BLOCK + tl.arange(0, BLOCK)`) and the kernel reduces what the lanes load,
    each program reduces its own tile only (a softmax normalised by one tile's sum): one block covering the
    dimension is offered too, cued by that (the programs past the first then mask every lane); in a tile of two
    axes (`offs_n[None, :]`) where it reduces along that axis and scales the tile by the result, grounded (no
    program sees another's part of the row). A block an autotune's configs set is taken out of every config and
    given at the launch instead."""
    found = list(_whole_blocks(program))
    if len(found) > 1:  # several launches cut off: each alone leaves the others wrong
        changes = [change for item, _, _, _ in found for change in item]
        line = getattr(found[0][0][0][0], "lineno", 0)
        description = f"every launch's fixed block covers its dimension ({len(found)} launches)"
        grounded = any(g for _, _, _, g in found)
        text = program.replace_all(changes)
        yield Edit("whole-block", "loop-bound", line, description, text, found[0][2], grounded)
    for item, description, cue, grounded in found:
        line = getattr(item[0][0], "lineno", 0)
        yield Edit("whole-block", "loop-bound", line, description, program.replace_all(item), cue, grounded)


def _whole_blocks(program: Program) -> Iterator[tuple[list[tuple[ast.AST, str]], str, str, bool]]:
    """(the changes, description, cue, grounded) of each block `whole-block` covers."""
    for site in program.parsed.launches:
        kernel, params = site.kernel, params_of(site.kernel)
        blocks = set(constexprs_of(kernel))
        given = site_arguments(site)
        local = _size_locals(kernel, set(params) - blocks)
        for name, assigns in assignments(kernel).items():
            lanes = _lanes(assigns[0].value if len(assigns) == 1 else None, blocks)
            if lanes is None:
                continue
            block, tiled = lanes
            size = _bound(kernel, name, set(params) - blocks | set(local))
            keyword = next((k for k in site.call.keywords if k.arg == block), None)
            passed = _at_launch(program, local.get(size, ast.Name(id=size)), given) if size is not None else None
            tuned = _tuned_entries(program, kernel, block) if keyword is None else []
            if (keyword is None and not tuned) or passed is None:
                continue
            if keyword is not None and "next_power_of_2" in ast.unparse(keyword.value):
                continue
            reduced = _reduced(kernel, name) if tiled else ""
            if tiled != _offset(kernel, block) or (tiled and not reduced):
                continue
            whole = f"triton.next_power_of_2({passed})"
            if keyword is not None:
                changes: list[tuple[ast.AST, str]] = [(keyword.value, whole)]
                was = program.code(keyword.value)
            else:
                changes = [*tuned, (site.call, _with_keyword(program, site.call, f"{block}={whole}"))]
                was = "the autotune's"
            description = f"`{block}={was}` -> `{block}={whole}`: the one block `{name}` covers `{size}`"
            cue = (
                f"programs tile `{name}` by `{block}` and each reduces its own tile of `{size}`"
                if tiled
                else f"`{name}` spans one block of `{block}` lanes, masked by `{name} < {size}`, nothing tiles by it"
            )
            yield changes, description, cue, reduced == "tile"


def _tuned_entries(program: Program, kernel: ast.FunctionDef, block: str) -> list[tuple[ast.AST, str]]:
    """Each config dict of the kernel's autotune written without `block` (every config must set it), or none."""
    changes: list[tuple[ast.AST, str]] = []
    for table in config_tables(program, kernel):
        keys = [k.value if isinstance(k, ast.Constant) else None for k in table.keys] if table else []
        if table is None or block not in keys:
            return []
        kept = [
            f"{program.code(k)}: {program.code(v)}"
            for k, v in zip(table.keys, table.values, strict=True)
            if k is not None and not (isinstance(k, ast.Constant) and k.value == block)
        ]
        changes.append((table, "{" + ", ".join(kept) + "}"))
    return changes


def _with_keyword(program: Program, call: ast.Call, keyword: str) -> str:
    """A call's text with one more keyword argument at its end."""
    text = program.code(call)
    inside = text[: text.rstrip().rindex(")")].rstrip().rstrip(",").rstrip()
    separator = "" if inside.endswith("(") else ", "
    return f"{inside}{separator}{keyword})"


def _bound(kernel: ast.FunctionDef, name: str, sizes: set[str]) -> str | None:
    """The size parameter a mask bounds `name` by (`name < n`, `name[None, :] < n`); None when none does."""
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Lt)):
            continue
        left, right = node.left, node.comparators[0]
        left = left.value if isinstance(left, ast.Subscript) else left
        if isinstance(left, ast.Name) and left.id == name and isinstance(right, ast.Name) and right.id in sizes:
            return right.id
    return None


def _offset(kernel: ast.FunctionDef, block: str) -> bool:
    """Whether the kernel tiles a dimension by `block`: a program id or a loop variable multiplied by it (`pid_w *
    BLOCK_W`, `w0 * BLOCK_W`), or a loop whose range holds it (`range(0, W, BLOCK_W)`)."""
    tiles = program_id_names(kernel)
    for loop in ast.walk(kernel):
        if isinstance(loop, ast.For):
            if block in {n.id for n in ast.walk(loop.iter) if isinstance(n, ast.Name)}:
                return True
            tiles |= {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for node in ast.walk(kernel):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        for mine, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(mine, ast.Name) and mine.id == block:
                text = ast.unparse(other)
                if "program_id" in text or {n.id for n in ast.walk(other) if isinstance(n, ast.Name)} & tiles:
                    return True
    return False
