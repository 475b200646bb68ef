"""Recipes for how outputs are written: atomic adds where every program writes one address."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from kope.knowledge.analysis import (
    Kernel,
    host_assignments,
    pointer_roots,
)
from kope.knowledge.cues import Source
from kope.knowledge.recipes._common import (
    _analysed,
    _cue_nodes,
    _EmptyToZeros,
    _kwarg,
    _LineTransformer,
    _rewrite,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name


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
    for launch in parsed.program.launches_of(kernel):
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
    for kernel in parsed.program.kernels.values():
        mine = [s for s in stores if any(s is w for w in ast.walk(kernel.node))]
        params = set().union(*(pointer_roots(s.args[0] if s.args else None, kernel) for s in mine)) if mine else set()
        buffers |= _buffers_of(parsed, kernel, params)
    if buffers:
        zeroed = _rewrite(edited, _EmptyToZeros(buffers))
        if zeroed is not None:
            yield zeroed
    yield edited
