"""Launch-grid and allocation repairs: ceiling division, axes fixed at 1, axes exchanged, outputs zeroed."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from kope.repair.operators._core import Edit, Program, edit_at, names_in, operator
from kope.source import LaunchSite, call_name


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


@operator("atomic-store", "missing-atomic")
def atomic_store(program: Program) -> Iterator[Edit]:
    """A kernel's store made an atomic add: programs that each hold part of one result (a partial sum per block, a
    row scattered to an index another program also hits) must add into it, not overwrite it."""
    for _, node in program.kernel_nodes():
        if isinstance(node, ast.Call) and call_name(node) == "tl.store":
            start, end = program.span(node.func)
            text = program.text[:start] + "tl.atomic_add" + program.text[end:]
            yield Edit("atomic-store", "missing-atomic", node.lineno, "`tl.store` -> `tl.atomic_add`", text)


_ALLOCATIONS = ("torch.empty", "torch.zeros", "torch.empty_like", "torch.zeros_like", "torch.ones_like")


@operator("alloc-dtype", "dtype-mismatch")
def alloc_dtype(program: Program) -> Iterator[Edit]:
    """An output allocated with another tensor's dtype given the dtype it must have: `torch.empty_like(target)` (an
    index tensor) -> `torch.empty_like(target, dtype=x.dtype)` for the forward's other inputs, or float32."""
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
    grid = site.grid
    assert grid is not None
    if isinstance(grid, ast.Name) and site.host is not None:
        bound = [
            n.value
            for n in ast.walk(site.host)
            if isinstance(n, ast.Assign)
            and n.lineno < site.call.lineno
            and any(isinstance(t, ast.Name) and t.id == grid.id for t in n.targets)
        ]
        if bound:
            return bound[-1]
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
