"""Cues of how outputs are written: shared addresses without atomics, partly written empty buffers."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    Launch,
    argument,
    calls_in,
    constant_value,
    expand,
    host_assignments,
    names_in,
    pointer_roots,
)
from kope.knowledge.cues._common import _kernels
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


@cue("store-shared-address", "every program of a multi-program launch stores to the same address (needs tl.atomic_add)")
def store_shared_address(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        launches = source.program.launches_of(kernel)
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
        for launch in source.program.launches_of(kernel):
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
