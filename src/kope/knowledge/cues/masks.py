"""Cues of masks and bounds: unmasked block accesses, inclusive bounds, padding that reaches a reduction."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Kernel,
    Launch,
    argument,
    calls_in,
    constant_value,
    expand,
    host_assignments,
    names_in,
    padding_leaks,
)
from kope.knowledge.cues._common import _kernels
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


@cue("load-without-mask", "a tl.load of a block of pointers without a mask, where the block can overrun the data")
def load_without_mask(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "load"):
            if argument(call, 1, "mask") is None and _overrunning_block(
                source, kernel, call.args[0] if call.args else None
            ):
                yield call


@cue("store-without-mask", "a tl.store of a block of pointers without a mask, where the block can overrun the data")
def store_without_mask(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "store"):
            if argument(call, 2, "mask") is None and _overrunning_block(
                source, kernel, call.args[0] if call.args else None
            ):
                yield call


def _overrunning_block(source: Source, kernel: Kernel, pointer: ast.expr | None) -> bool:
    """Whether an address is built from block offsets (tl.arange) whose width is a padded block
    size (a power of two, a fixed tile), not an exact extent of the data."""
    if pointer is None:
        return False
    offsets = set().union(*(names_in(part) & kernel.aranges for part in expand(pointer, kernel, depth=3)))
    direct = any(True for _ in calls_in(pointer, "arange"))
    if not offsets and not direct:
        return False
    widths: set[str] = set()
    literal = False
    for part in [pointer, *expand(pointer, kernel, depth=4)]:
        for call in calls_in(part, "arange"):
            width = call.args[1] if len(call.args) == 2 else None
            if isinstance(width, ast.Name):
                widths.add(width.id)
            elif width is not None:
                literal = True
    if literal or not widths:
        return True
    launches = source.program.launches_of(kernel)
    if not launches:
        return True
    return any(_padded(launch, width) for launch in launches for width in widths)


def _padded(launch: Launch, param: str, depth: int = 3) -> bool:
    value = launch.args.get(param)
    if value is None:
        return True  # a default or an autotuned block size
    return _padded_value(launch.host, value, depth)


def _padded_value(host: ast.FunctionDef | None, value: ast.AST, depth: int) -> bool:
    if depth < 0:
        return True
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        assigned = host_assignments(host, value.id)
        if not assigned:
            return value.id.isupper()  # a module-level tile size, not a size argument
        return _padded_value(host, assigned[-1], depth - 1)
    return any(True for _ in calls_in(value, "next_power_of_2", "min", "max"))


def _mask_argument(call: ast.Call) -> ast.expr | None:
    position = 1 if call_name(call, last=True) == "load" else 2
    return argument(call, position, "mask")


def _inclusive_bound(compare: ast.Compare, kernel: Kernel) -> bool:
    """`offs <= n`, `n >= offs`, `offs < n + 1`: a block-offset comparison that admits the bound itself."""
    if len(compare.ops) != 1:
        return False
    left, op, right = compare.left, compare.ops[0], compare.comparators[0]
    if isinstance(op, ast.LtE) and names_in(left) & kernel.aranges and not names_in(right) & kernel.aranges:
        return True
    if isinstance(op, ast.GtE) and names_in(right) & kernel.aranges and not names_in(left) & kernel.aranges:
        return True
    if isinstance(op, ast.Lt) and names_in(left) & kernel.aranges and isinstance(right, ast.BinOp):
        return isinstance(right.op, ast.Add) and constant_value(right.right) == 1.0
    return False


@cue("mask-inclusive-bound", "a load or store mask compares block offsets with <= (or < n + 1): one element too many")
def mask_inclusive_bound(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for call in calls_in(kernel.node, "load", "store"):
            for node in expand(_mask_argument(call), kernel):
                for compare in ast.walk(node):
                    if isinstance(compare, ast.Compare) and _inclusive_bound(compare, kernel):
                        yield compare


@cue(
    "padding-reaches-reduction",
    "masked-out lanes hold a value (other=0 before a max, x - mean...) that a reduction takes in",
)
def padding_reaches_reduction(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        for leak in padding_leaks(kernel):
            yield leak.call
