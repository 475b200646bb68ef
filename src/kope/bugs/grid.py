"""The launch grid: programs that never run (a floor division, a missing axis), outputs they leave unwritten.

The bug kind's cues, recipes, edits and mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: grid-too-small, uninitialized-output.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import re
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import (
    Kernel,
    argument,
    calls_in,
    ceil_division,
    constant_value,
    expand,
    host_assignments,
    launch_grid,
    names_in,
)
from kope.bugs.cue import Source, _kernel_loops, _kernels, cue, range_call
from kope.bugs.edit import (
    Edit,
    Program,
    assignments,
    autotune_configs,
    axis_names,
    constexprs_of,
    edit_at,
    operator,
    program_id_names,
)
from kope.bugs.mutation import Context, Mutation, binary, cst_calls_in, mutation, positional
from kope.bugs.recipe import (
    _analysed,
    _bounds_for,
    _cue_nodes,
    _EmptyToZeros,
    _expr,
    _LineTransformer,
    _rewrite,
    parse,
    recipe,
)
from kope.source import LaunchSite, call_name

# -- how diagnosis sees it (cues) --------------------------------------------------------------


@cue("grid-floor-div", "a launch grid computed with floor division: the last partial block gets no program")
def grid_floor_div(source: Source) -> Iterator[ast.AST]:
    for launch in source.dataflow.launches:
        for axis in launch.grid or []:
            for node in ast.walk(axis):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
                    yield node


def _axes_used(kernel: Kernel) -> set[int]:
    axes: set[int] = set()
    for call in calls_in(kernel.node, "program_id"):
        axis = constant_value(argument(call, 0, "axis"))
        if axis is not None:
            axes.add(int(axis))
    return axes


@cue("grid-axis-missing", "the kernel reads tl.program_id(k) but the launch grid has no axis k, or a literal 1 there")
def grid_axis_missing(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        used = _axes_used(kernel)
        for launch in source.dataflow.launches_of(kernel):
            if launch.grid is None:
                continue
            for axis in sorted(used):
                if axis >= len(launch.grid):
                    yield launch.call
                elif axis > 0 and constant_value(launch.grid[axis]) == 1.0 and _axis_tiles(kernel, axis):
                    yield launch.grid[axis]


def _axis_tiles(kernel: Kernel, axis: int) -> bool:
    """Whether program_id(axis) selects a tile of block offsets (so one program cannot cover the axis)."""
    names = {
        name
        for name, values in kernel.assigns.items()
        if any(constant_value(argument(c, 0, "axis")) == float(axis) for v in values for c in calls_in(v, "program_id"))
    }
    for values in kernel.assigns.values():
        for value in values:
            if any(True for _ in calls_in(value, "arange")) and (
                names_in(value) & names
                or any(constant_value(argument(c, 0, "axis")) == float(axis) for c in calls_in(value, "program_id"))
            ):
                return True
    return False


def _per_program(expr: ast.AST, kernel: Kernel) -> bool:
    """Whether an expression depends on the program id (a persistent or strided loop start)."""
    return bool(names_in(expr) & kernel.pids) or any(True for _ in calls_in(expr, "program_id", "num_programs"))


@cue("store-loop-skips-start", "a loop that writes the output starts past 0: the first block is never written")
def store_loop_skips_start(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for loop in _kernel_loops(kernel):
            call = range_call(loop)
            if call is None or len(call.args) < 2 or constant_value(call.args[0]) == 0.0:
                continue
            if not isinstance(loop.target, ast.Name) or _per_program(call.args[0], kernel):
                continue
            variable = loop.target.id
            for store in calls_in(loop, "store"):
                pointer = store.args[0] if store.args else None
                if any(variable in names_in(node) for node in expand(pointer, kernel)):
                    yield call
                    break


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _FloorToCdiv(cst.CSTTransformer):
    """Every `a // b` becomes `triton.cdiv(a, b)`."""

    def __init__(self) -> None:
        self.changed = False

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if m.matches(updated_node.operator, m.FloorDivide()):
            self.changed = True
            return cst.Call(
                func=cst.Attribute(value=cst.Name("triton"), attr=cst.Name("cdiv")),
                args=[cst.Arg(updated_node.left), cst.Arg(updated_node.right)],
            )
        return updated_node


def launch_grid_names(module: cst.Module) -> set[str]:
    """Names used as grids in `kernel[grid](...)`."""
    names: set[str] = set()
    for call in m.findall(module, m.Call(func=m.Subscript())):
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Subscript)
        for element in call.func.slice:
            if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name):
                names.add(element.slice.value.value)
    return names


class _GridFloorToCeil(cst.CSTTransformer):
    """In launch grids, and in values assigned to names used as grids, `a // b` -> `triton.cdiv(a, b)`."""

    def __init__(self, grid_names: set[str]) -> None:
        self.grid_names = grid_names
        self.changed = False

    def _rewrite(self, node: cst.CSTNodeT) -> cst.CSTNodeT:
        inner = _FloorToCdiv()
        rewritten = node.visit(inner)
        self.changed |= inner.changed
        return rewritten  # type: ignore[return-value]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if isinstance(updated_node.func, cst.Subscript):
            return updated_node.with_changes(func=self._rewrite(updated_node.func))
        return updated_node

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        targets = {t.target.value for t in updated_node.targets if isinstance(t.target, cst.Name)}
        if targets & self.grid_names:
            return updated_node.with_changes(value=self._rewrite(updated_node.value))
        return updated_node


@recipe("grid-ceil-div", "use triton.cdiv instead of floor division in launch grids")
def grid_ceil_div(source: str) -> Iterator[str]:
    module = parse(source)
    transformer = _GridFloorToCeil(launch_grid_names(module))
    edited = module.visit(transformer)
    if transformer.changed:
        yield edited.code


class _GridAxis(_LineTransformer):
    def __init__(self, line: int, axis: int, value: str) -> None:
        super().__init__()
        self.target, self.axis, self.value = line, axis, value

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        if self.line(original_node) != self.target or self.changed:
            return updated_node
        elements = list(updated_node.elements)
        if self.axis < len(elements) and m.matches(elements[self.axis].value, m.Integer("1")):
            elements[self.axis] = elements[self.axis].with_changes(value=_expr(self.value))
        elif self.axis == len(elements):
            last = elements[-1]
            elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            elements.append(cst.Element(_expr(self.value)))
        else:
            return updated_node
        self.changed = True
        return updated_node.with_changes(elements=elements)


class _RangeFromZero(_LineTransformer):
    def __init__(self, line: int) -> None:
        super().__init__()
        self.target = line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            self.line(original_node) == self.target
            and call_name(updated_node, last=True) in ("range", "static_range")
            and len(updated_node.args) >= 2
        ):
            self.changed = True
            args = list(updated_node.args)
            args[0] = args[0].with_changes(value=cst.Integer("0"))
            return updated_node.with_changes(args=args)
        return updated_node


def _axis_extent(kernel: Kernel, launch_args: dict[str, ast.expr], axis: int) -> str | None:
    """`triton.cdiv(size, block)` for a grid axis, from how the kernel tiles program_id(axis)."""
    pid_names = {
        name
        for name, values in kernel.assigns.items()
        if any(constant_value(argument(c, 0, "axis")) == float(axis) for v in values for c in calls_in(v, "program_id"))
    }
    for name, values in kernel.assigns.items():
        for value in values:
            if not (names_in(value) & pid_names and any(True for _ in calls_in(value, "arange"))):
                continue
            blocks = [b for b in names_in(value) if b in kernel.constexprs]
            bounds = [b for b in _bounds_for(kernel, {name}) if b.isidentifier() and b in kernel.params]
            if blocks and bounds and blocks[0] in launch_args and bounds[0] in launch_args:
                return f"triton.cdiv({ast.unparse(launch_args[bounds[0]])}, {ast.unparse(launch_args[blocks[0]])})"
    return None


@recipe(
    "cover-output",
    "make every output element written: add the missing grid axis, start write loops at 0, zero-fill partially "
    "written buffers",
)
def cover_output(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for kernel in parsed.dataflow.kernels.values():
        used = sorted(int(constant_value(argument(c, 0, "axis")) or 0) for c in calls_in(kernel.node, "program_id"))
        for launch in parsed.dataflow.launches_of(kernel):
            if launch.grid is None:
                continue
            for axis in dict.fromkeys(used):
                missing = axis >= len(launch.grid) or (axis > 0 and constant_value(launch.grid[axis]) == 1.0)
                extent = _axis_extent(kernel, launch.args, axis) if missing else None
                if extent is None:
                    continue
                tuple_line = launch.grid[0].lineno if launch.grid else -1
                edited = _rewrite(source, _GridAxis(tuple_line, axis, extent))
                if edited is not None:
                    yield edited
    for node in _cue_nodes(parsed, "store-loop-skips-start"):
        edited = _rewrite(source, _RangeFromZero(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited
    lines = {getattr(n, "lineno", -1) for n in _cue_nodes(parsed, "partial-store-into-empty")}
    if lines:
        edited = _rewrite(source, _EmptyToZeros(lines))
        if edited is not None:
            yield edited


# -- the search's edits (repair operators) -----------------------------------------------------


@operator("floor-to-cdiv", "grid-too-small")
def floor_to_cdiv(program: Program) -> Iterator[Edit]:
    """`a // b` to a ceiling division: `triton.cdiv` on the host (grids), `tl.cdiv` in kernels (loop counts)."""
    for node in ast.walk(program.tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            fn = "tl.cdiv" if program.in_kernel(node) else "triton.cdiv"
            new = f"{fn}({ast.unparse(node.left)}, {ast.unparse(node.right)})"
            yield edit_at(program, "floor-to-cdiv", node, new, f"`{program.code(node)}` -> `{new}`")


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
                        yield edit_at(program, "grid-axis", element, new, f"grid axis `1` -> `{new}`")


def _grid_tuples(program: Program) -> Iterator[ast.Tuple]:
    """The tuples launch grids are made of: written at the launch, bound to the grid's name, or returned by a
    `lambda META: (...)`."""
    for site in program.parsed.launches:
        grid = site.grid
        if isinstance(grid, ast.Name) and site.host is not None:
            name = grid.id
            bound = [
                a.value
                for a in ast.walk(site.host)
                if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
            ]
            grid = bound[-1] if bound else None
        if isinstance(grid, ast.Lambda):
            grid = grid.body
        if isinstance(grid, ast.Tuple) and len(grid.elts) >= 2:
            yield grid


@operator("grid-swap", "grid-too-small")
def grid_swap(program: Program) -> Iterator[Edit]:
    """Two axes of a launch grid exchanged (the kernel reads axis 0 as the other dimension's blocks)."""
    seen: set[int] = set()
    for grid in _grid_tuples(program):
        if id(grid) in seen:
            continue
        seen.add(id(grid))
        for a, b in itertools.combinations(range(len(grid.elts)), 2):
            elements = [program.code(e) for e in grid.elts]
            elements[a], elements[b] = elements[b], elements[a]
            if elements[a] == elements[b]:
                continue
            new = "(" + ", ".join(elements) + ")"
            yield edit_at(program, "grid-swap", grid, new, f"grid `{program.code(grid)}` -> `{new}`")


@operator("zero-init", "uninitialized-output")
def zero_init(program: Program) -> Iterator[Edit]:
    """An output allocated uninitialised (`torch.empty`, `empty_like`) allocated as zeros: a kernel that adds into
    it (atomics, `+=` across programs) or writes only part of it needs it zeroed. Cued where a kernel of the file
    writes with atomics."""
    atomics = any(isinstance(n, ast.Call) and call_name(n).startswith("tl.atomic_") for _, n in program.kernel_nodes())
    cue = "a kernel adds into memory with atomics" if atomics else ""
    for node in program.host_nodes():
        name = call_name(node)
        if isinstance(node, ast.Call) and name in ("torch.empty", "torch.empty_like"):
            zeros = name.replace("empty", "zeros")
            start, end = program.span(node.func)
            text = program.text[:start] + zeros + program.text[end:]
            yield Edit("zero-init", "uninitialized-output", node.lineno, f"`{name}(...)` -> `{zeros}(...)`", text, cue)


_ALLOCATIONS = ("torch.empty", "torch.zeros", "torch.empty_like", "torch.zeros_like", "torch.ones_like")


_DTYPE_MESSAGE = re.compile(r"dtype (\w+) where the reference has (\w+)")
"""The evaluation's words for an output of another dtype (kope.evaluate.compare)."""


def _stated_dtypes(program: Program) -> Iterator[Edit]:
    """Every host allocation given the dtype the evaluation's error says the output has (`dtype float16 where the
    reference has float32`) given the reference's instead: one grounded edit."""
    found = _DTYPE_MESSAGE.search(program.error[:2000])
    if found is None:
        return
    wrong, right = found.groups()
    changes: list[tuple[ast.AST, str]] = []
    for node in program.host_nodes():
        if isinstance(node, ast.Call) and call_name(node) in _ALLOCATIONS:
            given = next((k for k in node.keywords if k.arg == "dtype"), None)
            if given is not None and program.code(given.value).rsplit(".", 1)[-1] == wrong:
                changes.append((given.value, f"torch.{right}"))
    if changes:
        yield Edit(
            "alloc-dtype",
            "dtype-mismatch",
            getattr(changes[0][0], "lineno", 0),
            f"allocate the output as torch.{right}, the reference's dtype, not torch.{wrong}",
            program.replace_all(changes),
            f"the output is {wrong} where the reference's is {right}",
            grounded=True,
        )


@operator("alloc-dtype", "dtype-mismatch")
def alloc_dtype(program: Program) -> Iterator[Edit]:
    """An output allocated with another tensor's dtype given the dtype it must have: `torch.empty_like(target)` (an
    index tensor) -> `torch.empty_like(target, dtype=x.dtype)` for the forward's other inputs, or float32. Where the
    evaluation's error states the output's dtype and the reference's, every host allocation of that dtype takes the
    reference's first (grounded)."""
    yield from _stated_dtypes(program)
    for function in (n for n in ast.walk(program.tree) if isinstance(n, ast.FunctionDef) and n.name == "forward"):
        inputs = [a.arg for a in function.args.args if a.arg != "self"]
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and call_name(node) in _ALLOCATIONS):
                continue
            current = next((k for k in node.keywords if k.arg == "dtype"), None)
            for dtype in [f"{i}.dtype" for i in inputs] + ["torch.float32"]:
                if current is not None:
                    if program.code(current.value) == dtype:
                        continue
                    text = program.replace(current.value, dtype)
                else:
                    _, end = program.span(node)
                    text = program.text[: end - 1].rstrip() + f", dtype={dtype})" + program.text[end:]
                yield Edit(
                    "alloc-dtype", "dtype-mismatch", node.lineno, f"`{call_name(node)}(..., dtype={dtype})`", text
                )


