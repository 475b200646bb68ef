"""Precision and dtypes: half-precision casts and buffers, integer buffers for float results.

The bug kind's cues, recipes, mutations, side by side (kope.bugs.registry lists it).
Taxonomy ids: precision-loss, dtype-mismatch.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.bugs.analysis import (
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
from kope.bugs.cue import Source, _kernels, cue
from kope.bugs.mutation import Context, Mutation, expr, kwarg, mutation, replace_kwarg
from kope.bugs.recipe import _analysed, _cue_nodes, _expr, _hit_lines, _LineTransformer, _rewrite, _set_kwarg, recipe
from kope.source import call_name, dotted

# -- how diagnosis sees it (cues) --------------------------------------------------------------


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
    dataflow = source.dataflow
    index_tensors: set[str] = set()
    for launch in dataflow.launches:
        kernel = dataflow.kernels[launch.kernel.name]
        for param in _index_params(kernel):
            arg = launch.args.get(param)
            if isinstance(arg, ast.Name):
                index_tensors.add(arg.id)
    for launch in dataflow.launches:
        kernel = dataflow.kernels[launch.kernel.name]
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
    for launch in source.dataflow.launches:
        for arg in launch.args.values():
            if not isinstance(arg, ast.Name):
                continue
            for value in host_assignments(launch.host, arg.id):
                dtype = _allocation_dtype(value)
                if dtype_name(dtype) in HALF_DTYPES:
                    yield value


# -- the knowledge base's fixes (recipes) ------------------------------------------------------


class _Upcast(_LineTransformer):
    def __init__(self, lines: set[int], ieee_dots: bool) -> None:
        super().__init__()
        self.lines, self.ieee_dots = lines, ieee_dots

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if (
            updated_node.attr.value in HALF_DTYPES
            and self.line(original_node) in self.lines
            and m.matches(updated_node.value, m.Name("tl") | m.Name("torch"))
        ):
            self.changed = True
            return updated_node.with_changes(attr=cst.Name("float32"))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            self.ieee_dots
            and call_name(updated_node, last=True) == "dot"
            and self.line(original_node) in self.lines
            and not any(a.keyword is not None and a.keyword.value == "input_precision" for a in updated_node.args)
        ):
            self.changed = True
            return _set_kwarg(updated_node, "input_precision", _expr('"ieee"'))
        return updated_node


@recipe(
    "upcast-fp32",
    "compute in float32: casts and accumulators in float16/bfloat16 become float32 (and tl.dot uses ieee precision)",
)
def upcast_fp32(source: str) -> Iterator[str]:
    lines = _hit_lines(source, "half-precision-cast", "half-precision-buffer")
    if not lines:
        return
    for ieee in (False, True):
        edited = _rewrite(source, _Upcast(lines, ieee))
        if edited is not None:
            yield edited


class _FloatDtype(_LineTransformer):
    def __init__(self, line: int, dtype: str) -> None:
        super().__init__()
        self.target, self.dtype = line, dtype

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if (
            self.line(original_node) == self.target
            and not self.changed
            and any(a.keyword is not None and a.keyword.value == "dtype" for a in updated_node.args)
            and call_name(updated_node, last=True) in ("empty", "zeros", "full", "ones", "empty_like", "zeros_like")
        ):
            self.changed = True
            return _set_kwarg(updated_node, "dtype", _expr(self.dtype))
        return updated_node


class _DropIntCast(_LineTransformer):
    """`value.to(tl.int32)` at a line -> `value.to(tl.float32)`."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.target = line

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self.line(original_node) == self.target and call_name(updated_node, last=True) == "to" and updated_node.args:
            value = updated_node.args[0].value
            if isinstance(value, cst.Attribute) and value.attr.value.startswith(("int", "uint")):
                self.changed = True
                return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=_expr("tl.float32"))])
        return updated_node


@recipe("float-buffer", "allocate buffers that receive float results as float32; do not cast float values to integers")
def float_buffer(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "integer-buffer-for-float"):
        edited = _rewrite(source, _FloatDtype(getattr(node, "lineno", -1), "torch.float32"))
        if edited is not None:
            yield edited
    for node in _cue_nodes(parsed, "float-cast-to-int"):
        edited = _rewrite(source, _DropIntCast(getattr(node, "lineno", -1)))
        if edited is not None:
            yield edited


# -- how the bench injects it (mutations) ------------------------------------------------------


@mutation
class HalfPrecision(Mutation):
    name = "half-precision"
    label = "precision-loss"
    summary = "a cast or an accumulator uses float16 instead of float32"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if isinstance(node, cst.Attribute) and dotted(node) == "tl.float32":
            return [node.with_changes(attr=cst.Name("float16"))]
        return []


@mutation
class IntegerBuffer(Mutation):
    name = "integer-buffer"
    label = "dtype-mismatch"
    summary = "a float buffer is allocated with an integer dtype, so every store into it truncates"
    where = "host"

    def rewrite(self, node: cst.CSTNode, context: Context) -> list[cst.CSTNode]:
        if call_name(node) not in ("torch.empty", "torch.zeros", "torch.empty_like", "torch.zeros_like"):
            return []
        assert isinstance(node, cst.Call)
        dtype = kwarg(node, "dtype")
        if dtype is None or "int" in context.code(dtype.value):
            return []
        return [replace_kwarg(node, "dtype", expr("torch.int32"))]
