"""Recipes for constants: restore a mistyped well-known constant, exp instead of exp2 without log2(e)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from kope.knowledge.cues import KNOWN_CONSTANTS, near_constant
from kope.knowledge.recipes._common import _analysed, _cue_nodes, _LineTransformer, _rewrite
from kope.knowledge.recipes._registry import recipe


class _Literal(_LineTransformer):
    def __init__(self, line: int, text: str, value: str) -> None:
        super().__init__()
        self.target, self.text, self.value = line, text, value

    def leave_Float(self, original_node: cst.Float, updated_node: cst.Float) -> cst.BaseExpression:
        if self.line(original_node) == self.target and updated_node.value == self.text:
            self.changed = True
            return updated_node.with_changes(value=self.value)
        return updated_node


class _Exp2ToExp(_LineTransformer):
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "exp2":
            self.changed = True
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name("exp")))
        return updated_node


@recipe("known-constant", "restore a mistyped well-known constant; use exp instead of an exp2 that lacks log2(e)")
def known_constant(source: str) -> Iterator[str]:
    parsed = _analysed(source)
    if parsed is None:
        return
    for node in _cue_nodes(parsed, "suspicious-constant"):
        assert isinstance(node, ast.Constant)
        text = ast.get_source_segment(source, node) or repr(node.value)
        name = near_constant(float(node.value), text) if isinstance(node.value, float) else None
        if name is not None:
            edited = _rewrite(source, _Literal(node.lineno, text, repr(KNOWN_CONSTANTS[name])))
            if edited is not None:
                yield edited
    if _cue_nodes(parsed, "exp2-without-log2e"):
        edited = _rewrite(source, _Exp2ToExp())
        if edited is not None:
            yield edited