@operator("argument-swap", "wrong-normalizer")
def argument_swap(program: Program) -> Iterator[Edit]:
    """A size passed to a kernel, or used in its grid, replaced by another size of the host code
    (`mean_kernel[grid](losses, out, C)` -> `..., N)`; `triton.cdiv(M, BLOCK_N)` -> `triton.cdiv(N, BLOCK_N)`), and an
    attribute of the module passed to a kernel replaced by another one passed to a launch (`self.lo, self.lo` ->
    `self.lo, self.hi`). Cued when a size or an attribute is passed twice (`num_partials, num_partials`: a count
    passed where another belongs), or one size gives two axes of a grid (`(cdiv(M, BM), cdiv(M, BN))`)."""
    sizes = sorted(program.host_sizes())
    attributes = sorted(
        {
            ast.unparse(t)
            for node in program.host_nodes()
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
        }
    )
    for site in program.parsed.launches:
        arguments = [*site.call.args, *(k.value for k in site.call.keywords)]
        texts = [ast.unparse(a) for a in arguments]
        grid = [n for n in ast.walk(_grid_value(site)) if isinstance(n, ast.Name)] if site.grid is not None else []
        for arg in [*arguments, *grid]:
            if isinstance(arg, ast.Name) and arg.id in sizes:
                others = [o for o in sizes if o != arg.id]
            elif ast.unparse(arg) in attributes:
                others = [o for o in attributes if o != ast.unparse(arg)]
            else:
                continue
            cue = ""
            if texts.count(ast.unparse(arg)) > 1 and any(arg is a for a in arguments):
                cue = f"`{ast.unparse(arg)}` is passed twice"
            elif any(arg is g for g in grid) and [g.id for g in grid].count(ast.unparse(arg)) > 1:
                # `(cdiv(M, BM), cdiv(M, BN))`: one size for two axes; the sizes the grid lacks go first
                cue = f"`{ast.unparse(arg)}` sizes two axes of the grid"
                used = {g.id for g in grid}
                bounds = _axis_bound(program, site, arg)
                others = sorted(others, key=lambda o: (o not in bounds, o in used))
            for other in others:
                text = program.replace(arg, other)
                description = f"`{ast.unparse(arg)}` -> `{other}` at the launch (line {arg.lineno})"
                yield Edit("argument-swap", "wrong-normalizer", arg.lineno, description, text, cue)


