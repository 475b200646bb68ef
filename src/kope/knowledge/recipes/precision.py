"""Recipes for precision and dtypes: compute in float32, float buffers for float results."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from kope.knowledge.analysis import (
    HALF_DTYPES,
)
from kope.knowledge.recipes._common import (
    _analysed,
    _cue_nodes,
    _expr,
    _hit_lines,
    _LineTransformer,
    _rewrite,
    _set_kwarg,
)
from kope.knowledge.recipes._registry import recipe
from kope.source import call_name


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
