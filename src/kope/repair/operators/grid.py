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