@operator("grid-product", "uninitialized-output")
def grid_product(program: Program) -> Iterator[Edit]:
    """A grid axis that counts one dimension where the kernel's programs walk several flattened ones: `(B, ...)` ->
    `(B * C, ...)` for another size of the host code (one program per row of a (B, C, L) tensor)."""
    sizes = sorted(program.host_sizes())
    seen: set[int] = set()
    for site in program.parsed.launches:
        if site.grid is None:
            continue
        grid = _grid_value(site)
        if isinstance(grid, ast.Lambda):
            grid = grid.body
        if not isinstance(grid, ast.Tuple) or id(grid) in seen:
            continue
        seen.add(id(grid))
        for element in grid.elts:
            if not (isinstance(element, ast.Name) and element.id in sizes):
                continue
            for other in sizes:
                if other != element.id:
                    new = f"{element.id} * {other}"
                    yield edit_at(program, "grid-product", element, new, f"grid axis `{element.id}` -> `{new}`")


def _axis_bound(program: Program, site: LaunchSite, arg: ast.expr) -> set[str]:
    """The host sizes that bound the indices of the grid axis `arg` stands in: the kernel compares the indices made
    from `tl.program_id(axis)` with a parameter (`offs_n < N`), and the launch passes it a host name."""
    grid = _grid_value(site)
    if isinstance(grid, ast.Lambda):
        grid = grid.body
    if not isinstance(grid, ast.Tuple):
        return set()
    axis = next((i for i, e in enumerate(grid.elts) if any(n is arg for n in ast.walk(e))), None)
    if axis is None:
        return set()
    kernel = site.kernel
    derived: set[str] = set()
    for _ in range(4):  # names made from the axis's program id, a few steps deep
        for node in ast.walk(kernel):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            reads_pid = any(_program_axis(c) == axis for c in ast.walk(node.value)) or bool(
                names_in(node.value) & derived
            )
            if reads_pid:
                derived.add(node.targets[0].id)
    bounds: set[str] = set()
    arguments = program.launch_arguments(kernel)
    for node in ast.walk(kernel):
        if isinstance(node, ast.Compare) and names_in(node.left) & derived:
            for right in node.comparators:
                passed = arguments.get(right.id) if isinstance(right, ast.Name) else None
                if isinstance(passed, ast.Name):
                    bounds.add(passed.id)
    return bounds


def _program_axis(node: ast.AST) -> int | None:
    """The axis of a `tl.program_id(axis)` call (`tl.program_id(1)`, `tl.program_id(axis=1)`), else None."""
    if not (isinstance(node, ast.Call) and call_name(node) == "tl.program_id"):
        return None
    value = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, int) else None


def _grid_value(site: LaunchSite) -> ast.expr:
    """A launch's grid, through the name it is bound to before the launch (`grid = (...)`; `kernel[grid](...)`)."""
    grid = launch_grid(site)
    assert grid is not None
    return grid


