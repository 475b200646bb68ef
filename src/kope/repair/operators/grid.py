"""Launch-grid and allocation repairs: ceiling division, axes fixed at 1, axes exchanged, outputs zeroed."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from kope.repair.operators._core import Edit, Program, edit_at, operator
from kope.source import call_name


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
    """A size passed to a kernel replaced by another size of the host code: `mean_kernel[grid](losses, out, C)` ->
    `..., N)` (the count of rows, not of classes)."""
    sizes = sorted(program.host_sizes())
    for site in program.parsed.launches:
        for arg in [*site.call.args, *(k.value for k in site.call.keywords)]:
            if isinstance(arg, ast.Name) and arg.id in sizes:
                for other in sizes:
                    if other != arg.id:
                        text = program.replace(arg, other)
                        description = f"launch argument `{arg.id}` -> `{other}` (line {arg.lineno})"
                        yield Edit("argument-swap", "wrong-normalizer", arg.lineno, description, text)
