"""Cues of precision and dtypes: half-precision casts and buffers, integer buffers for float results."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kope.knowledge.analysis import (
    FLOAT_DTYPES,
    HALF_DTYPES,
    INT_DTYPES,
    Kernel,
    base_pointer,
    calls_in,
    dtype_name,
    expand,
    host_assignments,
    is_float_expr,
    keyword,
    names_in,
    pointer_roots,
)
from kope.knowledge.cues._common import _kernels
from kope.knowledge.cues._registry import Source, cue
from kope.source import call_name


@cue("half-precision-cast", "a kernel casts to float16/bfloat16 or keeps a half-precision accumulator")
def half_precision_cast(source: Source) -> Iterator[ast.AST]:
    for node in source.kernel_nodes():
        if (
            isinstance(node, ast.Attribute)
            and node.attr in HALF_DTYPES
            and ast.unparse(node.value) in ("tl", "triton.language")
        ):
            yield node


def _index_params(kernel: Kernel) -> set[str]:
    """Pointer parameters whose loaded values are used as offsets in other addresses (index tensors)."""
    found: set[str] = set()
    for name, values in kernel.assigns.items():
        for value in values:
            for load in calls_in(value, "load"):
                roots = pointer_roots(load.args[0] if load.args else None, kernel)
                for call in calls_in(kernel.node, "load", "store"):
                    pointer = call.args[0] if call.args else None
                    if pointer is not None and name in set().union(*(names_in(n) for n in expand(pointer, kernel, 2))):
                        found |= roots
    return found


def _float_store_params(kernel: Kernel) -> set[str]:
    found: set[str] = set()
    for call in calls_in(kernel.node, "store", "atomic_add"):
        value = call.args[1] if len(call.args) > 1 else keyword(call, "value")
        if is_float_expr(value, kernel.floats):
            found |= pointer_roots(call.args[0] if call.args else None, kernel)
    return found


def _allocation_dtype(value: ast.AST) -> ast.expr | None:
    if isinstance(value, ast.Call) and call_name(value, last=True) in (
        "empty",
        "zeros",
        "full",
        "ones",
        "empty_like",
        "zeros_like",
    ):
        return keyword(value, "dtype")
    return None


@cue("integer-buffer-for-float", "a buffer with an integer dtype (or an index tensor's dtype) receives float results")
def integer_buffer_for_float(source: Source) -> Iterator[ast.AST]:
    program = source.program
    index_tensors: set[str] = set()
    for launch in program.launches:
        kernel = program.kernels[launch.kernel.name]
        for param in _index_params(kernel):
            arg = launch.args.get(param)
            if isinstance(arg, ast.Name):
                index_tensors.add(arg.id)
    for launch in program.launches:
        kernel = program.kernels[launch.kernel.name]
        for param in _float_store_params(kernel):
            arg = launch.args.get(param)
            if not isinstance(arg, ast.Name):
                continue
            for value in host_assignments(launch.host, arg.id):
                dtype = _allocation_dtype(value)
                if dtype is None:
                    continue
                integer = dtype_name(dtype) in INT_DTYPES or (
                    isinstance(dtype, ast.Attribute)
                    and dtype.attr == "dtype"
                    and ast.unparse(dtype.value) in index_tensors
                )
                if integer:
                    yield value


@cue("float-cast-to-int", "a floating-point value is cast to an integer type inside a kernel (truncation)")
def float_cast_to_int(source: Source) -> Iterator[ast.AST]:
    for kernel in _kernels(source):
        float_roots = _float_pointers(kernel)
        for call in calls_in(kernel.node, "to"):
            target = call.args[0] if call.args else keyword(call, "dtype")
            receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
            if dtype_name(target) not in INT_DTYPES:
                continue
            loaded_float = (
                isinstance(receiver, ast.Call)
                and call_name(receiver, last=True) == "load"
                and (base_pointer(receiver.args[0] if receiver.args else None, kernel) in float_roots)
            )
            if loaded_float or is_float_expr(receiver, kernel.floats):
                yield call


def _float_pointers(kernel: Kernel) -> set[str]:
    """Pointer parameters that the kernel elsewhere loads and converts to a float type (float data)."""
    roots: set[str] = set()
    for call in calls_in(kernel.node, "to"):
        target = call.args[0] if call.args else keyword(call, "dtype")
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if (
            dtype_name(target) in FLOAT_DTYPES
            and isinstance(receiver, ast.Call)
            and call_name(receiver, last=True) == "load"
        ):
            base = base_pointer(receiver.args[0] if receiver.args else None, kernel)
            if base is not None:
                roots.add(base)
    return roots


@cue("half-precision-buffer", "the host allocates a float16/bfloat16 buffer that a kernel writes results into")
def half_precision_buffer(source: Source) -> Iterator[ast.AST]:
    for launch in source.program.launches:
        for arg in launch.args.values():
            if not isinstance(arg, ast.Name):
                continue
            for value in host_assignments(launch.host, arg.id):
                dtype = _allocation_dtype(value)
                if dtype_name(dtype) in HALF_DTYPES:
                    yield value