@operator("host-size", "uninitialized-output")
def host_size(program: Program) -> Iterator[Edit]:
    """A size taken from a tensor on the host replaced by another of its sizes: `n = x.shape[0]` -> `x.numel()`
    (an elementwise kernel over only the first dimension's count) or another dimension."""
    for node in program.host_nodes():
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)):
            continue
        if node.value.attr != "shape" or not isinstance(node.slice, ast.Constant):
            continue
        tensor = ast.unparse(node.value.value)
        dim = node.slice.value
        for new in [f"{tensor}.numel()", *(f"{tensor}.shape[{d}]" for d in (0, 1, 2, -1) if d != dim)]:
            text = program.replace(node, new)
            yield Edit("host-size", "uninitialized-output", node.lineno, f"`{program.code(node)}` -> `{new}`", text)


def _group_sizes(kernel: ast.FunctionDef) -> dict[str, set[str]]:
    """A grouped launch order's group-size constexprs (`GROUP_M`, `GROUP_SIZE_M`: a block size the program id
    is divided by) with the names bound to them alone (`group_size_m = GROUP_M`)."""
    groups = {c for c in constexprs_of(kernel) if "GROUP" in c.upper()}
    found: dict[str, set[str]] = {g: {g} for g in groups}
    for name, assigns in assignments(kernel).items():
        for a in assigns:
            if isinstance(a.value, ast.Name) and a.value.id in groups:
                found[a.value.id].add(name)
    return found


def _capped(kernel: ast.FunctionDef, names: set[str]) -> bool:
    """Some `min`/`tl.minimum` call takes one of `names`: the group size is capped somewhere already."""
    return any(
        isinstance(n, ast.Call)
        and call_name(n) in ("min", "tl.minimum", "minimum")
        and names & {x.id for arg in n.args for x in ast.walk(arg) if isinstance(x, ast.Name)}
        for n in ast.walk(kernel)
    )


def _grid_body(site: LaunchSite) -> ast.expr | None:
    """A launch's grid as the value it launches with: a tuple written at the launch or bound above it, a
    `lambda META: (...)`'s tuple, or what a grid function defined in the host returns (`def grid(meta): return
    (...)`, one `return`)."""
    grid = launch_grid(site, body=True)
    if isinstance(grid, ast.Name) and site.host is not None:
        host = site.host
        defined = [n for n in ast.walk(host) if isinstance(n, ast.FunctionDef) and n.name == grid.id and n is not host]
        returns = [r for d in defined[-1:] for r in ast.walk(d) if isinstance(r, ast.Return)]
        grid = returns[0].value if len(returns) == 1 else None
    return grid


def _one_program_per_tile(program: Program, kernel: ast.FunctionDef) -> bool:
    """Every launch of the kernel runs one program per tile: a grid of one axis that is the product of two ceiling
    divisions (`triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)`, through host names bound to them), nothing
    rounding the rows up to whole groups."""
    sites = [s for s in program.parsed.launches if s.kernel is kernel]
    for site in sites:
        grid = _grid_body(site) if site.grid is not None else None
        if not (isinstance(grid, ast.Tuple) and len(grid.elts) == 1):
            return False
        factors = _mult_leaves(_host_value(site, grid.elts[0]))
        if len(factors) != 2 or not all(ceil_division(_host_value(site, f)) for f in factors):
            return False
    return bool(sites)


@operator("group-cap", "uninitialized-output")
def group_cap(program: Program) -> Iterator[Edit]:
    """A grouped launch order (`pid_m = first_pid_m + pid_in_group % GROUP_M`, `pid_n = pid_in_group // GROUP_M`)
    whose last group is not capped by the rows left: where the row blocks are not a multiple of GROUP_M, some tiles
    get no program and others get two. The group size in those two operations becomes
    `tl.minimum(num_pid_m - first_pid_m, GROUP_M)`. Grounded where every launch runs one program per tile (a grid
    of row blocks times column blocks, not rounded up to whole groups): the uncapped order then leaves tiles
    without a program whenever the row blocks are not a multiple of the group and there are several column
    blocks, which the derived cases of small sizes may never show."""
    for kernel in program.kernels:
        per_tile = _one_program_per_tile(program, kernel)
        grounded = False  # the kernel's first edit only
        pids = program_id_names(kernel)
        assigned = assignments(kernel)
        counts = [
            n
            for n, a in assigned.items()
            if any(ceil_division(x.value) for x in a)  # tl.cdiv(M, BLOCK_M), (M + BLOCK_M - 1) // BLOCK_M
        ]
        for group, aliases in _group_sizes(kernel).items():
            if _capped(kernel, aliases):
                continue
            sites = [
                n.right
                for n in ast.walk(kernel)
                if isinstance(n, ast.BinOp)
                and isinstance(n.op, ast.Mod | ast.FloorDiv)
                and isinstance(n.right, ast.Name)
                and n.right.id in aliases
                and names_in(n.left) & pids
            ]
            if not sites:
                continue
            per_group = {  # num_pid_in_group = GROUP_M * num_pid_n: the counts it multiplies are not the rows'
                x.id
                for a in assigned.values()
                for node in a
                if names_in(node.value) & aliases
                for x in ast.walk(node.value)
                if isinstance(x, ast.Name)
            }
            rows = [c for c in counts if c not in per_group] or counts
            starts = [
                name
                for name, a in assigned.items()
                if any(
                    isinstance(x.value, ast.BinOp)
                    and isinstance(x.value.op, ast.Mult)
                    and names_in(x.value) & aliases
                    and names_in(x.value) & pids
                    for x in a
                )
            ]
            if not starts:  # no `first_pid_m`: the group's index (`pid // num_pid_in_group`) times GROUP_M
                starts = [
                    f"{g} * {group}"
                    for g in pids
                    if any(
                        isinstance(x.value, ast.BinOp)
                        and isinstance(x.value.op, ast.FloorDiv)
                        and not names_in(x.value.right) & aliases
                        for x in assigned.get(g, [])
                    )
                ]
            for count, start in itertools.product(rows, starts):
                capped = f"tl.minimum({count} - {start}, {group})"
                yield Edit(
                    "group-cap",
                    "uninitialized-output",
                    sites[0].lineno,
                    f"grouped launch order: the group size `{group}` -> `{capped}`",
                    program.replace_all([(site, capped) for site in sites]),
                    "a grouped launch order whose last group is not capped by the row blocks left"
                    + (", on a grid of one program per tile" if per_tile else ""),
                    grounded=per_tile and not grounded,
                )
                grounded = grounded or per_tile


def _tile_indices(kernel: ast.FunctionDef, counts: dict[str, str]) -> dict[str, str]:
    """The tile index each counted block scales, by block: `pid_n` of `pid_n * BLOCK_N` (first in source order),
    where `counts` has a ceiling division by `BLOCK_N`."""
    pids = program_id_names(kernel)
    found: dict[str, str] = {}
    products = [n for n in ast.walk(kernel) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
    for node in sorted(products, key=lambda n: (n.lineno, n.col_offset)):
        for tile, block in ((node.left, node.right), (node.right, node.left)):
            if isinstance(tile, ast.Name) and tile.id in pids and isinstance(block, ast.Name) and block.id in counts:
                found.setdefault(block.id, tile.id)
    return found


@operator("plain-order", "uninitialized-output")
def plain_order(program: Program) -> Iterator[Edit]:
    """A kernel on one program axis that maps its program to two tiles (`pid_m * BLOCK_M`, `pid_n * BLOCK_N`) in an
    order of its own (a grouped order with its count wrong, a swizzle) given the plain one: after the tiles' last
    assignments, `pid_m = pid // num_pid_n` and `pid_n = pid % num_pid_n` (and the column-major order), with the
    counts the kernel takes by ceiling division. Programs past the tiles (a grid rounded up to whole groups) fall
    outside the masks. Cued where the order is grouped."""
    for kernel in program.kernels:
        axes = {_program_axis(n) for n in ast.walk(kernel) if call_name(n) == "tl.program_id"}
        starts = [s for s in kernel.body if isinstance(s, ast.Assign) and _program_axis(s.value) == 0]
        if axes != {0} or len(starts) != 1 or not isinstance(starts[0].targets[0], ast.Name):
            continue
        pid = starts[0].targets[0].id
        assigned = assignments(kernel)
        counts: dict[str, str] = {}
        for name, assigns in assigned.items():
            division = ceil_division(assigns[0].value)
            if len(assigns) == 1 and division is not None and isinstance(division[1], ast.Name):
                counts[division[1].id] = name
        tiles = _tile_indices(kernel, counts)
        if len(tiles) != 2 or len(set(tiles.values())) != 2 or pid in tiles.values():
            continue
        (row_block, row), (col_block, col) = tiles.items()
        last = [assigned[t][-1] for t in (row, col) if t in assigned]
        if len(last) != 2 or not all(a in kernel.body for a in last):
            continue
        after = max(last, key=lambda a: a.lineno)
        if any(assigned[counts[b]][0].lineno > after.lineno for b in (row_block, col_block)):
            continue
        grouped = any("group" in n.lower() for n in program_id_names(kernel))
        _, end = program.lines_of(after)
        indent = program.indent_of(after)
        for first, second, across in ((row, col, counts[col_block]), (col, row, counts[row_block])):
            lines = f"{indent}{first} = {pid} // {across}\n{indent}{second} = {pid} % {across}\n"
            yield Edit(
                "plain-order",
                "uninitialized-output",
                after.lineno,
                f"tiles in the plain order after line {after.lineno}: `{first} = {pid} // {across}`,"
                f" `{second} = {pid} % {across}`",
                program.text[:end] + lines + program.text[end:],
                "a grouped tile order" if grouped else "",
            )


def _tuned_values(program: Program, tune: ast.Call) -> dict[str, set[object]]:
    """Each meta-parameter an autotune's configs set (`triton.Config({...})`) with the values they give it."""
    configs = autotune_configs(tune, program.parsed.tree)
    found: dict[str, set[object]] = {}
    for config in configs.elts if isinstance(configs, ast.List | ast.Tuple) else []:
        meta = config.args[0] if isinstance(config, ast.Call) and config.args else None
        for key, value in zip(meta.keys, meta.values, strict=False) if isinstance(meta, ast.Dict) else []:
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Constant):
                found.setdefault(key.value, set()).add(value.value)
    return found


def _grid_tuple(site: LaunchSite) -> ast.Tuple | None:
    """The launch's grid as a tuple: written in the launch, or the last `grid = (...)` above it in its function."""
    grid = _grid_value(site) if site.grid is not None else None
    return grid if isinstance(grid, ast.Tuple) else None


def _block_divisors(grid: ast.AST) -> list[ast.Constant]:
    """The integer literals a grid divides sizes by: `cdiv(n, 128)`, `n // 128`, `(n + 127) // 128`."""
    found: list[ast.Constant] = []
    for node in ast.walk(grid):
        divisor = None
        if isinstance(node, ast.Call) and call_name(node).endswith("cdiv") and len(node.args) == 2:
            divisor = node.args[1]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            divisor = node.right
        if isinstance(divisor, ast.Constant) and type(divisor.value) is int:
            found.append(divisor)
    return found


def _host_sizes_inlined(site: LaunchSite, grid: ast.Tuple) -> ast.Tuple:
    """The grid with each axis that is a name the host binds once before the launch written as that value
    (`(grid_b, grid_d)` with `grid_b = triton.cdiv(B, 128)`); the grid itself where none is."""
    host = site.host
    if host is None:
        return grid
    launch_line = getattr(site.call, "lineno", 0)
    stores: dict[str, int] = {}
    for node in ast.walk(host):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    once = {
        node.targets[0].id: node.value
        for node in ast.walk(host)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and stores.get(node.targets[0].id) == 1
        and node.lineno < launch_line
    }
    if not any(isinstance(axis, ast.Name) and axis.id in once for axis in grid.elts):
        return grid
    axes = [
        copy.deepcopy(once[axis.id]) if isinstance(axis, ast.Name) and axis.id in once else copy.deepcopy(axis)
        for axis in grid.elts
    ]
    return ast.copy_location(ast.Tuple(elts=axes, ctx=ast.Load()), grid)


class _Meta(ast.NodeTransformer):
    def __init__(self, keys: dict[int, str]) -> None:
        self.keys = keys

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        key = self.keys.get(id(node))
        return ast.parse(f"META[{key!r}]", mode="eval").body if key else node


@operator("autotune-grid", "uninitialized-output")
def autotune_grid(program: Program) -> Iterator[Edit]:
    """A launch grid that divides by a literal block size (`triton.cdiv(N, 128)`, or through a name the host binds
    to it) where the kernel is autotuned over configs that give that block another value too: under those configs
    the grid is too small (tiles never written) or too large. The grid becomes `lambda META: (...)` with the block
    read from the config that runs. Grounded where each divisor is read as the block the kernel multiplies that
    grid axis's program id by (the configs contradict the literal); with several such launches, all at once too."""
    together: list[tuple[ast.AST, str]] = []
    for site in program.parsed.launches:
        made = list(_autotuned_grids(program, site))
        for rank, (grid, text, consistent) in enumerate(made):
            if consistent and rank == 0:
                together.append((grid, text))
            yield Edit(
                "autotune-grid",
                "uninitialized-output",
                grid.lineno,
                f"the grid's block sizes from the autotuned config: `{ast.unparse(grid)}` -> `{text}`",
                program.replace(grid, text),
                "an autotuned kernel launched on a grid that divides by a literal block size its configs vary"
                + (", each the block the kernel tiles that axis by" if consistent else ""),
                grounded=consistent and rank == 0,
            )
    if len(together) > 1:
        yield Edit(
            "autotune-grid",
            "uninitialized-output",
            getattr(together[0][0], "lineno", 0),
            f"every autotuned launch's grid from its config ({len(together)} launches)",
            program.replace_all(together),
            "autotuned kernels launched on grids that divide by literal block sizes their configs vary",
            grounded=True,
        )


def _autotuned_grids(program: Program, site: LaunchSite) -> Iterator[tuple[ast.Tuple, str, bool]]:
    """(the grid, `lambda META: ...`, whether each divisor became the block its axis's program id is multiplied by)
    for one launch of an autotuned kernel, the consistent readings first."""
    tune = program.parsed.autotune(site.kernel)
    grid = _grid_tuple(site) if tune is not None else None
    if tune is None or grid is None:
        return
    written = _host_sizes_inlined(site, grid)  # `grid_b = triton.cdiv(B, 128)`, launched on `(grid_b, ...)`
    axis_of = {id(lit): axis for axis, elt in enumerate(written.elts) for lit in _block_divisors(elt)}
    varying = {k: v for k, v in _tuned_values(program, tune).items() if len(v) > 1}
    literals = _block_divisors(written)
    choices = [(i, [k for k, v in varying.items() if lit.value in v]) for i, lit in enumerate(literals)]
    choices = [(i, keys) for i, keys in choices if keys]
    if not choices:
        return
    tiles = {axis: _tiled_by(site.kernel, axis) for axis in range(len(written.elts))}
    readings = []
    for picked in itertools.islice(itertools.product(*(keys for _, keys in choices)), 64):
        consistent = all(
            key in tiles.get(axis_of.get(id(literals[i]), -1), set())
            for (i, _), key in zip(choices, picked, strict=True)
        )
        readings.append((not consistent, picked))
    for inconsistent, picked in sorted(readings, key=lambda r: r[0])[:8]:
        copied = copy.deepcopy(written)  # its divisors in the same walk order as the grid's
        found = _block_divisors(copied)
        made = _Meta({id(found[i]): key for (i, _), key in zip(choices, picked, strict=True)}).visit(copied)
        assert isinstance(made, ast.expr)
        yield grid, f"lambda META: {ast.unparse(made)}", not inconsistent


def _tiled_by(kernel: ast.FunctionDef, axis: int) -> set[str]:
    """The names the kernel multiplies a name made from `tl.program_id(axis)` by (`pid_b * BLOCK_B`)."""
    made = axis_names(kernel, axis)

    def of_axis(value: ast.expr) -> bool:
        return bool(names_in(value) & made) or any(
            constant_value(argument(c, 0, "axis")) == float(axis) for c in calls_in(value, "program_id")
        )

    found: set[str] = set()
    for node in ast.walk(kernel):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for mine, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(mine, ast.Name) and of_axis(other):
                    found.add(mine.id)
    return found


# -- a grid that does not count the kernel's tiles ---------------------------------------------


def _mult_leaves(node: ast.expr) -> list[ast.expr]:
    """The factors of a product chain (`pid_n * BLOCK_N * VEC` -> pid_n, BLOCK_N, VEC)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _mult_leaves(node.left) + _mult_leaves(node.right)
    return [node]


def _unwrapped(node: ast.expr) -> ast.expr:
    """`pid.to(tl.int64)` -> `pid` (a cast does not change the position)."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
        and isinstance(node.func.value, ast.Name | ast.Call)
    ):
        node = node.func.value
    return node


def _products(kernel: ast.FunctionDef) -> Iterator[list[ast.expr]]:
    """The factors of every product in a kernel (casts unwrapped), a name bound once to a product of block sizes
    read as those (`pid * elements_per_block` for `elements_per_block = BLOCK_SIZE * VECTOR_SIZE`)."""
    blocks = set(constexprs_of(kernel))
    named: dict[str, list[ast.expr]] = {}
    for name, assigns in assignments(kernel).items():
        leaves = _mult_leaves(assigns[0].value) if len(assigns) == 1 else []
        if len(leaves) > 1 and all(isinstance(x, ast.Name) and x.id in blocks for x in leaves):
            named[name] = leaves
    for node in ast.walk(kernel):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            leaves = [_unwrapped(x) for x in _mult_leaves(node)]
            yield [y for x in leaves for y in (named[x.id] if isinstance(x, ast.Name) and x.id in named else [x])]


def _tile_factor(program: Program, kernel: ast.FunctionDef, axis: int) -> list[str] | None:
    """How many indices one program of grid axis `axis` covers, from the kernel: the block-size factors that scale its
    program id (`pid_n * BLOCK_N * VEC` -> [BLOCK_N, VEC]); [] when the kernel takes the program id itself as an index
    (`b = pid // N; n = pid % N`: one program per index); None when it cannot tell (a persistent loop over the
    program ids, a grouped order that scales a name derived from the program id, two different factors)."""
    if any(call_name(n).endswith("num_programs") for n in ast.walk(kernel) if isinstance(n, ast.Call)):
        return None
    direct = {
        name
        for name, assigns in assignments(kernel).items()
        if all(_program_axis(_unwrapped(a.value)) == axis for a in assigns)
    }
    uses = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if (direct and not direct & uses) or not (direct or any(_program_axis(n) == axis for n in ast.walk(kernel))):
        return None  # the axis's program id is never read: a bug of the kernel, not of the grid

    def is_pid(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in direct) or _program_axis(node) == axis

    blocks = set(constexprs_of(kernel))
    factors = {
        tuple(x.id for x in leaves if isinstance(x, ast.Name) and not is_pid(x))
        for leaves in _products(kernel)
        if sum(is_pid(x) for x in leaves) == 1
        and all(is_pid(x) or (isinstance(x, ast.Name) and x.id in blocks) for x in leaves)
    }
    # keep the longest chain of each family (`pid * B` inside `pid * B * V` is the same product)
    longest = [f for f in factors if not any(len(g) > len(f) and set(f) <= set(g) for g in factors)]
    derived = direct | {n for n in program_id_names(kernel) if _derives(kernel, n, direct, axis)}
    if len(longest) > 1 or _unscaled_block_start(kernel, direct, derived, axis):
        return None
    if longest:  # nothing made from the start is scaled by another block (`(pid * PER + i) * BLOCK`: nested tiles)
        for leaves in _products(kernel):
            nested = [
                x
                for x in leaves
                if not is_pid(x) and (names_in(x) & derived or any(_program_axis(c) == axis for c in ast.walk(x)))
            ]
            if nested and any(isinstance(x, ast.Name) and x.id in blocks for x in leaves):
                return None
        return list(longest[0])
    return [] if _one_per_index(program, kernel, derived) else None


def _one_per_index(program: Program, kernel: ast.FunctionDef, derived: set[str]) -> bool:
    """No block scales the program id: one program per index, if nothing made from it is scaled by anything but a
    stride or a size (`b * N` for `b = pid // N`; not rows per program), starts a range or a loop."""
    strides = set(program.strides(kernel))
    blocks = set(constexprs_of(kernel))
    sizes = {  # scalars that bound an index or split one (`b < B`, `pid // N`): a row's length, not rows per program
        n.id
        for node in ast.walk(kernel)
        for n in (
            node.comparators
            if isinstance(node, ast.Compare)
            else [node.right]
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod)
            else []
        )
        if isinstance(n, ast.Name) and n.id not in blocks
    }
    allowed = derived | strides | sizes
    for leaves in _products(kernel):
        if any(isinstance(x, ast.Name) and x.id in derived for x in leaves) and not all(
            isinstance(x, ast.Name) and x.id in allowed for x in leaves
        ):
            return False
    return not any(
        isinstance(node, ast.Call)
        and call_name(node, last=True) in ("range", "static_range", "arange")
        and names_in(node) & derived
        for node in ast.walk(kernel)
    )


def _unscaled_block_start(kernel: ast.FunctionDef, direct: set[str], derived: set[str], axis: int) -> bool:
    """Whether an unscaled program id (or a name made from it without a product) starts a block of indices:
    `pid + tl.arange(0, BLOCK)` (the kernel's own bug, `block-scale`'s; the grid cannot be read from it)."""
    assigned = assignments(kernel)
    unscaled = direct | {
        n
        for n in derived
        if all(
            not any(isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mult) for x in ast.walk(a.value))
            for a in assigned.get(n, [])
        )
    }
    ranges = {
        n for n, assigns in assigned.items() if any(any(True for _ in calls_in(a.value, "arange")) for a in assigns)
    }

    def addends(node: ast.expr) -> list[ast.expr]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            return addends(node.left) + addends(node.right)
        return [node]

    for node in ast.walk(kernel):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)):
            continue
        terms = [_unwrapped(t) for t in addends(node)]
        start = any((isinstance(t, ast.Name) and t.id in unscaled) or _program_axis(t) == axis for t in terms)
        block = any(
            (isinstance(t, ast.Name) and t.id in ranges)
            or (isinstance(t, ast.Call) and call_name(t, last=True) == "arange")
            for t in terms
        )
        if start and block:
            return True
    return False


def _derives(kernel: ast.FunctionDef, name: str, roots: set[str], axis: int) -> bool:
    """Whether `name` is computed from `roots` or `tl.program_id(axis)` through assignments (a few steps)."""
    assigned = assignments(kernel)
    seen: set[str] = set()
    frontier = {name}
    for _ in range(6):
        nxt: set[str] = set()
        for n in frontier - seen:
            seen.add(n)
            for a in assigned.get(n, []):
                used = names_in(a.value)
                if used & roots or any(_program_axis(c) == axis for c in ast.walk(a.value)):
                    return True
                nxt |= used
        frontier = nxt
    return False


def _ceil_division(node: ast.expr) -> tuple[ast.expr, ast.expr, str] | None:
    """(size, divisor, the call's name) of `triton.cdiv(S, D)`, `(S + D - 1) // D` or `S // D`."""
    found = ceil_division(node)
    if found is not None:
        name = call_name(node) if isinstance(node, ast.Call) else "triton.cdiv"
        return found[0], found[1], name
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return node.left, node.right, "triton.cdiv"
    return None


def _literal_product(text: str) -> int | None:
    """The value of a product of integer literals (`64`, `64 * 4`), else None."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    value = 1
    for x in _mult_leaves(tree):
        if not (isinstance(x, ast.Constant) and isinstance(x.value, int) and not isinstance(x.value, bool)):
            return None
        value *= x.value
    return value


def _host_value(site: LaunchSite, node: ast.expr, depth: int = 3) -> ast.expr:
    """A host name replaced by the value it is first bound to above the launch (a few steps), else the node."""
    while depth and isinstance(node, ast.Name):
        bound = host_assignments(site.host, node.id, before=site.call.lineno)
        if not bound:
            break
        node, depth = bound[0], depth - 1
    return node


def _product_value(site: LaunchSite, node: ast.expr, meta: dict[str, int]) -> int | None:
    """The integer a product of literals, host names bound to them and `META['X']` entries with known values is."""
    value = 1
    for leaf in _mult_leaves(_host_value(site, node)):
        leaf = _host_value(site, leaf)
        if isinstance(leaf, ast.Subscript) and isinstance(leaf.slice, ast.Constant) and leaf.slice.value in meta:
            value *= meta[leaf.slice.value]
        elif isinstance(leaf, ast.Constant) and type(leaf.value) is int:
            value *= leaf.value
        else:
            return None
    return value


def _same_count(site: LaunchSite, divisor: ast.expr, new: str, passed: dict[str, ast.expr], meta: str) -> bool:
    """Whether the grid's divisor is the kernel's tile already: the same text, through the host names it is bound to,
    or the same integer (`elements_per_block = BLOCK * PER_THREAD` with `BLOCK = 1024`, passed `BLOCK=BLOCK`)."""
    if not new:
        return False
    if ast.unparse(_host_value(site, divisor)) == new or ast.unparse(divisor) == new:
        return True
    known = {}
    for name, arg in passed.items():
        value = _product_value(site, arg, {})
        if value is not None:
            known[name] = value
    target = ast.parse(new, mode="eval").body
    old_value, new_value = _product_value(site, divisor, known), _product_value(site, target, known)
    return old_value is not None and old_value == new_value


@operator("tile-grid", "grid-too-small")
def tile_grid(program: Program) -> Iterator[Edit]:
    """A launch grid whose axis divides the size by another block than the kernel's tile of that axis: the grid is
    rebuilt from the kernel. Each axis `cdiv(S, D)` (written at the grid, or bound to a name above it) becomes
    `cdiv(S, F)` for F the block factors that scale the axis's program id in the kernel (`pid_n * BLOCK_N * VEC` ->
    `META['BLOCK_N'] * META['VEC']` for autotuned ones, the launch's value for passed ones), or `S` where the kernel
    takes the program id itself as the index (`b = pid // N; n = pid % N`: one program per element). Grounded where
    the grid cannot count the tiles: an autotuned tile the grid divides by a fixed value, a grid divided by a block the
    kernel's program id is not scaled by, or two different literals."""
    seen: set[int] = set()
    for site in program.parsed.launches:
        if site.grid is None:
            continue
        grid = _grid_value(site)
        lambda_arg = grid.args.args[0].arg if isinstance(grid, ast.Lambda) and grid.args.args else None
        body = grid.body if isinstance(grid, ast.Lambda) else grid
        if not isinstance(body, ast.Tuple) or id(body) in seen:
            continue
        seen.add(id(body))
        kernel = site.kernel
        tune = program.parsed.autotune(kernel)
        tuned = _tuned_values(program, tune) if tune is not None else {}
        passed = program.launch_arguments(kernel)
        meta = lambda_arg or "META"
        texts = [program.code(e) for e in body.elts]
        changed, grounded, uses_meta = False, False, False
        for axis, element in enumerate(body.elts):
            factor = _tile_factor(program, kernel, axis)
            if factor is None:
                continue
            resolved = element
            if isinstance(element, ast.Name):
                bound = host_assignments(site.host, element.id, before=body.lineno)
                resolved = bound[0] if bound else element
            division = _ceil_division(resolved)
            if division is None:
                continue
            size, divisor, cdiv = division
            terms: list[str] = []
            for block in factor:
                if block in tuned or (lambda_arg and block in passed):  # a lambda's META holds the launch's too
                    terms.append(f"{meta}[{block!r}]")
                elif block in passed:
                    terms.append(ast.unparse(passed[block]))
                else:
                    break
            else:
                old = ast.unparse(divisor)
                new = " * ".join(terms)
                if _same_count(site, divisor, new, passed, meta) or (not terms and old == "1"):
                    continue
                texts[axis] = f"{cdiv}({ast.unparse(size)}, {new})" if terms else ast.unparse(size)
                changed = True
                uses_meta |= any(b in tuned for b in factor)
                varying = any(len(tuned.get(b, ())) > 1 for b in factor)
                literal_old = _product_value(site, divisor, {})
                literal_new = _literal_product(new) if terms else 1
                once = [tuned.get(b, set()) for b in factor if b in tuned]
                if literal_new is None and len(once) == len(factor) and all(len(v) == 1 for v in once):
                    sizes = [next(iter(v)) for v in once]  # autotuned to one tile only: its size is known
                    literal_new = (
                        math.prod(v for v in sizes if isinstance(v, int))
                        if all(type(v) is int for v in sizes)
                        else None
                    )
                smallest = 1  # the fewest indices a program covers under any config: a grid divided by at most that
                for block in factor:  # over-covers the axis under every config (masked), which is not a bug
                    values = [v for v in tuned.get(block, ()) if type(v) is int]
                    smallest *= min(values) if values else 1
                grounded |= (
                    (varying and meta not in old and (literal_old is None or literal_old > smallest))
                    or (not terms and old != "1")
                    or (
                        not varying
                        and literal_old is not None
                        and literal_new is not None
                        and literal_old != literal_new
                    )
                )
        if not changed:
            continue
        tuple_text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
        text = f"lambda {meta}: {tuple_text}" if uses_meta or lambda_arg else tuple_text
        why = "the grid divides by another block than the kernel's tile of that axis" if grounded else ""
        yield Edit(
            "tile-grid",
            "grid-too-small",
            grid.lineno,
            f"the grid from the kernel's tiles: `{program.code(grid)}` -> `{text}`",
            program.replace(grid, text),
            why,
            grounded=grounded,
        )


def _early_returns(kernel: ast.FunctionDef) -> Iterator[tuple[ast.If, ast.Compare]]:
    """`if pid >= X: return` (any comparison of a program id with one bound), the early returns of a kernel."""
    pids = program_id_names(kernel)
    for node in ast.walk(kernel):
        if not (
            isinstance(node, ast.If)
            and not node.orelse
            and len(node.body) == 1
            and isinstance(node.body[0], ast.Return)
            and isinstance(node.test, ast.Compare)
            and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.GtE | ast.Gt)
        ):
            continue
        left = node.test.left
        if (isinstance(left, ast.Name) and left.id in pids) or any(True for _ in calls_in(left, "program_id")):
            yield node, node.test


@operator("early-return", "uninitialized-output")
def early_return(program: Program) -> Iterator[Edit]:
    """An early return `if pid >= X: return` whose bound is not the count the grid covers (a stride, another
    dimension): rows past X are never written. The bound becomes each other size parameter of the kernel, or the
    guard goes (the grid covers the rows exactly, or the stores are masked). Cued where X is not a size parameter
    (a stride, a block size, an expression)."""
    for kernel in program.kernels:
        strides = set(program.strides(kernel))
        blocks = set(constexprs_of(kernel))
        sizes = [s for s in program.scalars(kernel) if s not in program.value_scalars(kernel)]
        for guard, test in _early_returns(kernel):
            bound = test.comparators[0]
            written = program.code(bound)
            cue = (
                f"an early return compares a program id with `{written}`, not one of the kernel's sizes"
                if names_in(bound) & (strides | blocks) or not (isinstance(bound, ast.Name) and bound.id in sizes)
                else ""
            )
            yield Edit(
                "early-return",
                "uninitialized-output",
                guard.lineno,
                f"drop the early return `if {program.code(test)}: return`",
                program.replace(guard, "pass"),
                cue,
            )
            for size in sizes:
                if size != written:
                    yield edit_at(program, "early-return", bound, size, f"early return bound `{written}` -> `{size}`")


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class GridFloorDivision(Mutation):
    name = "grid-floor-division"
    label = "grid-too-small"
    summary = "the launch grid uses n // BLOCK instead of triton.cdiv(n, BLOCK)"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) in ("triton.cdiv", "cdiv"):
            assert isinstance(node, cst.Call)
            args = positional(node)
            if len(args) == 2:
                return [binary(args[0].value, cst.FloorDivide(), args[1].value)]
        return []


@mutation
class GridAxisOne(Mutation):
    name = "grid-axis-one"
    label = "uninitialized-output"
    summary = "one axis of a multi-dimensional launch grid is fixed at 1"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if not isinstance(node, cst.Tuple) or len(node.elements) < 2:
            return []
        found: list[cst.CSTNode] = []
        for index, element in enumerate(node.elements):
            if "triton.cdiv" in cst_calls_in(element.value) or call_name(element.value) == "triton.cdiv":
                elements = list(node.elements)
                elements[index] = element.with_changes(value=cst.Integer("1"))
                found.append(node.with_changes(elements=elements))
        return found


@mutation
class GroupUncapped(Mutation):
    name = "group-uncapped"
    label = "uninitialized-output"
    summary = "a grouped launch order's group size is GROUP_M itself, not min(num_pid_m - first_pid_m, GROUP_M)"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) not in ("min", "tl.minimum") or not isinstance(node, cst.Call) or len(node.args) != 2:
            return []
        return [a.value for a in node.args if isinstance(a.value, cst.Name) and "GROUP" in a.value.value.upper()]
